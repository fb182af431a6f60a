// A person's or an agent's name that mixes alphabets (a look-alike of another
// name) is marked where the page shows it: the foreign letters as code points,
// and a title that says why, in the reader's language.
import { afterEach, describe, expect, it } from 'vitest'
import { I18nProvider } from '../i18n'
import { mount, type Mounted } from '../test-utils'
import { UserName } from './ui'

let m: Mounted | undefined
afterEach(() => {
  m?.unmount()
  m = undefined
  window.localStorage.clear()
})

const shown = (name: string) => {
  m = mount(
    <I18nProvider>
      <span data-testid="name">
        <UserName name={name} />
      </span>
    </I18nProvider>,
  )
  return m.q('name').querySelector('bdi')!
}

describe('UserName', () => {
  it('marks a name with a Cyrillic letter among Latin ones and says why', () => {
    const el = shown('p\u0430ypal')
    expect(el.textContent).toBe('p<U+0430>ypal')
    expect(el.getAttribute('data-mixed-scripts')).toBe('true')
    expect(el.getAttribute('title')).toContain('mixes letters of different alphabets')
  })
  it('says it in Chinese when the page is in Chinese', () => {
    window.localStorage.setItem('agentmail.lang', 'zh')
    expect(shown('b\u043eb').getAttribute('title')).toContain('混用了不同字母表')
  })
  it('leaves a name in one alphabet, or Latin with Chinese, as it is', () => {
    for (const name of ['bob', '张san']) {
      const el = shown(name)
      expect(el.textContent).toBe(name)
      expect(el.hasAttribute('data-mixed-scripts')).toBe(false)
      expect(el.hasAttribute('title')).toBe(false)
      m?.unmount()
      m = undefined
    }
  })
})
