import { api, list } from '../api/client'
import type { Agent } from '../api/types'
import { BudgetBadge } from '../components/Budget'
import { Button, ErrorBox, Icon, Spinner, UserName, UserText } from '../components/ui'
import { useI18n } from '../i18n'
import { formatFull, formatWhen } from '../lib/format'
import { useAsync } from '../lib/hooks'
import { linkHandler, navigate } from '../router'
import { useApp, useLive } from '../state'

function StatusDot({ a }: { a: Agent }) {
  const { t } = useI18n()
  const on = a.status === 'online'
  const failing = on && !!a.failing
  return (
    <span className="inline-flex items-center gap-1 text-xs" data-testid="agent-status" data-status={failing ? 'failing' : a.status}>
      <span className={`h-2 w-2 rounded-full ${failing ? 'bg-amber-500' : on ? 'bg-emerald-500' : 'bg-slate-400'}`} aria-hidden="true" />
      {failing ? t('agents.onlineFailing') : on ? t('agents.online') : t('agents.offline')}
    </span>
  )
}

/** FailingReason is why an online agent's recent turns all failed (issue 18 point 1): the cause in the reader's language and its fix, then the platform's own words. */
export function FailingReason({ a }: { a: Agent }) {
  const { t } = useI18n()
  if (a.status !== 'online' || !a.failing) return null
  const f = a.failing
  return (
    <span className="flex items-start gap-1 text-xs text-amber-800" data-testid="agent-failing" data-cause={f.cause}>
      <span aria-hidden="true">⚠</span>
      <span>
        {t('agents.onlineFailing')}: {t(`agents.failing.${f.cause}` as 'agents.failing.other')}
        {f.detail ? <span className="break-all text-amber-700"> ({f.detail})</span> : null}
      </span>
    </span>
  )
}

/** Versions is the build fingerprint the agent's bridge last reported (seed 004 section 3): its own build and the platform's version. */
export function Versions({ a }: { a: Agent }) {
  const { t } = useI18n()
  if (!a.bridge_version && !a.platform_version) return null
  return (
    <span className="break-all text-xs text-slate-500" data-testid="agent-versions">
      {t('agents.versions', { bridge: a.bridge_version || '—', platform: a.platform_version || '—' })}
    </span>
  )
}

/** Agents lists every agent with online/offline, last seen and platform. */
export function Agents() {
  const { t, locale } = useI18n()
  const data = useAsync(async () => list((await api.agents()).agents), [])
  useLive((e) => e.name === 'resync' && data.reload())
  return (
    <section className="h-full overflow-y-auto p-3 md:p-6" aria-labelledby="agents-title">
      <h1 id="agents-title" className="mb-3 text-lg font-semibold">
        {t('agents.title')}
      </h1>
      {data.error && !data.data ? (
        <ErrorBox error={data.error} onRetry={data.reload} />
      ) : !data.data ? (
        <Spinner />
      ) : data.data.length === 0 ? (
        <p className="text-sm text-slate-500">{t('agents.empty')}</p>
      ) : (
        <ul className="grid max-w-5xl gap-3 sm:grid-cols-2 lg:grid-cols-3" data-testid="agent-list">
          {data.data.map((a) => (
            <li key={a.name}>
              <a href={`/agents/${encodeURIComponent(a.name)}`} onClick={linkHandler(`/agents/${encodeURIComponent(a.name)}`)} className="flex flex-col gap-1 rounded-lg border border-slate-200 bg-white p-3 shadow-sm hover:border-blue-300" data-testid="agent-card">
                <span className="flex items-center gap-2">
                  <UserName className="font-semibold text-slate-900" name={a.name} />
                  <span className="ml-auto">
                    <StatusDot a={a} />
                  </span>
                </span>
                <FailingReason a={a} />
                <span className="text-xs text-slate-600">
                  {t('agents.platform')}: {a.platform || '—'}
                </span>
                <Versions a={a} />
                <span className="text-xs text-slate-500">{a.last_seen ? t('agents.lastSeen', { when: formatWhen(a.last_seen, locale) }) : t('agents.neverSeen')}</span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

/** AgentPage shows one agent: models, allowed models, and its sessions with alias, directory, budget and state. */
export function AgentPage({ name }: { name: string }) {
  const { t, locale } = useI18n()
  const { openCompose } = useApp()
  const data = useAsync(() => api.agent(name), [name])
  useLive((e) => (e.name === 'session_updated' || e.name === 'run_updated' || e.name === 'resync') && data.reload())
  const a = data.data
  return (
    <section className="h-full overflow-y-auto p-3 md:p-6">
      <a href="/agents" onClick={linkHandler('/agents')} className="mb-2 inline-flex items-center gap-1 text-sm text-blue-700 hover:underline">
        <Icon name="back" className="h-4 w-4" /> {t('agents.back')}
      </a>
      {data.error && !a ? (
        <ErrorBox error={data.error} onRetry={data.reload} />
      ) : !a ? (
        <Spinner />
      ) : (
        <div className="flex max-w-5xl flex-col gap-4" data-testid="agent-detail">
          <header className="flex flex-wrap items-center gap-3">
            <h1 className="text-xl font-semibold"><UserName name={a.name} /></h1>
            <StatusDot a={a} />
            <span className="text-sm text-slate-600">
              {t('agents.platform')}: {a.platform || '—'}
            </span>
            <span className="text-sm text-slate-600">
              {t('agents.defaultRounds')}: {a.default_rounds === 0 ? t('budget.unlimited') : a.default_rounds}
            </span>
            <span className="text-sm text-slate-500">{a.last_seen ? t('agents.lastSeen', { when: formatFull(a.last_seen, locale) }) : t('agents.neverSeen')}</span>
            <span className="basis-full">
              <FailingReason a={a} />
            </span>
            <Versions a={a} />
            <Button variant="primary" className="ml-auto" onClick={() => openCompose({ mode: 'new', to: `${a.name}@` })}>
              {t('agents.write', { name: a.name })}
            </Button>
          </header>
          <div className="grid gap-4 md:grid-cols-2">
            <div>
              <h2 className="mb-1 text-sm font-semibold">{t('agents.models')}</h2>
              {list(a.models).length === 0 ? (
                <p className="text-sm text-slate-500">{t('admin.noCatalogue')}</p>
              ) : (
                <ul className="text-sm">
                  {list(a.models).map((m) => (
                    <li key={`${m.provider}/${m.model}`} className="font-mono text-xs">
                      {m.provider}/{m.model} {m.display_name && <span className="font-sans text-slate-500">(<UserText text={m.display_name} />)</span>}
                    </li>
                  ))}
                </ul>
              )}
            </div>
            <div>
              <h2 className="mb-1 text-sm font-semibold">{t('agents.allowedModels')}</h2>
              {a.models_unrestricted ? (
                <p className="text-sm text-slate-500">{t('agents.unrestricted')}</p>
              ) : list(a.allowed_models).length === 0 ? (
                <p className="text-sm text-red-700">{t('admin.emptyAllowed')}</p>
              ) : (
                <ol className="list-decimal pl-5 text-sm">
                  {list(a.allowed_models).map((m) => (
                    <li key={`${m.provider}/${m.model}`} className="font-mono text-xs">
                      {m.provider}/{m.model}
                    </li>
                  ))}
                </ol>
              )}
            </div>
          </div>
          <div>
            <h2 className="mb-1 text-sm font-semibold">{t('agents.sessions')}</h2>
            {list(a.sessions).length === 0 ? (
              <p className="text-sm text-slate-500">{t('agents.noSessions')}</p>
            ) : (
              <div className="overflow-x-auto">
                <table className="w-full text-left text-sm" data-testid="agent-sessions">
                  <thead className="text-xs text-slate-500">
                    <tr>
                      <th className="py-1 pr-3">{t('agents.alias')}</th>
                      <th className="py-1 pr-3">{t('agents.workspace')}</th>
                      <th className="py-1 pr-3">{t('agents.budget')}</th>
                      <th className="py-1 pr-3">{t('agents.state')}</th>
                      <th className="py-1 pr-3">{t('agents.lastActivity')}</th>
                    </tr>
                  </thead>
                  <tbody className="divide-y divide-slate-100">
                    {list(a.sessions).map((s) => (
                      <tr key={s.session_id} className="cursor-pointer hover:bg-slate-50" onClick={() => navigate(`/inbox/${encodeURIComponent(s.session_id)}`)}>
                        <td className="py-1.5 pr-3 font-mono text-xs">{s.alias}</td>
                        <td className="py-1.5 pr-3 font-mono text-xs">{s.workspace}</td>
                        <td className="py-1.5 pr-3">
                          {s.budget_max === 0 ? <span className="text-xs text-slate-500">{t('budget.unlimited')}</span> : <BudgetBadge max={s.budget_max} used={s.used_rounds} />}
                        </td>
                        <td className="py-1.5 pr-3 text-xs">{s.run_state ? t(`run.${s.run_state}`) : '—'}</td>
                        <td className="py-1.5 pr-3 text-xs text-slate-500">{formatWhen(s.last_activity, locale)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
          {list(a.platform_sessions).length > 0 && (
            <div>
              <h2 className="mb-1 text-sm font-semibold">{t('agents.platformSessions')}</h2>
              <ul className="text-xs">
                {list(a.platform_sessions).map((p) => (
                  <li key={p.platform_id} className="font-mono">
                    {p.slug} — <UserText text={p.workspace} /> {p.title && <span className="font-sans text-slate-500">(<UserText text={p.title} />)</span>}
                  </li>
                ))}
              </ul>
            </div>
          )}
        </div>
      )}
    </section>
  )
}
