import { describe, expect, it } from 'vitest'
import { budgetBadge, parseBudgetInput } from './budget'

describe('budgetBadge', () => {
  it.each([
    // max, used, tone, remaining
    [0, 0, 'hidden', 0],
    [0, 7, 'hidden', 0],
    [20, 0, 'normal', 20],
    [20, 18, 'normal', 2],
    [20, 19, 'last', 1],
    [1, 0, 'last', 1],
    [20, 20, 'spent', 0],
    [3, 5, 'spent', 0],
    [1, 1, 'spent', 0],
  ] as const)('max %i used %i → %s', (max, used, tone, remaining) => {
    const b = budgetBadge(max, used)
    expect(b.tone).toBe(tone)
    expect(b.remaining).toBe(remaining)
  })

  it('treats negative or missing numbers as zero', () => {
    expect(budgetBadge(-5, 2).tone).toBe('hidden')
    expect(budgetBadge(5, -1)).toEqual({ tone: 'normal', remaining: 5, used: 0, max: 5 })
    expect(budgetBadge(undefined as unknown as number, 0).tone).toBe('hidden')
  })
})

describe('parseBudgetInput', () => {
  it('reads empty as the agent default', () => {
    expect(parseBudgetInput('  ')).toEqual({ ok: true, value: undefined })
  })
  it('reads whole numbers, 0 meaning unlimited', () => {
    expect(parseBudgetInput('0')).toEqual({ ok: true, value: 0 })
    expect(parseBudgetInput(' 12 ')).toEqual({ ok: true, value: 12 })
    expect(parseBudgetInput('10000')).toEqual({ ok: true, value: 10000 })
  })
  it.each(['-1', '1.5', 'abc', '1e3', '10001', '999999999', '99999999999'])('refuses %s', (s) => {
    expect(parseBudgetInput(s).ok).toBe(false)
  })
})
