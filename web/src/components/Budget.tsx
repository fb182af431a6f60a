import { useEffect, useRef, useState } from 'react'
import { budgetBadge, parseBudgetInput } from '../lib/budget'
import { useI18n } from '../i18n'
import { api } from '../api/client'
import type { Session } from '../api/types'
import { Button, inputClass } from './ui'
import { errorText, useApp } from '../state'

const TONES = {
  normal: 'bg-slate-100 text-slate-700 border-slate-300',
  last: 'bg-orange-100 text-orange-800 border-orange-400',
  spent: 'bg-red-100 text-red-800 border-red-400',
} as const

/**
 * BudgetBadge shows used/max rounds of a session: nothing when unlimited,
 * orange with one round left, red when spent. With onClick it is a button
 * (the conversation header opens the editor with it).
 */
export function BudgetBadge({
  max,
  used,
  onClick,
  expanded,
}: {
  max: number
  used: number
  onClick?: () => void
  expanded?: boolean
}) {
  const { t } = useI18n()
  const b = budgetBadge(max, used)
  if (b.tone === 'hidden' && !onClick) return null
  const title =
    b.tone === 'hidden'
      ? t('budget.titleUnlimited')
      : t('budget.title', { used: b.used, max: b.max }) +
        (b.tone === 'last' ? ` — ${t('budget.last')}` : b.tone === 'spent' ? ` — ${t('budget.spent')}` : '')
  const cls = `inline-flex items-center rounded-full border px-2 text-xs font-medium leading-5 tabular-nums ${
    b.tone === 'hidden' ? 'border-dashed border-slate-300 text-slate-500' : TONES[b.tone]
  }`
  const text = b.tone === 'hidden' ? t('budget.unlimited') : t('budget.badge', { used: b.used, max: b.max })
  if (onClick) {
    return (
      <button
        type="button"
        className={`${cls} hover:ring-2 hover:ring-blue-200 focus-visible:outline-2 focus-visible:outline-blue-600`}
        title={title}
        aria-label={title}
        aria-expanded={expanded}
        data-testid="budget-badge"
        data-tone={b.tone}
        onClick={onClick}
      >
        {text}
      </button>
    )
  }
  return (
    <span className={cls} title={title} aria-label={title} data-testid="budget-badge" data-tone={b.tone}>
      {text}
    </span>
  )
}

/** BudgetEditor changes a session's budget_max or resets used_rounds (PATCH /me/sessions/{id}). */
export function BudgetEditor({ session, onDone }: { session: Session; onDone: (s?: Session) => void }) {
  const { t } = useI18n()
  const { notify } = useApp()
  const [text, setText] = useState(String(session.budget_max))
  const [busy, setBusy] = useState(false)
  const [err, setErr] = useState('')
  const ref = useRef<HTMLInputElement>(null)
  useEffect(() => ref.current?.focus(), [])
  const parsed = parseBudgetInput(text)
  const save = async (body: { budget_max?: number; reset_used?: boolean }) => {
    setBusy(true)
    setErr('')
    try {
      const s = await api.updateSession(session.session_id, body)
      notify(t('app.saved'))
      onDone(s)
    } catch (e) {
      setErr(errorText(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <form
      className="flex w-72 flex-col gap-2 rounded-md border border-slate-200 bg-white p-3 shadow-lg"
      data-testid="budget-editor"
      onSubmit={(e) => {
        e.preventDefault()
        if (parsed.ok) void save({ budget_max: parsed.value ?? 0 })
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation()
          onDone()
        }
      }}
    >
      <label className="text-sm font-medium text-slate-700" htmlFor="budget-max">
        {t('budget.max')}
      </label>
      <input
        id="budget-max"
        ref={ref}
        className={inputClass}
        inputMode="numeric"
        value={text}
        onChange={(e) => setText(e.target.value)}
        aria-invalid={!parsed.ok}
      />
      {!parsed.ok && <p className="text-xs text-red-700">{t('budget.invalid')}</p>}
      <p className="text-xs text-slate-600">{t('budget.used', { used: session.used_rounds })}</p>
      {err && (
        <p role="alert" className="text-xs text-red-700">
          {err}
        </p>
      )}
      <div className="flex flex-wrap gap-2">
        <Button type="submit" variant="primary" small disabled={busy || !parsed.ok}>
          {t('budget.set')}
        </Button>
        <Button small disabled={busy || session.used_rounds === 0} onClick={() => void save({ reset_used: true })}>
          {t('budget.reset')}
        </Button>
        <Button small variant="ghost" onClick={() => onDone()}>
          {t('app.cancel')}
        </Button>
      </div>
    </form>
  )
}
