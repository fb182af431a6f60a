// Round-trip budget badge rules (seed 001, "往返预算" and the card view):
// hidden when the budget is unlimited (budget_max 0: a "0/0" on every card
// is noise), orange when one round is left, red when spent — the moments a
// person needs to step in.

/** BadgeTone is how the budget badge looks. */
export type BadgeTone = 'hidden' | 'normal' | 'last' | 'spent'

/** BudgetBadge is the computed look of a session's budget badge. */
export interface BudgetBadge {
  tone: BadgeTone
  /** Rounds left, never negative; 0 when hidden. */
  remaining: number
  used: number
  max: number
}

/** budgetBadge computes the badge for a session's budget_max and used_rounds. */
export function budgetBadge(budgetMax: number, usedRounds: number): BudgetBadge {
  const max = Math.max(0, Math.floor(budgetMax || 0))
  const used = Math.max(0, Math.floor(usedRounds || 0))
  if (max === 0) return { tone: 'hidden', remaining: 0, used, max }
  const remaining = Math.max(0, max - used)
  if (remaining === 0) return { tone: 'spent', remaining, used, max }
  if (remaining === 1) return { tone: 'last', remaining, used, max }
  return { tone: 'normal', remaining, used, max }
}

/** MAX_ROUND_BUDGET is the largest round budget the page accepts (0 = unlimited). */
export const MAX_ROUND_BUDGET = 10000

/**
 * parseBudgetInput reads a budget field: empty → undefined (the agent's
 * default), else a whole number from 0 to MAX_ROUND_BUDGET; "1.5", "-1",
 * "1e3" and larger numbers are refused.
 */
export function parseBudgetInput(text: string): { ok: true; value: number | undefined } | { ok: false } {
  const t = text.trim()
  if (t === '') return { ok: true, value: undefined }
  if (!/^\d+$/.test(t)) return { ok: false }
  const n = Number(t)
  if (!Number.isSafeInteger(n) || n > MAX_ROUND_BUDGET) return { ok: false }
  return { ok: true, value: n }
}
