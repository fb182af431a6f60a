package httpapi

import (
	"strings"
	"testing"
)

func TestPersonErrorTextHasNoRulesOrEndpoints(t *testing.T) {
	for sugg := range personSuggestions {
		m, s := personErrorText("no session called x (N-8)", sugg)
		if m != "no session called x" || s == "" || endpoint.MatchString(s) || strings.Contains(s, "N-8") {
			t.Errorf("%q → %q, %q", sugg, m, s)
		}
	}
	m, s := personErrorText("relay_key is required when relay is set (W-5.1)", "see D-6.2 or GET /api/v1/openapi.json")
	if m != "relay_key is required when relay is set" || s != "" {
		t.Errorf("got %q, %q", m, s)
	}
	// Words that only look like rule references stay.
	if m, _ := personErrorText("subject and body must be UTF-8; SHA-256 mismatch", ""); m != "subject and body must be UTF-8; SHA-256 mismatch" {
		t.Errorf("got %q", m)
	}
}

// The unknown-alias suggestion keeps the space before ".new" (issue 18:
// it read "writing.new"), while a space before a clause's punctuation goes.
func TestPersonErrorTextKeepsDotWords(t *testing.T) {
	_, s := personErrorText("", "check the alias (GET /api/v1/address/suggest); do not retry with .new, which would open an empty session (N-8)")
	if !strings.Contains(s, "writing .new instead") {
		t.Errorf("suggestion = %q", s)
	}
	if m, _ := personErrorText("refused (B-8.1) .", ""); m != "refused." {
		t.Errorf("got %q", m)
	}
}
