// How errors read on the page: a request that never reached the gateway, and
// gateway messages that cite the specification's rules.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from './api/client'
import { ErrorBox } from './components/ui'
import { I18nProvider } from './i18n'
import { RETRY_MS, errorText } from './state'
import { mount, type Mounted } from './test-utils'

let m: Mounted | undefined
afterEach(() => {
  m?.unmount()
  m = undefined
  window.localStorage.clear()
})

const offline = () => new ApiError(0, { error: 'Failed to fetch', code: 'network' })

describe('errorText', () => {
  it('says the gateway cannot be reached instead of "Failed to fetch"', () => {
    m = mount(<I18nProvider>{null}</I18nProvider>)
    expect(errorText(offline())).toBe('Cannot reach the gateway — retrying')
  })
  it('says it in Chinese when the page is in Chinese', () => {
    window.localStorage.setItem('agentmail.lang', 'zh')
    m = mount(<I18nProvider>{null}</I18nProvider>)
    expect(errorText(offline())).toBe('无法连接网关——正在重试')
  })
  it('drops rule references from messages and suggestions', () => {
    const e = new ApiError(404, {
      error: 'no session called x (N-8)',
      code: 'alias_not_found',
      suggestion: 'check the alias; do not retry with .new, which would open an empty session (N-8)',
    })
    expect(errorText(e)).toBe('no session called x — check the alias; do not retry with .new, which would open an empty session')
  })
})

describe('ErrorBox', () => {
  it('shows an unreachable gateway plainly, with a retry', () => {
    m = mount(
      <I18nProvider>
        <ErrorBox error={offline()} onRetry={() => {}} />
      </I18nProvider>,
    )
    const text = m.q('error-box').textContent ?? ''
    expect(text).toContain('Cannot reach the gateway — retrying')
    expect(text).not.toContain('Failed to fetch')
    expect(text).toContain('Retry')
  })
  it('asks again by itself while the gateway cannot be reached, and only then', () => {
    vi.useFakeTimers()
    try {
      let offlineRetries = 0
      let otherRetries = 0
      m = mount(
        <I18nProvider>
          <ErrorBox error={offline()} onRetry={() => offlineRetries++} />
          <ErrorBox error={new ApiError(403, { error: 'not yours', code: 'forbidden' })} onRetry={() => otherRetries++} />
        </I18nProvider>,
      )
      vi.advanceTimersByTime(RETRY_MS * 2 + 10)
      expect(offlineRetries).toBe(2)
      expect(otherRetries).toBe(0)
      m.unmount()
      m = undefined
      vi.advanceTimersByTime(RETRY_MS * 2)
      expect(offlineRetries).toBe(2)
    } finally {
      vi.useRealTimers()
    }
  })
  it('names a full gateway disk in the reader\'s language, not the bare error', () => {
    m = mount(
      <I18nProvider>
        <ErrorBox error={new ApiError(507, { error: "the gateway's disk is full: free space in /data", code: 'storage_full' })} />
      </I18nProvider>,
    )
    expect(m.q('error-box').textContent).toContain("The gateway's disk is full: nothing new can be sent or saved")
  })
  it('shows no rule codes', () => {
    m = mount(
      <I18nProvider>
        <ErrorBox error={new ApiError(400, { error: 'relay_key is required (B-8.1)', code: 'bad', suggestion: 'see D-6.2' })} />
      </I18nProvider>,
    )
    expect(m.q('error-box').textContent).not.toMatch(/[A-Z]-\d/)
  })
})
