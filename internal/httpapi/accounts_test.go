package httpapi_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

func TestLoginSetsHttpOnlyCookieAndCookieWritesNeedCSRF(t *testing.T) {
	e := newEnv(t)
	status, body, hdr := e.raw("POST", "/api/v1/auth/login", "", `{"username":"admin","password":"`+adminPassword+`"}`)
	if status != 200 || !strings.Contains(body, `"csrf_token"`) {
		t.Fatalf("login: %d %s", status, body)
	}
	c := hdr.Get("Set-Cookie")
	if !strings.Contains(c, "agentmail_session=") || !strings.Contains(c, "HttpOnly") {
		t.Fatalf("Set-Cookie %q is not an HttpOnly agentmail_session cookie", c)
	}
	cookie := strings.SplitN(strings.SplitN(c, ";", 2)[0], "=", 2)[1]

	// A cookie write without the token is a 403; with it, it works.
	do := func(csrf string) int {
		req, _ := http.NewRequest("POST", e.url+"/api/v1/me/keys", strings.NewReader(`{"label":"x","lifecycle":"permanent"}`))
		req.AddCookie(&http.Cookie{Name: "agentmail_session", Value: cookie})
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := do(""); got != 403 {
		t.Fatalf("cookie write without X-CSRF-Token = %d, want 403", got)
	}
	if got := do("wrong"); got != 403 {
		t.Fatalf("cookie write with a wrong X-CSRF-Token = %d, want 403", got)
	}
	me, err := e.admin.Me(e.ctx())
	if err != nil || me.Username != "admin" || me.Role != "admin" || me.AuthKind != "cookie" || me.CSRFToken == "" {
		t.Fatalf("Me = %+v, %v", me, err)
	}
	csrf := strings.Split(strings.Split(body, `"csrf_token":"`)[1], `"`)[0]
	if got := do(csrf); got != 201 {
		t.Fatalf("cookie write with the token = %d, want 201", got)
	}
}

func TestWrongPasswordAndUnknownUserAreTheSame401(t *testing.T) {
	e := newEnv(t)
	c := client.New(e.url, client.WithCookieJar())
	_, err := c.Login(e.ctx(), client.LoginRequest{Username: "admin", Password: "nope"})
	a := wantStatus(t, err, 401, "invalid_credentials")
	_, err = c.Login(e.ctx(), client.LoginRequest{Username: "ghost", Password: "nope"})
	b := wantStatus(t, err, 401, "invalid_credentials")
	if a.Body.Error != b.Body.Error {
		t.Fatalf("messages differ: %q vs %q", a.Body.Error, b.Body.Error)
	}
}

func TestLogoutEndsTheCookieSession(t *testing.T) {
	e := newEnv(t)
	c := e.login("admin", adminPassword)
	if err := c.Logout(e.ctx()); err != nil {
		t.Fatal(err)
	}
	// Put the old cookie back: the server forgot it.
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.url)
	old := client.New(e.url, client.WithCookieJar())
	if _, err := old.Login(e.ctx(), client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatal(err)
	}
	cookies := old.HTTPClient().Jar.Cookies(u)
	if err := old.Logout(e.ctx()); err != nil {
		t.Fatal(err)
	}
	jar.SetCookies(u, cookies)
	stale := client.New(e.url, client.WithHTTPClient(&http.Client{Jar: jar}))
	_, err := stale.Me(e.ctx())
	wantStatus(t, err, 401, "")
}

func TestKeyBoundaries(t *testing.T) {
	e := newEnv(t)
	agent := e.agent("dsh")
	// An agent key never reads a person's mailbox.
	_, err := agent.MeInbox(e.ctx(), client.InboxQuery{})
	wantStatus(t, err, 403, "person_only")
	// A user key never registers an agent.
	k, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "cli", Lifecycle: client.LifecyclePermanent})
	if err != nil || k.KeyToken == "" {
		t.Fatalf("CreateUserKey = %+v, %v", k, err)
	}
	user := client.New(e.url, client.WithToken(k.KeyToken))
	_, err = user.Register(e.ctx(), client.RegisterRequest{Name: "dsh"})
	wantStatus(t, err, 403, "agent_only")
	// The user key reads the person's own mailbox without any CSRF token.
	if _, err := user.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/tmp/w.new", Subject: "hi", Body: "x"}); err != nil {
		t.Fatalf("user key send: %v", err)
	}
	// Unknown key: 401.
	_, err = client.New(e.url, client.WithToken("no-such-key-0000000000000")).Inbox(e.ctx(), client.InboxQuery{})
	wantStatus(t, err, 401, "invalid_key")
	// An agent cannot register as another name.
	_, err = agent.Register(e.ctx(), client.RegisterRequest{Name: "other"})
	wantStatus(t, err, 403, "name_mismatch")
	// A person's name cannot become an agent.
	_, err = e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "admin", Lifecycle: client.LifecyclePermanent})
	wantStatus(t, err, 409, "name_taken")
}

func TestKeyLifecycles(t *testing.T) {
	e := newEnv(t)
	one, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Lifecycle: client.LifecycleOneTime})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(e.url, client.WithToken(one.KeyToken))
	if _, err := c.Me(e.ctx()); err != nil {
		t.Fatalf("first use of a one-time key: %v", err)
	}
	_, err = c.Me(e.ctx())
	wantStatus(t, err, 401, "key_used")

	exp := e.clock.Now().Add(time.Hour)
	timed, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Lifecycle: client.LifecycleTimed, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	c = client.New(e.url, client.WithToken(timed.KeyToken))
	if _, err := c.Me(e.ctx()); err != nil {
		t.Fatalf("timed key before expiry: %v", err)
	}
	e.clock.Advance(time.Hour)
	_, err = c.Me(e.ctx())
	wantStatus(t, err, 401, "key_expired")

	_, err = e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Lifecycle: client.LifecycleTimed})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "expires_at" {
		t.Fatalf("field = %q, want expires_at", ae.Body.Field)
	}
	_, err = e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Lifecycle: "forever"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "lifecycle" {
		t.Fatalf("field = %q, want lifecycle", ae.Body.Field)
	}

	perm, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.admin.DeleteUserKey(e.ctx(), perm.KeyID); err != nil {
		t.Fatal(err)
	}
	_, err = client.New(e.url, client.WithToken(perm.KeyToken)).Me(e.ctx())
	wantStatus(t, err, 401, "key_revoked")
	list, err := e.admin.ListUserKeys(e.ctx())
	if err != nil || len(list.Keys) != 3 {
		t.Fatalf("ListUserKeys = %+v, %v", list, err)
	}
	for _, k := range list.Keys {
		if k.Active {
			t.Errorf("key %s (%s) is still active", k.KeyID, k.Lifecycle)
		}
	}
	// Tokens are stored hashed only.
	var n int
	if err := e.st.Read().QueryRow(e.ctx(), `SELECT COUNT(*) FROM api_keys WHERE token_hash = ?`, perm.KeyToken).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a token is stored in clear (%d, %v)", n, err)
	}
}

func TestAgentKeyIssuedOnceOrRegisteredFromClient(t *testing.T) {
	e := newEnv(t)
	issued, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "pi", Lifecycle: client.LifecyclePermanent})
	if err != nil || issued.KeyToken == "" {
		t.Fatalf("issued key = %+v, %v", issued, err)
	}
	reg, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "pi", KeyToken: "bridge-generated-key-0123456789", Lifecycle: client.LifecyclePermanent})
	if err != nil || reg.KeyToken != "" {
		t.Fatalf("registered key = %+v, %v (the client's token must not be echoed)", reg, err)
	}
	for _, tok := range []string{issued.KeyToken, "bridge-generated-key-0123456789"} {
		if _, err := client.New(e.url, client.WithToken(tok)).Heartbeat(e.ctx(), client.HeartbeatRequest{}); err != nil {
			t.Fatalf("heartbeat with %s...: %v", tok[:6], err)
		}
	}
	_, err = e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "pi", KeyToken: "bridge-generated-key-0123456789", Lifecycle: client.LifecyclePermanent})
	wantStatus(t, err, 409, "key_exists")
	_, err = e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "pi", KeyToken: "short", Lifecycle: client.LifecyclePermanent})
	wantStatus(t, err, 400, "")
	l, err := e.admin.ListAgentKeys(e.ctx())
	if err != nil || len(l.Keys) != 2 || l.Keys[0].Owner != "pi" {
		t.Fatalf("ListAgentKeys = %+v, %v", l, err)
	}
	if err := e.admin.DeleteAgentKey(e.ctx(), issued.KeyID); err != nil {
		t.Fatal(err)
	}
	_, err = client.New(e.url, client.WithToken(issued.KeyToken)).Heartbeat(e.ctx(), client.HeartbeatRequest{})
	wantStatus(t, err, 401, "key_revoked")
}

func TestAdminEndpointsNeedAnAdmin(t *testing.T) {
	e := newEnv(t)
	bob := e.person("bob")
	_, err := bob.AdminListUsers(e.ctx())
	wantStatus(t, err, 403, "admin_only")
	users, err := e.admin.AdminListUsers(e.ctx())
	if err != nil || len(users.Users) != 2 {
		t.Fatalf("AdminListUsers = %+v, %v", users, err)
	}
	_, err = e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: "bob", Password: "12345678"})
	wantStatus(t, err, 409, "name_taken")
	dis := true
	if _, err := e.admin.AdminUpdateUser(e.ctx(), "bob", client.UpdateUserRequest{Disabled: &dis}); err != nil {
		t.Fatal(err)
	}
	_, err = bob.Me(e.ctx())
	wantStatus(t, err, 401, "")
}
