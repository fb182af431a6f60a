package gateway

import (
	"strings"
	"testing"
)

// The decision words as pinned by the trust-boundary issue (point 10), and
// the rule's edges. reason holds words the explanation must contain.
func TestReadDecisionPinnedCases(t *testing.T) {
	cases := []struct {
		text             string
		approved, always bool
		reason           string
	}{
		// pinned approvals
		{"approve", true, false, `starts with "approve"`},
		{"Approve.", true, false, `starts with "approve"`},
		{"同意！", true, false, `starts with "同意"`},
		{"同意，谢谢", true, false, `starts with "同意"`},
		{"一直同意，别再问", true, true, `understood as "always"`},
		{"yes, go ahead", true, false, "understood as an approval"},
		{"always", true, true, `understood as "always"`},
		// pinned denials
		{"approve? NO!", false, false, `also says "no"`},
		{"yes no", false, false, `also says "no"`},
		{"同意?不", false, false, `also says "不"`},
		{"approve, no way", false, false, `also says "no"`},
		{"approve - NOT", false, false, `also says "not"`},
		{"yes, no need to ask again", false, false, `understood as a denial: the first line starts with "yes" but also says "no"`},
		{"sure", false, false, `the first word "sure" is not an approval word`},
		{"", false, false, "holds no word"},

		// negations without an apostrophe, no in other languages, and words
		// that only look like a refusal
		{"approve cannot", false, false, `also says "cannot"`},
		{"approve isnt", false, false, `also says "isnt"`},
		{"approve wont", false, false, `also says "wont"`},
		{"yes nein", false, false, `also says "nein"`},
		{"yes N0", false, false, `also says "no"`},
		{"yes n\u043e", false, false, `also says "no"`}, // Cyrillic о
		{"approve, n\u043et now", false, false, `also says "not"`},

		// approvals: the whole first word, any case, punctuation around it
		{"  同意  ", true, false, ""},
		{"　同意", true, false, ""}, // full-width space
		{"allow", true, false, ""},
		{"Allow once", true, false, ""},
		{"allow-once", true, false, ""},
		{"APPROVE", true, false, ""},
		{"ＹＥＳ", true, false, ""}, // full-width letters
		{"yes,go", true, false, ""},
		{"yes!", true, false, ""},
		{"\t yes\n", true, false, ""},
		{"always.", true, true, ""},
		{"Always allow", true, true, ""},
		{"一直同意", true, true, ""},
		{"同意，不过小心点", true, false, ""},          // 不过 ("but") is not a standalone 不
		{"approve\nno, wait", true, false, ""}, // only the first line counts
		// denials: not an approval word first
		{"   ", false, false, "holds no word"},
		{"!!!", false, false, "holds no word"},
		{"ok", false, false, "not an approval word"},
		{"I approve", false, false, `"i" is not an approval word`},
		{"approved", false, false, "not an approval word"},
		{"Allowed", false, false, "not an approval word"},
		{"yesterday", false, false, "not an approval word"},
		{"allowance", false, false, "not an approval word"},
		{"alwaysfail", false, false, ""},
		{"yes2", false, false, ""},
		{"yes_no", false, false, ""},
		{"yesé", false, false, ""},
		{"y", false, false, ""},
		{"一直", false, false, ""},
		{"同意了", false, false, `the first word "同意了"`},
		{"同意吗？不行", false, false, ""},
		{"同意不", false, false, ""},
		{"__shutdown__", false, false, ""},
		// denials: a refusal first
		{"deny", false, false, `starts with "deny"`},
		{"no", false, false, `starts with "no"`},
		{"拒绝", false, false, `starts with "拒绝"`},
		{"不同意", false, false, `starts with "不同意"`},
		{"not approve", false, false, ""},
		// denials: a refusal later on the first line
		{"always deny", false, false, `also says "deny"`},
		{"yes, but not now", false, false, `also says "not"`},
		{"yes, never mind", false, false, `also says "never"`},
		{"approve — don't run it yet", false, false, `also says "don't"`},
		{"approve — don’t run it yet", false, false, `also says "don't"`},
		{"yes, can't hurt", false, false, `also says "can't"`},
		{"yes ｎｏ", false, false, `also says "no"`},
		{"同意，否", false, false, `also says "否"`},
		{"同意，我不同意", false, false, `also says "不同意"`},
		{"同意？不要执行", false, false, `also says "不要"`},
		{"一直同意，拒绝", false, false, `also says "拒绝"`},
		{"yes nope", false, false, `also says "nope"`},
	}
	for _, c := range cases {
		v := ReadDecision(c.text)
		if v.Approved != c.approved || v.Always != c.always {
			t.Errorf("ReadDecision(%q) = (approved %v, always %v), want (%v, %v); reason %q", c.text, v.Approved, v.Always, c.approved, c.always, v.Reason)
		}
		if v.Reason == "" || !strings.Contains(v.Reason, c.reason) {
			t.Errorf("ReadDecision(%q).Reason = %q, want it to contain %q", c.text, v.Reason, c.reason)
		}
		if a, al := JudgeDecision(c.text); a != v.Approved || al != v.Always {
			t.Errorf("JudgeDecision(%q) = (%v, %v) differs from ReadDecision", c.text, a, al)
		}
	}
}

func TestAlwaysWordsAreApprovalWords(t *testing.T) {
	for _, w := range AlwaysWords {
		found := false
		for _, a := range ApprovalWords {
			found = found || a == w
		}
		if !found {
			t.Errorf("always word %q is not in ApprovalWords", w)
		}
	}
}
