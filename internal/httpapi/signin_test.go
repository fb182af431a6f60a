package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/httpapi"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// A person changes their own password: the current one is checked, the
// new one needs 8 characters, the cookie session making the change stays
// signed in while every other one ends, and user keys keep working.
func TestChangePasswordKeepsThisSessionAndEndsTheOthers(t *testing.T) {
	e := newEnv(t)
	this := e.person("ann")
	other := e.login("ann", "ann-password")
	k, err := this.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "script", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	byKey := client.New(e.url, client.WithToken(k.KeyToken))

	err = this.ChangePassword(e.ctx(), client.ChangePasswordRequest{CurrentPassword: "wrong-password", NewPassword: "brand-new-secret"})
	if ae := wantStatus(t, err, 400, "wrong_password"); ae.Body.Field != "current_password" {
		t.Fatalf("field = %q", ae.Body.Field)
	}
	err = this.ChangePassword(e.ctx(), client.ChangePasswordRequest{CurrentPassword: "ann-password", NewPassword: "short"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "new_password" {
		t.Fatalf("field = %q", ae.Body.Field)
	}
	// The new password equal to the current one changes nothing (issue 18).
	err = this.ChangePassword(e.ctx(), client.ChangePasswordRequest{CurrentPassword: "ann-password", NewPassword: "ann-password"})
	if ae := wantStatus(t, err, 400, "same_password"); ae.Body.Field != "new_password" {
		t.Fatalf("field = %q", ae.Body.Field)
	}
	err = this.ChangePassword(e.ctx(), client.ChangePasswordRequest{NewPassword: "brand-new-secret"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "current_password" {
		t.Fatalf("field = %q", ae.Body.Field)
	}
	if _, err := other.Me(e.ctx()); err != nil {
		t.Fatalf("a refused change ended the other session: %v", err)
	}

	if err := this.ChangePassword(e.ctx(), client.ChangePasswordRequest{CurrentPassword: "ann-password", NewPassword: "brand-new-secret"}); err != nil {
		t.Fatal(err)
	}
	if me, err := this.Me(e.ctx()); err != nil || me.Username != "ann" {
		t.Fatalf("the changing session: %+v, %v", me, err)
	}
	// A write with the kept session still passes the CSRF check.
	if _, err := this.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "after", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatalf("write after the change: %v", err)
	}
	_, err = other.Me(e.ctx())
	wantStatus(t, err, 401, "session_expired")
	if _, err := byKey.Me(e.ctx()); err != nil {
		t.Fatalf("user key after the change: %v", err)
	}
	_, err = client.New(e.url, client.WithCookieJar()).Login(e.ctx(), client.LoginRequest{Username: "ann", Password: "ann-password"})
	wantStatus(t, err, 401, "invalid_credentials")
	e.login("ann", "brand-new-secret")

	// With a user key every cookie session ends; agents have no password.
	if err := byKey.ChangePassword(e.ctx(), client.ChangePasswordRequest{CurrentPassword: "brand-new-secret", NewPassword: "third-secret"}); err != nil {
		t.Fatal(err)
	}
	_, err = this.Me(e.ctx())
	wantStatus(t, err, 401, "session_expired")
	agent := e.agent("dsh")
	err = agent.ChangePassword(e.ctx(), client.ChangePasswordRequest{CurrentPassword: "x", NewPassword: "yyyyyyyyy"})
	wantStatus(t, err, 403, "person_only")
	_, err = client.New(e.url).Me(e.ctx())
	wantStatus(t, err, 401, "missing_key")
	if status, _, _ := e.raw("POST", "/api/v1/me/password", "", `{"current_password":"a","new_password":"bbbbbbbb"}`); status != 401 {
		t.Fatalf("without credentials: %d", status)
	}
}

// loginErr signs in with a fresh client and answers the error.
func (e *env) loginErr(user, password string) error {
	_, err := client.New(e.url, client.WithCookieJar()).Login(e.ctx(), client.LoginRequest{Username: user, Password: password})
	return err
}

// Repeated failed sign-ins for a username lock it (429 with Retry-After),
// even for the right password; the lock doubles with each further failure;
// a success clears the count; the username is compared in lower case.
func TestSignInThrottlePerUsername(t *testing.T) {
	e := newEnv(t)
	e.person("ann")
	for i := 0; i < gateway.UsernameThrottle.Limit; i++ {
		wantStatus(t, e.loginErr("ann", "wrong"), 401, "invalid_credentials")
	}
	ae := wantStatus(t, e.loginErr("ANN", "ann-password"), 429, "sign_in_throttled")
	if ae.Body.RetryAfterSeconds != 300 || ae.Body.Field != "username" {
		t.Fatalf("429 body %+v", ae.Body)
	}
	status, body, h := e.raw("POST", "/api/v1/auth/login", "", `{"username":"ann","password":"ann-password"}`)
	if status != 429 || h.Get("Retry-After") != "300" || !strings.Contains(body, "sign_in_throttled") {
		t.Fatalf("raw 429: %d %q %s", status, h.Get("Retry-After"), body)
	}
	// Another person is not affected (the address limit is higher).
	e.person("bob")

	// The lock ends after 5 minutes; the next failure locks for 10.
	e.clock.Advance(5 * time.Minute)
	wantStatus(t, e.loginErr("ann", "wrong"), 401, "invalid_credentials")
	ae = wantStatus(t, e.loginErr("ann", "ann-password"), 429, "sign_in_throttled")
	if ae.Body.RetryAfterSeconds != 600 {
		t.Fatalf("second lock: %d s", ae.Body.RetryAfterSeconds)
	}
	e.clock.Advance(10 * time.Minute)
	e.login("Ann", "ann-password") // a success clears the count
	for i := 0; i < gateway.UsernameThrottle.Limit-1; i++ {
		wantStatus(t, e.loginErr("ann", "wrong"), 401, "invalid_credentials")
	}
	e.login("ann", "ann-password")

	// An unknown username is counted like a known one, so the 429 tells
	// nothing about who exists.
	for i := 0; i < gateway.UsernameThrottle.Limit; i++ {
		wantStatus(t, e.loginErr("ghost", "wrong"), 401, "invalid_credentials")
	}
	wantStatus(t, e.loginErr("ghost", "wrong"), 429, "sign_in_throttled")
}

// Failed sign-ins from one address for many usernames lock the address.
func TestSignInThrottlePerAddress(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < gateway.AddressThrottle.Limit; i++ {
		wantStatus(t, e.loginErr("probe"+string(rune('a'+i)), "wrong"), 401, "invalid_credentials")
	}
	ae := wantStatus(t, e.loginErr("admin", adminPassword), 429, "sign_in_throttled")
	if ae.Body.RetryAfterSeconds != 60 || ae.Body.Field != "" {
		t.Fatalf("address 429 body %+v", ae.Body)
	}
	e.clock.Advance(gateway.AddressThrottle.Forget)
	e.login("admin", adminPassword)
}

// The counts live in the database: failures seen by one replica lock the
// username on another replica of the same database.
func TestSignInThrottleHoldsAcrossReplicas(t *testing.T) {
	e := newEnv(t)
	e.person("ann")
	other := gateway.New(e.st, e.clock, fastHashing, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for i := 0; i < gateway.UsernameThrottle.Limit; i++ {
		_, err := other.Login(context.Background(), client.LoginRequest{Username: "ann", Password: "wrong"}, gateway.SignInFrom{Remote: "198.51.100.9"})
		if !gateway.HasCode(err, "invalid_credentials") {
			t.Fatalf("replica login %d: %v", i, err)
		}
	}
	wantStatus(t, e.loginErr("ann", "ann-password"), 429, "sign_in_throttled")
}

// A disabled person's cookie, key and sign-in all say that the account is
// disabled and that an admin can enable it, not "sign in again".
func TestDisabledAccountSaysAskAnAdmin(t *testing.T) {
	e := newEnv(t)
	ann := e.person("ann")
	k, err := ann.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "cli", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.AdminUpdateUser(e.ctx(), "ann", client.UpdateUserRequest{Disabled: client.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		ae := wantStatus(t, err, 401, "account_disabled")
		if !strings.Contains(ae.Body.Error, "disabled") || !strings.Contains(ae.Body.Suggestion, "ask an admin") ||
			strings.Contains(ae.Body.Suggestion, "sign in again or") {
			t.Fatalf("%s: %+v", what, ae.Body)
		}
	}
	_, err = client.New(e.url, client.WithToken(k.KeyToken)).Me(e.ctx())
	check("user key", err)
	check("sign-in", e.loginErr("ann", "ann-password"))
	// A cookie session made before disabling: ended by the disabling;
	// re-enabled, a new one works.
	if _, err := e.admin.AdminUpdateUser(e.ctx(), "ann", client.UpdateUserRequest{Disabled: client.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	ann = e.login("ann", "ann-password")
	// Disabled behind the gateway's back, so the cookie itself is checked.
	if err := e.st.Write(context.Background(), func(q *store.Q) error {
		_, err := q.Exec(context.Background(), `UPDATE users SET disabled = ? WHERE username = ?`, true, "ann")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, err = ann.Me(e.ctx())
	check("cookie", err)
}

// Names are case-insensitive and stored in lower case; reserved names
// cannot be taken.
func TestNamesAreCaseInsensitiveAndSomeAreReserved(t *testing.T) {
	e := newEnv(t)
	u, err := e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: "Ann", Password: "ann-password"})
	if err != nil || u.Username != "ann" {
		t.Fatalf("create Ann: %+v, %v", u, err)
	}
	_, err = e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: "ANN", Password: "ann-password"})
	wantStatus(t, err, 409, "name_taken")
	_, err = e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "aNN", Lifecycle: client.LifecyclePermanent})
	wantStatus(t, err, 409, "name_taken")
	ann := e.login("ANN", "ann-password")

	k, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "Claude", KeyToken: "test-key-claude-0123456789abcdef", Lifecycle: client.LifecyclePermanent})
	if err != nil || k.Owner != "claude" {
		t.Fatalf("agent key Claude: %+v, %v", k, err)
	}
	r, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "Claude@/srv/app.new", Subject: "hi", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ann.MeGetMail(e.ctx(), r.MailID)
	if err != nil || m.Recipients[0].Name != "claude" || m.Recipients[0].Address != "claude@/srv/app."+r.SessionAlias {
		t.Fatalf("mail to Claude: %+v, %v", m, err)
	}
	if _, err := e.admin.Agent(e.ctx(), "CLAUDE"); err != nil {
		t.Fatalf("GET /agents/CLAUDE: %v", err)
	}
	if _, err := client.New(e.url, client.WithToken("test-key-claude-0123456789abcdef")).Register(e.ctx(),
		client.RegisterRequest{Name: "Claude", Platform: "test", Workspaces: []client.Workspace{}}); err != nil {
		t.Fatalf("register as Claude with claude's key: %v", err)
	}

	for _, name := range []string{"agentmail", "System", "timeout", "admin"} {
		_, err := e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: name, Password: "whatever-pass"})
		if ae := wantStatus(t, err, 400, "reserved_name"); ae.Body.Field != "username" {
			t.Errorf("user %s: field %q", name, ae.Body.Field)
		}
	}
	for _, name := range []string{"agentmail", "system", "TimeOut"} {
		_, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: name, Lifecycle: client.LifecyclePermanent})
		if ae := wantStatus(t, err, 400, "reserved_name"); ae.Body.Field != "agent_name" {
			t.Errorf("agent %s: field %q", name, ae.Body.Field)
		}
	}
	if n := e.count("names"); n != 3 { // admin, ann, claude
		t.Fatalf("%d names stored", n)
	}
}

// "admin" is reserved even when the first admin has another name, and the
// first start may not take the other reserved names.
func TestAdminNameIsOnlyForTheFirstAdmin(t *testing.T) {
	ctx := context.Background()
	svc := gateway.New(storetest.Open(t), nil, fastHashing, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, name := range []string{"system", "agentmail", "timeout"} {
		if _, _, err := svc.BootstrapAdmin(ctx, name, "long-enough"); !gateway.HasCode(err, "reserved_name") {
			t.Errorf("ADMIN_USER=%s: %v", name, err)
		}
	}
	if created, _, err := svc.BootstrapAdmin(ctx, "Root", "long-enough"); err != nil || !created {
		t.Fatalf("ADMIN_USER=Root: %v %v", created, err)
	}
	if _, err := svc.CreateUser(ctx, client.CreateUserRequest{Username: "admin", Password: "long-enough"}); !gateway.HasCode(err, "reserved_name") {
		t.Fatalf("admin after a first admin named root: %v", err)
	}
	if _, err := svc.CreateUser(ctx, client.CreateUserRequest{Username: "ROOT", Password: "long-enough"}); !gateway.HasCode(err, "name_taken") {
		t.Fatalf("ROOT next to root: %v", err)
	}
}

// The names table refuses two names differing only in case, whatever path
// claimed them (migration 0012).
func TestNamesTableRefusesCaseVariants(t *testing.T) {
	e := newEnv(t)
	err := e.st.Write(context.Background(), func(q *store.Q) error {
		ok, err := q.ClaimName(context.Background(), "Admin", store.KindPerson, e.clock.Now())
		if err == nil && ok {
			t.Errorf("Admin was claimed next to admin")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A browser that signed in to an account before is a known device: an
// attacker's failed guesses lock the username for every other client, but
// that browser still signs in, counted under its own lock (OWASP's device
// cookies). The cookie is HttpOnly, sent only to the sign-in, known only
// for the account it signed in to, and forgotten after 180 days unused.
func TestKnownDeviceSignsInWhileTheUsernameIsLocked(t *testing.T) {
	e := newEnv(t)
	e.person("ann")
	e.person("bob")
	browser := client.New(e.url, client.WithCookieJar())
	if _, err := browser.Login(e.ctx(), client.LoginRequest{Username: "ann", Password: "ann-password"}); err != nil {
		t.Fatal(err)
	}
	if err := browser.Logout(e.ctx()); err != nil {
		t.Fatal(err)
	}
	_, _, h := e.raw("POST", "/api/v1/auth/login", "", `{"username":"ann","password":"ann-password"}`)
	var device string
	for _, c := range h.Values("Set-Cookie") {
		if strings.HasPrefix(c, httpapi.DeviceCookieName+"=") {
			device = c
		}
	}
	for _, want := range []string{"Path=/api/v1/auth/login", "HttpOnly", "SameSite=Strict", "Max-Age=15552000"} {
		if !strings.Contains(device, want) {
			t.Fatalf("device cookie %q lacks %s", device, want)
		}
	}

	for i := 0; i < gateway.UsernameThrottle.Limit; i++ { // the attacker
		wantStatus(t, e.loginErr("ann", "guess"), 401, "invalid_credentials")
	}
	wantStatus(t, e.loginErr("ann", "ann-password"), 429, "sign_in_throttled") // a new client
	if _, err := browser.Login(e.ctx(), client.LoginRequest{Username: "ann", Password: "ann-password"}); err != nil {
		t.Fatalf("the known browser is locked out by someone else's guesses: %v", err)
	}
	_ = browser.Logout(e.ctx())

	// The device's own failures lock it alone.
	for i := 0; i < gateway.DeviceThrottle.Limit; i++ {
		_, err := browser.Login(e.ctx(), client.LoginRequest{Username: "ann", Password: "typo"})
		wantStatus(t, err, 401, "invalid_credentials")
	}
	_, err := browser.Login(e.ctx(), client.LoginRequest{Username: "ann", Password: "ann-password"})
	ae := wantStatus(t, err, 429, "sign_in_throttled")
	if !strings.Contains(ae.Body.Error, "from this browser") {
		t.Fatalf("device lock message: %q", ae.Body.Error)
	}

	// ann's device is nobody else's: for bob it counts under bob's name.
	for i := 0; i < gateway.UsernameThrottle.Limit; i++ {
		wantStatus(t, e.loginErr("bob", "guess"), 401, "invalid_credentials")
	}
	_, err = browser.Login(e.ctx(), client.LoginRequest{Username: "bob", Password: "bob-password"})
	wantStatus(t, err, 429, "sign_in_throttled")

	// Unused for 180 days, the device is forgotten: once the username is
	// locked again, it is locked for that browser too.
	e.clock.Advance(gateway.DeviceCookieTTL)
	for i := 0; i < gateway.UsernameThrottle.Limit; i++ {
		wantStatus(t, e.loginErr("ann", "guess"), 401, "invalid_credentials")
	}
	_, err = browser.Login(e.ctx(), client.LoginRequest{Username: "ann", Password: "ann-password"})
	wantStatus(t, err, 429, "sign_in_throttled")
}

// slowPassword gives name a password hashed at bcrypt's default cost, so
// each check takes tens of milliseconds and parallel sign-ins overlap.
func (e *env) slowPassword(name, password string) {
	e.t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		e.t.Fatal(err)
	}
	err = e.st.Write(context.Background(), func(q *store.Q) error {
		u, err := q.GetUser(context.Background(), name)
		if err != nil {
			return err
		}
		u.PasswordHash = string(hash)
		return q.UpdateUser(context.Background(), u)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// parallelSignIns sends n sign-ins for user at once over HTTP and answers
// each one's status, body and Retry-After.
func (e *env) parallelSignIns(n int, user, password string) (status []int, body, retry []string) {
	status, body, retry = make([]int, n), make([]string, n), make([]string, n)
	payload := fmt.Sprintf(`{"username":%q,"password":%q}`, user, password)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := 0; i < n; i++ {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			req, _ := http.NewRequest("POST", e.url+"/api/v1/auth/login", strings.NewReader(payload))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				body[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			status[i], body[i], retry[i] = resp.StatusCode, string(b), resp.Header.Get("Retry-After")
		}()
	}
	start.Done()
	done.Wait()
	return status, body, retry
}

// Parallel sign-ins with the right password are never refused as failed
// ones: each succeeds, or (while as many attempts are in flight as could
// reach the lock) is told honestly that too many run at once, with a
// 1-second Retry-After, and signs in right after. Nothing is locked.
func TestParallelCorrectSignInsAreNotLocked(t *testing.T) {
	e := newEnv(t)
	e.person("erin")
	e.slowPassword("erin", "pass-erin-123456")
	status, body, retry := e.parallelSignIns(8, "erin", "pass-erin-123456")
	refused := 0
	for i := range status {
		switch {
		case status[i] == 200:
		case status[i] == 429 && strings.Contains(body[i], "sign_in_busy") &&
			strings.Contains(body[i], "too many sign-ins at once for this username; try again in a moment") && retry[i] == "1":
			refused++
			e.login("erin", "pass-erin-123456")
		default:
			t.Fatalf("sign-in %d: %d Retry-After %q %s", i, status[i], retry[i], body[i])
		}
	}
	t.Logf("%d of 8 parallel correct sign-ins were asked to retry", refused)
	// No failure was counted: four wrong guesses still leave the username open.
	for i := 0; i < gateway.UsernameThrottle.Limit-1; i++ {
		wantStatus(t, e.loginErr("erin", "wrong"), 401, "invalid_credentials")
	}
	e.login("erin", "pass-erin-123456")
}

// A burst of parallel wrong guesses beyond the limit is still refused: at
// most Limit of them get their password checked, the rest are refused
// (429), and the username is then locked for 5 minutes even for the right
// password.
func TestParallelWrongGuessesStillLock(t *testing.T) {
	e := newEnv(t)
	e.person("erin")
	e.slowPassword("erin", "pass-erin-123456")
	status, body, _ := e.parallelSignIns(12, "erin", "wrong-guess")
	checked := 0
	for i := range status {
		switch {
		case status[i] == 401 && strings.Contains(body[i], "invalid_credentials"):
			checked++
		case status[i] == 429 && (strings.Contains(body[i], "sign_in_busy") || strings.Contains(body[i], "sign_in_throttled")):
		default:
			t.Fatalf("guess %d: %d %s", i, status[i], body[i])
		}
	}
	if checked == 0 || checked > gateway.UsernameThrottle.Limit {
		t.Fatalf("%d of 12 parallel guesses were checked, want 1..%d", checked, gateway.UsernameThrottle.Limit)
	}
	for checked < gateway.UsernameThrottle.Limit {
		wantStatus(t, e.loginErr("erin", "wrong-guess"), 401, "invalid_credentials")
		checked++
	}
	ae := wantStatus(t, e.loginErr("erin", "pass-erin-123456"), 429, "sign_in_throttled")
	if ae.Body.RetryAfterSeconds != 300 || ae.Body.Field != "username" {
		t.Fatalf("lock after the burst: %+v", ae.Body)
	}
}

// Attempts in flight are a reservation, not failures: while as many are
// held as could reach the lock, a further attempt is refused as busy (no
// lock, 1-second Retry-After); a reservation left by an attempt that never
// finished is forgotten after SignInReservationTTL.
func TestSignInsInFlightAreRefusedAsBusyNotLocked(t *testing.T) {
	e := newEnv(t)
	e.person("erin")
	err := e.st.Write(context.Background(), func(q *store.Q) error {
		for i := 0; i < gateway.UsernameThrottle.Limit; i++ {
			if err := q.CountLoginAttempt(context.Background(), "inflight:user:erin", e.clock.Now(), e.clock.Now().Add(-time.Minute)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ae := wantStatus(t, e.loginErr("erin", "erin-password"), 429, "sign_in_busy")
	if ae.Body.RetryAfterSeconds != 1 || ae.Body.Field != "username" ||
		ae.Body.Error != "too many sign-ins at once for this username; try again in a moment" {
		t.Fatalf("busy body %+v", ae.Body)
	}
	e.clock.Advance(gateway.SignInReservationTTL)
	e.login("erin", "erin-password")
}
