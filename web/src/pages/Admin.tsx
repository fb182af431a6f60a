import { useState } from 'react'
import { api, list } from '../api/client'
import type { Agent, ModelRef, Role, User } from '../api/types'
import { Button, ErrorBox, Field, Icon, IconButton, SecretOnce, Spinner, inputClass } from '../components/ui'
import { useI18n } from '../i18n'
import { formatFull, formatWhen } from '../lib/format'
import { useAsync } from '../lib/hooks'
import { linkHandler } from '../router'
import { errorText, useApp } from '../state'
import { KeyTable, LifecycleFields, useLifecycle } from './Keys'

/**
 * AdminTab names the admin sub-pages, each its own tab and URL:
 * /admin/users, /admin/agent-keys, /admin/user-keys, /admin/agents.
 */
export type AdminTab = 'users' | 'agent-keys' | 'user-keys' | 'agents'

/** ADMIN_TABS are the admin tabs in display order. */
export const ADMIN_TABS: readonly AdminTab[] = ['users', 'agent-keys', 'user-keys', 'agents']

/** adminTab reads the tab from the URL segment; the former /admin/keys opens Agent keys. */
export function adminTab(segment: string | undefined): AdminTab {
  if (segment === 'keys') return 'agent-keys'
  return (ADMIN_TABS as readonly string[]).includes(segment ?? '') ? (segment as AdminTab) : 'users'
}

const TAB_LABEL = {
  users: 'nav.adminUsers',
  'agent-keys': 'nav.adminAgentKeys',
  'user-keys': 'nav.adminUserKeys',
  agents: 'nav.adminAgents',
} as const

/** Admin holds the admin pages: users, agent keys, user keys, and agents with default budgets and allowed models. */
export function Admin({ tab }: { tab: AdminTab }) {
  const { t } = useI18n()
  const { me } = useApp()
  if (me.role !== 'admin') return <p className="p-6 text-sm text-slate-600">{t('admin.notAdmin')}</p>
  return (
    <section className="h-full overflow-y-auto p-3 md:p-6">
      <h1 className="mb-3 text-lg font-semibold">{t('admin.title')}</h1>
      <nav className="mb-4 flex flex-wrap gap-1 border-b border-slate-200" aria-label={t('admin.title')}>
        {ADMIN_TABS.map((id) => (
          <a
            key={id}
            href={`/admin/${id}`}
            onClick={linkHandler(`/admin/${id}`)}
            aria-current={tab === id ? 'page' : undefined}
            data-testid={`admin-tab-${id}`}
            className={`-mb-px border-b-2 px-3 py-1.5 text-sm ${tab === id ? 'border-blue-600 font-semibold text-blue-700' : 'border-transparent text-slate-600 hover:text-slate-900'}`}
          >
            {t(TAB_LABEL[id])}
          </a>
        ))}
      </nav>
      <div className="max-w-5xl">
        {tab === 'users' && <Users />}
        {tab === 'agent-keys' && <AgentKeys />}
        {tab === 'user-keys' && <UserKeys />}
        {tab === 'agents' && <AgentsAdmin />}
      </div>
    </section>
  )
}

function Users() {
  const { t, locale } = useI18n()
  const { notify, me } = useApp()
  const users = useAsync(async () => list((await api.admin.users()).users), [])
  const [name, setName] = useState('')
  const [pw, setPw] = useState('')
  const [role, setRole] = useState<Role>('user')
  const [err, setErr] = useState('')
  const [resetFor, setResetFor] = useState<string | null>(null)
  const [newPw, setNewPw] = useState('')

  const create = async () => {
    setErr('')
    try {
      const u = await api.admin.createUser({ username: name.trim(), password: pw, role })
      notify(t('admin.userCreated', { name: u.username }))
      setName('')
      setPw('')
      users.reload()
    } catch (e) {
      setErr(errorText(e))
    }
  }
  const update = async (u: User, body: Parameters<typeof api.admin.updateUser>[1]) => {
    try {
      await api.admin.updateUser(u.username, body)
      notify(t('app.saved'))
      users.reload()
      return true
    } catch (e) {
      notify(errorText(e), 'error')
      return false
    }
  }

  return (
    <div className="flex flex-col gap-4">
      <form className="grid gap-3 rounded-md border border-slate-200 p-3 sm:grid-cols-4" onSubmit={(e) => { e.preventDefault(); void create() }}>
        <Field label={t('admin.username')}>{(id) => <input id={id} className={inputClass} value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />}</Field>
        <Field label={t('admin.password')}>{(id) => <input id={id} type="password" className={inputClass} value={pw} onChange={(e) => setPw(e.target.value)} autoComplete="new-password" />}</Field>
        <Field label={t('admin.role')}>
          {(id) => (
            <select id={id} className={inputClass} value={role} onChange={(e) => setRole(e.target.value as Role)}>
              <option value="user">{t('admin.role.user')}</option>
              <option value="admin">{t('admin.role.admin')}</option>
            </select>
          )}
        </Field>
        <div className="flex items-end">
          <Button type="submit" variant="primary" disabled={!name.trim() || !pw}>
            {t('admin.createUser')}
          </Button>
        </div>
        {err && <p role="alert" className="text-sm text-red-700 sm:col-span-4">{err}</p>}
      </form>
      {users.error ? (
        <ErrorBox error={users.error} onRetry={users.reload} />
      ) : !users.data ? (
        <Spinner />
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm" data-testid="users-table">
            <thead className="text-xs text-slate-500">
              <tr>
                <th className="py-1 pr-3">{t('admin.username')}</th>
                <th className="py-1 pr-3">{t('admin.role')}</th>
                <th className="py-1 pr-3">{t('admin.status')}</th>
                <th className="py-1 pr-3">{t('admin.created')}</th>
                <th />
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {users.data.map((u) => (
                <tr key={u.username}>
                  <td className="py-1.5 pr-3 font-medium">{u.username}</td>
                  <td className="py-1.5 pr-3">
                    <select
                      aria-label={t('admin.role')}
                      className="rounded border border-slate-300 px-1 py-0.5 text-xs"
                      value={u.role}
                      disabled={u.username === me.username}
                      onChange={(e) => void update(u, { role: e.target.value as Role })}
                    >
                      <option value="user">{t('admin.role.user')}</option>
                      <option value="admin">{t('admin.role.admin')}</option>
                    </select>
                  </td>
                  <td className="py-1.5 pr-3 text-xs">{u.disabled ? t('admin.disabled') : t('admin.active')}</td>
                  <td className="py-1.5 pr-3 text-xs">{formatFull(u.created_at, locale)}</td>
                  <td className="py-1.5 text-right">
                    <div className="flex flex-wrap justify-end gap-1">
                      {resetFor === u.username ? (
                        <form className="flex gap-1" onSubmit={(e) => { e.preventDefault(); void update(u, { password: newPw }).then((ok) => ok && (setResetFor(null), setNewPw(''))) }}>
                          <input aria-label={t('admin.newPassword')} placeholder={t('admin.newPassword')} type="password" className={`${inputClass} h-7 w-44 py-0 text-xs`} value={newPw} onChange={(e) => setNewPw(e.target.value)} autoComplete="new-password" />
                          <Button small type="submit" variant="primary">{t('app.save')}</Button>
                          <Button small variant="ghost" onClick={() => setResetFor(null)}>{t('app.cancel')}</Button>
                        </form>
                      ) : (
                        <Button small onClick={() => setResetFor(u.username)}>{t('admin.resetPassword')}</Button>
                      )}
                      {u.username !== me.username && (
                        <Button small variant={u.disabled ? 'secondary' : 'danger'} onClick={() => void update(u, { disabled: !u.disabled })}>
                          {u.disabled ? t('admin.enable') : t('admin.disable')}
                        </Button>
                      )}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  )
}

function AgentKeys() {
  const { t } = useI18n()
  const agentKeys = useAsync(async () => list((await api.admin.agentKeys()).keys), [])
  const [mode, setMode] = useState<'issue' | 'register'>('register')
  const [agent, setAgent] = useState('')
  const [token, setToken] = useState('')
  const [label, setLabel] = useState('')
  const lc = useLifecycle()
  const [issued, setIssued] = useState('')
  const [err, setErr] = useState('')

  const create = async () => {
    setErr('')
    setIssued('')
    const l = lc.request()
    if (!l) return setErr(t('keys.needExpiry'))
    try {
      const k = await api.admin.createAgentKey({
        agent_name: agent.trim(),
        key_token: mode === 'register' ? token.trim() : undefined,
        label: label.trim() || undefined,
        ...l,
      })
      if (k.key_token) setIssued(k.key_token)
      setToken('')
      agentKeys.reload()
    } catch (e) {
      setErr(errorText(e))
    }
  }

  return (
    <div className="flex flex-col gap-6">
      <div>
        <h2 className="mb-2 text-base font-semibold">{t('admin.issueOrRegister')}</h2>
        <form className="grid gap-3 rounded-md border border-slate-200 p-3 sm:grid-cols-2" onSubmit={(e) => { e.preventDefault(); void create() }} data-testid="agent-key-form">
          <fieldset className="flex flex-wrap gap-4 sm:col-span-2">
            <legend className="mb-1 text-sm font-medium text-slate-700">{t('admin.keyMode')}</legend>
            <label className="flex items-center gap-1.5 text-sm">
              <input type="radio" name="keymode" checked={mode === 'register'} onChange={() => setMode('register')} /> {t('admin.keyRegister')}
            </label>
            <label className="flex items-center gap-1.5 text-sm">
              <input type="radio" name="keymode" checked={mode === 'issue'} onChange={() => setMode('issue')} data-testid="key-mode-issue" /> {t('admin.keyIssue')}
            </label>
          </fieldset>
          <Field label={t('admin.agentName')}>{(id) => <input id={id} className={inputClass} value={agent} onChange={(e) => setAgent(e.target.value)} autoComplete="off" data-testid="agent-key-name" />}</Field>
          <Field label={t('admin.label')}>{(id) => <input id={id} className={inputClass} value={label} onChange={(e) => setLabel(e.target.value)} />}</Field>
          {mode === 'register' && (
            <div className="sm:col-span-2">
              <Field label={t('admin.keyToken')}>{(id) => <input id={id} className={`${inputClass} font-mono`} value={token} onChange={(e) => setToken(e.target.value)} autoComplete="off" spellCheck={false} />}</Field>
            </div>
          )}
          <LifecycleFields {...lc} />
          <div className="sm:col-span-2">
            <Button type="submit" variant="primary" disabled={!agent.trim() || (mode === 'register' && !token.trim())} data-testid="agent-key-create">
              {mode === 'register' ? t('admin.registerKey') : t('admin.createKey')}
            </Button>
            {err && <p role="alert" className="mt-2 text-sm text-red-700">{err}</p>}
          </div>
        </form>
        {issued && (
          <div className="mt-3">
            <SecretOnce value={issued} testId="agent-key-token" />
          </div>
        )}
        <div className="mt-3">
          {agentKeys.error ? (
            <ErrorBox error={agentKeys.error} onRetry={agentKeys.reload} />
          ) : !agentKeys.data ? (
            <Spinner />
          ) : (
            <KeyTable
              keys={agentKeys.data}
              showOwner
              testId="agent-keys"
              consequence={(k) => t('keys.revokeAgent', { agent: k.owner, prefix: k.prefix })}
              onRevoke={async (k) => {
                await api.admin.revokeAgentKey(k.key_id)
                agentKeys.reload()
              }}
            />
          )}
        </div>
      </div>
    </div>
  )
}

function UserKeys() {
  const { t } = useI18n()
  const userKeys = useAsync(async () => list((await api.admin.userKeys()).keys), [])
  if (userKeys.error) return <ErrorBox error={userKeys.error} onRetry={userKeys.reload} />
  if (!userKeys.data) return <Spinner />
  return (
    <div>
      <p className="mb-2 text-sm text-slate-600">{t('admin.userKeysHint')}</p>
      <KeyTable
        keys={userKeys.data}
        showOwner
        testId="user-keys"
        consequence={(k) => t('keys.revokeUser', { owner: k.owner, prefix: k.prefix })}
        onRevoke={async (k) => {
          await api.admin.revokeUserKey(k.key_id)
          userKeys.reload()
        }}
      />
    </div>
  )
}

function AgentsAdmin() {
  const { t } = useI18n()
  const agents = useAsync(async () => list((await api.admin.agents()).agents), [])
  const [open, setOpen] = useState<string | null>(null)
  if (agents.error) return <ErrorBox error={agents.error} onRetry={agents.reload} />
  if (!agents.data) return <Spinner />
  if (agents.data.length === 0) return <p className="text-sm text-slate-500">{t('agents.empty')}</p>
  return (
    <ul className="flex flex-col gap-3" data-testid="admin-agents">
      {agents.data.map((a) => (
        <li key={a.name} className="rounded-md border border-slate-200 p-3">
          <AgentRow a={a} onSaved={agents.reload} />
          <Button small variant="ghost" className="mt-2" aria-expanded={open === a.name} onClick={() => setOpen(open === a.name ? null : a.name)}>
            {t('admin.editModels')}
          </Button>
          {open === a.name && <ModelsEditor name={a.name} />}
        </li>
      ))}
    </ul>
  )
}

function AgentRow({ a, onSaved }: { a: Agent; onSaved: () => void }) {
  const { t, locale } = useI18n()
  const { notify } = useApp()
  const [rounds, setRounds] = useState(String(a.default_rounds))
  const valid = /^\d+$/.test(rounds.trim())
  const save = async () => {
    try {
      await api.admin.updateAgent(a.name, { default_rounds: Number(rounds.trim()) })
      notify(t('app.saved'))
      onSaved()
    } catch (e) {
      notify(errorText(e), 'error')
    }
  }
  return (
    <div className="flex flex-wrap items-end gap-3">
      <div className="min-w-[10rem]">
        <div className="font-semibold">{a.name}</div>
        <div className="text-xs text-slate-500">
          {a.platform || '—'} · {a.status === 'online' ? t('agents.online') : t('agents.offline')}
          {a.last_seen && ` · ${formatWhen(a.last_seen, locale)}`}
        </div>
      </div>
      <form className="flex items-end gap-2" onSubmit={(e) => { e.preventDefault(); if (valid) void save() }}>
        <Field label={t('admin.defaultRounds')} error={!valid ? t('budget.invalid') : undefined}>
          {(id, d) => <input id={id} aria-describedby={d} className={`${inputClass} w-28`} inputMode="numeric" value={rounds} onChange={(e) => setRounds(e.target.value)} data-testid={`default-rounds-${a.name}`} />}
        </Field>
        <Button type="submit" small variant="primary" disabled={!valid || rounds.trim() === String(a.default_rounds)}>
          {t('app.save')}
        </Button>
      </form>
    </div>
  )
}

/** ModelsEditor sets an agent's allowed models in priority order, or unrestricted. */
function ModelsEditor({ name }: { name: string }) {
  const { t } = useI18n()
  const { notify } = useApp()
  const detail = useAsync(() => api.admin.agentModels(name), [name])
  const [list_, setList] = useState<ModelRef[] | null>(null)
  const [unrestricted, setUnrestricted] = useState<boolean | null>(null)
  const [prov, setProv] = useState('')
  const [model, setModel] = useState('')
  if (detail.error) return <ErrorBox error={detail.error} onRetry={detail.reload} />
  if (!detail.data) return <Spinner />
  const d = detail.data
  const items = list_ ?? list(d.allowed_models)
  const unr = unrestricted ?? d.models_unrestricted
  const key = (m: ModelRef) => `${m.provider}/${m.model}`
  const add = (m: ModelRef) => {
    if (!m.provider || !m.model || items.some((x) => key(x) === key(m))) return
    setList([...items, m])
    setUnrestricted(false)
  }
  const move = (i: number, d: -1 | 1) => {
    const j = i + d
    if (j < 0 || j >= items.length) return
    const next = [...items]
    ;[next[i], next[j]] = [next[j], next[i]]
    setList(next)
  }
  const save = async () => {
    try {
      const r = await api.admin.setAgentModels(name, unr ? { models_unrestricted: true } : { allowed_models: items })
      setList(list(r.allowed_models))
      setUnrestricted(r.models_unrestricted)
      notify(t('admin.modelsSaved'))
    } catch (e) {
      notify(errorText(e), 'error')
    }
  }
  return (
    <div className="mt-2 flex flex-col gap-3 rounded-md bg-slate-50 p-3" data-testid="models-editor">
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" checked={unr} onChange={(e) => setUnrestricted(e.target.checked)} /> {t('admin.unrestricted')}
      </label>
      {!unr && (
        <>
          <ol className="flex flex-col gap-1">
            {items.map((m, i) => (
              <li key={key(m)} className="flex items-center gap-2 rounded border border-slate-200 bg-white px-2 py-1 text-sm">
                <span className="w-5 text-right text-xs text-slate-500">{i + 1}.</span>
                <span className="font-mono text-xs">{key(m)}</span>
                <span className="ml-auto flex">
                  <IconButton className="h-7 w-7" label={t('admin.moveUp', { model: key(m) })} disabled={i === 0} onClick={() => move(i, -1)}>
                    <span aria-hidden="true">↑</span>
                  </IconButton>
                  <IconButton className="h-7 w-7" label={t('admin.moveDown', { model: key(m) })} disabled={i === items.length - 1} onClick={() => move(i, 1)}>
                    <span aria-hidden="true">↓</span>
                  </IconButton>
                  <IconButton className="h-7 w-7" label={t('admin.remove', { model: key(m) })} onClick={() => setList(items.filter((_, k) => k !== i))}>
                    <Icon name="close" className="h-4 w-4" />
                  </IconButton>
                </span>
              </li>
            ))}
          </ol>
          {items.length === 0 && <p className="text-sm text-red-700">{t('admin.emptyAllowed')}</p>}
          {list(d.models).length === 0 ? (
            <p className="text-xs text-slate-500">{t('admin.noCatalogue')}</p>
          ) : (
            list(d.models).some((m) => !items.some((x) => key(x) === key(m))) && (
              <div>
                <h4 className="mb-1 text-xs font-semibold text-slate-600">{t('admin.catalogue')}</h4>
                <div className="flex flex-wrap gap-1">
                  {list(d.models)
                    .filter((m) => !items.some((x) => key(x) === key(m)))
                    .map((m) => (
                      <Button key={key(m)} small onClick={() => add({ provider: m.provider, model: m.model })}>
                        + {key(m)}
                      </Button>
                    ))}
                </div>
              </div>
            )
          )}
          <form className="flex flex-wrap items-end gap-2" onSubmit={(e) => { e.preventDefault(); add({ provider: prov.trim(), model: model.trim() }); setModel('') }}>
            <Field label={t('admin.provider')}>{(id) => <input id={id} className={`${inputClass} w-36`} value={prov} onChange={(e) => setProv(e.target.value)} />}</Field>
            <Field label={t('admin.model')}>{(id) => <input id={id} className={`${inputClass} w-48`} value={model} onChange={(e) => setModel(e.target.value)} />}</Field>
            <Button small type="submit">{t('admin.addModel')}</Button>
          </form>
        </>
      )}
      <div>
        <Button variant="primary" small onClick={() => void save()}>
          {t('app.save')}
        </Button>
      </div>
    </div>
  )
}
