// When the gateway could not flush its database to disk it answers writes
// 503 storage_failed and /readyz "storage failed" until it is restarted: the
// page says so in a banner, in the reader's language, with what to do, and
// keeps it while the gateway restarts (no answer) until /readyz is ready.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, ApiError } from './api/client'
import type { Me } from './api/types'
import { Shell } from './components/Shell'
import { ErrorBox } from './components/ui'
import { I18nProvider } from './i18n'
import { AppStateProvider, RETRY_MS, errorText } from './state'
import { click, mount, settle, type Mounted } from './test-utils'

vi.mock('./api/events', () => ({ connectLive: () => () => {} }))

const me = (role: Me['role']): Me => ({
  username: 'bob', role, auth_kind: 'cookie', language: 'en', email_available: false, email: '', email_notify: 'permission',
})

type Readiness = 'ready' | 'failed' | 'down'
let readiness: Readiness = 'ready'
// A plain answer (not a Response, whose body streams outside the fake timers).
const json = (status: number, body: unknown) =>
  ({ status, ok: status < 300, json: async () => body, text: async () => JSON.stringify(body) }) as unknown as Response

beforeEach(() => {
  readiness = 'ready'
  vi.stubGlobal('fetch', vi.fn(async (input: RequestInfo | URL) => {
    const path = new URL(String(input), 'http://page.test').pathname
    if (path === '/readyz') {
      if (readiness === 'down') throw new TypeError('Failed to fetch')
      return readiness === 'failed' ? json(503, { status: 'storage failed' }) : json(200, { status: 'ready' })
    }
    if (path === '/api/v1/me/mail/send') {
      return json(503, {
        error: 'the gateway could not write its database to disk and takes no writes until it is restarted',
        code: 'storage_failed',
        suggestion: "ask the administrator to check the gateway's disk and restart it",
      })
    }
    if (path === '/api/v1/me/counts') return json(200, { unread: 0, pending_permissions: 0 })
    return json(404, { error: 'not here', code: 'not_found' })
  }))
})

let m: Mounted | undefined
afterEach(() => {
  m?.unmount()
  m = undefined
  vi.useRealTimers()
  vi.unstubAllGlobals()
  window.localStorage.clear()
})

const page = (role: Me['role']) => (
  <I18nProvider>
    <AppStateProvider me={me(role)} onLogout={() => {}}>
      <Shell path="/inbox">
        <button data-testid="write" onClick={() => api.send({ to: 'dsh', subject: 's', body: 'b' }).catch(() => {})} />
      </Shell>
    </AppStateProvider>
  </I18nProvider>
)

const banner = () => document.querySelector('[data-testid="storage-failed-banner"]')

describe('a gateway whose disk failed a flush', () => {
  it('shows the banner after a refused write, says what to do in English and Chinese, and keeps it until a restart', async () => {
    vi.useFakeTimers()
    m = mount(page('user'))
    await vi.advanceTimersByTimeAsync(10)
    expect(banner()).toBeNull()
    readiness = 'failed'
    click(m.q('write'))
    await vi.advanceTimersByTimeAsync(10)
    expect(banner()?.getAttribute('role')).toBe('alert')
    const en = banner()?.textContent ?? ''
    expect(en).toContain('could not write to its disk')
    expect(en).toContain("Ask the gateway's administrator to check the disk")
    expect(en).toContain('restart the gateway')
    expect(en).toContain('look for it before you send it again')
    click(m.q('lang-zh'))
    await vi.advanceTimersByTimeAsync(10)
    expect(banner()?.textContent).toContain('网关无法把数据写入磁盘')
    expect(banner()?.textContent).toContain('重新启动网关')
    // Still failed, then restarting (no answer): the banner stays.
    await vi.advanceTimersByTimeAsync(RETRY_MS * 2)
    expect(banner()).not.toBeNull()
    readiness = 'down'
    await vi.advanceTimersByTimeAsync(RETRY_MS * 2)
    expect(banner()).not.toBeNull()
    readiness = 'ready'
    await vi.advanceTimersByTimeAsync(RETRY_MS + 10)
    await vi.advanceTimersByTimeAsync(10)
    expect(banner()).toBeNull()
  })
  it('is shown on opening the page when /readyz already says so; the administrator is told to check the disk and restart', async () => {
    readiness = 'failed'
    m = mount(page('admin'))
    await settle()
    await vi.waitFor(() => expect(banner()).not.toBeNull())
    expect(banner()?.textContent).toContain("Check the disk of the gateway's machine")
    expect(banner()?.textContent).toContain('then restart the gateway')
  })
  it('names the failure plainly in an error box, without the bare gateway words', () => {
    m = mount(
      <I18nProvider>
        <ErrorBox error={new ApiError(503, { error: 'the gateway could not write its database to disk', code: 'storage_failed' })} />
      </I18nProvider>,
    )
    expect(m.q('error-box').textContent).toContain('The gateway could not write to its disk and takes nothing new until it is restarted.')
    window.localStorage.setItem('agentmail.lang', 'zh')
    m.unmount()
    m = mount(<I18nProvider>{null}</I18nProvider>)
    expect(errorText(new ApiError(503, { error: 'x', code: 'storage_failed' }))).toContain('网关无法把数据写入磁盘')
  })
})
