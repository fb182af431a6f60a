package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/events"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/httpapi"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// fastHashing is the gateway configuration of these tests: the lowest
// bcrypt cost, so signing in takes microseconds.
var fastHashing = gateway.Config{BcryptCost: bcrypt.MinCost}

// env is a gateway on a temporary SQLite database behind httptest, with a
// manual clock and a signed-in admin.
type env struct {
	t     *testing.T
	url   string
	clock *gateway.ManualClock
	svc   *gateway.Service
	hub   *events.Hub
	st    *store.Store
	admin *client.Client
}

const adminPassword = "admin-password"

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, httpapi.Options{SSEHeartbeat: time.Second})
}

// newEnvWith is newEnv with the server's options.
func newEnvWith(t *testing.T, opt httpapi.Options) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st := storetest.Open(t) // SQLite, or PostgreSQL with AGENTMAIL_TEST_DATABASE=postgres
	clock := gateway.NewManualClock(time.Date(2026, 9, 2, 10, 0, 0, 0, time.UTC))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := gateway.New(st, clock, fastHashing, log)
	hub := events.NewHub(st, events.Options{PollInterval: 50 * time.Millisecond}, log)
	if err := hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	svc.Notifier = hub
	srv := httpapi.New(svc, hub, log, opt)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Drain()
		ts.Close()
		cancel()
		st.Close()
	})
	if _, _, err := svc.BootstrapAdmin(ctx, "admin", adminPassword); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, url: ts.URL, clock: clock, svc: svc, hub: hub, st: st}
	e.admin = e.login("admin", adminPassword)
	return e
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// login signs a person in with a cookie jar (CSRF handled by the client).
func (e *env) login(user, password string) *client.Client {
	e.t.Helper()
	c := client.New(e.url, client.WithCookieJar())
	if _, err := c.Login(e.ctx(), client.LoginRequest{Username: user, Password: password}); err != nil {
		e.t.Fatalf("login %s: %v", user, err)
	}
	return c
}

// person creates a user and signs them in.
func (e *env) person(name string) *client.Client {
	e.t.Helper()
	if _, err := e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: name, Password: name + "-password"}); err != nil {
		e.t.Fatalf("create user %s: %v", name, err)
	}
	return e.login(name, name+"-password")
}

// agent registers a client-generated key for name and registers the agent.
func (e *env) agent(name string) *client.Client {
	e.t.Helper()
	token := "test-key-" + name + "-0123456789abcdef"
	if _, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: name, KeyToken: token, Lifecycle: client.LifecyclePermanent}); err != nil {
		e.t.Fatalf("agent key %s: %v", name, err)
	}
	c := client.New(e.url, client.WithToken(token))
	if _, err := c.Register(e.ctx(), client.RegisterRequest{Name: name, Platform: "test", Workspaces: []client.Workspace{}}); err != nil {
		e.t.Fatalf("register %s: %v", name, err)
	}
	return c
}

// raw sends a request with a raw body and answers status and body.
func (e *env) raw(method, path, token, body string) (int, string, http.Header) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// count answers SELECT COUNT(*) of a table.
func (e *env) count(table string) int {
	e.t.Helper()
	var n int
	if err := e.st.Read().QueryRow(context.Background(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// wantStatus fails unless err is an API error with that status (and code,
// when code is not "").
func wantStatus(t *testing.T, err error, status int, code string) *client.APIError {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v, want an API error %d %s", err, status, code)
	}
	if ae.Status != status || (code != "" && ae.Body.Code != code) {
		t.Fatalf("got %d %s (%s), want %d %s", ae.Status, ae.Body.Code, ae.Body.Error, status, code)
	}
	return ae
}

// nextEvent waits for the next event of a stream.
func nextEvent(t *testing.T, s *client.Stream) client.Event {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		if !ok {
			t.Fatalf("stream ended: %v", s.Err())
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return client.Event{}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
