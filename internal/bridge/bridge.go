package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
)

// Timing defaults of seed 000.
const (
	// DefaultHeartbeatInterval is B-1.5/B-2.1's period.
	DefaultHeartbeatInterval = 30 * time.Second
	// DefaultVerdictTimeout is D-3.4's wait: no verdict within it counts as
	// success.
	DefaultVerdictTimeout = 60 * time.Second
	// DefaultReconnectMin and DefaultReconnectMax bound the SSE reconnect
	// back-off (D-7.2).
	DefaultReconnectMin = time.Second
	DefaultReconnectMax = 30 * time.Second
	// listTimeout bounds one platform listing for a heartbeat.
	listTimeout = 10 * time.Second
	// catchUpPage is the inbox page size when catching up.
	catchUpPage = 50
	// sseConnectWait bounds how long the first heartbeat waits for the
	// event stream's first connection attempt.
	sseConnectWait = 10 * time.Second
	// catchUpMaxPages bounds how much of the unread inbox a catch-up reads.
	catchUpMaxPages = 20
)

// Config wires a Bridge. Adapter, Gateway and Subscribe are required; the
// rest has defaults.
type Config struct {
	// Adapter is the platform.
	Adapter Adapter
	// Gateway is the AgentMail API with the agent key (*client.Client).
	Gateway Gateway
	// Subscribe opens the agent event stream.
	Subscribe SubscribeFunc
	// Settings is the environment configuration (issue 4 item 6).
	Settings Settings
	// Bin is the platform executable handed to the adapter ("" when none).
	Bin string
	// MCPCommand starts the MCP tool server (see MCPCommand()).
	MCPCommand []string
	// Sandbox confines the platform's processes (see Env.Command); nil runs
	// them unconfined.
	Sandbox Sandbox
	// MaxTurns caps the turns running at once; 0 means DefaultMaxTurns.
	MaxTurns int
	// HeartbeatInterval is the heartbeat period; 0 means 30 s.
	HeartbeatInterval time.Duration
	// VerdictTimeout is D-3.4's wait; 0 means 60 s.
	VerdictTimeout time.Duration
	// ReconnectMin/ReconnectMax bound the SSE reconnect back-off.
	ReconnectMin, ReconnectMax time.Duration
	// After is the timer source (time.After by default); tests inject one
	// they control.
	After func(time.Duration) <-chan time.Time
	// Now is the clock (time.Now by default).
	Now func() time.Time
	// Logger receives every log line; slog.Default() when nil.
	Logger *slog.Logger
}

// Bridge is the platform-agnostic bridge core of seed 000: one instance
// serves one agent on one platform. Create it with New and run it with Run.
type Bridge struct {
	cfg     Config
	adapter Adapter
	gw      Gateway
	caps    Capabilities
	log     *slog.Logger
	after   func(time.Duration) <-chan time.Time
	now     func() time.Time

	delivered *deliveredSet
	slots     *slots
	perms     *permissions

	mu           sync.Mutex
	agentName    string
	scope        ModelScope
	firstGood    bool
	platformOf   map[string]string // mail session id → platform session id (B-3.3)
	mailDriven   map[string]bool   // platform session ids bound to mail sessions (B-5.5)
	fingerprints map[string]string // mail session id → last alias submission (D-5)
	renamed      map[string]string // platform session id → last name written back
	foreign      map[string]bool   // mail sessions of another agent this one was cc'd into
	noRename     bool              // the adapter cannot rename (logged once)

	turns    sync.WaitGroup
	sseReady chan struct{} // closed after the first subscribe attempt
	ready    chan struct{} // closed once registered and started
}

// New checks the configuration and the adapter's required capabilities
// (C-1..C-7); a missing one is an error naming it.
func New(cfg Config) (*Bridge, error) {
	if cfg.Adapter == nil || cfg.Gateway == nil || cfg.Subscribe == nil {
		return nil, errors.New("bridge.New: Adapter, Gateway and Subscribe are required")
	}
	caps := cfg.Adapter.Capabilities()
	if missing := MissingRequired(caps); len(missing) > 0 {
		return nil, fmt.Errorf("platform %s lacks required capabilities %s: it cannot be connected (seed 000 section 1)",
			cfg.Adapter.Name(), strings.Join(missing, ", "))
	}
	if cfg.Settings.Tier == "" {
		cfg.Settings.Tier = TierWorkspace
	}
	if cfg.Settings.GatewayURL == "" {
		cfg.Settings.GatewayURL = DefaultGatewayURL
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.VerdictTimeout <= 0 {
		cfg.VerdictTimeout = DefaultVerdictTimeout
	}
	if cfg.ReconnectMin <= 0 {
		cfg.ReconnectMin = DefaultReconnectMin
	}
	if cfg.ReconnectMax < cfg.ReconnectMin {
		cfg.ReconnectMax = DefaultReconnectMax
		if cfg.ReconnectMax < cfg.ReconnectMin {
			cfg.ReconnectMax = cfg.ReconnectMin
		}
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	b := &Bridge{
		cfg: cfg, adapter: cfg.Adapter, gw: cfg.Gateway, caps: caps,
		log:   cfg.Logger.With("platform", cfg.Adapter.Name()),
		after: cfg.After, now: cfg.Now,
		delivered:    newDeliveredSet(),
		slots:        newSlots(cfg.MaxTurns),
		platformOf:   map[string]string{},
		mailDriven:   map[string]bool{},
		fingerprints: map[string]string{},
		foreign:      map[string]bool{},
		renamed:      map[string]string{},
		sseReady:     make(chan struct{}),
		ready:        make(chan struct{}),
	}
	b.perms = newPermissions(cfg.Gateway, cfg.Settings.Tier, b.AgentName, b.log)
	return b, nil
}

// MissingRequired lists the required capabilities (C-1..C-7) caps lacks.
func MissingRequired(caps Capabilities) []string {
	var m []string
	for _, c := range []struct {
		ok   bool
		name string
	}{
		{caps.InjectTurn, "C-1 inject_turn"},
		{caps.CreateSessionWithCwd, "C-2 create_session_with_cwd"},
		{caps.StableSessionID, "C-3 stable_session_id"},
		{caps.TurnEndSignal, "C-4 turn_end_signal"},
		{caps.ReadMessages, "C-5 read_messages"},
		{caps.RegisterTools, "C-6 register_tools"},
		{caps.LongRunning, "C-7 long_running"},
	} {
		if !c.ok {
			m = append(m, c.name)
		}
	}
	return m
}

// Degradations lists, for the optional capabilities caps lacks, the
// degradation of seed 000 section 4 that follows; the core logs each once
// at start (D-1..D-5, C-12, C-14).
func Degradations(caps Capabilities) []string {
	var d []string
	if !caps.PermissionHook {
		d = append(d, "D-1: no permission hook (C-8): permission questions are not forwarded; dangerous actions are left to the platform's own settings")
	} else if !caps.AsyncPermission {
		d = append(d, "D-2: the permission hook cannot wait (C-9): an ask is answered 'pending' and completed when the decision arrives")
	}
	if !caps.PerTurnModel {
		d = append(d, "D-3: no per-turn model (C-13): no model fallback; every turn uses the platform default and the admin's model scope is not applied")
	}
	if !caps.ListSessions {
		d = append(d, "D-4: platform sessions cannot be listed (C-10): heartbeats omit platform_sessions; only mail-driven sessions can be continued")
	}
	if !caps.ModelTitle {
		d = append(d, "D-5: the platform does not name sessions (C-11): aliases are derived from mail subjects")
	}
	if !caps.ListModels {
		d = append(d, "C-12: models cannot be listed: heartbeats omit models; the admin cannot choose a model scope from a catalogue")
	}
	if !caps.FileTools {
		d = append(d, "C-14: no file tools: downloaded attachments are not visible to the model")
	}
	return d
}

// AgentName is the agent's name as the gateway registered it ("" before
// registration).
func (b *Bridge) AgentName() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.agentName
}

// Ready is closed once the bridge registered and started the platform.
func (b *Bridge) Ready() <-chan struct{} { return b.ready }

// Run starts the bridge (B-1) and serves until ctx ends, then shuts down
// (B-9): the event stream and the heartbeat timer stop, every waiting
// permission ask answers deny, running turns are stopped through their
// context and waited for, and the adapter is closed. No mail is sent about
// going offline (B-9.3). A registration the gateway refuses (401, 4xx)
// returns an error at once.
func (b *Bridge) Run(ctx context.Context) error {
	agent, err := b.register(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.agentName = agent.Name
	b.mu.Unlock()
	b.log = b.log.With("agent", agent.Name)
	b.perms.log = b.log
	b.log.Info(fmt.Sprintf("connected to %s as %s", b.cfg.Settings.GatewayURL, agent.Name))
	for _, d := range Degradations(b.caps) {
		b.log.Warn("degraded: " + d)
	}
	env := Env{
		AgentName:  agent.Name,
		GatewayURL: b.cfg.Settings.GatewayURL,
		MCPCommand: b.cfg.MCPCommand,
		Bin:        b.cfg.Bin,
		Log:        func(msg string, args ...any) { b.log.Info(msg, args...) },
		Sandbox:    b.cfg.Sandbox,
	}
	if err := b.adapter.Start(ctx, env); err != nil {
		return fmt.Errorf("starting platform %s: %w", b.adapter.Name(), err)
	}
	close(b.ready)

	var loops sync.WaitGroup
	firstBeat := make(chan int, 1) // pending_mails of the first good heartbeat
	loops.Add(3)
	go func() { defer loops.Done(); b.events(ctx) }()
	go func() { defer loops.Done(); b.heartbeats(ctx, firstBeat) }()
	go func() {
		defer loops.Done()
		select {
		case pending := <-firstBeat:
			if pending > 0 {
				b.catchUp(ctx, pending)
			}
		case <-ctx.Done():
		}
	}()

	<-ctx.Done()
	b.perms.shutdown()
	loops.Wait()
	b.turns.Wait()
	if err := b.adapter.Close(); err != nil {
		b.log.Warn("closing the platform adapter", "err", err)
	}
	b.log.Info("bridge stopped")
	return nil
}

// register is B-1.2 with workspaces [] (W-2). Transport faults and 5xx are
// retried with back-off until ctx ends; a 4xx (401: key not registered)
// returns an error that says what to do.
func (b *Bridge) register(ctx context.Context) (*client.Agent, error) {
	req := client.RegisterRequest{Name: b.cfg.Settings.AgentName, Platform: b.adapter.Name(), Workspaces: []client.Workspace{}}
	delay := b.cfg.ReconnectMin
	for {
		agent, err := b.gw.Register(ctx, req)
		if err == nil {
			if agent.Name == "" {
				agent.Name = req.Name
			}
			return agent, nil
		}
		var ae *client.APIError
		if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 {
			if ae.Status == 401 {
				return nil, fmt.Errorf("registering with %s: the agent key is not registered, revoked or expired (401); %s",
					b.cfg.Settings.GatewayURL, RegistrationHint(b.cfg.Settings.GatewayURL, b.cfg.Settings.AgentName, "<the key>"))
			}
			return nil, fmt.Errorf("registering with %s: %s", b.cfg.Settings.GatewayURL, gatewayReason(err))
		}
		b.log.Warn("gateway not reachable for registration; retrying", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.after(delay):
		}
		delay = minDuration(delay*2, b.cfg.ReconnectMax)
	}
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// ---------------------------------------------------------------- heartbeat

// heartbeats is B-1.3 and B-2: one heartbeat at once, then one per
// interval. Failures are silent (debug log only, B-2.1) and touch neither
// the event stream nor deliveries (B-2.5). The first good heartbeat's
// pending_mails goes to firstBeat once (B-1.6, B-7.1).
func (b *Bridge) heartbeats(ctx context.Context, firstBeat chan<- int) {
	// The first heartbeat follows the event stream's first connection
	// attempt, so a mail is either pushed or counted in pending_mails,
	// never neither (the B-7.3 window).
	select {
	case <-b.sseReady:
	case <-b.after(sseConnectWait):
	case <-ctx.Done():
		return
	}
	for {
		b.heartbeat(ctx, firstBeat)
		select {
		case <-ctx.Done():
			return
		case <-b.after(b.cfg.HeartbeatInterval):
		}
	}
}

// heartbeat sends one heartbeat and reads the model scope back (B-2.2).
func (b *Bridge) heartbeat(ctx context.Context, firstBeat chan<- int) {
	resp, err := b.gw.Heartbeat(ctx, b.heartbeatBody(ctx))
	if err != nil {
		if ctx.Err() == nil {
			b.log.Debug("heartbeat failed; the next one follows", "err", err)
		}
		return
	}
	b.mu.Lock()
	b.scope = ModelScope{Known: true, Allowed: append([]client.ModelRef(nil), resp.AllowedModels...), Unrestricted: resp.ModelsUnrestricted}
	first := !b.firstGood
	b.firstGood = true
	b.mu.Unlock()
	if first {
		firstBeat <- resp.PendingMails
	}
}

// heartbeatBody builds W-3's body: models and platform_sessions only when
// their listing succeeded (B-2.3, B-2.4); a failed or unsupported listing
// omits the field (N-7, D-4) and a really empty one sends [].
func (b *Bridge) heartbeatBody(ctx context.Context) client.HeartbeatRequest {
	var req client.HeartbeatRequest
	if b.caps.ListModels {
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		models, err := b.adapter.ListModels(lctx)
		cancel()
		if err == nil {
			m := CleanModels(models)
			req.Models = &m
		} else {
			b.log.Debug("model listing failed: models omitted from the heartbeat", "err", err)
		}
	}
	if b.caps.ListSessions {
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		listed, err := b.listSessions(lctx)
		cancel()
		if err == nil {
			s := ApplySnapshotRules(listed, b.isMailDriven)
			req.PlatformSessions = &s
		} else {
			b.log.Debug("session listing failed: platform_sessions omitted from the heartbeat", "err", err)
		}
	}
	return req
}

func (b *Bridge) listSessions(ctx context.Context) ([]ListedSession, error) {
	if d, ok := b.adapter.(DetailedSessionLister); ok {
		return d.ListSessionsDetailed(ctx)
	}
	ps, err := b.adapter.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ListedSession, len(ps))
	for i, p := range ps {
		out[i] = ListedSession{PlatformSession: p}
	}
	return out, nil
}

func (b *Bridge) isMailDriven(platformID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mailDriven[platformID]
}

// modelScope answers the admin's model scope (B-2.2). A mail pushed before
// the first heartbeat answered would otherwise run on the platform default
// whatever the admin chose, so an unknown scope is read once directly; if
// that fails too, the platform default is used and the next heartbeat
// corrects it.
func (b *Bridge) modelScope(ctx context.Context) ModelScope {
	b.mu.Lock()
	scope := b.scope
	b.mu.Unlock()
	if scope.Known {
		return scope
	}
	am, err := b.gw.AllowedModels(ctx)
	if err != nil {
		b.log.Warn("model scope unknown (no heartbeat yet, and reading it failed): the platform default is used", "err", err)
		return scope
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.scope.Known {
		b.scope = ModelScope{Known: true, Allowed: append([]client.ModelRef(nil), am.AllowedModels...), Unrestricted: am.ModelsUnrestricted}
	}
	return b.scope
}

// ------------------------------------------------------------------- events

// events holds the event stream (B-1.4): the first connection sends no
// Last-Event-ID (N-11); after a drop it reconnects with back-off and the id
// of the last event seen (D-7.2).
func (b *Bridge) events(ctx context.Context) {
	var last int64
	delay := b.cfg.ReconnectMin
	first := true
	for ctx.Err() == nil {
		s, err := b.cfg.Subscribe(ctx, last)
		if first {
			first = false
			close(b.sseReady)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var ae *client.APIError
			if errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 403) {
				// W-9: a refused key does not heal by retrying fast.
				delay = b.cfg.ReconnectMax
				b.log.Error("the gateway refused the event stream: the agent key was revoked or expired; re-register it",
					"status", ae.Status, "in", delay)
			} else {
				b.log.Warn("event stream could not connect; retrying", "err", err, "in", delay, "last_event_id", last)
			}
		} else {
			delay = b.cfg.ReconnectMin
			for ev := range s.Events() {
				if ev.ID > 0 {
					last = ev.ID
				}
				b.handleEvent(ctx, ev)
			}
			if ctx.Err() != nil {
				return
			}
			b.log.Warn("event stream ended; reconnecting", "in", delay, "last_event_id", last)
		}
		select {
		case <-ctx.Done():
			return
		case <-b.after(delay):
		}
		delay = minDuration(delay*2, b.cfg.ReconnectMax)
	}
}

// handleEvent dispatches one event; it never blocks on a turn.
func (b *Bridge) handleEvent(ctx context.Context, ev client.Event) {
	switch ev.Type {
	case client.EventNewMail:
		var nm client.NewMailEvent
		if err := json.Unmarshal(ev.Data, &nm); err != nil {
			b.log.Warn("unreadable new_mail event", "event_id", ev.ID, "err", err)
			return
		}
		if nm.Role == "from" {
			// A sender's own copy: the gateway gives these to people's
			// streams only, and the agent's own mail is never new work.
			b.log.Info("ignoring a new_mail event of the agent's own mail", "mail_id", nm.MailID, "event_id", ev.ID)
			return
		}
		b.accept(ctx, incomingFromEvent(nm))
	case client.EventPermissionDecision:
		var pd client.PermissionDecisionEvent
		if err := json.Unmarshal(ev.Data, &pd); err != nil {
			b.log.Warn("unreadable permission_decision event", "event_id", ev.ID, "err", err)
			return
		}
		b.handleDecision(ctx, pd)
	}
}

// incoming is one mail to deliver, from an SSE event or a catch-up listing.
type incoming struct {
	MailID       string
	SessionID    string
	FromName     string
	FromKind     string
	Subject      string
	MailType     string
	ToWorkspace  string
	ReplyAddress string
	SelfAddress  string
	CaughtUp     bool
}

func incomingFromEvent(e client.NewMailEvent) incoming {
	return incoming{MailID: e.MailID, SessionID: e.SessionID, FromName: e.FromName, FromKind: e.FromKind,
		Subject: e.Subject, MailType: e.MailType, ToWorkspace: e.ToWorkspace,
		ReplyAddress: e.ReplyAddress, SelfAddress: e.SelfAddress}
}

// incomingFromMail turns an inbox mail into a delivery; to_workspace is the
// path of this agent's own recipient entry (W-4).
func incomingFromMail(m client.Mail, agent string) incoming {
	in := incoming{MailID: m.MailID, SessionID: m.SessionID, FromName: m.FromName, FromKind: m.FromKind,
		Subject: m.Subject, MailType: m.MailType, ReplyAddress: m.FromAddress, CaughtUp: true}
	found := false
	for _, r := range m.Recipients {
		if r.Name != agent {
			continue
		}
		if !found || r.Role == "to" {
			in.ToWorkspace, in.SelfAddress = r.Workspace, r.Address
			found = true
		}
	}
	return in
}

// deliverable mail types: people's and agents' mail, and reminders. Failure
// reports and permission mails never start a turn.
func deliverableType(t string) bool {
	return t == "" || t == client.MailTypeNormal || t == client.MailTypeReminder
}

// accept is B-3 steps 1 and 2: de-duplicate (the shared set), choose the
// working directory (D-6) and queue the turn (never dropped). It returns a
// channel closed when the mail's handling ended, or nil when the mail is
// not delivered (duplicate, not deliverable).
func (b *Bridge) accept(ctx context.Context, in incoming) <-chan struct{} {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID)
	if in.FromName != "" && in.FromName == b.AgentName() {
		return nil
	}
	if !deliverableType(in.MailType) {
		log.Debug("mail type not delivered as a turn", "mail_type", in.MailType)
		return nil
	}
	if !b.delivered.add(in.MailID) {
		log.Info("mail already delivered; duplicate dropped")
		return nil
	}
	done := make(chan struct{})
	ws, err := ResolveWorkspace(in.ToWorkspace, b.cfg.Settings.FallbackDir)
	if err != nil {
		log.Error("no usable working directory; sending a failure report", "expected", in.ToWorkspace,
			"fallback", b.cfg.Settings.FallbackDir, "err", err)
		b.turns.Add(1)
		go func() {
			defer b.turns.Done()
			defer close(done)
			b.sendFailure(ctx, in, FailureReport{Stage: StageWorkspace, Workspace: ws, Detail: err.Error()})
		}()
		return done
	}
	if ws.FellBack {
		log.Warn("working directory not usable; using the fallback", "expected", ws.Expected, "actual", ws.Dir, "reason", ws.Reason)
	}
	t, st := b.slots.enqueue(in.SessionID, ws.Dir)
	if st.Waiting {
		switch {
		case st.SessionBusy:
			log.Info("mail queued: a turn of the same session is running", "queued_ahead", st.Ahead)
		case st.DirBusy:
			log.Info("mail queued: another turn runs in the same directory", "dir", ws.Dir, "queued_ahead", st.Ahead)
		default:
			log.Info(fmt.Sprintf("mail queued: all %d turn slots are busy", st.Max), "running", st.Running, "queued_ahead", st.Ahead)
		}
	}
	b.turns.Add(1)
	go func() {
		defer b.turns.Done()
		defer close(done)
		if !b.slots.wait(ctx, t) {
			return
		}
		defer b.slots.release(t)
		b.handleMail(ctx, in, ws)
	}()
	return done
}

// ------------------------------------------------------------------ catch-up

// catchUp is B-7: once, after the first good heartbeat reported pending
// mail and the event stream's first connection was tried (so no mail falls
// between the two). The unread inbox is listed without marking anything
// read; normal mails only, oldest first, de-duplicated against SSE in the
// shared set and checked again before each delivery, at most 5, delivered
// one after another. A mail the gateway already holds a run for is skipped
// (handled before a restart).
func (b *Bridge) catchUp(ctx context.Context, pending int) {
	select {
	case <-b.sseReady:
	case <-ctx.Done():
		return
	}
	mails, err := b.unreadMails(ctx)
	if err != nil {
		b.log.Warn("catch-up: listing the inbox failed", "err", err)
		return
	}
	candidates := SelectCatchUp(mails, b.delivered.has, -1)
	b.log.Info("catching up mails that arrived while the bridge was offline", "pending", pending, "candidates", len(candidates))
	n := 0
	for _, m := range candidates {
		if n >= MaxCatchUp || ctx.Err() != nil {
			break
		}
		if b.delivered.has(m.MailID) {
			continue // B-7.6: SSE delivered it meanwhile
		}
		if b.alreadyRun(ctx, m) {
			b.log.Info("catch-up: mail already handled by an earlier run; skipped", "mail_id", m.MailID)
			continue
		}
		done := b.accept(ctx, incomingFromMail(m, b.AgentName()))
		if done == nil {
			continue
		}
		n++
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	b.log.Info(fmt.Sprintf("caught up %d mails", n))
}

// unreadMails lists the unread inbox, newest first, without marking read.
func (b *Bridge) unreadMails(ctx context.Context) ([]client.Mail, error) {
	no := false
	var all []client.Mail
	cursor := ""
	for page := 0; page < catchUpMaxPages; page++ {
		l, err := b.gw.Inbox(ctx, client.InboxQuery{Status: "unread", Limit: catchUpPage, MarkRead: &no, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		all = append(all, l.Mails...)
		if l.NextCursor == "" || l.NextCursor == cursor {
			break
		}
		cursor = l.NextCursor
	}
	return all, nil
}

// alreadyRun reports whether the gateway holds a run for the mail that was
// not interrupted by a bridge stop.
func (b *Bridge) alreadyRun(ctx context.Context, m client.Mail) bool {
	rl, err := b.gw.SessionRuns(ctx, m.SessionID)
	if err != nil || rl == nil {
		return false
	}
	for _, r := range rl.Runs {
		if r.MailID == m.MailID && r.Error != interruptedError {
			return true
		}
	}
	return false
}

// ------------------------------------------------------------------ delivery

// attemptOutcome is the result of one model attempt.
type attemptOutcome struct {
	ok          bool // the model ran (verdict, turn end or D-3.4 timeout)
	res         TurnResult
	reason      string
	couldNotRun bool // RunTurn returned an error
	sessionGone bool // ... wrapping ErrSessionNotFound
	interrupted bool // the bridge is stopping
}

// handleMail is B-3 steps 3-6 and everything after: the platform session
// (B-3.3), model fallback (D-3), the turn itself with run supervision, the
// alias ladder (D-5), the relay (B-5) or the failure report (B-6).
func (b *Bridge) handleMail(ctx context.Context, in incoming, ws WorkspaceChoice) {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID)
	psid := b.boundPlatformSession(ctx, in.SessionID)
	before, _ := b.agentMailIDs(ctx, in.MailID)
	turnStart := b.now()

	order := AttemptOrder(b.modelScope(ctx), b.caps.PerTurnModel)
	if len(order) == 0 {
		log.Error("the model scope allows no model; sending a failure report")
		b.sendFailure(ctx, in, FailureReport{Stage: StageModel, NoneAllowed: true})
		return
	}
	prompt := BuildPrompt(PromptInput{MailID: in.MailID, From: in.FromName, FromIsAgent: in.FromKind == "agent",
		Subject: in.Subject, ReplyAddress: in.ReplyAddress, SelfAddress: in.SelfAddress, Workspace: ws.Dir})

	// The platform and its tools get a token for this turn's session only,
	// never the agent key; it dies when the turn ends (turntoken.go).
	tok := b.turnToken(ctx, log, in.SessionID)
	defer b.revokeTurnToken(ctx, log, tok)

	var failures []AttemptFailure
	allCouldNotRun := true
	var out attemptOutcome
	okModel := ""
	for i, model := range order {
		sid := psid
		if i > 0 {
			sid = "" // D-3.5: a fresh platform session per retry
		}
		out = b.attempt(ctx, in, tok, ws.Dir, prompt, model, i+1, sid)
		if out.sessionGone && sid != "" && ctx.Err() == nil {
			log.Warn("the bound platform session no longer exists; starting a new one", "platform_session", sid)
			out = b.attempt(ctx, in, tok, ws.Dir, prompt, model, i+1, "")
		}
		if out.interrupted {
			log.Info("turn stopped: the bridge is stopping")
			return
		}
		if out.ok {
			okModel = ModelLabel(model)
			if len(failures) > 0 {
				names := make([]string, len(failures))
				for j, f := range failures {
					names[j] = f.Model
				}
				log.Info(fmt.Sprintf("%s succeeded (after %d failed: %s)", ModelLabel(model), len(failures), strings.Join(names, ", ")))
			}
			break
		}
		if !out.couldNotRun {
			allCouldNotRun = false
		}
		failures = append(failures, AttemptFailure{Model: ModelLabel(model), Reason: out.reason})
		log.Warn("model attempt failed", "model", ModelLabel(model), "attempt", i+1, "reason", out.reason)
	}
	if !out.ok {
		stage := StageModel
		if allCouldNotRun {
			stage = StageSession
		}
		log.Error("every route failed; sending a failure report", "routes", len(failures))
		b.sendFailure(ctx, in, FailureReport{Stage: stage, Attempts: failures})
		return
	}
	res := out.res
	if res.PlatformSessionID != "" {
		b.bind(ctx, in.SessionID, res.PlatformSessionID)
	}
	b.syncAlias(ctx, in.SessionID, res, in.Subject)
	if res.Failed && strings.TrimSpace(res.Text) == "" {
		failures = append(failures, AttemptFailure{Model: okModel, Reason: nonEmpty(res.FailureReason, "the platform reported the turn failed")})
		log.Error("the turn failed after the model started; sending a failure report", "reason", res.FailureReason)
		b.sendFailure(ctx, in, FailureReport{Stage: StageModel, Attempts: failures})
		return
	}
	b.relaySummary(ctx, in, res, before, turnStart)
}

// attempt runs one model attempt as one run (seed 004) and judges it on
// the platform's asynchronous verdict (D-3.1, D-3.2): a verdict error fails
// the attempt and stops its turn; a nil verdict, a successful turn end, or
// VerdictTimeout without a verdict (D-3.4) counts as success, after which
// the turn is awaited to its end. tok is the turn's token (nil when none
// could be had: the tools then have no credentials).
func (b *Bridge) attempt(ctx context.Context, in incoming, tok *client.TurnToken, dir, prompt string, model *client.ModelRef, n int, sid string) attemptOutcome {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID, "model", ModelLabel(model), "attempt", n)
	run := newRun(b.gw, b.log, b.now, b.AgentName(), in.SessionID, in.MailID, ModelLabel(model), n)
	run.start(ctx)

	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	verdict := make(chan error, 1)
	var once sync.Once
	var startedMu sync.Mutex
	startedIn := ""
	req := TurnRequest{
		MailSessionID:     in.SessionID,
		MailID:            in.MailID,
		PlatformSessionID: sid,
		Cwd:               dir,
		Prompt:            prompt,
		Model:             model,
		ToolEnv: map[string]string{
			"AGENTMAIL_SESSION_ID":      in.SessionID,
			"AGENTMAIL_MAIL_ID":         in.MailID,
			"AGENTMAIL_WORKSPACE":       dir,
			"AGENTMAIL_PERMISSION_MODE": string(b.cfg.Settings.Tier),
		},
		OnVerdict: func(err error) { once.Do(func() { verdict <- err }) },
		OnStart: func(pid int, platformSessionID string) {
			startedMu.Lock()
			startedIn = platformSessionID
			startedMu.Unlock()
			run.started(ctx, pid)
		},
	}
	if tok != nil {
		req.ToolEnv[TurnTokenEnv] = tok.Token
	}
	// bindStarted binds the platform session the turn runs in as soon as the
	// model is known to run (or the turn is interrupted), so a restart in
	// the middle of a long turn still finds the conversation (B-3.3, B-4.2).
	bindStarted := func() {
		startedMu.Lock()
		p := startedIn
		startedMu.Unlock()
		if p != "" {
			bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runReportTimeout)
			defer cancel()
			b.bind(bctx, in.SessionID, p)
		}
	}
	if b.caps.PermissionHook {
		req.Permission = b.perms.funcFor(askScope{sessionID: in.SessionID, mailID: in.MailID, workspace: dir})
	}
	type turnDone struct {
		res TurnResult
		err error
	}
	done := make(chan turnDone, 1)
	go func() {
		r, err := b.adapter.RunTurn(actx, req)
		done <- turnDone{r, err}
	}()

	judged := false
	var d turnDone
	select {
	case v := <-verdict:
		if v != nil {
			cancel() // D-3.5: the failed attempt's turn is stopped
			d = <-done
			if ctx.Err() != nil {
				run.finish(ctx, d.res.Facts, true, interruptedError)
				return attemptOutcome{interrupted: true}
			}
			run.finish(ctx, d.res.Facts, true, v.Error())
			return attemptOutcome{reason: v.Error()}
		}
		judged = true
		bindStarted()
		d = <-done
	case d = <-done:
	case <-b.after(b.cfg.VerdictTimeout):
		judged = true
		log.Info("no model verdict in time: counted as success (D-3.4)", "waited", b.cfg.VerdictTimeout)
		bindStarted()
		d = <-done
	}
	if ctx.Err() != nil {
		bindStarted()
		run.finish(ctx, d.res.Facts, true, interruptedError)
		return attemptOutcome{interrupted: true}
	}
	if d.err != nil {
		run.finish(ctx, d.res.Facts, true, d.err.Error())
		return attemptOutcome{reason: d.err.Error(), couldNotRun: true, sessionGone: errors.Is(d.err, ErrSessionNotFound)}
	}
	if d.res.Failed && !judged {
		run.finish(ctx, d.res.Facts, true, nonEmpty(d.res.FailureReason, "the platform reported the turn failed"))
		return attemptOutcome{reason: nonEmpty(d.res.FailureReason, "the platform reported the turn failed")}
	}
	run.finish(ctx, d.res.Facts, d.res.Failed, d.res.FailureReason)
	return attemptOutcome{ok: true, res: d.res}
}

// boundPlatformSession is B-3.3's lookup: the memory map, else the
// platform session id stored on the gateway session (it survives a
// restart); "" when none.
func (b *Bridge) boundPlatformSession(ctx context.Context, sessionID string) string {
	b.mu.Lock()
	psid, ok := b.platformOf[sessionID]
	b.mu.Unlock()
	if ok {
		return psid
	}
	s, err := b.gw.GetSession(ctx, sessionID)
	if err != nil {
		b.log.Warn("reading the session's platform session failed; a new platform session will be used", "session_id", sessionID, "err", err)
		return ""
	}
	if s.AgentName != "" && !strings.EqualFold(s.AgentName, b.AgentName()) {
		// Cc'd into another agent's session: the stored platform session
		// and the alias are that agent's, not ours.
		b.mu.Lock()
		b.foreign[sessionID] = true
		b.mu.Unlock()
		return ""
	}
	if s.PlatformSessionID != "" {
		b.mu.Lock()
		b.platformOf[sessionID] = s.PlatformSessionID
		b.mailDriven[s.PlatformSessionID] = true
		b.mu.Unlock()
	}
	return s.PlatformSessionID
}

// bind stores mail session ↔ platform session in memory and on the gateway
// (B-3.3) when it changed.
func (b *Bridge) bind(ctx context.Context, sessionID, psid string) {
	b.mu.Lock()
	prev := b.platformOf[sessionID]
	b.platformOf[sessionID] = psid
	b.mailDriven[psid] = true
	foreign := b.foreign[sessionID]
	b.mu.Unlock()
	if prev == psid || foreign {
		return // a cc'd agent keeps its map in memory only: the session is another agent's
	}
	if _, err := b.gw.BindPlatformSession(ctx, sessionID, client.BindPlatformSessionRequest{PlatformSessionID: psid}); err != nil {
		b.log.Warn("storing the platform session on the gateway failed; a restart will start a new platform session",
			"session_id", sessionID, "platform_session", psid, "err", err)
		b.mu.Lock()
		if b.platformOf[sessionID] == psid {
			delete(b.platformOf, sessionID) // retry the bind after the next turn
		}
		b.mu.Unlock()
	}
}

// ------------------------------------------------------------------- aliases

// syncAlias is D-5 and W-7: propose the ladder's alias and the platform
// title, read the final alias from the gateway's answer, and write it back
// into the platform when it differs from the platform's own name. An
// unchanged proposal is not submitted again (fingerprint); an empty name is
// never written.
func (b *Bridge) syncAlias(ctx context.Context, sessionID string, res TurnResult, subject string) {
	p := ProposeAlias(res.Slug, res.Title, subject)
	b.mu.Lock()
	foreign := b.foreign[sessionID]
	b.mu.Unlock()
	if p.Empty() || foreign {
		return // level 4, or another agent's session: the gateway keeps its alias
	}
	fp := p.Fingerprint()
	b.mu.Lock()
	same := b.fingerprints[sessionID] == fp
	b.mu.Unlock()
	if same {
		return
	}
	req := client.SyncSessionRequest{Alias: p.Alias, Title: p.Title}
	if p.Alias != "" {
		req.AliasLevel = int(p.Level) // the gateway takes only a better level, in the first turn
	}
	s, err := b.gw.SyncSession(ctx, sessionID, req)
	if err != nil {
		b.log.Warn("alias sync failed; retried after the next turn", "session_id", sessionID, "err", err)
		return
	}
	b.mu.Lock()
	b.fingerprints[sessionID] = fp
	b.mu.Unlock()
	final := strings.TrimSpace(s.Alias)
	psid := res.PlatformSessionID
	// The platform's own name: its slug; for a session named by its title
	// (level 2) the alias derived from that title, so a title is only
	// overwritten when the gateway changed the alias (collision, manual).
	current := res.Slug
	if p.Level == AliasTitle {
		current = p.Alias
	}
	if final == "" || psid == "" || final == current {
		return
	}
	b.mu.Lock()
	skip := b.noRename || b.renamed[psid] == final
	b.mu.Unlock()
	if skip {
		return
	}
	err = b.adapter.RenameSession(ctx, psid, final)
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case err == nil:
		b.renamed[psid] = final
		b.log.Info("alias written back to the platform", "session_id", sessionID, "platform_session", psid, "alias", final, "level", int(p.Level))
	case errors.Is(err, ErrUnsupported):
		if !b.noRename {
			b.noRename = true
			b.log.Info("the platform cannot rename sessions: aliases are kept on the gateway only")
		}
	default:
		b.log.Warn("writing the alias back failed", "platform_session", psid, "alias", final, "err", err)
	}
}

// -------------------------------------------------------------------- relays

// agentMailIDs lists the ids of mails this agent has in the mail's thread,
// from the gateway's record (B-5.3).
func (b *Bridge) agentMailIDs(ctx context.Context, mailID string) (map[string]bool, error) {
	l, err := b.gw.Thread(ctx, mailID)
	if err != nil {
		return nil, err
	}
	me := b.AgentName()
	ids := map[string]bool{}
	for _, m := range l.Mails {
		if m.FromName == me {
			ids[m.MailID] = true
		}
	}
	return ids, nil
}

// ModelMailedThread is B-5.3's test on the gateway's record: does the
// thread hold a mail from agent, not a relay, that is not in before (the
// agent's mails when the turn started)? When before is nil (it could not be
// read) a mail created at or after turnStart (less one second for stored
// time precision) counts.
func ModelMailedThread(thread []client.Mail, agent string, before map[string]bool, turnStart time.Time) bool {
	for _, m := range thread {
		if m.FromName != agent || m.Relay != "" {
			continue
		}
		if before != nil {
			if !before[m.MailID] {
				return true
			}
			continue
		}
		if !m.CreatedAt.Before(turnStart.Add(-time.Second)) {
			return true
		}
	}
	return false
}

// relaySummary is B-5: the turn's text (text blocks only, unaltered: B-5.1,
// N-6, N-10) goes back as a relay summary with relay_key = the platform's
// message id (B-5.2), replying to the mail. It is not sent when the sender
// is not a person (agents mail each other explicitly), when the text is
// empty (B-5.4), or when the model already mailed this thread during the
// turn (B-5.3, judged from the gateway's record). Every session the core
// drives is mail-driven (B-5.5): sessions people open in the platform's own
// UI never reach it.
func (b *Bridge) relaySummary(ctx context.Context, in incoming, res TurnResult, before map[string]bool, turnStart time.Time) {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID)
	if in.FromKind != "person" {
		log.Info("no automatic reply: the sender is not a person", "from", in.FromName, "from_kind", in.FromKind)
		return
	}
	if strings.TrimSpace(res.Text) == "" {
		log.Info("no automatic reply: the turn ended without text (B-5.4)")
		return
	}
	if l, err := b.gw.Thread(ctx, in.MailID); err != nil {
		log.Warn("reading the thread failed; relaying anyway", "err", err)
	} else if ModelMailedThread(l.Mails, b.AgentName(), before, turnStart) {
		log.Info("no automatic reply: the model already mailed this thread during the turn (B-5.3)")
		return
	}
	key := res.MessageID
	if key == "" {
		key = "turn:" + res.PlatformSessionID + ":" + in.MailID
	}
	resp, err := b.gw.SendMail(ctx, client.SendMailRequest{
		To:       in.FromName,
		Subject:  replySubject(in.Subject),
		Body:     res.Text,
		ReplyTo:  in.MailID,
		Relay:    client.RelaySummary,
		RelayKey: key,
	})
	if err != nil {
		log.Error("sending the reply failed", "err", err)
		return
	}
	if resp.Status == "duplicate_relay" {
		log.Info("reply already relayed (duplicate relay_key)", "relay_key", key)
		return
	}
	log.Info("reply relayed", "reply_mail_id", resp.MailID, "relay_key", key)
}

func replySubject(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(strings.ToLower(s), "re:") {
		return s
	}
	if s == "" {
		return "Re: (no subject)"
	}
	return "Re: " + s
}

// sendFailure is B-6: a failure report to the sender, subject
// "处理失败: <subject>", listing every route tried and where to adjust, as a
// relay summary with relay_key "model-failure:<mail_id>" and mail_type
// failure_report. The failure is logged as well (B-6.4). A sender that is
// neither a person nor an agent (a reminder) gets no mail; the log remains.
func (b *Bridge) sendFailure(ctx context.Context, in incoming, r FailureReport) {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID)
	r.AgentName, r.MailID = b.AgentName(), in.MailID
	to := in.FromName
	switch in.FromKind {
	case "person", "":
	case "agent":
		if in.ReplyAddress != "" {
			to = in.ReplyAddress
		}
	default:
		log.Error("handling failed; no failure report: the sender is not a person or agent", "stage", r.Stage, "from", in.FromName)
		return
	}
	if ctx.Err() != nil {
		return
	}
	resp, err := b.gw.SendMail(ctx, client.SendMailRequest{
		To:       to,
		Subject:  FailureSubject(in.Subject),
		Body:     FailureBody(r),
		ReplyTo:  in.MailID,
		Relay:    client.RelaySummary,
		RelayKey: FailureRelayKey(in.MailID),
		MailType: client.MailTypeFailureReport,
	})
	if err != nil {
		log.Error("handling failed and the failure report could not be sent", "stage", r.Stage, "err", err)
		return
	}
	log.Error("handling failed; failure report sent", "stage", r.Stage, "report_mail_id", resp.MailID, "status", resp.Status)
}

// ----------------------------------------------------------------- decisions

// handleDecision is B-4: the decision answers the ask waiting under its
// relay_key (B-4.1). When none waits (the bridge restarted), the decision
// is delivered as a message into the ORIGINAL platform session bound to the
// mail session (B-4.2); without one it is logged and dropped, never a new
// session (B-4.3).
func (b *Bridge) handleDecision(ctx context.Context, ev client.PermissionDecisionEvent) {
	log := b.log.With("session_id", ev.SessionID, "relay_key", ev.RelayKey, "permission_mail_id", ev.MailID)
	if b.perms.decide(ev) {
		log.Info("permission decision answered the waiting ask", "approved", ev.Approved)
		return
	}
	key := "decision:" + nonEmpty(ev.DecisionMailID, ev.MailID+":"+ev.RelayKey)
	if !b.delivered.add(key) {
		return
	}
	psid := b.boundPlatformSession(ctx, ev.SessionID)
	if psid == "" {
		log.Warn("permission decision arrived with no waiting ask and no platform session bound; not delivered (B-4.3: no new session)")
		return
	}
	s, err := b.gw.GetSession(ctx, ev.SessionID)
	if err != nil {
		log.Warn("permission decision not delivered: reading the session failed", "err", err)
		return
	}
	ws, err := ResolveWorkspace(s.Workspace, b.cfg.Settings.FallbackDir)
	if err != nil {
		log.Warn("permission decision not delivered: no usable working directory", "err", err)
		return
	}
	in := incoming{MailID: nonEmpty(ev.DecisionMailID, ev.MailID), SessionID: ev.SessionID,
		FromName: ev.DecidedBy, FromKind: "person", Subject: s.Subject}
	if ev.DecidedBy == "" || ev.DecidedBy == "timeout" {
		in.FromKind = "system"
	}
	t, _ := b.slots.enqueue(ev.SessionID, ws.Dir)
	b.turns.Add(1)
	go func() {
		defer b.turns.Done()
		if !b.slots.wait(ctx, t) {
			return
		}
		defer b.slots.release(t)
		log.Info("permission decision delivered into the original platform session (B-4.2)", "platform_session", psid, "approved", ev.Approved)
		before, _ := b.agentMailIDs(ctx, in.MailID)
		turnStart := b.now()
		prompt := DecisionPrompt(DecisionInput{Approved: ev.Approved, Decision: ev.Decision, Note: ev.Note,
			DecidedBy: ev.DecidedBy, MailID: ev.MailID})
		var model *client.ModelRef
		if order := AttemptOrder(b.modelScope(ctx), b.caps.PerTurnModel); len(order) > 0 {
			model = order[0]
		}
		tok := b.turnToken(ctx, log, in.SessionID)
		defer b.revokeTurnToken(ctx, log, tok)
		out := b.attempt(ctx, in, tok, ws.Dir, prompt, model, 1, psid)
		switch {
		case out.interrupted:
			return
		case out.sessionGone:
			log.Warn("permission decision not delivered: the original platform session no longer exists (B-4.3: no new session)")
			return
		case !out.ok:
			log.Error("permission decision turn failed", "reason", out.reason)
			return
		}
		b.relaySummary(ctx, in, out.res, before, turnStart)
	}()
}
