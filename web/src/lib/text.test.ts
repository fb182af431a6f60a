import { describe, expect, it } from 'vitest'
import { hasRuleCode, isolatedName, isolatedText, nameScripts, nameText, visibleText, withoutRuleCodes } from './text'

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

describe('visibleText', () => {
  it.each([
    ['Invoice \u202efdp.exe\u202c from CEO', 'Invoice <U+202E>fdp.exe<U+202C> from CEO'],
    ['Look: \u202eevil\u202c', 'Look: <U+202E>evil<U+202C>'],
    ['\u202a\u202b\u202d embeddings', '<U+202A><U+202B><U+202D> embeddings'],
    ['ls \u2066\u2067\u2068x\u2069', 'ls <U+2066><U+2067><U+2068>x<U+2069>'],
    ['pay\u200bpal\u200c\u200d\u200e\u200f', 'pay<U+200B>pal<U+200C><U+200D><U+200E><U+200F>'],
    ['\ufeffbom\u2060join\u061c', '<U+FEFF>bom<U+2060>join<U+061C>'],
  ])('%j', (input, want) => {
    expect(visibleText(input)).toBe(want)
  })
  it.each(['plain subject', 'Re: 2026 报告', 'שלום עולם', 'مرحبا', 'emoji 👍🏽 and é', ''])('keeps %j', (s) => {
    expect(visibleText(s)).toBe(s)
  })
  it('takes a missing text as empty', () => {
    expect(visibleText(undefined)).toBe('')
    expect(visibleText(null)).toBe('')
  })
  it('isolatedText wraps the shown text in one first-strong isolate', () => {
    expect(isolatedText('a\u202eb')).toBe('\u2068a<U+202E>b\u2069')
  })
})

describe('nameText', () => {
  it.each([
    ['p\u0430ypal', 'p<U+0430>ypal'], // Cyrillic а in a Latin name
    ['\u0440\u0430ypal', '<U+0440><U+0430>ypal'], // two Cyrillic letters among four Latin ones
    ['b\u043eb', 'b<U+043E>b'],
    ['\u03bfpenai', '<U+03BF>penai'], // Greek ο
    ['pay\u200bpal', 'pay<U+200B>pal'], // invisible characters as before
  ])('marks %j as %j', (input, want) => {
    expect(nameText(input)).toBe(want)
    expect(nameScripts(input).mixed).toBe(input !== 'pay\u200bpal')
  })
  it.each(['bob', 'alice-2', '张san', '田中taro', '김bob', 'Иван', 'dsh_bot', ''])('leaves %j alone', (name) => {
    expect(nameText(name)).toBe(name)
    expect(nameScripts(name).mixed).toBe(false)
  })
  it('isolates a name placed in a sentence', () => {
    expect(isolatedName('b\u043eb')).toBe('\u2068b<U+043E>b\u2069')
  })
})
