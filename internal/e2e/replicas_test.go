package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// Several gateway replicas on one PostgreSQL database (issue 7 "Done
// when"): the real binary started twice on one DATABASE_URL and one data
// directory, driven over HTTP through the Go client.

var (
	e2eDBMu sync.Mutex
	e2eDBs  = map[string]string{} // data directory → DATABASE_URL
)

// e2eDatabaseURL answers the DATABASE_URL a started gateway over dataDir
// gets: "" (SQLite in dataDir) by default, or, with
// AGENTMAIL_TEST_DATABASE=postgres, a scratch PostgreSQL database created
// on first use for that data directory, so a restarted gateway finds its
// data again. The database is dropped when t ends.
func e2eDatabaseURL(t *testing.T, dataDir string) string {
	t.Helper()
	if !storetest.Postgres() {
		return ""
	}
	e2eDBMu.Lock()
	defer e2eDBMu.Unlock()
	if u, ok := e2eDBs[dataDir]; ok {
		return u
	}
	u := storetest.DatabaseURL(t)
	e2eDBs[dataDir] = u
	t.Cleanup(func() {
		e2eDBMu.Lock()
		delete(e2eDBs, dataDir)
		e2eDBMu.Unlock()
	})
	return u
}

// replicaEvent waits for the next event of a stream that is a new_mail and
// answers its mail id.
func replicaMailEvent(t *testing.T, s *client.Stream) (int64, string) {
	t.Helper()
	for {
		ev := nextEvent(t, s)
		if ev.Type != client.EventNewMail {
			continue
		}
		var nm client.NewMailEvent
		if err := json.Unmarshal(ev.Data, &nm); err != nil {
			t.Fatalf("new_mail data %s: %v", ev.Data, err)
		}
		return ev.ID, nm.MailID
	}
}

func TestReplicasShareOnePostgreSQL(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("needs PostgreSQL: AGENTMAIL_TEST_DATABASE=postgres AGENTMAIL_TEST_POSTGRES_URL=$(scripts/pg.sh start)")
	}
	// One data directory for both: attachment contents are shared through
	// it, and the SQLite lock must not keep the second replica out.
	dataDir := t.TempDir()
	env := []string{"AGENTMAIL_SWEEP_INTERVAL=100ms"}
	a := startGateway(t, dataDir, env...)
	b := startGateway(t, dataDir, env...)
	ctx := ctxT(t)
	httpc := CheckedHTTPClient(t)

	personA := client.New(a.URL, client.WithHTTPClient(httpc), client.WithCookieJar())
	if _, err := personA.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("login on A: %v\n%s", err, a.Log.String())
	}
	personB := client.New(b.URL, client.WithHTTPClient(httpc), client.WithCookieJar())
	if _, err := personB.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("login on B: %v\n%s", err, b.Log.String())
	}
	const agentKey = "replica-test-agent-key-0123456789abcdef"
	if _, err := personA.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "dsh", KeyToken: agentKey, Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	agentA := client.New(a.URL, client.WithHTTPClient(httpc), client.WithToken(agentKey))
	agentB := client.New(b.URL, client.WithHTTPClient(httpc), client.WithToken(agentKey))
	if _, err := agentB.Register(ctx, client.RegisterRequest{Name: "dsh", Platform: "e2e", Workspaces: []client.Workspace{}}); err != nil {
		t.Fatal(err)
	}

	// An agent streaming from A receives a mail a person sent through B.
	stream, err := agentA.Stream(ctx, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	first, err := personB.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws + ".new", Subject: "Across replicas", Body: "sent through B"})
	if err != nil {
		t.Fatal(err)
	}
	if _, id := replicaMailEvent(t, stream); id != first.MailID {
		t.Fatalf("stream on A got mail %s, want %s sent through B", id, first.MailID)
	}

	// The agent reconnects to B with Last-Event-ID and misses nothing sent
	// through either replica while it was away.
	lastID := stream.LastEventID()
	stream.Close()
	var missed []string
	for i, p := range []*client.Client{personA, personB, personA} {
		r, err := p.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws, Subject: fmt.Sprint("while away ", i), Body: "x"})
		if err != nil {
			t.Fatal(err)
		}
		missed = append(missed, r.MailID)
	}
	resumed, err := agentB.Stream(ctx, client.StreamOptions{LastEventID: lastID})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	for _, want := range missed {
		if _, got := replicaMailEvent(t, resumed); got != want {
			t.Fatalf("replay on B: got mail %s, want %s", got, want)
		}
	}
	live, err := personA.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws, Subject: "live again", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, got := replicaMailEvent(t, resumed); got != live.MailID {
		t.Fatalf("live on B after replay: got mail %s, want %s", got, live.MailID)
	}

	// 21 new sessions split across both replicas, all at once: the limit
	// of 20 per hour is counted in the database, so exactly one is refused.
	var wg sync.WaitGroup
	results := make([]error, 21)
	for i := range results {
		c := agentA
		if i%2 == 1 {
			c = agentB
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = c.SendMail(ctx, client.SendMailRequest{To: "admin@.new", Subject: fmt.Sprint("report ", i), Body: "x"})
		}()
	}
	wg.Wait()
	refused := 0
	for i, err := range results {
		if err == nil {
			continue
		}
		wantStatus(t, err, 429, "new_session_rate_limited")
		refused++
		t.Logf("new session %d refused: %v", i, err)
	}
	if refused != 1 {
		t.Fatalf("%d of 21 new sessions were refused, want exactly 1", refused)
	}
	_, err = agentB.SendMail(ctx, client.SendMailRequest{To: "admin@.new", Subject: "report 22", Body: "x"})
	wantStatus(t, err, 429, "new_session_rate_limited")

	// A relay_key replayed on the other replica is a duplicate; two sent at
	// the same moment to both replicas store one mail.
	relay, err := agentA.SendMail(ctx, client.SendMailRequest{To: "admin", ReplyTo: first.MailID, Body: "Done.", Relay: client.RelaySummary, RelayKey: "turn-1"})
	if err != nil || relay.Status != "sent" {
		t.Fatalf("relay on A: %+v, %v", relay, err)
	}
	dup, err := agentB.SendMail(ctx, client.SendMailRequest{To: "admin", ReplyTo: first.MailID, Body: "Done.", Relay: client.RelaySummary, RelayKey: "turn-1"})
	if err != nil || dup.Status != "duplicate_relay" || dup.MailID != relay.MailID {
		t.Fatalf("relay replayed on B: %+v, %v; want duplicate_relay of %s", dup, err, relay.MailID)
	}
	// (turn-2 answers another received mail: one summary per received mail.)
	both := make([]*client.SendMailResponse, 2)
	errs := make([]error, 2)
	for i, c := range []*client.Client{agentA, agentB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			both[i], errs[i] = c.SendMail(ctx, client.SendMailRequest{To: "admin", ReplyTo: live.MailID, Body: "Done again.", Relay: client.RelaySummary, RelayKey: "turn-2"})
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || both[0].MailID != both[1].MailID ||
		(both[0].Status == "sent") == (both[1].Status == "sent") {
		t.Fatalf("turn-2 sent to both replicas at once: %+v %v / %+v %v; want one sent and one duplicate of the same mail",
			both[0], errs[0], both[1], errs[1])
	}

	// An attachment uploaded through A downloads from B (shared data dir).
	content := bytes.Repeat([]byte("replicated attachment\n"), 1000)
	att, err := agentA.UploadAttachment(ctx, "notes.txt", bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agentA.SendMail(ctx, client.SendMailRequest{To: "admin", ReplyTo: first.MailID, Body: "see the file", AttachmentIDs: []string{att.AttachmentID}}); err != nil {
		t.Fatal(err)
	}
	rc, _, err := personB.MeDownloadAttachment(ctx, att.AttachmentID)
	if err != nil {
		t.Fatalf("download through B of an upload through A: %v", err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("download through B: %d bytes (%v), want the %d uploaded through A", len(got), err, len(content))
	}

	// One reminder due while both replicas sweep every 100 ms is delivered
	// once. A second reminder due later shows that both have swept past the
	// first one's time before it is counted.
	due := time.Now().Add(3 * time.Second).UTC()
	later := due.Add(2 * time.Second)
	for _, s := range []struct{ title, at string }{{"replicated standup", due.Format(time.RFC3339Nano)}, {"probe", later.Format(time.RFC3339Nano)}} {
		if _, err := agentA.CreateSchedule(ctx, client.CreateScheduleRequest{Title: s.title, EventTime: s.at, Recipients: "admin"}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(subject string) int {
		l, err := personB.MeInbox(ctx, client.InboxQuery{Status: "all", Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range l.Mails {
			if m.Subject == subject {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(60 * time.Second)
	for count("Reminder: probe") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the probe reminder never came\nA:\n%s\nB:\n%s", a.Log.String(), b.Log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := count("Reminder: replicated standup"); n != 1 {
		t.Fatalf("the reminder was delivered %d times by two replicas, want once", n)
	}
	sentBy := strings.Count(a.Log.String(), "reminder sent") + strings.Count(b.Log.String(), "reminder sent")
	if sentBy != 2 {
		t.Fatalf("the replicas logged %d reminder sends for two reminders, want 2\nA:\n%s\nB:\n%s", sentBy, a.Log.String(), b.Log.String())
	}

	// Behind a load balancer, a replica that shuts down ends its streams
	// cleanly; the agent reconnects through the balancer to the other one
	// with Last-Event-ID and misses nothing.
	resumed.Close()
	lb := failoverBalancer(t, a.URL, b.URL)
	viaLB := client.New(lb, client.WithHTTPClient(httpc), client.WithToken(agentKey))
	failover, err := viaLB.Stream(ctx, client.StreamOptions{LastEventID: lastID, Reconnect: true, MinBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer failover.Close()
	for _, want := range append(missed, live.MailID) {
		if _, got := replicaMailEvent(t, failover); got != want {
			t.Fatalf("through the balancer: got mail %s, want %s", got, want)
		}
	}
	a.Shutdown(t) // SIGTERM: exits 0 after closing the stream
	during, err := personB.MeSend(ctx, client.SendMailRequest{To: "dsh@" + ws, Subject: "while A stops", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, got := replicaMailEvent(t, failover); got != during.MailID {
		t.Fatalf("after A stopped: got mail %s, want %s sent through B", got, during.MailID)
	}
	failover.Close() // before B stops, or it would reconnect to a balancer with no replica left
	b.Shutdown(t)
}

// failoverBalancer is a minimal load balancer in front of the replicas:
// each request goes to the first backend that accepts the connection, in
// the order given; responses are streamed through unbuffered.
func failoverBalancer(t *testing.T, backends ...string) string {
	t.Helper()
	var targets []*url.URL
	for _, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, u)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(targets[0]) },
		FlushInterval: -1,
		Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			var last error
			for _, u := range targets {
				r := req.Clone(req.Context())
				r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
				resp, err := http.DefaultTransport.RoundTrip(r)
				if err == nil {
					return resp, nil
				}
				last = err
			}
			return nil, last
		}),
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
