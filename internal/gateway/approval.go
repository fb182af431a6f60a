package gateway

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ApprovalWords is the one shared whitelist of approval words (seed 003
// "only an explicit approval approves"; DESIGN.md "Approval words"). A
// decision text approves when, after trimming white space, it starts with
// one of them, compared case-insensitively; an ASCII word must end there at
// a word boundary ("yes," and "allow once" approve, "yesterday" and
// "allowance" do not), a Chinese word is a plain prefix ("同意了" approves).
// AlwaysWords are the subset that
// also stores a grant. Do not modify these slices; use JudgeDecision.
var (
	ApprovalWords = []string{"同意", "一直同意", "allow", "approve", "always", "yes"}
	AlwaysWords   = []string{"一直同意", "always"}
)

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
	if t == "" {
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
	if !strings.HasPrefix(t, w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return true
		}
	}
	next, _ := utf8.DecodeRuneInString(t[len(w):])
	if next == utf8.RuneError {
		return len(t) == len(w)
	}
	return !unicode.IsLetter(next) && !unicode.IsDigit(next) && next != '_'
}
