package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
)

// The shared rig of the end-to-end tests over the real binary: a gateway
// started with flags, people and agents signed in through checked clients,
// and waits on conditions bounded by waitLimit.

// waitLimit bounds every wait for a condition.
const waitLimit = 30 * time.Second

const adminPassword = "e2e-admin-password"

// startGatewayWithFlags starts `agentmail serve` on a free port over dataDir and the
// database dbURL with the extra environment and waits for its address. With
// dbURL "" the database is dataDir's own: SQLite in it, or under
// AGENTMAIL_TEST_DATABASE=postgres the scratch database e2eDatabaseURL keeps
// for dataDir, so a restart over dataDir finds its data again.
func startGatewayWithFlags(t *testing.T, dataDir, dbURL string, env ...string) *gatewayproc.Gateway {
	t.Helper()
	if dbURL == "" {
		dbURL = e2eDatabaseURL(t, dataDir)
	}
	return gatewayproc.Serve(t, gatewayproc.Options{
		Args: []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir,
			"--admin-user", "admin", "--admin-password", adminPassword, "--log-level", "debug"},
		Env: append([]string{"AGENTMAIL_ADDR=", "DATABASE_URL=" + dbURL, "AGENTMAIL_SWEEP_INTERVAL=100ms"}, env...),
	})
}

// peopleAndAgents is a gateway with people and an agent: the admin, alice, bob and
// carol (cookie sessions) and the agent bot (agent key), all through
// clients whose answers are checked against the OpenAPI document.
type peopleAndAgents struct {
	t                  *testing.T
	ctx                context.Context
	g                  *gatewayproc.Gateway
	admin, alice, bob  *client.Client
	carol, bot, helper *client.Client
	botKey             string
}

func (e *peopleAndAgents) person(name string) *client.Client {
	e.t.Helper()
	c := client.New(e.g.URL, client.WithHTTPClient(CheckedHTTPClient(e.t)), client.WithCookieJar())
	pw := adminPassword
	if name != "admin" {
		pw = name + "-password"
		if _, err := e.admin.AdminCreateUser(e.ctx, client.CreateUserRequest{Username: name, Password: pw}); err != nil {
			e.t.Fatalf("creating %s: %v", name, err)
		}
	}
	if _, err := c.Login(e.ctx, client.LoginRequest{Username: name, Password: pw}); err != nil {
		e.t.Fatalf("login %s: %v\n%s", name, err, e.g.Log)
	}
	return c
}

func (e *peopleAndAgents) agent(name string) (*client.Client, string) {
	e.t.Helper()
	key, err := e.admin.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: name, Lifecycle: client.LifecyclePermanent})
	if err != nil {
		e.t.Fatalf("agent key for %s: %v", name, err)
	}
	c := client.New(e.g.URL, client.WithHTTPClient(CheckedHTTPClient(e.t)), client.WithToken(key.KeyToken))
	if _, err := c.Register(e.ctx, client.RegisterRequest{Name: name, Platform: "e2e", Workspaces: []client.Workspace{}}); err != nil {
		e.t.Fatalf("register %s: %v", name, err)
	}
	return c, key.KeyToken
}

func newPeopleAndAgents(t *testing.T, g *gatewayproc.Gateway) *peopleAndAgents {
	e := &peopleAndAgents{t: t, ctx: context.Background(), g: g}
	e.admin = client.New(g.URL, client.WithHTTPClient(CheckedHTTPClient(t)), client.WithCookieJar())
	if _, err := e.admin.Login(e.ctx, client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatalf("admin login: %v\n%s", err, g.Log)
	}
	e.alice, e.bob, e.carol = e.person("alice"), e.person("bob"), e.person("carol")
	e.bot, e.botKey = e.agent("bot")
	e.helper, _ = e.agent("helper")
	return e
}

// wantStatus fails unless err is an API error with that status (and code,
// when given); it answers the error.
func wantStatus(t *testing.T, err error, status int, code string) *client.APIError {
	t.Helper()
	ae := client.AsAPIError(err)
	if ae == nil || ae.Status != status || (code != "" && ae.Body.Code != code) {
		t.Fatalf("err = %v, want %d %s", err, status, code)
	}
	return ae
}

// waitEvent waits for an event of type typ whose data satisfies pred.
func waitEvent(t *testing.T, s *client.Stream, typ string, pred func([]byte) bool) []byte {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatalf("stream ended while waiting for %s: %v", typ, s.Err())
			}
			if ev.Type == typ && pred(ev.Data) {
				return ev.Data
			}
		case <-deadline:
			t.Fatalf("no %s event within %s", typ, waitLimit)
		}
	}
}
