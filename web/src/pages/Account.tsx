import { useState } from 'react'
import { api, ApiError, list } from '../api/client'
import type { Grant } from '../api/types'
import { Button, ConfirmDialog, ErrorBox, Field, SecretOnce, Spinner, inputClass } from '../components/ui'
import { LANGS, useI18n } from '../i18n'
import { formatFull } from '../lib/format'
import { useAsync } from '../lib/hooks'
import { errorText, useApp } from '../state'
import { EmailSection } from './AccountEmail'
import { KeyTable, LifecycleFields, useLifecycle } from './Keys'

/** Account: the person's own client keys (token shown once) and their always-allow grants. */
export function Account() {
  const { t, lang, setLang, locale } = useI18n()
  const { me, notify } = useApp()
  const keys = useAsync(async () => list((await api.myKeys()).keys), [])
  const grants = useAsync(async () => list((await api.grants()).grants), [])
  const [label, setLabel] = useState('')
  const lc = useLifecycle()
  const [token, setToken] = useState('')
  const [err, setErr] = useState('')

  const [askGrant, setAskGrant] = useState<Grant | null>(null)
  const revokeGrant = (g: Grant) => {
    setAskGrant(null)
    api.revokeGrant(g.grant_id).then(
      () => {
        notify(t('account.grantRevoked'))
        grants.reload()
      },
      (e) => notify(errorText(e), 'error'),
    )
  }

  const create = async () => {
    setErr('')
    const l = lc.request()
    if (!l) return setErr(t('keys.needExpiry'))
    try {
      const k = await api.createMyKey({ label: label.trim(), ...l })
      setToken(k.key_token ?? '')
      setLabel('')
      keys.reload()
    } catch (e) {
      setErr(errorText(e))
    }
  }

  return (
    <section className="h-full overflow-y-auto p-3 md:p-6">
      <div className="flex max-w-4xl flex-col gap-6">
        <header>
          <h1 className="text-lg font-semibold">{t('account.title')}</h1>
          <p className="text-sm text-slate-600">{t('auth.signedInAs', { name: `${me.username} (${t(`admin.role.${me.role}`)})` })}</p>
        </header>
        <div className="flex items-center gap-2">
          <span className="text-sm font-medium">{t('lang.label')}</span>
          {LANGS.map((l) => (
            <Button key={l} small variant={l === lang ? 'primary' : 'secondary'} onClick={() => setLang(l)} aria-pressed={l === lang}>
              {t(`lang.${l}`)}
            </Button>
          ))}
        </div>
        <PasswordForm />
        <EmailSection />
        <div>
          <h2 className="text-base font-semibold">{t('account.keys')}</h2>
          <p className="mb-2 text-sm text-slate-600">{t('account.keysHint')}</p>
          <form
            className="mb-3 grid gap-3 rounded-md border border-slate-200 p-3 sm:grid-cols-3"
            onSubmit={(e) => {
              e.preventDefault()
              void create()
            }}
          >
            <Field label={t('admin.label')}>{(id) => <input id={id} className={inputClass} value={label} onChange={(e) => setLabel(e.target.value)} data-testid="key-label" />}</Field>
            <LifecycleFields {...lc} />
            <div className="sm:col-span-3">
              <Button type="submit" variant="primary" data-testid="key-create">
                {t('account.createKey')}
              </Button>
              {err && (
                <p role="alert" className="mt-2 text-sm text-red-700">
                  {err}
                </p>
              )}
            </div>
          </form>
          {token && <SecretOnce value={token} testId="key-token" />}
          <div className="mt-3">
            {keys.error ? <ErrorBox error={keys.error} onRetry={keys.reload} /> : !keys.data ? <Spinner /> : (
              <KeyTable
                keys={keys.data}
                testId="my-keys"
                consequence={(k) => t('keys.revokeMine', { prefix: k.prefix })}
                onRevoke={async (k) => {
                  await api.revokeMyKey(k.key_id)
                  keys.reload()
                }}
              />
            )}
          </div>
        </div>
        <div>
          <h2 className="text-base font-semibold">{t('account.grants')}</h2>
          <p className="mb-2 text-sm text-slate-600">{t('account.grantsHint')}</p>
          {grants.error ? (
            <ErrorBox error={grants.error} onRetry={grants.reload} />
          ) : !grants.data ? (
            <Spinner />
          ) : grants.data.length === 0 ? (
            <p className="text-sm text-slate-500">{t('account.noGrants')}</p>
          ) : (
            <table className="w-full text-left text-sm">
              <thead className="text-xs text-slate-500">
                <tr>
                  <th className="py-1 pr-3">{t('account.grantAgent')}</th>
                  <th className="py-1 pr-3">{t('account.grantTool')}</th>
                  <th className="py-1 pr-3">{t('account.grantScope')}</th>
                  <th className="py-1 pr-3">{t('account.grantBy')}</th>
                  <th className="py-1 pr-3">{t('admin.created')}</th>
                  <th />
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {grants.data.map((g) => (
                  <tr key={g.grant_id} data-grant-id={g.grant_id}>
                    <td className="py-1.5 pr-3">{g.agent_name}</td>
                    <td className="py-1.5 pr-3 font-mono text-xs">{g.tool}</td>
                    <td className="py-1.5 pr-3 font-mono text-xs">{g.scope}</td>
                    <td className="py-1.5 pr-3">{g.granted_by}</td>
                    <td className="py-1.5 pr-3 text-xs">{formatFull(g.created_at, locale)}</td>
                    <td className="py-1.5 text-right">
                      <Button small variant="danger" onClick={() => setAskGrant(g)} data-testid="grant-revoke">
                        {t('keys.revoke')}
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {askGrant && (
            <ConfirmDialog
              title={t('account.revokeGrantTitle')}
              message={t('account.revokeGrant', { agent: askGrant.agent_name, tool: askGrant.tool, scope: askGrant.scope })}
              onCancel={() => setAskGrant(null)}
              testId="revoke-confirm"
              actions={[
                { label: t('app.cancel'), onClick: () => setAskGrant(null), testId: 'revoke-cancel' },
                { label: t('keys.revoke'), variant: 'danger', onClick: () => revokeGrant(askGrant), testId: 'revoke-do' },
              ]}
            />
          )}
        </div>
      </div>
    </section>
  )
}

/** MIN_PASSWORD_LENGTH is the gateway's shortest accepted password. */
export const MIN_PASSWORD_LENGTH = 8

/**
 * PasswordForm changes the signed-in person's own password
 * (POST /me/password): the current one, the new one twice. The page stays
 * signed in; the person's other cookie sessions end.
 */
export function PasswordForm() {
  const { t } = useI18n()
  const { notify } = useApp()
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [again, setAgain] = useState('')
  const [busy, setBusy] = useState(false)
  const [tried, setTried] = useState(false)
  const [errs, setErrs] = useState<{ current?: string; next?: string; form?: string }>({})

  const short = next.length > 0 && next.length < MIN_PASSWORD_LENGTH
  const mismatch = again.length > 0 && again !== next
  const submit = async () => {
    setTried(true)
    setErrs({})
    if (!current) return setErrs({ current: t('password.needCurrent') })
    if (next.length < MIN_PASSWORD_LENGTH) return setErrs({ next: t('password.tooShort', { n: MIN_PASSWORD_LENGTH }) })
    if (again !== next) return setErrs({ form: t('password.mismatch') })
    if (next === current) return setErrs({ next: t('password.same') })
    setBusy(true)
    try {
      await api.changePassword({ current_password: current, new_password: next })
      setCurrent('')
      setNext('')
      setAgain('')
      setTried(false)
      notify(t('password.changed'))
    } catch (e) {
      if (e instanceof ApiError && e.field === 'current_password') setErrs({ current: e.code === 'wrong_password' ? t('password.wrong') : errorText(e) })
      else if (e instanceof ApiError && e.field === 'new_password') setErrs({ next: e.code === 'same_password' ? t('password.same') : errorText(e) })
      else setErrs({ form: errorText(e) })
    } finally {
      setBusy(false)
    }
  }
  return (
    <div>
      <h2 className="text-base font-semibold">{t('password.title')}</h2>
      <p className="mb-2 text-sm text-slate-600">{t('password.hint')}</p>
      <form
        className="grid gap-3 rounded-md border border-slate-200 p-3 sm:grid-cols-3"
        data-testid="password-form"
        onSubmit={(e) => {
          e.preventDefault()
          if (!busy) void submit()
        }}
      >
        <Field label={t('password.current')} error={errs.current}>
          {(id, d) => (
            <input id={id} type="password" autoComplete="current-password" aria-describedby={d} aria-invalid={!!errs.current} className={inputClass} value={current} onChange={(e) => setCurrent(e.target.value)} data-testid="password-current" />
          )}
        </Field>
        <Field label={t('password.new')} hint={t('password.rule', { n: MIN_PASSWORD_LENGTH })} error={errs.next ?? (tried && short ? t('password.tooShort', { n: MIN_PASSWORD_LENGTH }) : undefined)}>
          {(id, d) => (
            <input id={id} type="password" autoComplete="new-password" aria-describedby={d} aria-invalid={!!errs.next} className={inputClass} value={next} onChange={(e) => setNext(e.target.value)} data-testid="password-new" />
          )}
        </Field>
        <Field label={t('password.again')} error={mismatch ? t('password.mismatch') : undefined}>
          {(id, d) => (
            <input id={id} type="password" autoComplete="new-password" aria-describedby={d} aria-invalid={mismatch} className={inputClass} value={again} onChange={(e) => setAgain(e.target.value)} data-testid="password-again" />
          )}
        </Field>
        <div className="sm:col-span-3">
          <Button type="submit" variant="primary" disabled={busy} data-testid="password-submit">
            {busy ? t('password.changing') : t('password.change')}
          </Button>
          {errs.form && (
            <p role="alert" className="mt-2 text-sm text-red-700" data-testid="password-error">
              {errs.form}
            </p>
          )}
        </div>
      </form>
    </div>
  )
}
