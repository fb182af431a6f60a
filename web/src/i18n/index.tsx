import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react'
import { en, type MsgKey } from './en'
import { zh } from './zh'
import { load, save } from '../lib/storage'

/** Lang is a supported page language. */
export type Lang = 'en' | 'zh'

/** LANGS are the page's languages, in switch order. */
export const LANGS: readonly Lang[] = ['en', 'zh'] as const

const DICTS: Record<Lang, Record<MsgKey, string>> = { en, zh }

/** Translate is the t() function: a key and its placeholders → text. */
export type Translate = (key: MsgKey, params?: Record<string, string | number>) => string

/** format replaces {name} placeholders; unknown ones stay visible so they get noticed. */
export function format(template: string, params?: Record<string, string | number>): string {
  if (!params) return template
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in params ? String(params[k]) : m))
}

/** translator returns t() for a language. */
export function translator(lang: Lang): Translate {
  const dict = DICTS[lang]
  return (key, params) => format(dict[key] ?? en[key] ?? key, params)
}

/** browserLang picks Chinese for any zh* browser language, English otherwise. */
export function browserLang(languages: readonly string[]): Lang {
  for (const l of languages) {
    const low = l.toLowerCase()
    if (low.startsWith('zh')) return 'zh'
    if (low.startsWith('en')) return 'en'
  }
  return 'en'
}

/** initialLang: the stored choice, else the browser's languages. */
export function initialLang(): Lang {
  const nav = typeof navigator !== 'undefined' ? navigator.languages ?? [navigator.language] : []
  return load<Lang>('lang', LANGS, browserLang(nav))
}

let activeLang: Lang = 'en'

/**
 * activeTranslate is t() for the language the page shows now, for code that
 * runs outside components (error texts built in event handlers).
 */
export function activeTranslate(): Translate {
  return translator(activeLang)
}

interface I18n {
  lang: Lang
  /** setLang is the language switch: the page's language, and the signed-in person's account language. */
  setLang: (l: Lang) => void
  /** adoptLang shows l without telling the account (the account's own language, on sign-in). */
  adoptLang: (l: Lang) => void
  t: Translate
  /** BCP 47 tag for Intl formatting. */
  locale: string
}

const Ctx = createContext<I18n>({
  lang: 'en',
  setLang: () => {},
  adoptLang: () => {},
  t: translator('en'),
  locale: 'en',
})

let langChosen: ((l: Lang) => void) | null = null

/**
 * onLangChosen registers what the language switch also does (save the
 * signed-in person's account language); null removes it.
 */
export function onLangChosen(fn: ((l: Lang) => void) | null) {
  langChosen = fn
}

/** isLang says whether s is a page language. */
export function isLang(s: unknown): s is Lang {
  return typeof s === 'string' && (LANGS as readonly string[]).includes(s)
}

/** I18nProvider holds the chosen language and keeps <html lang> in step. */
export function I18nProvider({ children }: { children: ReactNode }) {
  const [lang, setLangState] = useState<Lang>(initialLang)
  activeLang = lang
  const adoptLang = useCallback((l: Lang) => {
    save('lang', l)
    setLangState(l)
  }, [])
  const setLang = useCallback(
    (l: Lang) => {
      adoptLang(l)
      langChosen?.(l)
    },
    [adoptLang],
  )
  useEffect(() => {
    document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en'
    document.title = DICTS[lang]['app.name']
  }, [lang])
  const value = useMemo(
    () => ({ lang, setLang, adoptLang, t: translator(lang), locale: lang === 'zh' ? 'zh-CN' : 'en' }),
    [lang, setLang, adoptLang],
  )
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>
}

/** useI18n gives the current language, its t() and the language switch. */
export function useI18n(): I18n {
  return useContext(Ctx)
}
