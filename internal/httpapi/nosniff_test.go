package httpapi_test

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// Every answer of the API says X-Content-Type-Options: nosniff, errors
// included, so a browser never reads a JSON answer (which may echo text of
// the request) as HTML or script.
func TestEveryAnswerSaysNoSniff(t *testing.T) {
	e := newEnv(t)
	key, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "t"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		method, path, token, body string
		status                    int
	}{
		{"GET", "/healthz", "", "", 200},
		{"GET", "/readyz", "", "", 200},
		{"GET", "/api/v1/openapi.json", "", "", 200},
		{"GET", "/api/v1/me", key.KeyToken, "", 200},
		{"GET", "/api/v1/me", "", "", 401},
		{"GET", "/api/v1/me", "not-a-key", "", 401},
		{"GET", "/api/v1/no-such-route", "", "", 404},
		{"DELETE", "/api/v1/openapi.json", "", "", 405},
		{"POST", "/api/v1/me/mail/send", key.KeyToken, "{not json", 400},
		{"GET", "/api/v1/me/mail/m_unknown", key.KeyToken, "", 404},
	}
	for _, c := range cases {
		status, body, h := e.raw(c.method, c.path, c.token, c.body)
		if status != c.status {
			t.Errorf("%s %s = %d %s, want %d", c.method, c.path, status, body, c.status)
		}
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options = %q, want nosniff", c.method, c.path, status, got)
		}
	}
}
