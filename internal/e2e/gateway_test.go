package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
)

// The end-to-end test of the gateway core (issue 2 "Done when"): it builds
// the real binary, starts `agentmail serve` on a free port with a temporary
// data directory, and talks to it only over HTTP through the Go client.

func TestMain(m *testing.M) { os.Exit(gatewayproc.Main(m)) }

// startGateway starts the binary on 127.0.0.1:0 with the data directory,
// configured through the environment as a deployment would be, and waits
// until it prints its address and /readyz answers.
func startGateway(t *testing.T, dataDir string, extraEnv ...string) *gatewayproc.Gateway {
	t.Helper()
	env := []string{"AGENTMAIL_ADDR=127.0.0.1:0", "AGENTMAIL_DATA_DIR=" + dataDir,
		"ADMIN_USER=admin", "ADMIN_PASSWORD=e2e-admin-password", "DATABASE_URL=" + e2eDatabaseURL(t, dataDir)}
	return gatewayproc.Serve(t, gatewayproc.Options{Env: append(env, extraEnv...)})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
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
	case <-time.After(15 * time.Second):
		t.Fatal("no event within 15 s")
	}
	return client.Event{}
}

func TestGatewayEndToEnd(t *testing.T) {
	dataDir := t.TempDir()
	gw := startGateway(t, dataDir)
	ctx := ctxT(t)
	httpc := CheckedHTTPClient(t)

	// A second gateway on the same SQLite data directory refuses to start
	// (on PostgreSQL a second gateway is a replica: replicas_test.go).
	if !storetest.Postgres() {
		second := exec.Command(gatewayproc.Binary(t), "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir)
		second.Env = append(os.Environ(), "DATABASE_URL=")
		out, err := second.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "locked") {
			t.Fatalf("a second gateway on the same data directory: err=%v output:\n%s", err, out)
		}
	}

	// The person signs in; the admin registers the bridge's own key (seed 9.9).
	person := client.New(gw.URL, client.WithHTTPClient(httpc), client.WithCookieJar())
	if _, err := person.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("login: %v\n%s", err, gw.Log.String())
	}
	const agentKey = "bridge-generated-e2e-key-0123456789"
	if _, err := person.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "dsh", KeyToken: agentKey, Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	agent := client.New(gw.URL, client.WithHTTPClient(httpc), client.WithToken(agentKey))
	if _, err := agent.Register(ctx, client.RegisterRequest{Name: "dsh", Platform: "e2e", Workspaces: []client.Workspace{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Heartbeat(ctx, client.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	stream, err := agent.Stream(ctx, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The person writes to dsh@<real dir>.new.
	ws := t.TempDir()
	sent, err := person.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws + ".new", Subject: "Fix the import paths", Body: "Please fix them."})
	if err != nil || !sent.NewSession {
		t.Fatalf("person send: %+v, %v", sent, err)
	}

	// The agent gets it on the stream and in its inbox.
	ev := nextEvent(t, stream)
	var nm client.NewMailEvent
	if ev.Type != client.EventNewMail || json.Unmarshal(ev.Data, &nm) != nil || nm.MailID != sent.MailID ||
		nm.ToWorkspace != ws || nm.ReplyAddress != "admin@."+sent.SessionAlias || nm.SelfAddress != "dsh@"+ws+"."+sent.SessionAlias {
		t.Fatalf("new_mail event %s %s", ev.Type, ev.Data)
	}
	inbox, err := agent.Inbox(ctx, client.InboxQuery{})
	if err != nil || len(inbox.Mails) != 1 || inbox.Mails[0].MailID != sent.MailID || inbox.Unread != 0 {
		t.Fatalf("agent inbox: %+v, %v", inbox, err)
	}

	// The bridge relays the turn's summary; a replay is a duplicate.
	relay, err := agent.SendMail(ctx, client.SendMailRequest{To: "admin", ReplyTo: sent.MailID, Body: "Done: 12 paths fixed.", Relay: client.RelaySummary, RelayKey: "msg_turn_1"})
	if err != nil || relay.Status != "sent" || relay.SessionID != sent.SessionID {
		t.Fatalf("summary relay: %+v, %v", relay, err)
	}
	dup, err := agent.SendMail(ctx, client.SendMailRequest{To: "admin", ReplyTo: sent.MailID, Body: "Done: 12 paths fixed.", Relay: client.RelaySummary, RelayKey: "msg_turn_1"})
	if err != nil || dup.Status != "duplicate_relay" || dup.MailID != relay.MailID {
		t.Fatalf("duplicate relay: %+v, %v", dup, err)
	}
	sess, err := person.MeSession(ctx, sent.SessionID)
	if err != nil || sess.UsedRounds != 0 || sess.MailCount != 2 {
		t.Fatalf("session after relays: %+v, %v (relays use no round; the duplicate stores nothing)", sess, err)
	}
	pin, err := person.MeInbox(ctx, client.InboxQuery{})
	if err != nil || len(pin.Mails) != 1 || pin.Mails[0].Body != "Done: 12 paths fixed." || pin.Mails[0].Relay != "summary" {
		t.Fatalf("person inbox: %+v, %v", pin, err)
	}

	// A typo alias is a 404 and creates nothing.
	before, _ := person.MeSessions(ctx)
	_, err = person.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws + "." + sent.SessionAlias + "x", Subject: "typo", Body: "x"})
	wantStatus(t, err, 404, "alias_not_found")
	after, _ := person.MeSessions(ctx)
	if len(after.Sessions) != len(before.Sessions) {
		t.Fatalf("a typo alias created a session: %d → %d", len(before.Sessions), len(after.Sessions))
	}

	// Budget: a session worth one round.
	one := 1
	small, err := person.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws + ".new", Subject: "One question", Body: "?", RoundBudget: &one})
	if err != nil {
		t.Fatal(err)
	}
	nextEvent(t, stream)
	if _, err := agent.SendMail(ctx, client.SendMailRequest{To: "admin", ReplyTo: small.MailID, Body: "first answer"}); err != nil {
		t.Fatal(err)
	}
	_, err = agent.SendMail(ctx, client.SendMailRequest{To: "admin", ReplyTo: small.MailID, Body: "second answer"})
	wantStatus(t, err, 403, "budget_exhausted")

	// The new-session rate limit: 20 per rolling hour, then 429.
	for i := 0; i < 20; i++ {
		if _, err := agent.SendMail(ctx, client.SendMailRequest{To: "admin@.new", Subject: fmt.Sprint("report ", i), Body: "x"}); err != nil {
			t.Fatalf("new session %d: %v", i+1, err)
		}
	}
	_, err = agent.SendMail(ctx, client.SendMailRequest{To: "admin@.new", Subject: "report 21", Body: "x"})
	ae := wantStatus(t, err, 429, "new_session_rate_limited")
	if ae.Body.RetryAfterSeconds < 3500 || client.RetryAfterOf(err) < 3500*time.Second {
		t.Fatalf("429 wait: body %d s, header %v", ae.Body.RetryAfterSeconds, client.RetryAfterOf(err))
	}

	// Reconnect with Last-Event-ID: what came while away is replayed.
	lastID := stream.LastEventID()
	stream.Close()
	missed := []string{}
	for i := 0; i < 2; i++ {
		r, err := person.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws, Subject: fmt.Sprint("while away ", i), Body: "x"})
		if err != nil {
			t.Fatal(err)
		}
		missed = append(missed, r.MailID)
	}
	resumed, err := agent.Stream(ctx, client.StreamOptions{LastEventID: lastID})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range missed {
		ev := nextEvent(t, resumed)
		if json.Unmarshal(ev.Data, &nm) != nil || nm.MailID != id {
			t.Fatalf("replay: got %s, want mail %s", ev.Data, id)
		}
	}
	lastID = resumed.LastEventID()
	resumed.Close()

	// A restart keeps everything.
	gw.Shutdown(t)
	gw = startGateway(t, dataDir)
	person = client.New(gw.URL, client.WithHTTPClient(httpc), client.WithCookieJar())
	if _, err := person.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("login after restart: %v", err)
	}
	agent = client.New(gw.URL, client.WithHTTPClient(httpc), client.WithToken(agentKey))
	all, err := agent.Inbox(ctx, client.InboxQuery{Status: "all", Limit: 100})
	if err != nil || len(all.Mails) != 4 || all.Unread != 3 {
		t.Fatalf("agent inbox after restart: %d mails, unread %d, %v; want 4 and 3", len(all.Mails), all.Unread, err)
	}
	got, err := person.MeSession(ctx, sent.SessionID)
	if err != nil || got.Alias != sent.SessionAlias || got.MailCount != 2 {
		t.Fatalf("session after restart: %+v, %v", got, err)
	}
	// The limit is counted from the database, so it survives the restart.
	_, err = agent.SendMail(ctx, client.SendMailRequest{To: "admin@.new", Subject: "report 21", Body: "x"})
	wantStatus(t, err, 429, "new_session_rate_limited")
	// The event log survives too: resuming after the old id replays the new mail.
	after2, err := person.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws, Subject: "after restart", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	s3, err := agent.Stream(ctx, client.StreamOptions{LastEventID: lastID})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	ev = nextEvent(t, s3)
	if json.Unmarshal(ev.Data, &nm) != nil || nm.MailID != after2.MailID || ev.ID <= lastID {
		t.Fatalf("after restart: event %d %s, want mail %s after id %d", ev.ID, ev.Data, after2.MailID, lastID)
	}
}

func TestFirstStartPrintsAGeneratedAdminPasswordOnce(t *testing.T) {
	dataDir := t.TempDir()
	gw := startGateway(t, dataDir, "ADMIN_PASSWORD=")
	m := regexp.MustCompile(`created with password\s+(\S+)`).FindStringSubmatch(gw.Log.String())
	if m == nil {
		t.Fatalf("no generated password printed:\n%s", gw.Log.String())
	}
	ctx := ctxT(t)
	c := client.New(gw.URL, client.WithCookieJar())
	if _, err := c.Login(ctx, client.LoginRequest{Username: "admin", Password: m[1]}); err != nil {
		t.Fatalf("login with the printed password: %v", err)
	}
	gw.Shutdown(t)
	gw = startGateway(t, dataDir, "ADMIN_PASSWORD=")
	if strings.Contains(gw.Log.String(), "created with password") {
		t.Fatalf("a second start printed a password again:\n%s", gw.Log.String())
	}
}
