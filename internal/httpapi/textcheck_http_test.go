package httpapi_test

import (
	"strings"
	"testing"
)

// A NUL character is refused with a 400 naming the field on both
// databases, where PostgreSQL alone would have failed with a 500.
func TestNULCharacterIsA400OnEveryDatabase(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	token := "test-key-dsh-0123456789abcdef"
	status, body, _ := e.raw("POST", "/api/v1/mail/send", token,
		`{"to":"dsh@/w.new","subject":"binary","body":"before\u0000after"}`)
	if status != 400 || !strings.Contains(body, `"nul_character"`) || !strings.Contains(body, `"field":"body"`) {
		t.Fatalf("send with a NUL: %d %s", status, body)
	}
	if n := e.count("mails"); n != 0 {
		t.Fatalf("%d mails stored", n)
	}
}
