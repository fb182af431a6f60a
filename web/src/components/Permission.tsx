import { useEffect, useRef, useState } from 'react'
import { api, ApiError } from '../api/client'
import type { Permission } from '../api/types'
import { useI18n, type Translate } from '../i18n'
import { formatFull } from '../lib/format'
import { visibleText } from '../lib/text'
import { errorText, useApp } from '../state'
import { Button, inputClass } from './ui'
import { Markdown } from './Markdown'

/**
 * decisionText says how a decided request was decided, by decided_via:
 * "api" → "by <name>" (the page, the CLI or any client: the API cannot tell
 * them apart), "reply" → "by reply from <name>", "timeout" → "expired
 * (denied automatically)", "stop" → "closed: <name> stopped the turn"
 * (issue 16); each with the time.
 */
export function decisionText(p: Permission, t: Translate, locale: string): string {
  const when = formatFull(p.decided_at, locale)
  const who = p.decided_by ?? '?'
  if (p.decided_via === 'timeout') return t('perm.decided.timeout', { when })
  if (p.decided_via === 'stop') return t('perm.decided.stop', { who, when })
  if (p.decided_via === 'reply') return t('perm.decided.reply', { who, when })
  return t('perm.decided.api', { who, when })
}

/** Decision is what a person's button or key sends as DecideRequest.decision. */
export type Decision = 'approve' | 'always' | 'deny'

/**
 * PermissionCard shows one permission request: first what will run (the
 * gateway's tool_summary, else the tool name), then the agent's question and
 * context marked as its own words, then Approve / Always / Deny with an
 * optional note; once decided, who decided, when and how (decisionText).
 */
export function PermissionCard({
  permission,
  onDecided,
  active,
  register,
  body,
}: {
  permission: Permission
  /** The request mail's Markdown body (tool, arguments, scope), shown as details. */
  body?: string
  onDecided?: (p: Permission) => void
  /** active cards answer y / n. */
  active?: boolean
  /** register receives the card's decide function while it is active. */
  register?: (fn: ((d: Decision) => void) | null) => void
}) {
  const { t, locale } = useI18n()
  const { notify, refreshCounts } = useApp()
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)
  const [err, setErr] = useState('')
  const [p, setP] = useState(permission)
  // A newer copy from the server (live update) replaces the local one.
  useEffect(() => setP(permission), [permission])
  const pending = p.status === 'pending'

  const decide = async (d: Decision) => {
    if (!pending || busy) return
    setBusy(true)
    setErr('')
    try {
      const res = await api.decide(p.mail_id, { decision: d, note: note.trim() || undefined })
      setP(res)
      notify(t('toast.decided', { decision: t(d === 'approve' ? 'perm.approve' : d === 'always' ? 'perm.always' : 'perm.deny') }))
      refreshCounts()
      onDecided?.(res)
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        setErr(t('perm.conflict'))
        try {
          const fresh = await api.mail(p.mail_id)
          if (fresh.permission) setP(fresh.permission)
        } catch {
          /* keep the error shown */
        }
      } else {
        setErr(errorText(e))
      }
    } finally {
      setBusy(false)
    }
  }
  const decideRef = useRef(decide)
  decideRef.current = decide
  const canKey = !!active && pending
  useEffect(() => {
    if (!register) return
    register(canKey ? (d) => void decideRef.current(d) : null)
    return () => register(null)
  }, [register, canKey])

  // What will run, as the gateway computed it from the arguments; never the
  // agent's question, which can describe a dangerous call in harmless words.
  const call = p.tool_summary || p.tool || ''
  const options = p.options && p.options.length ? p.options : ['approve', 'always', 'deny']
  const hasAlways = options.some((o) => /^(always|一直)/i.test(o))
  const statusLabel =
    p.status === 'approved' ? (p.always ? t('perm.approvedAlways') : t('perm.approved')) : p.status === 'denied' ? t('perm.denied') : t('perm.pending')
  const tone =
    p.status === 'approved' ? 'border-emerald-300 bg-emerald-50' : p.status === 'denied' ? 'border-red-300 bg-red-50' : 'border-amber-300 bg-amber-50'

  return (
    <section
      className={`rounded-lg border-2 p-3 ${tone} ${active && pending ? 'ring-2 ring-blue-400' : ''}`}
      aria-label={t('perm.title')}
      data-testid="permission-card"
      data-status={p.status}
      data-mail-id={p.mail_id}
    >
      <header className="mb-2 flex flex-wrap items-center gap-2">
        <span className="rounded bg-white/70 px-1.5 text-xs font-semibold uppercase tracking-wide text-slate-700">{t('perm.title')}</span>
        <span className="text-sm text-slate-700">{t('perm.from', { agent: p.agent_name })}</span>
        <span className="ml-auto text-xs font-semibold" data-testid="permission-status">
          {statusLabel}
        </span>
      </header>
      <div className="mb-2" data-testid="permission-call">
        <p className="text-xs font-semibold text-slate-600">{t('perm.willRun')}</p>
        {call ? (
          <pre className="max-h-40 overflow-auto whitespace-pre-wrap break-words rounded bg-white/80 p-1.5 font-mono text-sm font-medium text-slate-900">
            {visibleText(call)}
          </pre>
        ) : (
          <p className="text-sm font-medium text-slate-900">{t('perm.noCall')}</p>
        )}
      </div>
      <div className="mb-2 border-l-2 border-slate-300 pl-2" data-testid="permission-words">
        <p className="text-xs text-slate-500">{t('perm.agentWords', { agent: p.agent_name })}</p>
        <Markdown source={p.question} className="text-sm text-slate-700" />
        {p.context && (
          <pre className="mt-1 max-h-40 overflow-auto whitespace-pre-wrap break-words rounded bg-white/70 p-1.5 font-mono text-xs text-slate-700">{visibleText(p.context)}</pre>
        )}
      </div>
      {body && (
        <details className="mb-2 text-xs" open={!p.context}>
          <summary className="cursor-pointer text-slate-600">{t('perm.arguments')}</summary>
          <div className="mt-1 max-h-60 overflow-auto rounded bg-white/70 p-2">
            <Markdown source={body} className="text-xs" />
          </div>
        </details>
      )}
      {pending ? (
        <div className="flex flex-col gap-2">
          <label className="sr-only" htmlFor={`note-${p.mail_id}`}>
            {t('perm.note')}
          </label>
          <input
            id={`note-${p.mail_id}`}
            className={inputClass}
            placeholder={t('perm.notePlaceholder')}
            value={note}
            onChange={(e) => setNote(e.target.value)}
            maxLength={2000}
          />
          <div className="flex flex-wrap items-center gap-2">
            <Button variant="success" disabled={busy} onClick={() => void decide('approve')}>
              {t('perm.approve')}
            </Button>
            {hasAlways && (
              <Button variant="primary" disabled={busy} onClick={() => void decide('always')}>
                {t('perm.always')}
              </Button>
            )}
            <Button variant="danger" disabled={busy} onClick={() => void decide('deny')}>
              {t('perm.deny')}
            </Button>
            {active && <span className="text-xs text-slate-500 pointer-coarse:hidden">{t('perm.keys')}</span>}
            {p.expires_at && <span className="ml-auto text-xs text-slate-500">{t('perm.expires', { when: formatFull(p.expires_at, locale) })}</span>}
          </div>
        </div>
      ) : (
        <p className="text-xs text-slate-700" data-testid="permission-decided">
          {decisionText(p, t, locale)}
          {p.note && <span className="mt-1 block whitespace-pre-wrap italic">“{p.note}”</span>}
        </p>
      )}
      {err && (
        <p role="alert" className="mt-2 text-xs text-red-700">
          {err}
        </p>
      )}
    </section>
  )
}
