package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// Text the gateway keeps from an agent or a person is bounded by length, not only
// by count: a heartbeat's model names and platform session titles, slugs, ids and
// workspaces, a run's model and error, a session alias set by a person or asked
// for in a send. One character over the bound is a 400 invalid_field naming the
// field, and nothing of the request is stored; a catalogue of more models than
// the bound is refused too.
func TestStoredTextIsBoundedByLength(t *testing.T) {
	e := newEnv(t)
	dsh := coAgent(e, "dsh")
	alice := e.person("alice")
	sent, err := alice.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@" + coRepo + ".new", Subject: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	over := func(n int) string { return strings.Repeat("é", n+1) } // characters, not bytes
	now := time.Now().UTC().Truncate(time.Millisecond)
	beatModels := func(m ...client.Model) error {
		_, err := dsh.Heartbeat(e.ctx(), client.HeartbeatRequest{Models: &m})
		return err
	}
	beatSessions := func(ps client.PlatformSession) error {
		l := []client.PlatformSession{ps}
		_, err := dsh.Heartbeat(e.ctx(), client.HeartbeatRequest{PlatformSessions: &l})
		return err
	}
	putRun := func(r client.Run) error {
		r.SessionID, r.MailID, r.StartedAt = sent.SessionID, sent.MailID, now
		_, err := dsh.PutRun(e.ctx(), r)
		return err
	}
	many := make([]client.Model, gateway.MaxHeartbeatModels+1)
	for i := range many {
		many[i] = client.Model{Provider: "p", Model: strings.Repeat("m", i%7+1) + string(rune('a'+i%26)) + time.Duration(i).String()}
	}
	for field, call := range map[string]func() error{
		"models[0].provider": func() error { return beatModels(client.Model{Provider: over(gateway.MaxModelRunes), Model: "m"}) },
		"models[0].model":    func() error { return beatModels(client.Model{Provider: "p", Model: over(gateway.MaxModelRunes)}) },
		"models[1].display_name": func() error {
			return beatModels(client.Model{Model: "a"}, client.Model{Model: "b", DisplayName: over(gateway.MaxModelRunes)})
		},
		"models": func() error { return beatModels(many...) },
		"platform_sessions[0].platform_id": func() error {
			return beatSessions(client.PlatformSession{PlatformID: over(gateway.MaxPlatformIDRunes), Workspace: coRepo, Slug: "s"})
		},
		"platform_sessions[0].workspace": func() error {
			return beatSessions(client.PlatformSession{PlatformID: "p", Workspace: "/w/" + over(gateway.MaxWorkspacePathRunes), Slug: "s"})
		},
		"platform_sessions[0].slug": func() error {
			return beatSessions(client.PlatformSession{PlatformID: "p", Workspace: coRepo, Slug: over(gateway.MaxSlugRunes)})
		},
		"platform_sessions[0].title": func() error {
			return beatSessions(client.PlatformSession{PlatformID: "p", Workspace: coRepo, Slug: "s", Title: over(gateway.MaxSubjectRunes)})
		},
		"model": func() error {
			return putRun(client.Run{RunID: "r-model", State: client.RunRunning, Model: over(gateway.MaxModelRunes)})
		},
		"error": func() error {
			return putRun(client.Run{RunID: "r-error", State: client.RunFailed, Error: over(gateway.MaxRunErrorRunes)})
		},
		"alias": func() error {
			a := over(gateway.MaxAliasInputRunes)
			_, err := alice.MeUpdateSession(e.ctx(), sent.SessionID, client.UpdateSessionRequest{Alias: &a})
			return err
		},
		"session_alias": func() error {
			_, err := alice.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@" + coRepo, SessionAlias: over(gateway.MaxAliasInputRunes), Subject: "s", Body: "b"})
			return err
		},
	} {
		ae := wantStatus(t, call(), 400, "invalid_field")
		if ae.Body.Field != field {
			t.Errorf("%s: field %q", field, ae.Body.Field)
		}
	}
	d, err := e.admin.Agent(e.ctx(), "dsh")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Models) != 0 || len(d.PlatformSessions) != 0 {
		t.Fatalf("refused heartbeats stored %d models and %d platform sessions", len(d.Models), len(d.PlatformSessions))
	}
	if runs, err := alice.MeSessionRuns(e.ctx(), sent.SessionID); err != nil || len(runs.Runs) != 0 {
		t.Fatalf("refused runs: %+v, %v", runs, err)
	}
	if n := e.count("mail_sessions"); n != 1 {
		t.Fatalf("%d sessions after the refused send, want 1", n)
	}
	// At the bound itself everything is taken.
	at := func(n int) string { return strings.Repeat("é", n) }
	if err := beatModels(client.Model{Provider: at(gateway.MaxModelRunes), Model: at(gateway.MaxModelRunes), DisplayName: at(gateway.MaxModelRunes)}); err != nil {
		t.Fatal(err)
	}
	if err := putRun(client.Run{RunID: "r-ok", State: client.RunFailed, Model: at(gateway.MaxModelRunes), Error: at(gateway.MaxRunErrorRunes)}); err != nil {
		t.Fatal(err)
	}
}

// A sign-in with a name longer than any name can be answers as for an unknown
// name, and the throttle keeps no more of it than of the longest real name.
func TestSignInWithAnOverlongNameStoresABoundedKey(t *testing.T) {
	e := newEnv(t)
	c := client.New(e.url, client.WithCookieJar())
	_, err := c.Login(e.ctx(), client.LoginRequest{Username: strings.Repeat("n", 100000), Password: "wrong-password"})
	wantStatus(t, err, 401, "")
	var longest int
	if err := e.st.Read().QueryRow(context.Background(), `SELECT MAX(LENGTH(throttle_key)) FROM login_throttle`).Scan(&longest); err != nil {
		t.Fatal(err)
	}
	if longest > 100 {
		t.Fatalf("the throttle stored a key of %d characters", longest)
	}
}

// One owner opens at most Config.MaxSessionsPerOwner sessions (they never close):
// the next send that would open one is a 409 session_limit that says what to do,
// and stores nothing; replies in an existing session still go.
func TestSessionsPerOwnerAreBounded(t *testing.T) {
	e := newEnv(t)
	e.svc.Config.MaxSessionsPerOwner = 2
	coAgent(e, "dsh")
	alice := e.person("alice")
	var last *client.SendMailResponse
	for i := 0; i < 2; i++ {
		r, err := alice.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@" + coRepo + ".new", Subject: "s", Body: "b"})
		if err != nil {
			t.Fatal(err)
		}
		last = r
	}
	_, err := alice.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@" + coRepo + ".new", Subject: "third", Body: "b"})
	ae := wantStatus(t, err, 409, "session_limit")
	if !strings.Contains(ae.Body.Suggestion, "existing conversation") {
		t.Fatalf("suggestion %q says not what to do", ae.Body.Suggestion)
	}
	if n := e.count("mail_sessions"); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
	if _, err := alice.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@" + coRepo, ReplyTo: last.MailID, Body: "more"}); err != nil {
		t.Fatalf("a reply in an existing session: %v", err)
	}
}
