// The password form of the Account page against a stand-in API.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '../api/client'
import { PasswordForm } from './Account'
import { click, fakeApp, mount, settle, typeInto, type FakeApp, type Mounted } from '../test-utils'

vi.mock('../api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('../api/client')>()
  return { ...real, api: { ...real.api, changePassword: vi.fn() } }
})
const { api } = await import('../api/client')
const change = vi.mocked(api.changePassword)

let m: Mounted | undefined
let app: FakeApp
beforeEach(() => {
  change.mockReset().mockResolvedValue(undefined)
  app = fakeApp()
})
afterEach(() => {
  m?.unmount()
  m = undefined
})

function fill(x: Mounted, current: string, next: string, again: string) {
  typeInto(x.q('password-current'), current)
  typeInto(x.q('password-new'), next)
  typeInto(x.q('password-again'), again)
}

describe('PasswordForm', () => {
  it('sends the current and the new password', async () => {
    m = mount(<PasswordForm />, app)
    fill(m, 'old-secret', 'new-secret-1', 'new-secret-1')
    click(m.q('password-submit'))
    await settle()
    expect(change).toHaveBeenCalledWith({ current_password: 'old-secret', new_password: 'new-secret-1' })
    expect(app.notify).toHaveBeenCalledWith('Password changed')
    expect(m.q<HTMLInputElement>('password-current').value).toBe('')
  })

  it('refuses a short or mistyped new password before asking', () => {
    m = mount(<PasswordForm />, app)
    fill(m, 'old-secret', 'short', 'short')
    click(m.q('password-submit'))
    expect(m.q('password-form').textContent).toContain('at least 8 characters')
    fill(m, 'old-secret', 'new-secret-1', 'new-secret-2')
    click(m.q('password-submit'))
    expect(m.q('password-error').textContent).toBe('The two new passwords differ.')
    fill(m, 'old-secret-1', 'old-secret-1', 'old-secret-1')
    click(m.q('password-submit'))
    expect(m.q('password-form').textContent).toContain('The new password is the one you have now')
    expect(change).not.toHaveBeenCalled()
  })

  it('names a wrong current password on its field', async () => {
    change.mockRejectedValue(new ApiError(400, { error: 'current_password is not the password of this account', code: 'wrong_password', field: 'current_password' }))
    m = mount(<PasswordForm />, app)
    fill(m, 'nope', 'new-secret-1', 'new-secret-1')
    click(m.q('password-submit'))
    await vi.waitFor(() => expect(m!.q('password-current').getAttribute('aria-invalid')).toBe('true'))
    expect(m.q('password-form').textContent).toContain('That is not your current password.')
  })
})
