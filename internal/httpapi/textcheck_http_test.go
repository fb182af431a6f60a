package httpapi_test

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
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

// Bytes that are not UTF-8 in any JSON string are refused with a 400 naming
// the field, instead of being stored as U+FFFD (on either database).
func TestInvalidUTF8IsA400NamingTheField(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	token := "test-key-dsh-0123456789abcdef"
	for field, body := range map[string]string{
		"subject": "{\"to\":\"dsh@/w.new\",\"subject\":\"caf\xe9\",\"body\":\"x\"}",
		"body":    "{\"to\":\"dsh@/w.new\",\"subject\":\"s\",\"body\":\"ok \xff\xfe\"}",
		"cc":      "{\"to\":\"dsh@/w.new\",\"cc\":\"adm\xc3n\",\"subject\":\"s\",\"body\":\"x\"}",
		"to":      "{\"to\":\"dsh@/w\x80.new\",\"subject\":\"s\",\"body\":\"x\"}",
	} {
		status, resp, _ := e.raw("POST", "/api/v1/mail/send", token, body)
		if status != 400 || !strings.Contains(resp, `"invalid_utf8"`) || !strings.Contains(resp, `"field":"`+field+`"`) {
			t.Errorf("%s: %d %s", field, status, resp)
		}
	}
	k, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "t", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	status, resp, _ := e.raw("POST", "/api/v1/admin/users", k.KeyToken, "{\"username\":\"j\xfcrgen\",\"password\":\"password1\"}")
	if status != 400 || !strings.Contains(resp, `"field":"username"`) || !strings.Contains(resp, `"invalid_utf8"`) {
		t.Errorf("user name: %d %s", status, resp)
	}
	if n := e.count("mails"); n != 0 {
		t.Fatalf("%d mails stored", n)
	}
}
