import { describe, expect, it } from 'vitest'
import { hasRuleCode, withoutRuleCodes } from './text'

describe('withoutRuleCodes', () => {
  it.each([
    ['relay_key is required when relay is set (W-5.1)', 'relay_key is required when relay is set'],
    ['do not retry with .new, which would open an empty session (N-8)', 'do not retry with .new, which would open an empty session'],
    ['refused (B-8.1, W-5.3).', 'refused.'],
    ['D-6.2: the first decision wins', 'the first decision wins'],
    ['see N-8 and T-1 first', 'see and first'],
  ])('%s', (input, want) => {
    expect(withoutRuleCodes(input)).toBe(want)
    expect(hasRuleCode(withoutRuleCodes(input))).toBe(false)
  })
  it.each(['files are UTF-8 text', 'checked with SHA-256', 'agent pi-2 in /srv/x-1', 'Re: 2026-01-01', 'a plain message'])('keeps %s', (s) => {
    expect(withoutRuleCodes(s)).toBe(s)
  })
})
