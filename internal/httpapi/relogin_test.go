package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestLoginWithAValidCookieNeedsNoCSRF checks that POST /auth/login works
// while the browser still holds a valid session cookie and sends no
// X-CSRF-Token (signing in again, or as someone else), while logout, a
// cookie-authenticated write, still needs the token.
func TestLoginWithAValidCookieNeedsNoCSRF(t *testing.T) {
	e := newEnv(t)
	e.person("alice")
	status, _, hdr := e.raw("POST", "/api/v1/auth/login", "", `{"username":"admin","password":"`+adminPassword+`"}`)
	if status != 200 {
		t.Fatalf("first login: %d", status)
	}
	cookie := strings.SplitN(strings.SplitN(hdr.Get("Set-Cookie"), ";", 2)[0], "=", 2)[1]
	post := func(path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(e.ctx(), "POST", e.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.AddCookie(&http.Cookie{Name: "agentmail_session", Value: cookie})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := post("/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`); status != 200 || !strings.Contains(body, `"username":"alice"`) {
		t.Fatalf("login while holding a valid cookie: %d %s", status, body)
	}
	if status, body := post("/api/v1/auth/login", `{"username":"alice","password":"wrong"}`); status != 401 {
		t.Fatalf("a wrong password while holding a cookie: %d %s", status, body)
	}
	if status, body := post("/api/v1/auth/logout", ``); status != 403 {
		t.Fatalf("logout without X-CSRF-Token: %d %s", status, body)
	}
}
