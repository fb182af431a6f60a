import { useEffect, useRef, useState } from 'react'
import { api } from '../api/client'
import type { EmailNotify, Me } from '../api/types'
import { Button, ErrorBox, Field, Spinner, inputClass } from '../components/ui'
import { useI18n } from '../i18n'
import { formatFull } from '../lib/format'
import { useAsync } from '../lib/hooks'
import { navigate, useLocation } from '../router'
import { errorText, useApp } from '../state'

const NOTIFY: EmailNotify[] = ['permission', 'all', 'none']

/**
 * EmailSection is the email part of the Account page: the address
 * notifications go to, its verification (the 6-digit code, or the link
 * of the email: /account?verify_email=…), which emails the person gets,
 * and the state of the last email.
 */
export function EmailSection() {
  const { t, locale } = useI18n()
  const { notify } = useApp()
  const loc = useLocation()
  const me = useAsync(() => api.me(), [])
  const [cur, setCur] = useState<Me | undefined>(undefined)
  const [addr, setAddr] = useState('')
  const [code, setCode] = useState('')
  const [err, setErr] = useState<{ addr?: string; code?: string }>({})
  const [busy, setBusy] = useState(false)
  const linkTried = useRef(false)
  const state = cur ?? me.data

  const run = async (what: 'addr' | 'code', fn: () => Promise<Me>, done?: string) => {
    setBusy(true)
    setErr({})
    try {
      setCur(await fn())
      if (done) notify(done)
      return true
    } catch (e) {
      setErr({ [what]: errorText(e) })
      return false
    } finally {
      setBusy(false)
    }
  }

  // The link of the code email verifies once the page is open.
  const token = loc.query.get('verify_email')
  useEffect(() => {
    if (!token || linkTried.current || !me.data?.email_available) return
    linkTried.current = true
    void run('code', () => api.verifyEmail({ token }), t('email.verified')).then(() => navigate('/account', { replace: true }))
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [token, me.data])

  if (me.error) return <ErrorBox error={me.error} onRetry={me.reload} />
  if (!state) return <Spinner />
  if (!state.email_available) {
    return (
      <div data-testid="email-section">
        <h2 className="text-base font-semibold">{t('email.title')}</h2>
        <p className="text-sm text-slate-600" data-testid="email-unavailable">{t('email.unavailable')}</p>
      </div>
    )
  }
  const d = state.email_delivery
  return (
    <div data-testid="email-section">
      <h2 className="text-base font-semibold">{t('email.title')}</h2>
      <p className="mb-2 text-sm text-slate-600">{t('email.hint')}</p>
      <div className="grid gap-3 rounded-md border border-slate-200 p-3">
        <p className="text-sm" data-testid="email-current">
          {state.email ? t('email.current', { address: state.email }) : t('email.none')}
          {state.email && state.email_verified_at && <span className="ml-2 text-xs text-emerald-700">{t('email.verifiedAt', { when: formatFull(state.email_verified_at, locale) })}</span>}
        </p>
        <form
          className="flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault()
            const a = addr.trim()
            if (!busy) void run('addr', () => api.updateMe({ email: a }), a ? t('email.codeSent', { address: a }) : t('email.removed')).then((ok) => ok && setAddr(''))
          }}
        >
          <Field label={state.email ? t('email.change') : t('email.address')} error={err.addr}>
            {(id, dsc) => <input id={id} type="email" autoComplete="email" aria-describedby={dsc} aria-invalid={!!err.addr} className={inputClass} value={addr} onChange={(e) => setAddr(e.target.value)} placeholder="name@example.com" data-testid="email-address" />}
          </Field>
          <Button type="submit" variant="primary" disabled={busy || addr.trim() === ''} data-testid="email-save">
            {t('email.sendCode')}
          </Button>
          {state.email && (
            <Button variant="secondary" disabled={busy} onClick={() => void run('addr', () => api.updateMe({ email: '' }), t('email.removed'))} data-testid="email-remove">
              {t('email.remove')}
            </Button>
          )}
        </form>
        {state.email_pending && (
          <form
            className="flex flex-wrap items-end gap-2 rounded-md bg-amber-50 p-2"
            data-testid="email-pending"
            onSubmit={(e) => {
              e.preventDefault()
              if (!busy) void run('code', () => api.verifyEmail({ code: code.trim() }), t('email.verified')).then((ok) => ok && setCode(''))
            }}
          >
            <p className="w-full text-sm">{t('email.pending', { address: state.email_pending, until: formatFull(state.email_pending_expires_at, locale) })}</p>
            <Field label={t('email.code')} error={err.code}>
              {(id, dsc) => <input id={id} inputMode="numeric" autoComplete="one-time-code" maxLength={6} aria-describedby={dsc} aria-invalid={!!err.code} className={inputClass} value={code} onChange={(e) => setCode(e.target.value)} data-testid="email-code" />}
            </Field>
            <Button type="submit" variant="primary" disabled={busy || code.trim().length !== 6} data-testid="email-verify">
              {t('email.verify')}
            </Button>
          </form>
        )}
        {!state.email_pending && err.code && <p role="alert" className="text-sm text-red-700">{err.code}</p>}
        <fieldset>
          <legend className="mb-1 text-sm font-medium">{t('email.notify')}</legend>
          <div className="flex flex-wrap gap-3">
            {NOTIFY.map((n) => (
              <label key={n} className="flex items-center gap-1.5 text-sm">
                <input
                  type="radio"
                  name="email-notify"
                  value={n}
                  checked={state.email_notify === n}
                  disabled={busy}
                  onChange={() => void run('addr', () => api.updateMe({ email_notify: n }), t('email.notifySaved'))}
                  data-testid={`email-notify-${n}`}
                />
                {t(`email.notify.${n}`)}
              </label>
            ))}
          </div>
        </fieldset>
        <p className="text-sm text-slate-700" data-testid="email-delivery">
          {!d
            ? t('email.delivery.none')
            : t(`email.delivery.${d.state}`, { address: d.address, when: formatFull(d.state === 'retrying' ? d.next_attempt_at : d.at, locale), attempts: d.attempts })}
          {d?.error && (d.state === 'failed' || d.state === 'retrying') && <span className="block text-xs text-red-700">{d.error}</span>}
        </p>
      </div>
    </div>
  )
}
