import { describe, expect, it } from 'vitest'
import { en } from './en'
import { zh } from './zh'
import { browserLang, format, translator } from '.'
import { hasRuleCode } from '../lib/text'

const placeholders = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort()

describe('dictionaries', () => {
  it('have the same keys', () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort())
  })
  it('have no empty strings', () => {
    for (const [k, v] of [...Object.entries(en), ...Object.entries(zh)]) expect(v.trim(), k).not.toBe('')
  })
  it('cite no rule codes of the specification (such as D-6.2 or N-8)', () => {
    for (const [k, v] of [...Object.entries(en), ...Object.entries(zh)]) expect(hasRuleCode(v), `${k}: ${v}`).toBe(false)
  })
  it('use the same placeholders in both languages', () => {
    for (const k of Object.keys(en) as (keyof typeof en)[]) expect(placeholders(zh[k]), k).toEqual(placeholders(en[k]))
  })
})

describe('translator', () => {
  it('fills placeholders', () => {
    expect(translator('en')('nav.unreadCount', { count: 3 })).toBe('3 unread')
    expect(translator('zh')('nav.unreadCount', { count: 3 })).toBe('3 封未读')
  })
  it('leaves unknown placeholders visible', () => {
    expect(format('a {x} {y}', { x: 1 })).toBe('a 1 {y}')
  })
})

describe('browserLang', () => {
  it.each([
    [['zh-CN', 'en'], 'zh'],
    [['zh-TW'], 'zh'],
    [['en-US', 'zh-CN'], 'en'],
    [['fr-FR', 'zh'], 'zh'],
    [['de'], 'en'],
    [[], 'en'],
  ])('%j → %s', (langs, want) => {
    expect(browserLang(langs)).toBe(want)
  })
})
