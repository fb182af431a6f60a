// Importance and acknowledgements on a mail: an urgent mail stands out,
// a recipient acknowledges with the button (reading does not), the sender
// sees who has and who has not.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Mail } from '../api/types'
import { AckBox, ImportanceBadge, mailFrame } from './Coordination'
import { click, fakeApp, mount, settle, type Mounted } from '../test-utils'

vi.mock('../api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('../api/client')>()
  return { ...real, api: { ...real.api, ack: vi.fn() } }
})
const { api } = await import('../api/client')

const mail: Mail = {
  mail_id: 'm1', session_id: 's1', session_alias: 'freeze', from_name: 'bob', from_kind: 'person', from_address: 'bob',
  recipients: [
    { name: 'alice', kind: 'person', role: 'to', address: 'alice' },
    { name: 'pi', kind: 'agent', role: 'cc', address: 'pi@/w.freeze' },
  ],
  subject: 'Freeze deploys', body: 'until Monday', mail_type: 'normal', attachments: [], created_at: '2026-01-01T00:00:00Z', read: true,
  importance: 'urgent', ack_required: true, ack_due_at: '2999-01-02T00:00:00Z', role: 'to',
  acks: [{ name: 'alice' }, { name: 'pi', acked_at: '2026-01-01T01:00:00Z' }],
}

let m: Mounted | undefined
afterEach(() => {
  m?.unmount()
  m = undefined
})

describe('ImportanceBadge', () => {
  it('marks urgent and high mail, and nothing for a normal one', () => {
    m = mount(<ImportanceBadge importance="urgent" />)
    expect(m.q('importance-badge').textContent).toBe('Urgent')
    m.unmount()
    m = mount(<ImportanceBadge importance="normal" />)
    expect(m.has('importance-badge')).toBe(false)
    expect(mailFrame(mail)).toContain('border-red-500')
    expect(mailFrame({ ...mail, importance: 'normal' })).toBe('')
  })
})

describe('AckBox', () => {
  it('lets a recipient who has not acknowledged do it, once', async () => {
    vi.mocked(api.ack).mockResolvedValue({ mail_id: 'm1', acked_at: '2026-01-01T02:00:00Z', already: false })
    const app = fakeApp()
    m = mount(<AckBox m={mail} />, app)
    click(m.q('ack-button'))
    await settle()
    expect(api.ack).toHaveBeenCalledWith('m1')
    expect(m.q('ack-done').textContent).toMatch(/You acknowledged it/)
    expect(app.notify).toHaveBeenCalledWith('Acknowledged')
  })
  it('shows the sender who has and who has not acknowledged', () => {
    m = mount(<AckBox m={{ ...mail, role: undefined, acked_at: undefined }} />, fakeApp({ me: { username: 'bob', role: 'user', auth_kind: 'cookie' } as never }))
    expect(m.q('ack-status').textContent).toBe('Acknowledged by pi; still waiting for alice.')
    expect(m.has('ack-button')).toBe(false)
  })
  it('is absent for a mail that asks for no acknowledgement', () => {
    m = mount(<AckBox m={{ ...mail, ack_required: false }} />)
    expect(m.has('ack-box')).toBe(false)
  })
})
