import { api, list } from '../api/client'
import type { Reservation } from '../api/types'
import { Button, ErrorBox, Spinner } from '../components/ui'
import { useI18n } from '../i18n'
import { formatFull } from '../lib/format'
import { useAsync } from '../lib/hooks'
import { errorText, useApp } from '../state'

/**
 * Reservations lists the file reservations agents hold in the workspaces
 * of this person's conversations, grouped by workspace, each with a
 * Release button (the holder is told).
 */
export function Reservations() {
  const { t, locale } = useI18n()
  const { notify } = useApp()
  const data = useAsync(async () => list((await api.reservations()).reservations), [])
  const reload = data.reload
  const groups = new Map<string, Reservation[]>()
  for (const r of data.data ?? []) groups.set(r.workspace, [...(groups.get(r.workspace) ?? []), r])
  const release = async (r: Reservation) => {
    try {
      await api.releaseReservation(r.reservation_id)
      notify(t('res.released', { path: r.path }))
      reload()
    } catch (e) {
      notify(errorText(e), 'error')
    }
  }
  return (
    <section className="h-full overflow-y-auto p-3 md:p-6" aria-labelledby="res-title">
      <div className="mb-1 flex items-center gap-2">
        <h1 id="res-title" className="text-lg font-semibold">
          {t('res.title')}
        </h1>
        <Button small variant="ghost" className="ml-auto" onClick={reload} data-testid="res-refresh">
          {t('res.refresh')}
        </Button>
      </div>
      <p className="mb-3 max-w-3xl text-sm text-slate-600">{t('res.hint')}</p>
      {data.error && !data.data ? (
        <ErrorBox error={data.error} onRetry={reload} />
      ) : !data.data ? (
        <Spinner />
      ) : groups.size === 0 ? (
        <p className="p-6 text-center text-sm text-slate-500" data-testid="res-empty">
          {t('res.empty')}
        </p>
      ) : (
        [...groups.entries()].map(([ws, rows]) => (
          <div key={ws} className="mb-4 overflow-x-auto rounded-lg border border-slate-200 bg-white" data-testid="res-workspace" data-workspace={ws}>
            <h2 className="border-b border-slate-100 px-3 py-2 font-mono text-sm text-slate-800">{ws}</h2>
            <table className="w-full text-left text-sm">
              <thead className="text-xs text-slate-500">
                <tr>
                  <th className="px-3 py-1.5 font-medium">{t('res.path')}</th>
                  <th className="px-3 py-1.5 font-medium">{t('res.holder')}</th>
                  <th className="px-3 py-1.5 font-medium">{t('res.kind')}</th>
                  <th className="px-3 py-1.5 font-medium">{t('res.until')}</th>
                  <th className="px-3 py-1.5 font-medium">{t('res.reason')}</th>
                  <th className="px-3 py-1.5" />
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.reservation_id} className="border-t border-slate-100" data-testid="res-row" data-path={r.path} data-holder={r.holder}>
                    <td className="px-3 py-1.5 font-mono">{r.path}</td>
                    <td className="px-3 py-1.5">{r.holder}</td>
                    <td className="px-3 py-1.5">{r.exclusive ? t('res.exclusive') : t('res.shared')}</td>
                    <td className="px-3 py-1.5 whitespace-nowrap">{formatFull(r.expires_at, locale)}</td>
                    <td className="px-3 py-1.5 text-slate-700">{r.reason}</td>
                    <td className="px-3 py-1.5 text-right">
                      <Button small variant="secondary" onClick={() => void release(r)} aria-label={t('res.releaseLabel', { path: r.path, holder: r.holder })} data-testid="res-release">
                        {t('res.release')}
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))
      )}
    </section>
  )
}
