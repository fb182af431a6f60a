// Package bench is the load generator of `agentmail bench` (issue 2 item
// 13): it starts a gateway on a temporary data directory and measures, over
// real HTTP, the mails sent per second by concurrent senders with their
// latency, the SSE delivery latency to many connected agents, and the inbox
// latency with a large number of stored mails.
package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
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
	// SenderSweep lists the sender counts of the sweep phase (e.g. 1, 8,
	// 64, 256); empty skips it.
	SenderSweep []int
	// SendDuration is how long each send measurement runs (10 s), after
	// Warmup (1 s).
	SendDuration time.Duration
	Warmup       time.Duration
	// Rounds is how many times the send phase's measurements run, agent,
	// person and peer alternating (1); the figures are the medians.
	Rounds int
	// PeerMailpit is the path of a mailpit binary: when set, mailpit's
	// POST /api/v1/send is driven by the same loop beside every send
	// measurement, and the report gives the ratio.
	PeerMailpit string
	// StreamAgents is the number of agents the seeded mails are spread
	// over (1,000) and the default of StreamCounts.
	StreamAgents int
	// StreamCounts lists the numbers of open streams of the SSE phase
	// ([StreamAgents]); each gets its own run with its peak RSS.
	StreamCounts []int
	// StreamMails is how many mails are sent to the streams, one
	// recipient each (default 2 per stream), by StreamSenders concurrent
	// senders (8).
	StreamMails   int
	StreamSenders int
	// StreamHolder is the command that holds the streams in a process of
	// its own (`agentmail bench-streams`, HoldStreams), so that the peak
	// RSS measured is the gateway's; empty holds them in this process.
	StreamHolder []string
	// StoredMails is how many mails are seeded before the inbox phase
	// (1,000,000); InboxShare of them go to the measured agent (1/4).
	StoredMails int
	InboxShare  float64
	// InboxRequests is how many inbox requests are timed per variant (2,000).
	InboxRequests int
	// SearchRequests is how many searches are timed per search variant
	// after the seeding (500).
	SearchRequests int
	// DataDir is where the temporary gateway keeps its database; "" makes
	// and removes a temporary directory.
	DataDir string
	// DatabaseURL, when it names a PostgreSQL server
	// (postgres://user@host:5432/postgres), runs the gateway on PostgreSQL:
	// a scratch database is created on that server for the run and dropped
	// after it, so no existing data is touched. "" runs on SQLite in DataDir.
	DatabaseURL string
	// Replicas is how many gateways run on the one PostgreSQL database
	// (1); the senders of each measurement are spread over them in turn.
	// More than one needs DatabaseURL.
	Replicas int
	// Phases names the phases to run, in their fixed order: "send",
	// "sweep", "sse", "inbox"; empty runs all four (sweep only when
	// SenderSweep is set).
	Phases []string
	// SQLiteSynchronous is the gateway's store.Options.Synchronous
	// ("" = full).
	SQLiteSynchronous string
	// StatementTimes, when set, counts and times the gateway's statements
	// during each send measurement and reports them per mail
	// (store.TraceStatements).
	StatementTimes bool
	// HeapProfile, when set, is the file a heap profile is written to at
	// the peak of each SSE run (all streams open, every event delivered);
	// the stream count is appended to the name.
	HeapProfile string
	// Progress receives one line per step (nil: discarded).
	Progress io.Writer
}

// phaseNames are the phases of a run in the order they run.
var phaseNames = []string{"send", "sweep", "sse", "inbox"}

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
	if c.Warmup <= 0 {
		c.Warmup = time.Second
	}
	if c.Rounds <= 0 {
		c.Rounds = 1
	}
	if c.StreamAgents <= 0 {
		c.StreamAgents = 1000
	}
	if len(c.StreamCounts) == 0 {
		c.StreamCounts = []int{c.StreamAgents}
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
	if c.SearchRequests <= 0 {
		c.SearchRequests = 500
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

// Table is a figure against a load (senders, stored mails, open streams).
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Report is the outcome of a run.
type Report struct {
	Rows     []Row
	Tables   []Table
	Machine  string
	Started  time.Time
	Duration time.Duration
}

// Table renders the report as Markdown tables: the figures, then each
// table against a load.
func (r *Report) Table() string {
	var b strings.Builder
	b.WriteString("| metric | measured | target |\n|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row.Metric, row.Value, row.Target)
	}
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "\n%s\n\n| %s |\n|%s\n", t.Title, strings.Join(t.Header, " | "), strings.Repeat("---|", len(t.Header)))
		for _, row := range t.Rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
	}
	return b.String()
}

const benchPassword = "bench-admin-password"

// Run starts a gateway and runs the phases in order (those of cfg.Phases
// when set): sending, the sender sweep, SSE delivery, inbox and sending
// with stored mails.
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
	if cfg.Replicas > 1 && cfg.DatabaseURL == "" {
		return nil, fmt.Errorf("--replicas %d: replicas share a PostgreSQL database; give --database-url", cfg.Replicas)
	}
	dbURL, dropDB, err := benchDatabase(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer dropDB()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	app, err := httpapi.Start(ctx, httpapi.AppConfig{Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: dbURL, SQLiteSynchronous: cfg.SQLiteSynchronous, AdminUser: "admin",
		AdminPassword: benchPassword, Log: quiet})
	if err != nil {
		return nil, err
	}
	rep.Machine += ", " + databaseName(ctx, app)
	if sync := app.Store.Synchronous(); sync != "" {
		rep.Machine += " (WAL, synchronous=" + sync + ")"
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = app.Shutdown(sctx)
	}()
	urls := []string{app.URL()}
	for i := 1; i < cfg.Replicas; i++ {
		// Further gateways on the same database, as `agentmail serve`
		// replicas are (the admin exists already: each finds it).
		replica, err := httpapi.Start(ctx, httpapi.AppConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, fmt.Sprintf("replica-%d", i)),
			DatabaseURL: dbURL, AdminUser: "admin", AdminPassword: benchPassword, Log: quiet})
		if err != nil {
			return nil, fmt.Errorf("replica %d: %w", i+1, err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = replica.Shutdown(sctx)
		}()
		urls = append(urls, replica.URL())
	}
	if len(urls) > 1 {
		rep.Machine += fmt.Sprintf(", %d replicas", len(urls))
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute}}
	b := &runner{cfg: cfg, app: app, hc: hc, url: app.URL(), urls: urls}
	if err := b.setup(ctx); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	if cfg.PeerMailpit != "" {
		m, err := startMailpit(ctx, cfg.PeerMailpit)
		if err != nil {
			return nil, err
		}
		defer m.stop()
		b.peer = m
		rep.Machine += ", peer: mailpit " + cfg.PeerMailpit
	}
	t0 := time.Now()
	phases := []func(context.Context, *Report) error{b.sendPhase, b.sweepPhase, b.streamPhase, b.inboxPhase}
	for i, phase := range phases {
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
	cfg     Config
	app     *httpapi.App
	hc      *http.Client
	url     string
	urls    []string       // every gateway (url first); senders take them in turn
	person  *client.Client // admin with a user key (no CSRF, no bcrypt per request)
	token   string         // that user key
	peer    *mailpit       // nil without --peer-mailpit
	agents  int            // stream agents a0.. registered so far
	senders int            // sending agents s0.. registered so far
	sink    bool           // the agent "sink" is registered
	sendAt0 map[string]loopResult
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

// sendBody is the 200-byte body of every measured send (AgentMail's and
// the peer's).
var sendBody = strings.Repeat("Benchmark mail body. ", 10)[:200]

// Sender kinds of a send measurement.
const (
	kindAgent  = "agent"
	kindPerson = "person"
	kindPeer   = "mailpit"
)

// makeSenders prepares n senders of one kind, each with its own
// connection and recipient:
//   - agent: agent s<i> sends POST /api/v1/mail/send to sink@/bench/<i>;
//   - person: the admin (a user key) sends POST /api/v1/me/mail/send to
//     sink@/bench/<i>;
//   - mailpit: POST /api/v1/send from admin@bench.test to sink<i>@bench.test.
func (b *runner) makeSenders(ctx context.Context, kind string, n int) ([]*rawSender, error) {
	if kind == kindPeer {
		return mailpitSenders(b.peer, n, sendBody)
	}
	// Agents get an unlimited round budget: an agent's own mails use
	// rounds, and the measured loop sends thousands into one session.
	unlimited := func(name string) error {
		if _, err := b.agentClient(ctx, name); err != nil {
			return err
		}
		_, err := b.person.AdminUpdateAgent(ctx, name, client.UpdateAgentRequest{DefaultRounds: client.Int(0)})
		return err
	}
	if !b.sink {
		if err := unlimited("sink"); err != nil {
			return nil, err
		}
		b.sink = true
	}
	if kind == kindAgent {
		for ; b.senders < n; b.senders++ {
			if err := unlimited(fmt.Sprintf("s%d", b.senders)); err != nil {
				return nil, err
			}
		}
	}
	out := make([]*rawSender, n)
	for i := range out {
		prefix := fmt.Appendf(nil, `{"to":%s,"body":%s,"subject":"load `, jsonString(fmt.Sprintf("sink@/bench/%d", i)), jsonString(sendBody))
		path, token := "/api/v1/me/mail/send", b.token
		if kind == kindAgent {
			path, token = "/api/v1/mail/send", agentToken(fmt.Sprintf("s%d", i))
		}
		rs, err := newRawSender(b.urls[i%len(b.urls)], path, token, prefix, []byte(`"}`))
		if err != nil {
			return nil, err
		}
		out[i] = rs
	}
	return out, nil
}

// measure runs the load loop once for n senders of kind.
func (b *runner) measure(ctx context.Context, kind string, n int) (loopResult, error) {
	senders, err := b.makeSenders(ctx, kind, n)
	if err != nil {
		return loopResult{}, err
	}
	defer closeAll(senders)
	var stats *store.StatementStats
	if b.cfg.StatementTimes && kind != kindPeer {
		stats = store.TraceStatements()
		defer store.StopTracingStatements()
	}
	cpu := processCPU
	if kind == kindPeer {
		cpu = func() time.Duration { return processCPU() + b.peer.cpu() }
	}
	r, err := runLoop(senders, b.cfg.Warmup, b.cfg.SendDuration, cpu)
	if err != nil {
		return r, fmt.Errorf("%s sends, %d senders: %w", kind, n, err)
	}
	if stats != nil {
		b.statementTable(kind, n, stats, r.Mails)
	}
	b.logf("send: %s, %d senders: %d mails, %.0f/s, p50 %s p99 %s, %.0f µs CPU per mail", kind, n, r.Mails, r.Rate(),
		ms(r.P(50)), ms(r.P(99)), float64(r.CPUPerMail().Nanoseconds())/1000)
	return r, nil
}

// statementTable logs the statements of one measurement, per mail: how
// many ran and the time spent in them (warm-up included in the counts, so
// per-mail figures are a little high).
func (b *runner) statementTable(kind string, n int, stats *store.StatementStats, mails int) {
	top := stats.Top()
	var count int
	var total time.Duration
	for _, st := range top {
		count += st.Count
		total += st.Total
	}
	b.logf("statements, %s sends, %d senders: %d statements in %d round trips, %s in them (all counted from the warm-up on; about %d mails)",
		kind, n, count, stats.RoundTrips(), total.Round(time.Millisecond), mails)
	for _, st := range top {
		q := st.Query
		if len(q) > 110 {
			q = q[:110] + "…"
		}
		b.logf("  %8d  %9s  %6.1f µs each  %s", st.Count, st.Total.Round(time.Millisecond),
			float64(st.Total.Nanoseconds())/1000/float64(max(1, st.Count)), q)
	}
}

// kinds answers the sender kinds measured: agent, person, and the peer
// when there is one.
func (b *runner) kinds() []string {
	if b.peer != nil {
		return []string{kindAgent, kindPerson, kindPeer}
	}
	return []string{kindAgent, kindPerson}
}

// sendPhase measures Senders concurrent senders of each kind, Rounds
// times alternating, and reports the medians (and the ratio to the peer).
func (b *runner) sendPhase(ctx context.Context, rep *Report) error {
	b.logf("send: %d senders, %d round(s) of %s each after %s warm-up", b.cfg.Senders, b.cfg.Rounds, b.cfg.SendDuration, b.cfg.Warmup)
	runs := map[string][]loopResult{}
	for round := 0; round < b.cfg.Rounds; round++ {
		for _, kind := range b.kinds() {
			r, err := b.measure(ctx, kind, b.cfg.Senders)
			if err != nil {
				return err
			}
			runs[kind] = append(runs[kind], r)
		}
	}
	med := map[string]loopResult{}
	for kind, rs := range runs {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Rate() < rs[j].Rate() })
		med[kind] = rs[len(rs)/2]
	}
	b.sendAt0 = med
	n := b.cfg.Senders
	for _, kind := range []string{kindAgent, kindPerson} {
		r := med[kind]
		rep.Rows = append(rep.Rows,
			Row{fmt.Sprintf("mails sent per second, %d concurrent senders, %s sends", n, kind), fmt.Sprintf("%.0f", r.Rate()), "≥ 2.8 × mailpit"},
			Row{fmt.Sprintf("send latency p50 / p99, %s sends", kind), fmt.Sprintf("%s / %s", ms(r.P(50)), ms(r.P(99))), "p99 ≤ 20 ms"},
			Row{fmt.Sprintf("process CPU per mail sent, %s sends (gateway and load generator together)", kind),
				fmt.Sprintf("%.0f µs", float64(r.CPUPerMail().Nanoseconds())/1000), "–"})
	}
	rep.Rows = append(rep.Rows, Row{"person sends per second / agent sends per second",
		fmt.Sprintf("%.2f", med[kindPerson].Rate()/med[kindAgent].Rate()), "≥ 0.80"})
	if p, ok := med[kindPeer]; ok {
		rep.Rows = append(rep.Rows,
			Row{fmt.Sprintf("mailpit POST /api/v1/send per second, %d concurrent senders, same loop", n), fmt.Sprintf("%.0f", p.Rate()), "–"},
			Row{"mailpit send latency p50 / p99", fmt.Sprintf("%s / %s", ms(p.P(50)), ms(p.P(99))), "–"},
			Row{"process CPU per mail sent, mailpit (its server process and the load generator together)",
				fmt.Sprintf("%.0f µs", float64(p.CPUPerMail().Nanoseconds())/1000), "–"},
			Row{"ratio to mailpit, agent sends / person sends", fmt.Sprintf("%.2f× / %.2f×",
				med[kindAgent].Rate()/p.Rate(), med[kindPerson].Rate()/p.Rate()), "≥ 2.8×"})
	}
	if b.cfg.Rounds > 1 {
		rep.Rows = append(rep.Rows, Row{"rounds (figures are medians by rate)", strconv.Itoa(b.cfg.Rounds), "–"})
	}
	return nil
}

// sweepPhase measures rate and p99 against the number of senders.
func (b *runner) sweepPhase(ctx context.Context, rep *Report) error {
	if len(b.cfg.SenderSweep) == 0 {
		return nil
	}
	t := Table{Title: fmt.Sprintf("Rate and p99 against concurrent senders (%s per measurement)", b.cfg.SendDuration),
		Header: []string{"senders", "agent mails/s", "agent p99", "person mails/s", "person p99"}}
	if b.peer != nil {
		t.Header = append(t.Header, "mailpit mails/s", "mailpit p99", "agent / mailpit")
	}
	for _, n := range b.cfg.SenderSweep {
		row := []string{strconv.Itoa(n)}
		var agentRate float64
		for _, kind := range b.kinds() {
			r, err := b.measure(ctx, kind, n)
			if err != nil {
				return err
			}
			row = append(row, fmt.Sprintf("%.0f", r.Rate()), ms(r.P(99)))
			if kind == kindAgent {
				agentRate = r.Rate()
			}
			if kind == kindPeer {
				row = append(row, fmt.Sprintf("%.2f×", agentRate/r.Rate()))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	rep.Tables = append(rep.Tables, t)
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
