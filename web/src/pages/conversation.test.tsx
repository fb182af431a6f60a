// The conversation page brings the latest mail into view one animation frame
// after it loads; that frame must be harmless where the DOM cannot scroll and
// must not run once the page is gone.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Mail, Session } from '../api/types'
import { Conversation, ownSubject } from './Conversation'
import { fakeApp, mount, type Mounted } from '../test-utils'
import { I18nProvider } from '../i18n'
import { save } from '../lib/storage'

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

describe('the conversation page shows the delegation chain', () => {
  const origin = { session_id: 's0', alias: 'clean-build', subject: 'clean the build', agent_name: 'claude', used_rounds: 0, budget_max: 20 }
  const sub = { session_id: 's2', alias: 'sub-t', subject: 'sub T', agent_name: 'pi', used_rounds: 2, budget_max: 20 }
  async function openWith(s: Session, locale?: 'zh'): Promise<Mounted> {
    vi.mocked(api.session).mockResolvedValue(s)
    vi.mocked(api.sessionMails).mockResolvedValue({ mails: [mail('m1')], unread: 0 })
    vi.mocked(api.sessionRuns).mockResolvedValue({ runs: [] })
    save('lang', locale ?? 'en')
    const page = mount(
      <I18nProvider>
        <Conversation sessionId={s.session_id} basePath="/inbox" onBack={() => {}} actions={{ current: null }} onChanged={() => {}} />
      </I18nProvider>,
      fakeApp(),
    )
    await vi.waitFor(() => expect(page.host.querySelector('#mail-m1')).not.toBeNull())
    return page
  }

  it('lists the delegated sessions with their own rounds and links each', async () => {
    m = await openWith({ ...session, delegations: [sub, { ...sub, session_id: 's3', alias: 'sub-u', budget_max: 0, used_rounds: 1 }] })
    const lines = [...m.host.querySelectorAll('[data-testid="delegation"]')]
    expect(lines.map((l) => l.textContent)).toEqual(['delegated to pi: sub-t (2/20 rounds)', 'delegated to pi: sub-u (1 rounds, no limit)'])
    expect(lines[0].getAttribute('data-session-id')).toBe('s2')
    expect(m.host.querySelector('[data-testid="deleg-origin"]')).toBeNull()
  })

  it('links a delegated session to its origin, in Chinese too', async () => {
    m = await openWith({ ...session, session_id: 's2', origin_session_id: 's0', origin })
    expect(m.host.querySelector('[data-testid="deleg-origin"]')?.textContent).toBe('Delegated from clean-build')
    m.unmount()
    m = await openWith({ ...session, session_id: 's2', origin_session_id: 's0', origin, delegations: [sub] }, 'zh')
    expect(m.host.querySelector('[data-testid="deleg-origin"]')?.textContent).toBe('委派自 clean-build')
    expect(m.host.querySelector('[data-testid="delegation"]')?.textContent).toBe('已委派给 pi：sub-t（2/20 轮）')
    save('lang', 'en')
  })

  it('shows no delegation line for a session without any', async () => {
    m = await openWith(session)
    expect(m.host.querySelector('[data-testid="delegations"]')).toBeNull()
    expect(m.host.querySelector('[data-testid="deleg-origin"]')).toBeNull()
  })
})

describe('a mail of a conversation shows its own subject', () => {
  it.each([
    ['Build', 'Build'],
    ['Re: Build', 'Build'],
    ['RE: Fwd: build ', 'Build'],
    ['回复：Build', 'Build'],
    ['', 'Build'],
  ])('not when %j only repeats the title %j', (subject, title) => {
    expect(ownSubject(subject, title)).toBeNull()
  })
  it.each([
    ['Deploy now', 'Build', 'Deploy now'],
    ['Re: Deploy', 'Build', 'Re: Deploy'],
    [' Anything ', '', 'Anything'],
  ])('when %j differs from the title %j', (subject, title, want) => {
    expect(ownSubject(subject, title)).toBe(want)
  })
})
