package gateway

import "testing"

func TestJudgeDecisionWhitelist(t *testing.T) {
	cases := []struct {
		text             string
		approved, always bool
	}{
		// approvals
		{"同意", true, false},
		{"同意，去做吧", true, false},
		{"  同意  ", true, false},
		{"一直同意", true, true},
		{"一直同意这个工具", true, true},
		{"allow", true, false},
		{"Allow once", true, false},
		{"approve", true, false},
		{"APPROVE", true, false},
		{"approve.", true, false},
		{"yes,go", true, false},
		{"yes!", true, false},
		{"allow-once", true, false},
		{"always.", true, true},
		{"同意了", true, false},  // Chinese: plain prefix
		{"一直同意吧", true, true}, // Chinese: plain prefix
		{"always", true, true},
		{"Always allow", true, true},
		{"yes", true, false},
		{"Yes, go ahead", true, false},
		{"\t yes\n", true, false},
		{"　同意", true, false}, // full-width space trimmed
		// denials
		{"", false, false},
		{"   ", false, false},
		{"deny", false, false},
		{"拒绝", false, false},
		{"不同意", false, false},
		{"no", false, false},
		{"ok", false, false},
		{"sure", false, false},
		{"I approve", false, false}, // prefix only, never "contains"
		{"一直", false, false},
		{"alway", false, false},
		{"y", false, false},
		{"__shutdown__", false, false},
		{"not approve", false, false},
		// ASCII words end at a word boundary
		{"yesterday", false, false},
		{"Yesterday it failed", false, false},
		{"allowance", false, false},
		{"approved.", true, false}, // the past form of "approve"
		{"Allowed", true, false},
		{"approvedx", false, false},
		// a negation anywhere denies
		{"always deny", false, false},
		{"yes, but not now", false, false},
		{"approve — don't run it yet", false, false},
		{"同意吗？不行", false, false},
		{"同意？不要执行", false, false},
		{"yes, never mind", false, false},
		// refusal words only: these still approve
		{"一直同意，别再问", true, true},
		{"yes, no need to ask again", true, false},
		{"approval pending", false, false},
		{"alwaysfail", false, false},
		{"yes2", false, false},
		{"yes_no", false, false},
		{"yesé", false, false},
	}
	for _, c := range cases {
		approved, always := JudgeDecision(c.text)
		if approved != c.approved || always != c.always {
			t.Errorf("JudgeDecision(%q) = (%v, %v), want (%v, %v)", c.text, approved, always, c.approved, c.always)
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
