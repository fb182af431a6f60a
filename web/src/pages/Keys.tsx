import { useState } from 'react'
import type { KeyInfo, Lifecycle } from '../api/types'
import { Button, ConfirmDialog, Field, inputClass } from '../components/ui'
import { useI18n } from '../i18n'
import { formatFull } from '../lib/format'
import { errorText, useApp } from '../state'

/** LIFECYCLES are the key lifecycles offered, in menu order. */
export const LIFECYCLES: Lifecycle[] = ['permanent', 'one_time', 'timed']

/**
 * KeyTable lists keys (never their tokens) with a revoke button for active
 * ones. Revoking asks first; consequence(k) says what stops working (the
 * agent that disconnects, the clients that stop).
 */
export function KeyTable({
  keys,
  onRevoke,
  consequence,
  showOwner,
  testId,
}: {
  keys: KeyInfo[]
  onRevoke: (k: KeyInfo) => Promise<void>
  consequence: (k: KeyInfo) => string
  showOwner?: boolean
  testId?: string
}) {
  const { t, locale } = useI18n()
  const { notify } = useApp()
  const [asking, setAsking] = useState<KeyInfo | null>(null)
  const revoke = (k: KeyInfo) => {
    setAsking(null)
    onRevoke(k).then(
      () => notify(t('keys.revoked')),
      (e) => notify(errorText(e), 'error'),
    )
  }
  if (keys.length === 0) return <p className="text-sm text-slate-500">{t('keys.none')}</p>
  return (
    // Below 640 px only the name, prefix and Revoke show (issue 18: at 390 px
    // Revoke needed sideways scrolling); the rest is on wider screens.
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid={testId}>
        <thead className="text-xs text-slate-500">
          <tr>
            {showOwner && <th className="py-1 pr-3">{t('keys.owner')}</th>}
            <th className="py-1 pr-3">{t('admin.label')}</th>
            <th className="py-1 pr-3">{t('keys.prefix')}</th>
            <th className="hidden py-1 pr-3 sm:table-cell">{t('admin.lifecycle')}</th>
            <th className="hidden py-1 pr-3 sm:table-cell">{t('keys.expires')}</th>
            <th className="hidden py-1 pr-3 sm:table-cell">{t('keys.lastUsed')}</th>
            <th className="hidden py-1 pr-3 sm:table-cell">{t('keys.state')}</th>
            <th />
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {keys.map((k) => (
            <tr key={k.key_id} data-key-id={k.key_id} data-owner={k.owner} className={k.active ? '' : 'text-slate-400'}>
              {showOwner && <td className="py-1.5 pr-3">{k.owner}</td>}
              <td className="py-1.5 pr-3">{k.label}</td>
              <td className="py-1.5 pr-3 font-mono text-xs">{k.prefix}…</td>
              <td className="hidden py-1.5 pr-3 text-xs sm:table-cell">{t(`keys.lifecycle.${k.lifecycle}`)}</td>
              <td className="hidden py-1.5 pr-3 text-xs sm:table-cell">{k.expires_at ? formatFull(k.expires_at, locale) : '—'}</td>
              <td className="hidden py-1.5 pr-3 text-xs sm:table-cell">{k.last_used_at ? formatFull(k.last_used_at, locale) : '—'}</td>
              <td className="hidden py-1.5 pr-3 text-xs sm:table-cell">{k.active ? t('keys.active') : t('keys.inactive')}</td>
              <td className="py-1.5 text-right">
                {k.active && (
                  <Button small variant="danger" onClick={() => setAsking(k)} data-testid="key-revoke">
                    {t('keys.revoke')}
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {asking && (
        <ConfirmDialog
          title={t('keys.revokeTitle')}
          message={consequence(asking)}
          onCancel={() => setAsking(null)}
          testId="revoke-confirm"
          actions={[
            { label: t('app.cancel'), onClick: () => setAsking(null), testId: 'revoke-cancel' },
            { label: t('keys.revoke'), variant: 'danger', onClick: () => revoke(asking), testId: 'revoke-do' },
          ]}
        />
      )}
    </div>
  )
}

/** LifecycleFields picks permanent / one-time / timed, with the expiry for timed keys. */
export function LifecycleFields({ lifecycle, setLifecycle, expires, setExpires }: { lifecycle: Lifecycle; setLifecycle: (l: Lifecycle) => void; expires: string; setExpires: (s: string) => void }) {
  const { t } = useI18n()
  return (
    <>
      <Field label={t('admin.lifecycle')}>
        {(id) => (
          <select id={id} className={inputClass} value={lifecycle} onChange={(e) => setLifecycle(e.target.value as Lifecycle)} data-testid="key-lifecycle">
            {LIFECYCLES.map((l) => (
              <option key={l} value={l}>
                {t(`keys.lifecycle.${l}`)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {lifecycle === 'timed' && (
        <Field label={t('admin.expiresAt')}>
          {(id) => <input id={id} type="datetime-local" className={inputClass} value={expires} onChange={(e) => setExpires(e.target.value)} />}
        </Field>
      )}
    </>
  )
}

/** useLifecycle holds the lifecycle fields and turns them into request fields. */
export function useLifecycle() {
  const [lifecycle, setLifecycle] = useState<Lifecycle>('permanent')
  const [expires, setExpires] = useState('')
  const request = (): { lifecycle: Lifecycle; expires_at?: string } | null => {
    if (lifecycle !== 'timed') return { lifecycle }
    if (!expires) return null
    const d = new Date(expires)
    if (Number.isNaN(d.getTime())) return null
    return { lifecycle, expires_at: d.toISOString() }
  }
  return { lifecycle, setLifecycle, expires, setExpires, request }
}
