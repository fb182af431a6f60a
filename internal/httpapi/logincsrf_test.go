package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// Login CSRF (trust boundary, point 5): a page on another site cannot sign
// the visitor's browser into an account. POST /auth/login reads only
// application/json and refuses a cross-site Origin or Sec-Fetch-Site; the
// gateway's own page and clients that are not browsers keep signing in.
func TestLoginRefusesCrossSiteAndNonJSONBodies(t *testing.T) {
	e := newEnv(t)
	self, err := url.Parse(e.url)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"username":"admin","password":"` + adminPassword + `"}`
	cases := []struct {
		name        string
		contentType string
		origin      string
		fetchSite   string
		host        string // Host header; "" keeps the server's
		status      int
		code, field string
	}{
		{"text/plain from another site", "text/plain", "http://evil.example", "", "", 403, "cross_site_login", "Origin"},
		{"text/plain from another site, fetch metadata", "text/plain;charset=UTF-8", "http://evil.example", "cross-site", "", 403, "cross_site_login", "Origin"},
		{"form from another site", "application/x-www-form-urlencoded", "https://evil.example", "", "", 403, "cross_site_login", "Origin"},
		{"json marked cross-site", "application/json", "", "cross-site", "", 403, "cross_site_login", "Origin"},
		{"json from an opaque origin", "application/json", "null", "", "", 403, "cross_site_login", "Origin"},
		{"json from another port", "application/json", "http://" + self.Hostname() + ":1", "", "", 403, "cross_site_login", "Origin"},
		{"text/plain without origin", "text/plain", "", "", "", 415, "unsupported_media_type", "Content-Type"},
		{"no content type", "", "", "", "", 415, "unsupported_media_type", "Content-Type"},
		{"text/plain from the page itself", "text/plain", e.url, "same-origin", "", 415, "unsupported_media_type", "Content-Type"},
		// accepted
		{"the gateway's page", "application/json", e.url, "same-origin", "", 200, "", ""},
		{"the page behind a proxy that rewrites Host", "application/json", "https://mail.example", "same-origin", "127.0.0.1:9", 200, "", ""},
		{"same origin without fetch metadata", "application/json", e.url, "", "", 200, "", ""},
		{"a client that is not a browser", "application/json; charset=utf-8", "", "", "", 200, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", e.url+"/api/v1/auth/login", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			if c.fetchSite != "" {
				req.Header.Set("Sec-Fetch-Site", c.fetchSite)
			}
			if c.host != "" {
				req.Host = c.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			cookie := resp.Header.Get("Set-Cookie")
			if c.status != 200 {
				if cookie != "" {
					t.Fatalf("a refused sign-in set a cookie: %q", cookie)
				}
				var eb client.ErrorBody
				if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
					t.Fatalf("the refusal is not a JSON error: %v", err)
				}
				if eb.Code != c.code || eb.Field != c.field || eb.Error == "" || eb.Suggestion == "" {
					t.Fatalf("error body %+v, want code %s field %s with a message and a suggestion", eb, c.code, c.field)
				}
				return
			}
			if !strings.Contains(cookie, "agentmail_session=") {
				t.Fatalf("sign-in set no session cookie: %q", cookie)
			}
		})
	}

	// The Go client (what `agentmail login` uses) signs in as before.
	c := client.New(e.url, client.WithCookieJar())
	if _, err := c.Login(e.ctx(), client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatalf("client login: %v", err)
	}
	if me, err := c.Me(e.ctx()); err != nil || me.Username != "admin" {
		t.Fatalf("me after client login: %+v, %v", me, err)
	}
}
