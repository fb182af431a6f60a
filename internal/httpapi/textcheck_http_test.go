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

// A path or query parameter holding NUL or bytes that are not UTF-8 is a
// 400 naming the parameter on both databases (PostgreSQL failed the lookup
// with a 500 before).
func TestNULOrInvalidUTF8InAParameterIsA400(t *testing.T) {
	e := newEnv(t)
	k, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "t", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/api/v1/me/mail/%00":               `"code":"nul_character","field":"id"`,
		"/api/v1/me/mail/%FF":               `"code":"invalid_utf8","field":"id"`,
		"/api/v1/me/sessions/ab%00cd/mails": `"code":"nul_character","field":"id"`,
		"/api/v1/agents/x%C3":               `"code":"invalid_utf8","field":"name"`,
		"/api/v1/address/suggest?q=%00":     `"code":"nul_character","field":"q"`,
		"/api/v1/me/mail/search?q=a%FFb":    `"code":"invalid_utf8","field":"q"`,
		"/api/v1/me/mail/inbox?st%FF=1":     `"code":"invalid_utf8","field":"st`,
	} {
		status, body, _ := e.raw("GET", path, k.KeyToken, "")
		if status != 400 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
	// Without credentials the 401 comes first.
	if status, _, _ := e.raw("GET", "/api/v1/me/mail/%00", "", ""); status != 401 {
		t.Errorf("without credentials: %d", status)
	}
}
