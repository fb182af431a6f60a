// How a decided permission request says who decided and how, and that a
// request mail does not claim to come through a bridge.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Mail, Permission, Session } from '../api/types'
import { PermissionCard } from './Permission'
import { Conversation } from '../pages/Conversation'
import { fakeApp, mount, type Mounted } from '../test-utils'

vi.mock('../api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('../api/client')>()
  return { ...real, api: { ...real.api, session: vi.fn(), sessionMails: vi.fn(), sessionRuns: vi.fn(), markRead: vi.fn() } }
})
const { api } = await import('../api/client')

const base: Permission = {
  mail_id: 'p1',
  session_id: 's1',
  agent_name: 'claude',
  question: 'May I run `make`?',
  options: ['approve', 'always', 'deny'],
  tool: 'Bash',
  relay_key: 'k1',
  status: 'approved',
  decision: 'approve',
  approved: true,
  always: false,
  decided_by: 'bob',
  decided_at: '2026-03-04T05:06:00Z',
  created_at: '2026-03-04T05:00:00Z',
}

let m: Mounted | undefined
afterEach(() => {
  m?.unmount()
  m = undefined
})

function decided(p: Permission): string {
  m?.unmount()
  m = mount(<PermissionCard permission={p} />, fakeApp())
  return m.q('permission-decided').textContent ?? ''
}

describe('PermissionCard decided by', () => {
  it('api: "by <name>", not "on the page"', () => {
    const s = decided({ ...base, decided_via: 'api' })
    expect(s).toMatch(/^by bob, /)
    expect(s).not.toMatch(/on the page/)
  })
  it('reply: "by reply from <name>"', () => {
    expect(decided({ ...base, decided_via: 'reply' })).toMatch(/^by reply from bob, /)
  })
  it('timeout: "expired (denied automatically)"', () => {
    const s = decided({ ...base, status: 'denied', decision: 'deny', approved: false, decided_by: 'timeout', decided_via: 'timeout' })
    expect(s).toMatch(/^expired \(denied automatically\), /)
    expect(s).not.toMatch(/by timeout/)
  })
  it('stop: "closed: <name> stopped the turn"', () => {
    const s = decided({ ...base, status: 'denied', decision: 'deny', approved: false, decided_via: 'stop' })
    expect(s).toMatch(/^closed: bob stopped the turn, so nothing of it runs, /)
  })
})

describe('a permission request mail in the conversation', () => {
  it('names the agent and does not claim a bridge forwarded it', async () => {
    const session: Session = {
      session_id: 's1', alias: 'a', alias_source: 'auto', subject: 'Build', agent_name: 'claude', workspace: '/w', budget_max: 0, used_rounds: 0,
      participants: ['alice', 'claude'], created_by: 'alice', created_at: base.created_at, last_activity: base.created_at, unread: 0, mail_count: 1, pending_permissions: 1,
    }
    const mail: Mail = {
      mail_id: 'p1', session_id: 's1', session_alias: 'a', from_name: 'claude', from_kind: 'agent', from_address: 'claude@/w.a',
      recipients: [{ name: 'alice', kind: 'person', role: 'to', address: 'alice' }], subject: 'Permission', body: 'May I run `make`?',
      mail_type: 'permission_request', relay: 'permission', attachments: [], created_at: base.created_at, read: true, importance: 'normal', ack_required: false,
      permission: { ...base, status: 'pending', decision: undefined, approved: false, decided_by: undefined, decided_at: undefined },
    }
    vi.mocked(api.session).mockResolvedValue(session)
    vi.mocked(api.sessionMails).mockResolvedValue({ mails: [mail], unread: 0 })
    vi.mocked(api.sessionRuns).mockResolvedValue({ runs: [] })
    m = mount(<Conversation sessionId="s1" basePath="/inbox" onBack={() => {}} actions={{ current: null }} onChanged={() => {}} />, fakeApp())
    await vi.waitFor(() => m!.q('permission-card'))
    const item = m.q('mail')
    expect(item.textContent).toContain('claude')
    expect(item.textContent).not.toMatch(/bridge/i)
  })
})

// A hostile agent can write a harmless question for a dangerous command: the
// card leads with what will run (the gateway's summary of the arguments) and
// shows the question after it, marked as the agent's own words.
describe('PermissionCard leads with the call, not the agent’s words', () => {
  const hostile: Permission = {
    ...base,
    status: 'pending',
    decision: undefined,
    approved: false,
    decided_by: undefined,
    decided_at: undefined,
    question: 'May I **list** the logs? Nothing else.',
    context: 'routine',
    tool_summary: 'Bash: rm -rf /srv/data',
  }

  it('shows the tool summary first and the question after it, as the agent’s words', () => {
    m = mount(<PermissionCard permission={hostile} />, fakeApp())
    const call = m.q('permission-call')
    const words = m.q('permission-words')
    expect(call.textContent).toContain('Will run')
    expect(call.textContent).toContain('Bash: rm -rf /srv/data')
    expect(call.textContent).not.toContain('list')
    expect(words.textContent).toContain('What claude says (its own words, not checked by AgentMail)')
    expect(words.textContent).toContain('May I list the logs? Nothing else.')
    expect(words.textContent).toContain('routine')
    expect(call.compareDocumentPosition(words) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
  })

  it('falls back to the tool name, and says when no call is named', () => {
    m = mount(<PermissionCard permission={{ ...hostile, tool_summary: undefined }} />, fakeApp())
    expect(m.q('permission-call').textContent).toContain('Bash')
    m.unmount()
    m = mount(<PermissionCard permission={{ ...hostile, tool_summary: undefined, tool: undefined }} />, fakeApp())
    expect(m.q('permission-call').textContent).toContain('No tool call named')
    expect(m.q('permission-call').textContent).not.toContain('list')
  })
})
