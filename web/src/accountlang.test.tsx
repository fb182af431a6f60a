// The person's language is an account setting (issue 18): once signed in
// the page shows the account's language, and the language switch saves a
// new choice to the account, so the mails written for the person follow it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Me } from './api/types'
import { LangSwitch } from './components/Shell'
import { I18nProvider, useI18n } from './i18n'
import { AppStateProvider } from './state'
import { click, mount, settle, type Mounted } from './test-utils'

vi.mock('./api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('./api/client')>()
  return { ...real, api: { ...real.api, counts: vi.fn(), updateMe: vi.fn() } }
})
vi.mock('./api/events', () => ({ connectLive: () => () => {} }))
const { api } = await import('./api/client')
const update = vi.mocked(api.updateMe)

const me = (language: Me['language']): Me => ({
  username: 'bob', role: 'user', auth_kind: 'cookie', language, email_available: false, email: '', email_notify: 'permission',
})

function Shown() {
  const { t } = useI18n()
  return <span data-testid="shown">{t('lang.label')}</span>
}

let m: Mounted | undefined
beforeEach(() => {
  vi.mocked(api.counts).mockReset().mockResolvedValue({ unread: 0, pending_permissions: 0 })
  update.mockReset().mockImplementation(async (b) => me(b.language ?? 'en'))
})
afterEach(() => {
  m?.unmount()
  m = undefined
  window.localStorage.clear()
})

const page = (account: Me) => (
  <I18nProvider>
    <AppStateProvider me={account} onLogout={() => {}}>
      <Shown />
      <LangSwitch />
    </AppStateProvider>
  </I18nProvider>
)

describe('the account language', () => {
  it('is what the page shows once signed in, whatever the browser chose before', async () => {
    window.localStorage.setItem('agentmail.lang', 'en')
    m = mount(page(me('zh')))
    await settle()
    expect(m.q('lang-zh').getAttribute('aria-pressed')).toBe('true')
    expect(update).not.toHaveBeenCalled()
  })
  it('is set by the language switch', async () => {
    m = mount(page(me('en')))
    await settle()
    const before = m.q('shown').textContent
    click(m.q('lang-zh'))
    await settle()
    expect(update).toHaveBeenCalledWith({ language: 'zh' })
    expect(m.q('shown').textContent).not.toBe(before)
  })
})
