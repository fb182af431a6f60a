package gateway

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ApprovalWords is the one shared whitelist of approval words (seed 003
// "only an explicit approval approves"; DESIGN.md "Approval words"). A
// decision text approves when, after trimming white space, it starts with
// one of them, compared case-insensitively; an ASCII word must be the whole
// first word ("yes," "allow once" and "approved" approve, "yesterday" and
// "allowance" do not), a Chinese word is a plain prefix ("同意了" approves).
// Beyond the seed, a negation anywhere ("always deny", "yes but not now",
// "同意吗？不行") makes the text a denial.
// AlwaysWords are the subset that
// also stores a grant. Do not modify these slices; use JudgeDecision.
var (
	ApprovalWords = []string{"同意", "一直同意", "allow", "approve", "always", "yes"}
	AlwaysWords   = []string{"一直同意", "always"}
)

// approvalForms are the accepted spellings of the ASCII approval words as
// whole words: the whitelist words and their past forms ("approved",
// "allowed"), which people write as often as the words themselves.
var approvalForms = map[string]string{
	"allow": "allow", "allowed": "allow", "approve": "approve", "approved": "approve",
	"always": "always", "yes": "yes",
}

// negationWords turn an approval-looking text into a denial ("always deny",
// "yes, but do not run it", "同意吗？不行"): only an unambiguous approval
// approves, so any of these anywhere in the text denies. The list holds
// refusals only, so "yes, no need to ask again" and "一直同意，别再问" still
// approve. ASCII entries are
// matched as whole words, the Chinese ones as substrings.
var negationWords = []string{"deny", "denied", "reject", "rejected", "refuse", "refused", "not", "don't", "dont", "never",
	"拒绝", "不同意", "不要", "不行", "不准", "不可以", "禁止"}

// JudgeDecision is the gateway's verdict on a person's decision text (W-6,
// seed 003): approved is true only when the trimmed text starts with an
// approval word (case-insensitive prefix, at a word boundary for the ASCII
// words: "Approve.", "yes please", "同意！" approve, "yesterday" does not);
// always is true when it starts with "always" or "一直同意", which
// also approves and asks for a grant (agent + tool + scope). Everything else
// is a denial, the empty string, "deny", "拒绝", "no" and unreadable text
// included: the rule is "in the whitelist", never "not a refusal".
func JudgeDecision(text string) (approved, always bool) {
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" || hasNegation(t) {
		return false, false
	}
	// The always-words are checked first so that the grant is never lost to
	// a shorter word; none of the plain words is a prefix of an always-word,
	// so the order only matters for clarity.
	for _, w := range AlwaysWords {
		if startsWithWord(t, w) {
			return true, true
		}
	}
	for _, w := range ApprovalWords {
		if startsWithWord(t, w) {
			return true, false
		}
	}
	return false, false
}

// startsWithWord reports whether t starts with the approval word w: a
// plain prefix for a word with non-ASCII letters (Chinese has no spaces
// between words), otherwise followed by the end of t or by a rune that is
// neither a letter, a digit nor '_'.
func startsWithWord(t, w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return strings.HasPrefix(t, w)
		}
	}
	words := asciiWords(t)
	return len(words) > 0 && approvalForms[words[0]] == w && strings.HasPrefix(t, words[0])
}

// asciiWords splits t into words of letters, digits, '_' and '\” (so
// "don't" stays one word).
func asciiWords(t string) []string {
	return strings.FieldsFunc(t, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '\''
	})
}

// hasNegation reports whether t holds one of negationWords.
func hasNegation(t string) bool {
	words := asciiWords(t)
	for _, n := range negationWords {
		if n[0] >= utf8.RuneSelf {
			if strings.Contains(t, n) {
				return true
			}
			continue
		}
		for _, w := range words {
			if w == n {
				return true
			}
		}
	}
	return false
}
