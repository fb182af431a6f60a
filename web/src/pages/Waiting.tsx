import { useCallback, useEffect, useRef, useState } from 'react'
import { api, list } from '../api/client'
import type { Permission } from '../api/types'
import { PermissionCard, type Decision } from '../components/Permission'
import { Button, ErrorBox, Spinner } from '../components/ui'
import { useI18n } from '../i18n'
import { useAsync } from '../lib/hooks'
import { navigate } from '../router'
import { useApp, useLive } from '../state'

/** Waiting lists the permission requests waiting for this person, with y / n on the selected one. */
export function Waiting() {
  const { t } = useI18n()
  const { setKeyHandlers } = useApp()
  const data = useAsync(async () => list((await api.permissions('pending')).permissions), [])
  const reload = data.reload
  useLive((e) => {
    if (e.name !== 'new_mail' && e.name !== 'run_updated') reload()
    else if ((e.data as { mail_type?: string }).mail_type === 'permission_request') reload()
  })
  const [sel, setSel] = useState(0)
  // Decided cards stay visible until the next reload, so the person sees the result.
  const [decided, setDecided] = useState<Record<string, Permission>>({})
  const decideRef = useRef<((d: Decision) => void) | null>(null)
  const items = data.data ?? []
  const shown = items.map((p) => decided[p.mail_id] ?? p)
  const register = useCallback((fn: ((d: Decision) => void) | null) => {
    decideRef.current = fn
  }, [])

  useEffect(
    () =>
      setKeyHandlers({
        next: () => setSel((s) => Math.min(shown.length - 1, s + 1)),
        prev: () => setSel((s) => Math.max(0, s - 1)),
        approve: () => decideRef.current?.('approve'),
        deny: () => decideRef.current?.('deny'),
        open: () => {
          const p = shown[sel]
          if (p) navigate(`/inbox/${encodeURIComponent(p.session_id)}?m=${encodeURIComponent(p.mail_id)}`)
        },
      }),
    [setKeyHandlers, shown, sel],
  )

  return (
    <section className="h-full overflow-y-auto p-3 md:p-6" aria-labelledby="waiting-title">
      <h1 id="waiting-title" className="mb-1 text-lg font-semibold">
        {t('waiting.title')}
      </h1>
      {data.error && !data.data ? (
        <ErrorBox error={data.error} onRetry={reload} />
      ) : !data.data ? (
        <Spinner />
      ) : shown.length === 0 ? (
        <p className="p-6 text-center text-sm text-slate-500" data-testid="waiting-empty">
          {t('waiting.empty')}
        </p>
      ) : (
        <>
          <p className="mb-3 text-sm text-slate-600" data-testid="waiting-count">
            {t('waiting.count', { count: shown.filter((p) => p.status === 'pending').length })}
          </p>
          <ul className="flex max-w-3xl flex-col gap-3" data-testid="waiting-list">
            {shown.map((p, i) => (
              <li key={p.mail_id} onClick={() => setSel(i)}>
                <PermissionCard
                  permission={p}
                  active={i === sel}
                  register={i === sel ? register : undefined}
                  onDecided={(np) => setDecided((d) => ({ ...d, [np.mail_id]: np }))}
                />
                <Button small variant="ghost" className="mt-1" onClick={() => navigate(`/inbox/${encodeURIComponent(p.session_id)}?m=${encodeURIComponent(p.mail_id)}`)}>
                  {t('perm.openConversation')}
                </Button>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}
