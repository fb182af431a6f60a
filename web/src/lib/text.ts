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
