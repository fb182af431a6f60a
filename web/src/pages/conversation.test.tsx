// The conversation page brings the latest mail into view one animation frame
// after it loads; that frame must be harmless where the DOM cannot scroll and
// must not run once the page is gone.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Mail, Session } from '../api/types'
import { Conversation } from './Conversation'
import { fakeApp, mount, type Mounted } from '../test-utils'

vi.mock('../api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('../api/client')>()
  return { ...real, api: { ...real.api, session: vi.fn(), sessionMails: vi.fn(), sessionRuns: vi.fn(), markRead: vi.fn() } }
})
const { api } = await import('../api/client')

const at = '2026-03-04T05:00:00Z'
const session: Session = {
  session_id: 's1', alias: 'a', alias_source: 'auto', subject: 'Build', agent_name: 'claude', workspace: '/w', budget_max: 0, used_rounds: 0,
  participants: ['alice', 'claude'], created_by: 'alice', created_at: at, last_activity: at, unread: 0, mail_count: 2, pending_permissions: 0,
}
function mail(id: string): Mail {
  return {
    mail_id: id, session_id: 's1', session_alias: 'a', from_name: 'claude', from_kind: 'agent', from_address: 'claude@/w.a',
    recipients: [{ name: 'alice', kind: 'person', role: 'to', address: 'alice' }], subject: 'Build', body: `mail ${id}`,
    mail_type: 'normal', attachments: [], created_at: at, read: true, importance: 'normal', ack_required: false,
  }
}

/**
 * frames holds the animation frames the page asks for until the test runs
 * them with runFrames, so a test decides when "the next frame" is.
 */
const frames = new Map<number, FrameRequestCallback>()
let lastFrame = 0
function holdFrames(): void {
  frames.clear()
  vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => {
    frames.set(++lastFrame, cb)
    return lastFrame
  })
  vi.stubGlobal('cancelAnimationFrame', (id: number) => frames.delete(id))
}
function runFrames(): number {
  const due = [...frames.values()]
  frames.clear()
  due.forEach((cb) => cb(performance.now()))
  return due.length
}

let m: Mounted | undefined
let restore: (() => void) | undefined
afterEach(() => {
  m?.unmount()
  m = undefined
  restore?.()
  restore = undefined
  vi.unstubAllGlobals()
})

/** spyScroll gives every element a scrollIntoView spy until the test ends. */
function spyScroll(): ReturnType<typeof vi.fn> {
  const had = Object.getOwnPropertyDescriptor(Element.prototype, 'scrollIntoView')
  const spy = vi.fn(function (this: Element) {})
  Object.defineProperty(Element.prototype, 'scrollIntoView', { configurable: true, writable: true, value: spy })
  restore = () => {
    if (had) Object.defineProperty(Element.prototype, 'scrollIntoView', had)
    else delete (Element.prototype as { scrollIntoView?: unknown }).scrollIntoView
  }
  return spy
}

async function open(): Promise<Mounted> {
  holdFrames()
  vi.mocked(api.session).mockResolvedValue(session)
  vi.mocked(api.sessionMails).mockResolvedValue({ mails: [mail('m1'), mail('m2')], unread: 0 })
  vi.mocked(api.sessionRuns).mockResolvedValue({ runs: [] })
  const page = mount(<Conversation sessionId="s1" basePath="/inbox" onBack={() => {}} actions={{ current: null }} onChanged={() => {}} />, fakeApp())
  await vi.waitFor(() => expect(page.host.querySelector('#mail-m2')).not.toBeNull())
  // The scroll is asked for by an effect that runs after the mails are shown.
  await vi.waitFor(() => expect(frames.size).toBe(1))
  return page
}

describe('the conversation page scrolls to the latest mail', () => {
  it('runs its scroll frame where the DOM has no scrollIntoView without an error', async () => {
    expect(typeof (Element.prototype as { scrollIntoView?: unknown }).scrollIntoView).not.toBe('function')
    m = await open()
    expect(runFrames()).toBe(1)
    expect(m.host.querySelector('#mail-m2')).not.toBeNull()
  })

  it('scrolls the latest mail to the end of the view in the next frame', async () => {
    const spy = spyScroll()
    m = await open()
    expect(spy).not.toHaveBeenCalled()
    expect(runFrames()).toBe(1)
    expect(spy).toHaveBeenCalledTimes(1)
    expect(spy.mock.contexts[0]).toBe(m.host.querySelector('#mail-m2'))
    expect(spy.mock.calls[0][0]).toEqual({ block: 'end' })
  })

  it('cancels the frame when the page closes before it runs', async () => {
    const spy = spyScroll()
    m = await open()
    m.unmount()
    m = undefined
    expect(runFrames()).toBe(0)
    expect(spy).not.toHaveBeenCalled()
  })
})
