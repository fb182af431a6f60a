// Revoking a key takes a confirmation that says what stops working.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { KeyInfo } from '../api/types'
import { KeyTable } from './Keys'
import { click, fakeApp, mount, settle, type Mounted } from '../test-utils'

const key: KeyInfo = {
  key_id: 'k1',
  kind: 'agent',
  owner: 'claude',
  label: 'laptop',
  lifecycle: 'permanent',
  prefix: 'amk_ab12',
  created_at: '2026-01-01T00:00:00Z',
  active: true,
}

let m: Mounted | undefined
afterEach(() => {
  m?.unmount()
  m = undefined
})

describe('KeyTable revoke', () => {
  it('asks first, names what stops working, and cancel keeps the key', async () => {
    const onRevoke = vi.fn().mockResolvedValue(undefined)
    const app = fakeApp()
    m = mount(<KeyTable keys={[key]} onRevoke={onRevoke} consequence={(k) => `the agent ${k.owner} using this key disconnects`} showOwner />, app)
    click(m.q('key-revoke'))
    expect(onRevoke).not.toHaveBeenCalled()
    expect(m.q('revoke-confirm-message').textContent).toBe('the agent claude using this key disconnects')
    click(m.q('revoke-cancel'))
    expect(m.has('revoke-confirm')).toBe(false)
    expect(onRevoke).not.toHaveBeenCalled()

    click(m.q('key-revoke'))
    click(m.q('revoke-do'))
    await settle()
    expect(onRevoke).toHaveBeenCalledWith(key)
    expect(app.notify).toHaveBeenCalledWith('Key revoked')
  })
})
