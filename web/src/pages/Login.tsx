import { useState } from 'react'
import { api, ApiError } from '../api/client'
import type { Me } from '../api/types'
import { Button, Field, inputClass } from '../components/ui'
import { LangSwitch } from '../components/Shell'
import { useI18n } from '../i18n'
import { errorText } from '../state'

/** Login signs a person in with POST /api/v1/auth/login (sets the session cookie). */
export function Login({ onLogin }: { onLogin: (me: Me) => void }) {
  const { t, lang } = useI18n()
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [busy, setBusy] = useState(false)
  const [err, setErr] = useState('')
  const submit = async () => {
    setBusy(true)
    setErr('')
    try {
      const r = await api.login(username.trim(), password)
      // The whole account (its language among it); the login's own answer if that cannot be read.
      const me = await api.me().catch(() => null)
      onLogin(
        me ?? {
          username: r.username,
          role: r.role,
          auth_kind: 'cookie',
          csrf_token: r.csrf_token,
          language: lang,
          email_available: false,
          email: '',
          email_notify: 'permission',
        },
      )
    } catch (e) {
      setErr(e instanceof ApiError && (e.status === 401 || e.status === 403) ? t('login.failed') : errorText(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <main className="flex min-h-dvh items-center justify-center bg-slate-100 p-4">
      <form
        className="flex w-full max-w-sm flex-col gap-4 rounded-lg bg-white p-6 shadow"
        onSubmit={(e) => {
          e.preventDefault()
          void submit()
        }}
        data-testid="login-form"
      >
        <div className="flex items-center justify-between">
          <h1 className="text-lg font-semibold">{t('login.title')}</h1>
          <LangSwitch />
        </div>
        <Field label={t('login.username')}>
          {(id) => <input id={id} name="username" className={inputClass} value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="username" autoFocus required />}
        </Field>
        <Field label={t('login.password')}>
          {(id) => <input id={id} name="password" type="password" className={inputClass} value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="current-password" required />}
        </Field>
        {err && (
          <p role="alert" className="text-sm text-red-700" data-testid="login-error">
            {err}
          </p>
        )}
        <Button type="submit" variant="primary" disabled={busy || !username.trim() || !password}>
          {busy ? t('login.busy') : t('login.submit')}
        </Button>
        <p className="text-xs text-slate-500">{t('login.hint')}</p>
      </form>
    </main>
  )
}
