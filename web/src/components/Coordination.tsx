// Importance and acknowledgements of mails (issue 21): the badge that
// makes an urgent mail stand out, the acknowledgement box under a mail,
// and the compose options.
import { useState } from 'react'
import { api, list } from '../api/client'
import type { Importance, Mail } from '../api/types'
import { useI18n } from '../i18n'
import { formatFull } from '../lib/format'
import { isolatedName } from '../lib/text'
import { errorText, useApp } from '../state'
import { Button, UserText } from './ui'

/** IMPORTANCES are the levels a sender chooses, lowest first. */
export const IMPORTANCES: readonly Importance[] = ['low', 'normal', 'high', 'urgent']

const BADGE: Record<Importance, string> = {
  urgent: 'bg-red-600 text-white font-bold uppercase tracking-wide',
  high: 'bg-amber-100 text-amber-900 font-semibold',
  low: 'bg-slate-100 text-slate-600',
  normal: '',
}

/** ImportanceBadge shows a mail's importance; nothing for a normal one. */
export function ImportanceBadge({ importance }: { importance?: Importance | '' }) {
  const { t } = useI18n()
  if (!importance || importance === 'normal') return null
  return (
    <span className={`shrink-0 rounded px-1.5 text-[11px] ${BADGE[importance]}`} data-testid="importance-badge" data-importance={importance}>
      {t(`importance.${importance}`)}
    </span>
  )
}

/** mailFrame is the border of a mail card: red and thick for an urgent one. */
export function mailFrame(m: Mail): string {
  if (m.importance === 'urgent') return 'border-2 border-red-500'
  if (m.importance === 'high') return 'border-amber-300'
  return ''
}

/**
 * AckBox is under a mail sent with ack_required: for a recipient who has
 * not acknowledged it, the Acknowledge button (reading is not
 * acknowledging); for one who has, when; for the sender (and the other
 * recipients), who has and who has not.
 */
export function AckBox({ m, onChanged }: { m: Mail; onChanged?: () => void }) {
  const { t, locale } = useI18n()
  const { me, notify } = useApp()
  const [busy, setBusy] = useState(false)
  const [ackedAt, setAckedAt] = useState<string | undefined>(m.acked_at ?? undefined)
  if (!m.ack_required) return null
  const due = m.ack_due_at ? formatFull(m.ack_due_at, locale) : ''
  const overdue = !!m.ack_due_at && new Date(m.ack_due_at).getTime() < Date.now()
  const acks = list(m.acks)
  const mine = acks.find((a) => a.name === me.username)
  const acknowledge = async () => {
    setBusy(true)
    try {
      const r = await api.ack(m.mail_id)
      setAckedAt(r.acked_at)
      notify(t('ack.toast'))
      onChanged?.()
    } catch (e) {
      notify(errorText(e), 'error')
    } finally {
      setBusy(false)
    }
  }
  let content: React.ReactNode
  if (m.role && mine && !ackedAt && !mine.acked_at) {
    content = (
      <>
        <span>{t('ack.requested', { due })}</span>
        <Button small variant="primary" disabled={busy} onClick={() => void acknowledge()} data-testid="ack-button">
          {busy ? t('ack.busy') : t('ack.button')}
        </Button>
      </>
    )
  } else if (m.role && mine) {
    content = <span data-testid="ack-done">{t('ack.done', { when: formatFull(ackedAt ?? mine.acked_at ?? '', locale) })}</span>
  } else {
    const done = acks.filter((a) => a.acked_at).map((a) => a.name)
    const open = acks.filter((a) => !a.acked_at).map((a) => a.name)
    content = (
      <span data-testid="ack-status">
        {t('ack.status', { done: done.join(', ') || t('ack.nobody'), open: open.join(', ') || t('ack.nobody') })}
      </span>
    )
  }
  const stillOpen = acks.some((a) => !a.acked_at) && !(m.role && ackedAt)
  return (
    <div className="mt-2 flex flex-wrap items-center gap-2 rounded-md border border-blue-200 bg-blue-50 px-2 py-1.5 text-xs text-blue-900" data-testid="ack-box">
      {content}
      {overdue && stillOpen && <span className="rounded bg-red-100 px-1.5 font-semibold text-red-800">{t('ack.overdue')}</span>}
    </div>
  )
}

/** MailOptions are the importance and acknowledgement fields of the compose form. */
export function MailOptions({
  importance,
  setImportance,
  ack,
  setAck,
}: {
  importance: Importance
  setImportance: (v: Importance) => void
  ack: boolean
  setAck: (v: boolean) => void
}) {
  const { t } = useI18n()
  return (
    <div className="flex flex-wrap items-center gap-4 text-sm">
      <label className="flex items-center gap-2">
        <span className="font-medium text-slate-700">{t('importance.label')}</span>
        <select className="rounded-md border border-slate-300 px-2 py-1" value={importance} onChange={(e) => setImportance(e.target.value as Importance)} data-testid="compose-importance">
          {IMPORTANCES.map((l) => (
            <option key={l} value={l}>
              {t(`importance.${l}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="flex items-center gap-2" title={t('compose.ackHint')}>
        <input type="checkbox" checked={ack} onChange={(e) => setAck(e.target.checked)} data-testid="compose-ack" />
        <span>{t('compose.ack')}</span>
      </label>
    </div>
  )
}

/** ShowFilter is what the inbox lists: every conversation, or mails by importance. */
export type ShowFilter = 'all' | 'important' | 'urgent'

/** ImportanceFilter switches the inbox between its conversations and its important mails (most important first). */
export function ImportanceFilter({ show, setShow }: { show: ShowFilter; setShow: (s: ShowFilter) => void }) {
  const { t } = useI18n()
  const opts: [ShowFilter, string][] = [
    ['all', t('list.showAll')],
    ['important', t('list.showImportant')],
    ['urgent', t('list.showUrgent')],
  ]
  return (
    <div className="mt-2 flex flex-wrap gap-1 text-xs" role="group" aria-label={t('list.show')}>
      {opts.map(([v, label]) => (
        <button
          key={v}
          type="button"
          aria-pressed={show === v}
          className={`rounded-full border px-2 py-0.5 ${show === v ? 'border-blue-600 bg-blue-50 font-semibold text-blue-800' : 'border-slate-300 text-slate-700 hover:bg-slate-50'}`}
          onClick={() => setShow(v)}
          data-testid={`show-${v}`}
        >
          {label}
        </button>
      ))}
    </div>
  )
}

const RANK: Record<Importance, number> = { low: 0, normal: 1, high: 2, urgent: 3 }

/**
 * importantBySession answers, per session, the importance of its most
 * important unread high or urgent mail (one inbox request); an empty map
 * when the request fails, so the list still shows.
 */
export async function importantBySession(): Promise<Map<string, Importance>> {
  const out = new Map<string, Importance>()
  try {
    const r = await api.inbox({ status: 'unread', importance: 'high,urgent', sort: 'importance', limit: 200 })
    for (const m of list(r?.mails)) {
      const had = out.get(m.session_id)
      if (!had || RANK[m.importance] > RANK[had]) out.set(m.session_id, m.importance)
    }
  } catch {
    // The badges are a help; the conversations list does not depend on them.
  }
  return out
}

/** ImportantRow is one mail of the inbox's importance view. */
export function ImportantRow({ m, className, onOpen, locale }: { m: Mail; className: string; onOpen: () => void; locale: string }) {
  const { t } = useI18n()
  return (
    <button type="button" className={`${className} flex flex-col gap-0.5 px-3 py-2.5`} onClick={onOpen} data-testid="important-row" data-importance={m.importance} data-unread={!m.read}>
      <span className="flex items-center gap-2">
        <ImportanceBadge importance={m.importance} />
        <span className={`truncate text-sm ${m.read ? 'text-slate-800' : 'font-bold text-slate-900'}`}>{t('list.from', { name: isolatedName(m.from_name) })}</span>
        <span className="ml-auto shrink-0 text-xs text-slate-500">{formatFull(m.created_at, locale)}</span>
      </span>
      <span className="truncate text-sm text-slate-900">{m.subject ? <UserText text={m.subject} /> : t('list.noSubject')}</span>
    </button>
  )
}
