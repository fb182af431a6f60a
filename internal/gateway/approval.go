package gateway

import (
	"fmt"
	"strings"
	"unicode"
)

// ApprovalWords is the one shared whitelist of approval words (seed 003
// "only an explicit approval approves"; DESIGN.md "Approval words"; the
// trust-boundary issue, point 10). A decision approves only when the first
// word of its first line is one of them (compared case-insensitively, full-
// width letters folded) and the rest of that line holds no word of the
// opposite kind (RefusalWords); see ReadDecision. AlwaysWords are the subset
// that also stores a grant. Do not modify these slices.
var (
	ApprovalWords = []string{"同意", "一直同意", "allow", "approve", "always", "yes"}
	AlwaysWords   = []string{"一直同意", "always"}
)

// RefusalWords are the words of the opposite kind: one of them anywhere on
// the first line after the approval word makes the decision a denial
// ("approve? NO!", "yes, no need to ask again", "同意?不"). The ASCII words
// are compared with whole words (and any word ending in "n't", such as
// "don't" or "can't", counts too), "不" and "否" only as a word of their own
// (between punctuation or spaces), the other Chinese words as substrings.
// The list holds the words (deny, refuse, reject, no, not, never,
// 拒绝, 不同意, 不, 否), their common forms and synonyms, the negations
// written without an apostrophe, and no in a few other languages. A word
// that only looks like an ASCII refusal ("nо" with a Cyrillic о, "N0" with
// a zero) counts as that refusal (refusal compares confusable skeletons).
var RefusalWords = []string{"deny", "denied", "refuse", "refused", "reject", "rejected", "no", "nope", "nah", "not",
	"never", "dont", "cannot", "cant", "isnt", "wont", "aint", "doesnt", "didnt", "shouldnt", "wouldnt", "couldnt",
	"mustnt", "nein", "nicht", "non", "不", "否", "拒绝", "不同意", "不要", "不行", "不准", "不可以", "禁止"}

// refusalSkeletons maps the confusable skeleton (NameSkeleton) of each
// ASCII refusal word to the word.
var refusalSkeletons = func() map[string]string {
	m := map[string]string{}
	for _, r := range RefusalWords {
		if r[0] < 0x80 {
			m[NameSkeleton(r)] = r
		}
	}
	return m
}()

// standaloneRefusals are the Chinese refusals that count only as a word of
// their own: 不 starts many words that do not refuse (不过, 不用谢).
var standaloneRefusals = map[string]bool{"不": true, "否": true}

// DecisionVerdict is the gateway's reading of a decision text: Approved and
// Always as JudgeDecision answers them, Reason one plain sentence saying what
// was understood and why ("understood as a denial: the first line also
// says \"no\" ..."), which the decision mail quotes back to the person.
type DecisionVerdict struct {
	Approved bool
	Always   bool
	Reason   string
}

// JudgeDecision is the gateway's verdict on a person's decision text (W-6,
// seed 003): approved is true only for an explicit, unambiguous approval
// (ReadDecision); always is true when the approval word is "always" or
// "一直同意", which also asks for a grant. Everything else is a denial.
func JudgeDecision(text string) (approved, always bool) {
	v := ReadDecision(text)
	return v.Approved, v.Always
}

// ReadDecision reads a decision text by the one rule (trust boundary, point
// 10): only the first non-empty line counts; its first word must be one of
// ApprovalWords, whole (so "yesterday", "approved", "同意了" and "sure" are
// not approvals), and the rest of the line must hold none of RefusalWords.
// Words are runs of letters, digits, '_' and apostrophes; Chinese and other
// text next to each other are separate words, punctuation and spaces
// (full-width ones too) separate words. Anything else, the empty text
// included, is a denial; Reason says which part of the rule decided.
//
// Pinned: "approve", "Approve.", "同意！", "同意，谢谢", "一直同意，别再问",
// "yes, go ahead", "always" approve; "approve? NO!", "yes no", "同意?不",
// "approve, no way", "approve - NOT", "yes, no need to ask again", "sure"
// and "" deny.
func ReadDecision(text string) DecisionVerdict {
	line := strings.TrimSpace(text)
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	words := decisionWords(line)
	if len(words) == 0 {
		return DecisionVerdict{Reason: "understood as a denial: the answer holds no word; " + approveHow}
	}
	first := words[0]
	if refusal(first) != "" || strings.HasPrefix(first, "不") || strings.HasPrefix(first, "拒绝") {
		return DecisionVerdict{Reason: fmt.Sprintf("understood as a denial: the answer starts with %q", first)}
	}
	if !isApprovalWord(first) {
		return DecisionVerdict{Reason: fmt.Sprintf("understood as a denial: the first word %q is not an approval word; %s", first, approveHow)}
	}
	for _, w := range words[1:] {
		if r := refusal(w); r != "" {
			return DecisionVerdict{Reason: fmt.Sprintf("understood as a denial: the first line starts with %q but also says %q; "+
				"an approval needs nothing against it on that line", first, r)}
		}
	}
	for _, w := range AlwaysWords {
		if first == w {
			return DecisionVerdict{Approved: true, Always: true, Reason: fmt.Sprintf(
				"understood as \"always\": the first line starts with %q and says nothing against it", first)}
		}
	}
	return DecisionVerdict{Approved: true, Reason: fmt.Sprintf(
		"understood as an approval: the first line starts with %q and says nothing against it", first)}
}

// approveHow tells a person how to approve.
const approveHow = "to approve, start the first line with 同意, 一直同意, allow, approve, always or yes and write nothing against it there"

func isApprovalWord(w string) bool {
	for _, a := range ApprovalWords {
		if w == a {
			return true
		}
	}
	return false
}

// refusal answers the refusal word w is or holds (as RefusalWords
// describes), or "".
func refusal(w string) string {
	if strings.HasSuffix(w, "n't") {
		return w
	}
	for _, r := range RefusalWords {
		switch {
		case standaloneRefusals[r]:
			if w == r {
				return r
			}
		case r[0] >= 0x80: // Chinese: no spaces between words
			if strings.Contains(w, r) {
				return r
			}
		case w == r:
			return r
		}
	}
	if r, ok := refusalSkeletons[NameSkeleton(w)]; ok {
		return r
	}
	return ""
}

// decisionWords splits a line into lower-case words: runs of letters,
// digits, '_' and apostrophes (’ read as '), full-width forms folded to
// ASCII, with a break wherever Han text meets other letters.
func decisionWords(line string) []string {
	var words []string
	var cur []rune
	prevHan := false
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range line {
		if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII forms
			r -= 0xFEE0
		}
		if r == '’' {
			r = '\''
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '\'' {
			flush()
			continue
		}
		han := unicode.Is(unicode.Han, r)
		if len(cur) > 0 && han != prevHan {
			flush()
		}
		prevHan = han
		cur = append(cur, unicode.ToLower(r))
	}
	flush()
	return words
}
