// The email part of the Account page against a stand-in API.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '../api/client'
import type { Me } from '../api/types'
import { EmailSection } from './AccountEmail'
import { click, fakeApp, mount, settle, typeInto, type FakeApp, type Mounted } from '../test-utils'

vi.mock('../api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('../api/client')>()
  return { ...real, api: { ...real.api, me: vi.fn(), updateMe: vi.fn(), verifyEmail: vi.fn() } }
})
const { api } = await import('../api/client')
const me = vi.mocked(api.me)
const update = vi.mocked(api.updateMe)
const verify = vi.mocked(api.verifyEmail)

const base: Me = { username: 'bob', role: 'user', auth_kind: 'cookie', language: 'en', email_available: true, email: '', email_notify: 'permission' }

let m: Mounted | undefined
let app: FakeApp
beforeEach(() => {
  me.mockReset().mockResolvedValue(base)
  update.mockReset()
  verify.mockReset()
  app = fakeApp()
  window.history.replaceState(null, '', '/account')
})
afterEach(() => {
  m?.unmount()
  m = undefined
})

describe('EmailSection', () => {
  it('says so when the gateway sends no email', async () => {
    me.mockResolvedValue({ ...base, email_available: false })
    m = mount(<EmailSection />, app)
    await settle()
    expect(m.q('email-unavailable').textContent).toContain('sends no email')
  })

  it('sends a code to a new address and confirms it', async () => {
    const pending: Me = { ...base, email_pending: 'bob@example.com', email_pending_expires_at: '2026-09-02T10:30:00Z' }
    update.mockResolvedValue(pending)
    verify.mockResolvedValue({ ...base, email: 'bob@example.com', email_verified_at: '2026-09-02T10:01:00Z' })
    m = mount(<EmailSection />, app)
    await settle()
    typeInto(m.q('email-address'), 'bob@example.com')
    click(m.q('email-save'))
    await settle()
    expect(update).toHaveBeenCalledWith({ email: 'bob@example.com' })
    expect(m.q('email-pending').textContent).toContain('bob@example.com')
    typeInto(m.q('email-code'), '123456')
    click(m.q('email-verify'))
    await settle()
    expect(verify).toHaveBeenCalledWith({ code: '123456' })
    expect(m.q('email-current').textContent).toContain('Emails go to bob@example.com')
    expect(app.notify).toHaveBeenCalledWith('Address confirmed')
  })

  it('names a wrong code on its field', async () => {
    me.mockResolvedValue({ ...base, email_pending: 'bob@example.com' })
    verify.mockRejectedValue(new ApiError(400, { error: 'that code is not right; 4 tries left', code: 'wrong_code', field: 'code' }))
    m = mount(<EmailSection />, app)
    await settle()
    typeInto(m.q('email-code'), '000000')
    click(m.q('email-verify'))
    await vi.waitFor(() => expect(m!.q('email-code').getAttribute('aria-invalid')).toBe('true'))
    expect(m.q('email-pending').textContent).toContain('4 tries left')
  })

  it('verifies with the link of the code email', async () => {
    window.history.replaceState(null, '', '/account?verify_email=tok123')
    verify.mockResolvedValue({ ...base, email: 'bob@example.com' })
    m = mount(<EmailSection />, app)
    await settle()
    await settle()
    expect(verify).toHaveBeenCalledWith({ token: 'tok123' })
    expect(window.location.search).toBe('')
  })

  it('changes the preference and shows the last delivery', async () => {
    me.mockResolvedValue({
      ...base,
      email: 'bob@example.com',
      email_delivery: { state: 'failed', kind: 'mail', address: 'bob@example.com', attempts: 1, error: 'the mail relay refused it: 550 no such user', at: '2026-09-02T10:00:00Z' },
    })
    update.mockResolvedValue({ ...base, email: 'bob@example.com', email_notify: 'all' })
    m = mount(<EmailSection />, app)
    await settle()
    expect(m.q('email-delivery').textContent).toContain('could not be delivered')
    expect(m.q('email-delivery').textContent).toContain('550 no such user')
    click(m.q('email-notify-all'))
    await settle()
    expect(update).toHaveBeenCalledWith({ email_notify: 'all' })
    expect(m.q<HTMLInputElement>('email-notify-all').checked).toBe(true)
  })
})
