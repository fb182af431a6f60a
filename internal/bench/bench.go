// Package bench is the load generator of `agentmail bench` (issue 2 item
// 13): it starts a gateway on a temporary data directory and measures, over
// real HTTP, the mails sent per second by concurrent senders with their
// latency, the SSE delivery latency to many connected agents, and the inbox
// latency with a large number of stored mails.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpapi"
	"github.com/agentmail/agentmail/internal/store"
)

// benchDatabase answers the DATABASE_URL of the benchmark gateway: "" for
// SQLite, or a scratch database created on the PostgreSQL server of
// serverURL, with the function that drops it.
func benchDatabase(ctx context.Context, serverURL string) (string, func(), error) {
	if serverURL == "" {
		return "", func() {}, nil
	}
	if !store.IsPostgresURL(serverURL) {
		return "", nil, fmt.Errorf("--database-url %q: give a postgres:// URL of a server where a scratch database may be created", serverURL)
	}
	db, err := store.CreateScratchDatabase(ctx, serverURL, "agentmail_bench", false)
	if err != nil {
		return "", nil, err
	}
	return db.URL, func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = db.Drop(dctx)
	}, nil
}

// databaseName answers "SQLite" or "PostgreSQL <server version>".
func databaseName(ctx context.Context, app *httpapi.App) string {
	if app.Store.Dialect().Name() != "postgres" {
		return "SQLite"
	}
	var v string
	if err := app.Store.Read().QueryRow(ctx, `SHOW server_version`).Scan(&v); err != nil || len(strings.Fields(v)) == 0 {
		return "PostgreSQL"
	}
	return "PostgreSQL " + strings.Fields(v)[0]
}

// Config chooses the load. Zero fields take the figures.
type Config struct {
	// Senders is the number of concurrent senders of the send phase (64).
	Senders int
	// SendDuration is how long the send phase runs (10 s), after a 1 s warm-up.
	SendDuration time.Duration
	// StreamAgents is the number of agents holding an SSE stream (1,000).
	StreamAgents int
	// StreamMails is how many mails are sent to them, one recipient each
	// (2 per agent by default), by StreamSenders concurrent senders (8).
	StreamMails   int
	StreamSenders int
	// StoredMails is how many mails are seeded before the inbox phase
	// (1,000,000); InboxShare of them go to the measured agent (1/4).
	StoredMails int
	InboxShare  float64
	// InboxRequests is how many inbox requests are timed per variant (2,000).
	InboxRequests int
	// DataDir is where the temporary gateway keeps its database; "" makes
	// and removes a temporary directory.
	DataDir string
	// DatabaseURL, when it names a PostgreSQL server
	// (postgres://user@host:5432/postgres), runs the gateway on PostgreSQL:
	// a scratch database is created on that server for the run and dropped
	// after it, so no existing data is touched. "" runs on SQLite in DataDir.
	DatabaseURL string
	// Phases names the phases to run, in their fixed order: "send", "sse",
	// "inbox"; empty runs all three.
	Phases []string
	// Progress receives one line per step (nil: discarded).
	Progress io.Writer
}

// phaseNames are the phases of a run in the order they run.
var phaseNames = []string{"send", "sse", "inbox"}

// wants reports whether the phase named runs.
func (c *Config) wants(phase string) bool {
	if len(c.Phases) == 0 {
		return true
	}
	for _, p := range c.Phases {
		if p == phase {
			return true
		}
	}
	return false
}

// checkPhases answers an error naming the first unknown phase.
func (c *Config) checkPhases() error {
	for _, p := range c.Phases {
		known := false
		for _, n := range phaseNames {
			known = known || p == n
		}
		if !known {
			return fmt.Errorf("--phases: unknown phase %q; use some of %s", p, strings.Join(phaseNames, ","))
		}
	}
	return nil
}

func (c *Config) fill() {
	if c.Senders <= 0 {
		c.Senders = 64
	}
	if c.SendDuration <= 0 {
		c.SendDuration = 10 * time.Second
	}
	if c.StreamAgents <= 0 {
		c.StreamAgents = 1000
	}
	if c.StreamMails <= 0 {
		c.StreamMails = 2 * c.StreamAgents
	}
	if c.StreamSenders <= 0 {
		c.StreamSenders = 8
	}
	if c.StoredMails <= 0 {
		c.StoredMails = 1_000_000
	}
	if c.InboxShare <= 0 || c.InboxShare > 1 {
		c.InboxShare = 0.25
	}
	if c.InboxRequests <= 0 {
		c.InboxRequests = 2000
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Row is one measured figure.
type Row struct {
	Metric string
	Value  string
	Target string
}

// Report is the outcome of a run.
type Report struct {
	Rows     []Row
	Machine  string
	Started  time.Time
	Duration time.Duration
}

// Table renders the report as a Markdown table.
func (r *Report) Table() string {
	var b strings.Builder
	b.WriteString("| metric | measured | target |\n|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row.Metric, row.Value, row.Target)
	}
	return b.String()
}

const benchPassword = "bench-admin-password"

// Run starts a gateway and runs the three phases in order (those of
// cfg.Phases when set): sending, SSE delivery, inbox with stored mails.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.fill()
	if err := cfg.checkPhases(); err != nil {
		return nil, err
	}
	raiseFileLimit()
	rep := &Report{Started: time.Now().UTC(), Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())}
	dir := cfg.DataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "agentmail-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	dbURL, dropDB, err := benchDatabase(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer dropDB()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	app, err := httpapi.Start(ctx, httpapi.AppConfig{Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: dbURL, AdminUser: "admin",
		AdminPassword: benchPassword, Log: quiet})
	if err != nil {
		return nil, err
	}
	rep.Machine += ", " + databaseName(ctx, app)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = app.Shutdown(sctx)
	}()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute}}
	b := &runner{cfg: cfg, app: app, hc: hc, url: app.URL()}
	if err := b.setup(ctx); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	t0 := time.Now()
	for i, phase := range []func(context.Context, *Report) error{b.sendPhase, b.streamPhase, b.inboxPhase} {
		if !cfg.wants(phaseNames[i]) {
			continue
		}
		if err := phase(ctx, rep); err != nil {
			return rep, err
		}
	}
	rep.Duration = time.Since(t0)
	return rep, nil
}

// runner holds the state shared by the phases.
type runner struct {
	cfg    Config
	app    *httpapi.App
	hc     *http.Client
	url    string
	person *client.Client // admin with a user key (no CSRF, no bcrypt per request)
	token  string         // that user key
}

func (b *runner) logf(format string, args ...any) {
	fmt.Fprintf(b.cfg.Progress, format+"\n", args...)
}

func (b *runner) setup(ctx context.Context) error {
	admin := client.New(b.url, client.WithHTTPClient(b.hc), client.WithCookieJar())
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: benchPassword}); err != nil {
		return err
	}
	k, err := admin.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "bench", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		return err
	}
	b.person = client.New(b.url, client.WithHTTPClient(b.hc), client.WithToken(k.KeyToken))
	b.token = k.KeyToken
	return nil
}

// agentClient registers an agent key for name and answers its client.
func (b *runner) agentClient(ctx context.Context, name string) (*client.Client, error) {
	token := agentToken(name)
	if _, err := b.person.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: name, KeyToken: token, Lifecycle: client.LifecyclePermanent}); err != nil {
		return nil, err
	}
	return client.New(b.url, client.WithHTTPClient(b.hc), client.WithToken(token)), nil
}

// agentToken is the key the benchmark registers for agent name.
func agentToken(name string) string { return "bench-" + name + "-key-0123456789abcdef" }

// sendPhase: Senders goroutines each write to their own session of one
// agent as fast as the gateway answers.
func (b *runner) sendPhase(ctx context.Context, rep *Report) error {
	if _, err := b.agentClient(ctx, "sink"); err != nil {
		return err
	}
	// Each sender keeps one connection and a pre-encoded body (rawhttp.go):
	// {"to":"sink@/bench/<i>","body":"...","subject":"load <n>"}.
	body := strings.Repeat("Benchmark mail body. ", 10)
	senders := make([]*rawSender, b.cfg.Senders)
	for i := range senders {
		prefix := fmt.Appendf(nil, `{"to":%s,"body":%s,"subject":"load `, jsonString(fmt.Sprintf("sink@/bench/%d", i)), jsonString(body))
		rs, err := newRawSender(b.url, "/api/v1/me/mail/send", b.token, prefix, []byte(`"}`))
		if err != nil {
			return err
		}
		defer rs.close()
		senders[i] = rs
	}
	send := func(i, n int) error {
		status, answer, err := senders[i].send(n)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("POST /api/v1/me/mail/send: status %d: %s", status, answer)
		}
		return nil
	}
	b.logf("send: %d senders, 1 s warm-up, %s measured", b.cfg.Senders, b.cfg.SendDuration)
	warm := time.Now().Add(time.Second)
	stop := warm.Add(b.cfg.SendDuration)
	cpuAtWarm := make(chan time.Duration, 1)
	go func() {
		time.Sleep(time.Until(warm))
		cpuAtWarm <- processCPU()
	}()
	lat := make([][]time.Duration, b.cfg.Senders)
	errs := make(chan error, b.cfg.Senders)
	var wg sync.WaitGroup
	for i := 0; i < b.cfg.Senders; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for n := 0; ; n++ {
				start := time.Now()
				if start.After(stop) {
					return
				}
				if err := send(i, n); err != nil {
					errs <- err
					return
				}
				if start.After(warm) {
					lat[i] = append(lat[i], time.Since(start))
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("send phase: %w", err)
	}
	all := merge(lat)
	cpu := processCPU() - <-cpuAtWarm
	rate := float64(len(all)) / b.cfg.SendDuration.Seconds()
	rep.Rows = append(rep.Rows,
		Row{fmt.Sprintf("mails sent per second, %d concurrent senders", b.cfg.Senders), fmt.Sprintf("%.0f", rate), "≥ 5,000"},
		Row{"send latency p50 / p99", fmt.Sprintf("%s / %s", ms(pct(all, 50)), ms(pct(all, 99))), "p99 ≤ 25 ms"},
		Row{"process CPU per mail sent (gateway and load generator together)", fmt.Sprintf("%.0f µs", float64(cpu.Microseconds())/float64(max(1, len(all)))), "–"})
	b.logf("send: %d mails, %.0f/s, p50 %s p99 %s", len(all), rate, ms(pct(all, 50)), ms(pct(all, 99)))
	return nil
}

// streamPhase: StreamAgents agents hold an SSE stream each; StreamMails
// mails, one recipient each, are sent by StreamSenders concurrent senders.
// The latency of a delivery is from just before its send request to the
// event's arrival on the agent's stream.
func (b *runner) streamPhase(ctx context.Context, rep *Report) error {
	n := b.cfg.StreamAgents
	b.logf("sse: registering and connecting %d agents", n)
	type arrival struct {
		seq int
		at  time.Time
	}
	arrivals := make(chan arrival, b.cfg.StreamMails)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var streams []*client.Stream
	defer func() {
		for _, s := range streams {
			s.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := b.agentClient(ctx, fmt.Sprintf("a%d", i))
		if err != nil {
			return err
		}
		s, err := c.Stream(sctx, client.StreamOptions{Buffer: 16})
		if err != nil {
			return fmt.Errorf("stream %d: %w", i, err)
		}
		streams = append(streams, s)
		go func(s *client.Stream) {
			for ev := range s.Events() {
				at := time.Now()
				var seq int
				if _, err := fmt.Sscanf(subjectOf(ev.Data), "sse %d", &seq); err == nil {
					arrivals <- arrival{seq, at}
				}
			}
		}(s)
	}
	if got := b.app.Hub.Subscribers(); got < n {
		return fmt.Errorf("sse: %d streams open, want %d", got, n)
	}
	b.logf("sse: %d streams open; sending %d mails with %d senders", n, b.cfg.StreamMails, b.cfg.StreamSenders)
	starts := make([]time.Time, b.cfg.StreamMails)
	next := make(chan int)
	errs := make(chan error, b.cfg.StreamSenders)
	var wg sync.WaitGroup
	for w := 0; w < b.cfg.StreamSenders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range next {
				starts[seq] = time.Now()
				_, err := b.person.MeSend(ctx, client.SendMailRequest{To: fmt.Sprintf("a%d@/bench", seq%n), Subject: fmt.Sprintf("sse %d", seq), Body: "x"})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for seq := 0; seq < b.cfg.StreamMails; seq++ {
		next <- seq
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("sse phase: %w", err)
	}
	lat := make([]time.Duration, 0, b.cfg.StreamMails)
	timeout := time.After(60 * time.Second)
	for len(lat) < b.cfg.StreamMails {
		select {
		case a := <-arrivals:
			lat = append(lat, a.at.Sub(starts[a.seq]))
		case <-timeout:
			return fmt.Errorf("sse: %d of %d events arrived within 60 s", len(lat), b.cfg.StreamMails)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	rep.Rows = append(rep.Rows, Row{fmt.Sprintf("SSE delivery latency p50 / p99, %d connected agents", n),
		fmt.Sprintf("%s / %s", ms(pct(lat, 50)), ms(pct(lat, 99))), "p99 ≤ 50 ms"})
	b.logf("sse: %d deliveries, p50 %s p99 %s", len(lat), ms(pct(lat, 50)), ms(pct(lat, 99)))
	return nil
}

// inboxPhase seeds StoredMails mails with batched inserts, then times the
// measured agent's inbox requests one after another.
func (b *runner) inboxPhase(ctx context.Context, rep *Report) error {
	agent, err := b.agentClient(ctx, "inbox")
	if err != nil {
		return err
	}
	// One real mail creates the session the seeded mails belong to.
	first, err := b.person.MeSend(ctx, client.SendMailRequest{To: "inbox@/bench.new", Subject: "seed", Body: "x"})
	if err != nil {
		return err
	}
	b.logf("inbox: seeding %d mails (%.0f%% to the measured agent)", b.cfg.StoredMails, b.cfg.InboxShare*100)
	t0 := time.Now()
	mine, err := seed(ctx, b.app.Store, first.SessionID, b.cfg.StoredMails, b.cfg.InboxShare, b.cfg.StreamAgents)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	b.logf("inbox: seeded in %s; the measured agent holds %d mails", time.Since(t0).Round(time.Millisecond), mine)
	variants := []struct {
		name string
		q    client.InboxQuery
	}{
		{"unread, limit 5", client.InboxQuery{Status: "unread", Limit: 5, MarkRead: client.Bool(false)}},
		{"all, limit 5", client.InboxQuery{Status: "all", Limit: 5}},
		{"all, limit 50", client.InboxQuery{Status: "all", Limit: 50}},
	}
	// The timed requests are raw GETs on one keep-alive connection: the
	// answer is read whole and checked, not decoded (rawhttp.go). The
	// typed client checks once per variant that the answer is a full page.
	raw, err := newRawSender(b.url, "", agentToken("inbox"), nil, nil)
	if err != nil {
		return err
	}
	defer raw.close()
	for _, v := range variants {
		l, err := agent.Inbox(ctx, v.q)
		if err != nil {
			return err
		}
		if len(l.Mails) != v.q.Limit {
			return fmt.Errorf("inbox %s: %d mails, want %d", v.name, len(l.Mails), v.q.Limit)
		}
		query := url.Values{"status": {v.q.Status}, "limit": {strconv.Itoa(v.q.Limit)}}
		if v.q.MarkRead != nil {
			query.Set("mark_read", strconv.FormatBool(*v.q.MarkRead))
		}
		path := "/api/v1/mail/inbox?" + query.Encode()
		lat := make([]time.Duration, 0, b.cfg.InboxRequests)
		var cpu0 time.Duration
		for i := 0; i < b.cfg.InboxRequests+100; i++ {
			if i == 100 {
				cpu0 = processCPU()
			}
			start := time.Now()
			status, body, err := raw.get(path)
			if err != nil {
				return err
			}
			if status != http.StatusOK || !bytes.Contains(body, []byte(`"mail_id"`)) {
				return fmt.Errorf("inbox %s: status %d: %.200s", v.name, status, body)
			}
			if i >= 100 { // the first 100 warm caches
				lat = append(lat, time.Since(start))
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		rep.Rows = append(rep.Rows, Row{fmt.Sprintf("inbox latency p50 / p99 (%s), %d stored mails, %d in this inbox", v.name, b.cfg.StoredMails, mine),
			fmt.Sprintf("%s / %s", ms(pct(lat, 50)), ms(pct(lat, 99))), "p99 ≤ 5 ms"})
		cpu := processCPU() - cpu0
		b.logf("inbox %s: p50 %s p99 %s, process CPU %.0f µs per request", v.name, ms(pct(lat, 50)), ms(pct(lat, 99)),
			float64(cpu.Microseconds())/float64(max(1, len(lat))))
	}
	return nil
}

func merge(parts [][]time.Duration) []time.Duration {
	var all []time.Duration
	for _, p := range parts {
		all = append(all, p...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all
}

// pct answers the p-th percentile of sorted durations.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// subjectOf pulls "subject" out of a new_mail payload without a full decode.
func subjectOf(data []byte) string {
	s := string(data)
	i := strings.Index(s, `"subject":"`)
	if i < 0 {
		return ""
	}
	s = s[i+len(`"subject":"`):]
	if j := strings.IndexByte(s, '"'); j >= 0 {
		return s[:j]
	}
	return ""
}

// processCPU answers the user and system CPU time this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// raiseFileLimit lifts the soft open-file limit to the hard one: a thousand
// streams need two thousand descriptors in this one process.
func raiseFileLimit() {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) == nil && r.Cur < r.Max {
		r.Cur = r.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
	}
}
