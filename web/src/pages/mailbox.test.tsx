// The middle pane's rows: the list view leads with who, and still shows what
// about (subject and snippet); the card view leads with the subject.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Session } from '../api/types'
import { Mailbox } from './Mailbox'
import { click, fakeApp, mount, type Mounted } from '../test-utils'

vi.mock('../api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('../api/client')>()
  return { ...real, api: { ...real.api, sessions: vi.fn(), sent: vi.fn() } }
})
const { api } = await import('../api/client')

const session: Session = {
  session_id: 's1',
  alias: 'fix-leak',
  alias_source: 'auto',
  subject: 'Find the leak',
  agent_name: 'pi',
  workspace: '/srv/app',
  budget_max: 0,
  used_rounds: 0,
  participants: ['alice', 'pi'],
  created_by: 'alice',
  created_at: '2026-01-01T00:00:00Z',
  last_activity: '2026-01-01T00:00:00Z',
  unread: 1,
  last_from: 'pi',
  last_snippet: 'Found it in main.go',
  mail_count: 2,
  pending_permissions: 0,
}

let m: Mounted | undefined
beforeEach(() => {
  window.localStorage.clear()
  vi.mocked(api.sessions).mockResolvedValue({ sessions: [session] })
})
afterEach(() => {
  m?.unmount()
  m = undefined
})

/** texts are the non-empty text pieces of an element, in reading order. */
function texts(el: Element): string[] {
  const out: string[] = []
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
  for (let n = walk.nextNode(); n; n = walk.nextNode()) if (n.textContent!.trim()) out.push(n.textContent!.trim())
  return out
}

describe('inbox rows', () => {
  it('list view: name first, then the subject and the snippet', async () => {
    m = mount(<Mailbox folder="inbox" />, fakeApp())
    await vi.waitFor(() => m!.q('session-row'))
    const row = m.q('session-row')
    const parts = texts(row)
    const at = (s: string) => parts.findIndex((p) => p.includes(s))
    expect(at('pi')).toBeGreaterThanOrEqual(0)
    expect(at('Find the leak')).toBeGreaterThan(at('pi'))
    expect(at('Found it in main.go')).toBeGreaterThan(at('Find the leak'))
    expect(row.textContent).toContain('pi@/srv/app.fix-leak')
  })

  it('card view: the subject leads', async () => {
    m = mount(<Mailbox folder="inbox" />, fakeApp())
    await vi.waitFor(() => m!.q('session-row'))
    click(m.q('view-cards'))
    const card = m.q('session-card')
    expect(texts(card)[0]).toBe('Find the leak')
    expect(card.textContent).toContain('Found it in main.go')
  })

  it('a conversation without a subject says so', async () => {
    vi.mocked(api.sessions).mockResolvedValue({ sessions: [{ ...session, subject: '', last_snippet: '' }] })
    m = mount(<Mailbox folder="inbox" />, fakeApp())
    await vi.waitFor(() => m!.q('session-row'))
    expect(m.q('session-row').textContent).toContain('(no subject)')
  })
})
