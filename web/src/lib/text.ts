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
