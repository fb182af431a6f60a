import { useCallback, useEffect, useState } from 'react'
import { api, ApiError, setCsrfToken, setUnauthorizedHandler } from './api/client'
import type { Me } from './api/types'
import { Shell } from './components/Shell'
import { ErrorBox, Spinner } from './components/ui'
import { useI18n } from './i18n'
import { Account } from './pages/Account'
import { Admin, adminTab } from './pages/Admin'
import { AgentPage, Agents } from './pages/Agents'
import { Login } from './pages/Login'
import { Mailbox } from './pages/Mailbox'
import { Waiting } from './pages/Waiting'
import { Acks } from './pages/Acks'
import { Reservations } from './pages/Reservations'
import { navigate, useLocation } from './router'
import { AppStateProvider } from './state'

type Auth = { state: 'checking' } | { state: 'out' } | { state: 'in'; me: Me } | { state: 'error'; error: unknown }

/** App checks the session (GET /me), shows the login page or the mailbox, and routes. */
export function App() {
  const [auth, setAuth] = useState<Auth>({ state: 'checking' })
  const check = useCallback(() => {
    setAuth({ state: 'checking' })
    api.me().then(
      (me) => {
        setCsrfToken(me.csrf_token)
        setAuth({ state: 'in', me })
      },
      (e) => setAuth(e instanceof ApiError && e.status === 401 ? { state: 'out' } : { state: 'error', error: e }),
    )
  }, [])
  useEffect(() => {
    check()
    setUnauthorizedHandler(() => {
      setCsrfToken('')
      setAuth({ state: 'out' })
    })
    return () => setUnauthorizedHandler(null)
  }, [check])

  if (auth.state === 'checking') return <Spinner />
  if (auth.state === 'error') return <ErrorBox error={auth.error} onRetry={check} />
  if (auth.state === 'out')
    return (
      <Login
        onLogin={(me) => {
          setCsrfToken(me.csrf_token)
          setAuth({ state: 'in', me })
        }}
      />
    )
  return (
    <AppStateProvider
      key={auth.me.username}
      me={auth.me}
      onLogout={() => {
        setCsrfToken('')
        setAuth({ state: 'out' })
      }}
    >
      <Routes />
    </AppStateProvider>
  )
}

function Routes() {
  const { t } = useI18n()
  const loc = useLocation()
  const [head, second] = loc.segments
  useEffect(() => {
    if (loc.path === '/' || loc.path === '/index.html') navigate('/inbox', { replace: true })
  }, [loc.path])
  let page: React.ReactNode
  switch (head) {
    case undefined:
    case 'index.html':
    case 'inbox':
    case 'sent':
      page = (
        <Mailbox
          key={head === 'sent' ? 'sent' : 'inbox'}
          folder={head === 'sent' ? 'sent' : 'inbox'}
          openId={second}
          focusMail={loc.query.get('m') ?? undefined}
          treeMail={loc.query.get('tree') ?? undefined}
        />
      )
      break
    case 'waiting':
      page = <Waiting />
      break
    case 'acks':
      page = <Acks />
      break
    case 'reservations':
      page = <Reservations />
      break
    case 'agents':
      page = second ? <AgentPage name={second} /> : <Agents />
      break
    case 'account':
      page = <Account />
      break
    case 'admin':
      page = <Admin tab={adminTab(second)} />
      break
    default:
      page = <p className="p-6 text-sm text-slate-600">{t('app.notFound')}</p>
  }
  return <Shell path={loc.path}>{page}</Shell>
}
