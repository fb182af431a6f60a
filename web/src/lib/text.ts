// Cleaning text from the gateway before the page shows it.

// A rule reference of the specification: one capital letter, a dash, a
// number with optional dotted parts ("W-5.1", "N-8", "D-6.2"). Longer
// prefixes are real words of the text (UTF-8, SHA-256) and stay.
const RULE = /(?<![\w-])[A-Z]-\d+(?:\.\d+)*(?![\w-])/.source
const IN_PARENS = new RegExp(`\\s*\\(\\s*${RULE}(?:\\s*[,;/]\\s*${RULE})*\\s*\\)`, 'g')
const BARE = new RegExp(`${RULE}:?`, 'g')

/**
 * withoutRuleCodes drops the specification's rule references ("(W-5.1)",
 * "N-8") from a message: they mean nothing to the person reading the page.
 * The rest of the text is kept.
 */
export function withoutRuleCodes(text: string): string {
  return text.replace(IN_PARENS, '').replace(BARE, '').replace(/ {2,}/g, ' ').replace(/ ([,.;:)])(?=\s|$)/g, '$1').trim()
}

/** hasRuleCode tells whether a text contains a rule reference. */
export function hasRuleCode(text: string): boolean {
  return new RegExp(RULE).test(text)
}

// The characters that reorder or hide what a person reads: the
// bidirectional embeddings and overrides U+202A–U+202E, the isolates
// U+2066–U+2069, the marks U+200E, U+200F and U+061C, and the zero-width
// and invisible format characters U+200B–U+200D, U+2060–U+2064 and U+FEFF.
const HIDDEN = /[\u202A-\u202E\u2066-\u2069\u200B-\u200F\u061C\u2060-\u2064\uFEFF]/g

/**
 * visibleText returns text written by someone else (a subject, a name, a
 * body, an attachment's name) with each character that could reorder or
 * hide words written as its code point, "<U+202E>", as the CLI, the
 * permission card and the model's view do: "Invoice \u202Efdp.exe" cannot
 * read as "Invoice exe.pdf". Every other character is kept.
 */
export function visibleText(text: string | null | undefined): string {
  if (!text) return ''
  return text.replace(HIDDEN, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`)
}

/**
 * isolatedText is visibleText wrapped in the Unicode first-strong isolate
 * U+2068 … U+2069, for someone else's text placed inside a sentence of the
 * page (a translated message's parameter, a tooltip), where no <bdi> can
 * be: the text keeps its own direction and cannot reorder the words around
 * it.
 */
export function isolatedText(text: string | null | undefined): string {
  return `\u2068${visibleText(text)}\u2069`
}

// The scripts a name's letters are told apart by (the Unicode Script
// property); a letter of none of them counts as 'Other'. Common and
// Inherited characters (digits, '-', '_', combining marks) belong to none
// and go with any script.
const SCRIPTS = ['Latin', 'Cyrillic', 'Greek', 'Armenian', 'Georgian', 'Cherokee', 'Hebrew', 'Arabic', 'Thai', 'Devanagari',
  'Han', 'Hiragana', 'Katakana', 'Hangul', 'Bopomofo'].map((s) => [s, new RegExp(`\\p{Script=${s}}`, 'u')] as const)
const LETTER = /\p{L}/u

function scriptOf(ch: string): string {
  for (const [name, re] of SCRIPTS) if (re.test(ch)) return name
  return LETTER.test(ch) ? 'Other' : ''
}

// UTS #39's highly restrictive combinations: Latin may go with Chinese,
// Japanese or Korean writing, as the gateway allows in new names.
const CJK_SETS = [
  ['Latin', 'Han', 'Hiragana', 'Katakana'],
  ['Latin', 'Han', 'Bopomofo'],
  ['Latin', 'Han', 'Hangul'],
]

/**
 * nameScripts answers the scripts of a name's letters in order of first
 * appearance, and whether they mix beyond the highly restrictive level
 * (UTS #39, the gateway's rule for new names): "bоb" with a Cyrillic о is
 * mixed, "张san" is not.
 */
export function nameScripts(name: string): { scripts: string[]; mixed: boolean } {
  const scripts: string[] = []
  for (const ch of name) {
    const s = scriptOf(ch)
    if (s && !scripts.includes(s)) scripts.push(s)
  }
  const mixed = scripts.length > 1 && !CJK_SETS.some((set) => scripts.every((s) => set.includes(s)))
  return { scripts, mixed }
}

/**
 * nameText is visibleText for a person's or an agent's name that also marks
 * a name mixing scripts (a homoglyph such as Cyrillic "а" in "pаypal"): every
 * letter outside the name's main script (the one most of its letters are
 * in; on a tie the first) is written as its code point, "p<U+0430>ypal",
 * so the name cannot pass for another. Other names are visibleText.
 */
export function nameText(name: string | null | undefined): string {
  const text = visibleText(name)
  const { mixed } = nameScripts(text)
  if (!mixed) return text
  const count = new Map<string, number>()
  for (const ch of text) {
    const s = scriptOf(ch)
    if (s) count.set(s, (count.get(s) ?? 0) + 1)
  }
  let main = ''
  for (const [s, n] of count) if (!main || n > (count.get(main) ?? 0)) main = s
  let out = ''
  for (const ch of text) {
    const s = scriptOf(ch)
    out += s && s !== main ? `<U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>` : ch
  }
  return out
}

/** isolatedName is nameText wrapped in U+2068 … U+2069, as isolatedText. */
export function isolatedName(name: string | null | undefined): string {
  return `\u2068${nameText(name)}\u2069`
}
