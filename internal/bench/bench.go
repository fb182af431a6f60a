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
	"runtime/pprof"
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
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute}}
	b := &runner{cfg: cfg, app: app, hc: hc, url: app.URL()}
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
		rs, err := newRawSender(b.url, path, token, prefix, []byte(`"}`))
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
	r, err := runLoop(senders, b.cfg.Warmup, b.cfg.SendDuration)
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
	b.logf("statements, %s sends, %d senders: %d statements, %s in them (all counted from the warm-up on; about %d mails)",
		kind, n, count, total.Round(time.Millisecond), mails)
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

// streamPhase: for each of StreamCounts, that many agents hold an SSE
// stream each (in the stream holder); 2 mails per stream, one recipient
// each, are sent by StreamSenders concurrent senders. The latency of a
// delivery is from just before its send request to the event's arrival
// on the agent's stream; the peak RSS is this process's during the run.
func (b *runner) streamPhase(ctx context.Context, rep *Report) error {
	where := "gateway process (the streams are held by another process)"
	if len(b.cfg.StreamHolder) == 0 {
		where = "gateway and stream holder together (one process)"
	}
	t := Table{Title: "Delivery p99 and peak RSS against open streams; RSS of the " + where,
		Header: []string{"open streams", "mails", "delivery p50", "delivery p99", "peak RSS"}}
	for _, n := range b.cfg.StreamCounts {
		row, err := b.streams(ctx, n)
		if err != nil {
			return err
		}
		t.Rows = append(t.Rows, row)
		if n == b.cfg.StreamCounts[0] {
			rep.Rows = append(rep.Rows, Row{fmt.Sprintf("SSE delivery latency p50 / p99, %d connected agents", n),
				row[2] + " / " + row[3], "p99 ≤ 50 ms"})
		}
	}
	rep.Tables = append(rep.Tables, t)
	return nil
}

func (b *runner) streams(ctx context.Context, n int) ([]string, error) {
	b.logf("sse: registering %d agents", n)
	for ; b.agents < n; b.agents++ {
		if _, err := b.agentClient(ctx, fmt.Sprintf("a%d", b.agents)); err != nil {
			return nil, err
		}
	}
	runtime.GC()
	reset := resetPeakRSS()
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = agentToken(fmt.Sprintf("a%d", i))
	}
	h, err := startHolder(ctx, b.cfg.StreamHolder, b.url, tokens)
	if err != nil {
		return nil, fmt.Errorf("sse: %w", err)
	}
	defer h.close()
	if got := b.app.Hub.Subscribers(); got < n {
		return nil, fmt.Errorf("sse: %d streams open, want %d", got, n)
	}
	mails := b.cfg.StreamMails
	if mails <= 0 {
		mails = 2 * n
	}
	b.logf("sse: %d streams open; sending %d mails with %d senders", n, mails, b.cfg.StreamSenders)
	starts := make([]time.Time, mails)
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
	for seq := 0; seq < mails; seq++ {
		next <- seq
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, fmt.Errorf("sse phase: %w", err)
	}
	lat := make([]time.Duration, 0, mails)
	timeout := time.After(60 * time.Second)
	for len(lat) < mails {
		select {
		case a, ok := <-h.arrivals:
			if !ok {
				return nil, fmt.Errorf("sse: the stream holder ended after %d of %d events", len(lat), mails)
			}
			lat = append(lat, a.at.Sub(starts[a.seq]))
		case <-timeout:
			return nil, fmt.Errorf("sse: %d of %d events arrived within 60 s", len(lat), mails)
		}
	}
	rss := peakRSS()
	if b.cfg.HeapProfile != "" {
		if err := writeHeapProfile(fmt.Sprintf("%s.%d", b.cfg.HeapProfile, n)); err != nil {
			return nil, err
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	b.logf("sse: %d streams, %d deliveries, p50 %s p99 %s, peak RSS %d MB (now: heap in use %d MB, goroutine stacks %d MB, %d goroutines, from the OS %d MB)",
		n, len(lat), ms(pct(lat, 50)), ms(pct(lat, 99)), rss>>20, mem.HeapInuse>>20, mem.StackInuse>>20, runtime.NumGoroutine(), mem.Sys>>20)
	rssText := fmt.Sprintf("%d MB", rss>>20)
	if !reset {
		rssText += " (peak since start)"
	}
	return []string{strconv.Itoa(n), strconv.Itoa(mails), ms(pct(lat, 50)), ms(pct(lat, 99)), rssText}, nil
}

// writeHeapProfile writes this process's heap profile to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.WriteHeapProfile(f)
}

// inboxVariants are the timed inbox requests.
var inboxVariants = []struct {
	name string
	q    client.InboxQuery
}{
	{"unread, limit 5", client.InboxQuery{Status: "unread", Limit: 5, MarkRead: client.Bool(false)}},
	{"all, limit 5", client.InboxQuery{Status: "all", Limit: 5}},
	{"all, limit 50", client.InboxQuery{Status: "all", Limit: 50}},
}

// inboxPhase times the measured agent's inbox with no seeded mails (60
// real ones), seeds StoredMails mails with batched inserts, times the
// inbox again, and measures sending again with the stored mails.
func (b *runner) inboxPhase(ctx context.Context, rep *Report) error {
	agent, err := b.agentClient(ctx, "inbox")
	if err != nil {
		return err
	}
	var sessionID string
	for i := 0; i < 60; i++ {
		r, err := b.person.MeSend(ctx, client.SendMailRequest{To: "inbox@/bench", Subject: fmt.Sprintf("real %d", i), Body: "x"})
		if err != nil {
			return err
		}
		sessionID = r.SessionID
	}
	raw, err := newRawSender(b.url, "", agentToken("inbox"), nil, nil)
	if err != nil {
		return err
	}
	defer raw.close()
	t := Table{Title: "Inbox p50 / p99 and sending against stored mails",
		Header: []string{"stored mails", "in this inbox", "unread, limit 5", "all, limit 5", "all, limit 50", "agent sends/s, p99", "person sends/s, p99"}}
	row := []string{"0", "60"}
	for _, v := range inboxVariants {
		p50, p99, err := b.timeInbox(ctx, agent, raw, v.name, v.q)
		if err != nil {
			return err
		}
		row = append(row, ms(p50)+" / "+ms(p99))
	}
	sendCell := func(r loopResult, ok bool) string {
		if !ok {
			return "–"
		}
		return fmt.Sprintf("%.0f, %s", r.Rate(), ms(r.P(99)))
	}
	a0, okA := b.sendAt0[kindAgent]
	p0, okP := b.sendAt0[kindPerson]
	row = append(row, sendCell(a0, okA), sendCell(p0, okP))
	t.Rows = append(t.Rows, row)

	b.logf("inbox: seeding %d mails (%.0f%% to the measured agent)", b.cfg.StoredMails, b.cfg.InboxShare*100)
	t0 := time.Now()
	mine, err := seed(ctx, b.app.Store, sessionID, b.cfg.StoredMails, b.cfg.InboxShare, b.cfg.StreamAgents)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	mine += 60
	b.logf("inbox: seeded in %s; the measured agent holds %d mails", time.Since(t0).Round(time.Millisecond), mine)
	row = []string{strconv.Itoa(b.cfg.StoredMails), strconv.Itoa(mine)}
	for _, v := range inboxVariants {
		p50, p99, err := b.timeInbox(ctx, agent, raw, v.name, v.q)
		if err != nil {
			return err
		}
		row = append(row, ms(p50)+" / "+ms(p99))
		rep.Rows = append(rep.Rows, Row{fmt.Sprintf("inbox latency p50 / p99 (%s), %d stored mails, %d in this inbox", v.name, b.cfg.StoredMails, mine),
			fmt.Sprintf("%s / %s", ms(p50), ms(p99)), "p99 ≤ 5 ms"})
	}
	srows, err := b.timeSearches(ctx, agent, raw) // search.go
	if err != nil {
		return err
	}
	st := Table{Title: fmt.Sprintf("Search p50 / p99 as the measured agent (GET /api/v1/mail/search, limit 20), %d stored mails, %d in its scope", b.cfg.StoredMails, mine),
		Header: []string{"query", "q", "hits on page 1", "p50 / p99"}, Rows: srows}
	for _, r := range srows {
		rep.Rows = append(rep.Rows, Row{fmt.Sprintf("search latency p50 / p99 (%s), %d stored mails, %d in scope", r[0], b.cfg.StoredMails, mine), r[3], "p99 ≤ 20 ms"})
	}
	for _, kind := range []string{kindAgent, kindPerson} {
		r, err := b.measure(ctx, kind, b.cfg.Senders)
		if err != nil {
			return err
		}
		row = append(row, sendCell(r, true))
	}
	t.Rows = append(t.Rows, row)
	t.Title += fmt.Sprintf(" (sends: %d senders; the 0 row's are the send phase's, on a database holding only what that phase wrote)", b.cfg.Senders)
	rep.Tables = append(rep.Tables, t, st)
	return nil
}

// timeInbox checks once with the typed client that the answer is a full
// page, then times InboxRequests raw GETs on one keep-alive connection
// (after 100 untimed): the answer is read whole and checked, not decoded.
func (b *runner) timeInbox(ctx context.Context, agent *client.Client, raw *rawSender, name string, q client.InboxQuery) (time.Duration, time.Duration, error) {
	l, err := agent.Inbox(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	if len(l.Mails) != q.Limit {
		return 0, 0, fmt.Errorf("inbox %s: %d mails, want %d", name, len(l.Mails), q.Limit)
	}
	query := url.Values{"status": {q.Status}, "limit": {strconv.Itoa(q.Limit)}}
	if q.MarkRead != nil {
		query.Set("mark_read", strconv.FormatBool(*q.MarkRead))
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
			return 0, 0, err
		}
		if status != http.StatusOK || !bytes.Contains(body, []byte(`"mail_id"`)) {
			return 0, 0, fmt.Errorf("inbox %s: status %d: %.200s", name, status, body)
		}
		if i >= 100 { // the first 100 warm caches
			lat = append(lat, time.Since(start))
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	cpu := processCPU() - cpu0
	b.logf("inbox %s: p50 %s p99 %s, process CPU %.0f µs per request", name, ms(pct(lat, 50)), ms(pct(lat, 99)),
		float64(cpu.Microseconds())/float64(max(1, len(lat))))
	return pct(lat, 50), pct(lat, 99), nil
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
