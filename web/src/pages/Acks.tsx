import { useState } from 'react'
import { api, list } from '../api/client'
import type { AckWaiting } from '../api/types'
import { ImportanceBadge } from '../components/Coordination'
import { Button, ErrorBox, Spinner, UserText } from '../components/ui'
import { useI18n } from '../i18n'
import { formatFull } from '../lib/format'
import { isolatedName, isolatedText } from '../lib/text'
import { useAsync } from '../lib/hooks'
import { navigate } from '../router'
import { errorText, useApp, useLive } from '../state'

/**
 * Acks is the "waiting for acknowledgement" view: the mails this person
 * sent with an acknowledgement request that not every recipient has
 * acknowledged (and who has not), and the ones this person still owes,
 * oldest due first; overdue ones stand out.
 */
export function Acks() {
  const { t } = useI18n()
  const [overdue, setOverdue] = useState(false)
  const data = useAsync(async () => list((await api.unacknowledged({ overdue })).mails), [overdue])
  const reload = data.reload
  useLive((e) => {
    if (e.name === 'new_mail') reload()
  })
  return (
    <section className="h-full overflow-y-auto p-3 md:p-6" aria-labelledby="acks-title">
      <h1 id="acks-title" className="mb-1 text-lg font-semibold">
        {t('acks.title')}
      </h1>
      <p className="mb-3 max-w-3xl text-sm text-slate-600">{t('acks.hint')}</p>
      <label className="mb-3 flex items-center gap-2 text-sm">
        <input type="checkbox" checked={overdue} onChange={(e) => setOverdue(e.target.checked)} data-testid="acks-overdue" />
        {t('acks.overdueOnly')}
      </label>
      {data.error && !data.data ? (
        <ErrorBox error={data.error} onRetry={reload} />
      ) : !data.data ? (
        <Spinner />
      ) : data.data.length === 0 ? (
        <p className="p-6 text-center text-sm text-slate-500" data-testid="acks-empty">
          {t('acks.empty')}
        </p>
      ) : (
        <ul className="flex max-w-3xl flex-col gap-3" data-testid="acks-list">
          {data.data.map((w) => (
            <AckItem key={w.mail_id} w={w} onChanged={reload} />
          ))}
        </ul>
      )}
    </section>
  )
}

function AckItem({ w, onChanged }: { w: AckWaiting; onChanged: () => void }) {
  const { t, locale } = useI18n()
  const { notify, refreshCounts } = useApp()
  const [busy, setBusy] = useState(false)
  const acknowledge = async () => {
    setBusy(true)
    try {
      await api.ack(w.mail_id)
      notify(t('ack.toast'))
      refreshCounts()
      onChanged()
    } catch (e) {
      notify(errorText(e), 'error')
    } finally {
      setBusy(false)
    }
  }
  return (
    <li
      className={`rounded-lg border bg-white p-3 shadow-sm ${w.overdue ? 'border-red-300' : 'border-slate-200'}`}
      data-testid="ack-item"
      data-mail-id={w.mail_id}
      data-role={w.role}
      data-overdue={w.overdue}
    >
      <div className="flex flex-wrap items-baseline gap-2 text-sm">
        <ImportanceBadge importance={w.importance} />
        <UserText className="font-semibold text-slate-900" text={w.subject} />
        <span className="font-mono text-xs text-slate-500">{w.session_alias}</span>
        <span className="ml-auto text-xs text-slate-600">{t('acks.due', { when: formatFull(w.due_at, locale) })}</span>
        {w.overdue && <span className="rounded bg-red-100 px-1.5 text-xs font-semibold text-red-800">{t('ack.overdue')}</span>}
      </div>
      <p className="mt-1 text-sm text-slate-700">
        {w.role === 'sender' ? t('acks.youSent', { names: isolatedText(list(w.pending).join(', ')) }) : t('acks.youOwe', { name: isolatedName(w.from_name) })}
      </p>
      <div className="mt-2 flex gap-2">
        {w.role === 'recipient' && (
          <Button small variant="primary" disabled={busy} onClick={() => void acknowledge()} data-testid="ack-button">
            {busy ? t('ack.busy') : t('ack.button')}
          </Button>
        )}
        <Button small variant="ghost" onClick={() => navigate(`/inbox/${encodeURIComponent(w.session_id)}?m=${encodeURIComponent(w.mail_id)}`)}>
          {t('acks.open')}
        </Button>
      </div>
    </li>
  )
}
