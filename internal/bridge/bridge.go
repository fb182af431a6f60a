package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
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
	// Version is the bridge's own build (`agentmail --version`), sent in
	// every heartbeat with the platform's version (seed 004 section 3);
	// "" sends none.
	Version string
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
	// OnKeyRefused, when set, is called once, at the first registration
	// the gateway refuses with 401 while Settings.WaitForKey is set, before
	// the bridge waits: the command prints there how to register a key it
	// did not just print (one read from the key file). It never receives
	// the key.
	OnKeyRefused func()
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
	health    healthState // recent turns and the start-up check (health.go)
	// platformVersion is the start-up check's `--version` answer (under mu).
	platformVersion string
	ctl             *runControl
	// reconcileMu makes one reconcileRuns or lost-run end at a time;
	// lost holds the runs an earlier process left that this one ended
	// (reconcile.go, under lostMu).
	reconcileMu sync.Mutex
	lostMu      sync.Mutex
	lost        map[string]bool

	mu           sync.Mutex
	agentName    string
	scope        ModelScope
	firstGood    bool
	platformOf   map[string]string // mail session id → platform session id (B-3.3)
	mailDriven   map[string]bool   // platform session ids bound to mail sessions (B-5.5)
	fingerprints map[string]string // mail session id → last alias submission (D-5)
	renamed      map[string]string // platform session id → last name written back
	foreign      map[string]bool   // mail sessions of another agent this one was cc'd into
	origins      sync.Map          // mail session id → origin session id this agent's conversation is ("" none; delegation.go)
	noRename     bool              // the adapter cannot rename (logged once)

	// instance is this process's bridge lease identity, noLease set when
	// the gateway knows no lease, stopRun ends Run with a cause (lease.go).
	instance client.BridgeInstance
	noLease  atomic.Bool
	stopRun  context.CancelCauseFunc

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
		ctl:          newRunControl(),
		lost:         map[string]bool{},
		platformOf:   map[string]string{},
		mailDriven:   map[string]bool{},
		fingerprints: map[string]string{},
		foreign:      map[string]bool{},
		renamed:      map[string]string{},
		sseReady:     make(chan struct{}),
		ready:        make(chan struct{}),
		instance:     newInstance(),
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

// splitRule splits a Degradations line "D-4: text (C-10): more" into its
// rules ("D-4 C-10") and its words ("text: more").
func splitRule(d string) (rule, words string) {
	rule, words, ok := strings.Cut(d, ": ")
	if !ok {
		return "", d
	}
	if i := strings.Index(words, " ("); i >= 0 {
		if j := strings.Index(words[i:], ")"); j > 0 {
			rule += " " + words[i+2:i+j]
			words = words[:i] + words[i+j+1:]
		}
	}
	return rule, words
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
// returns an error at once, as does a registration refused because another
// bridge of the agent runs (lease.go); a heartbeat that learns another one
// took over ends Run with an error too. ctx ending while the registration
// waits (for the key, for the gateway) ends Run with nil.
func (b *Bridge) Run(ctx context.Context) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	b.stopRun = stop
	agent, err := b.register(ctx)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Stopped (a signal) while waiting for the key or the gateway:
			// an ordinary end, not an error (exit 0).
			b.log.Info("bridge stopped")
			return nil
		}
		return err
	}
	b.mu.Lock()
	b.agentName = agent.Name
	b.mu.Unlock()
	b.log = b.log.With("agent", agent.Name)
	b.perms.log = b.log
	b.log.Info(fmt.Sprintf("connected to %s as %s", b.cfg.Settings.GatewayURL, agent.Name))
	for _, d := range Degradations(b.caps) {
		rule, plain := splitRule(d) // the person at the terminal reads words; the rule stays an attribute
		if b.caps.InProcess {
			// A platform without a model (the demo) lacks the model's
			// capabilities by design: nothing to warn the person about.
			b.log.Debug("limited: "+plain, "rule", rule)
			continue
		}
		b.log.Warn("limited: "+plain, "rule", rule)
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
	b.checkPlatform(ctx, env) // health.go: version, sign-in
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
	b.ctl.shutdown(context.WithoutCancel(ctx)) // idle runs end with the platform's processes
	if err := b.adapter.Close(); err != nil {
		b.log.Warn("closing the platform adapter", "err", err)
	}
	var lost *errLeaseLost
	if cause := context.Cause(ctx); errors.As(cause, &lost) {
		b.log.Info("bridge stopped")
		return lost
	}
	b.releaseLease(ctx) // lease.go
	b.log.Info("bridge stopped")
	return nil
}

// register is B-1.2 with workspaces [] (W-2). Transport faults and 5xx are
// retried with back-off until ctx ends; a 4xx (401: key not registered)
// returns an error that says what to do.
func (b *Bridge) register(ctx context.Context) (*client.Agent, error) {
	req := client.RegisterRequest{Name: b.cfg.Settings.AgentName, Platform: b.adapter.Name(), Workspaces: []client.Workspace{},
		Instance: b.leaseInstance(), Replaces: b.endedInstance()}
	delay := b.cfg.ReconnectMin
	waiting := false     // said once
	unreachable := false // said once
	for {
		agent, err := b.gw.Register(ctx, req)
		if err == nil {
			if agent.Name == "" {
				agent.Name = req.Name
			}
			if req.Instance != nil {
				b.recordInstance() // lease.go
			}
			return agent, nil
		}
		if req.Instance != nil && isUnknownInstanceField(err) {
			b.log.Warn("the gateway is older than the bridge lease: a second bridge of this agent is not refused; update the gateway")
			b.noLease.Store(true)
			req.Instance, req.Replaces = nil, ""
			continue
		}
		if isLeaseConflict(err) {
			return nil, fmt.Errorf("registering with %s: %s\n\n  The bridge stops here: only one bridge may serve an agent at a time.",
				b.cfg.Settings.GatewayURL, gatewayReason(err))
		}
		var ae *client.APIError
		if errors.As(err, &ae) && ae.Status == 401 && b.cfg.Settings.WaitForKey {
			if !waiting {
				waiting = true
				if b.cfg.OnKeyRefused != nil {
					b.cfg.OnKeyRefused()
				}
				b.log.Info("waiting for an admin to register the agent key; the bridge connects by itself then", "gateway", b.cfg.Settings.GatewayURL)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-b.after(min(b.cfg.ReconnectMax, 3*time.Second)):
			}
			continue
		}
		if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 {
			if ae.Status == 401 {
				return nil, fmt.Errorf("registering with %s: the agent key is not registered, revoked or expired (401); %s\n\n"+
					"  The bridge stops here: start it again once the key is registered.",
					b.cfg.Settings.GatewayURL, RegistrationHint(b.cfg.Settings.GatewayURL, b.hintName(), ""))
			}
			return nil, fmt.Errorf("registering with %s: %s", b.cfg.Settings.GatewayURL, gatewayReason(err))
		}
		// Said once, with what to check (issue 18 point 7); the retries
		// after it at debug level; "connected to …" follows once it answers.
		if !unreachable {
			unreachable = true
			b.log.Warn(fmt.Sprintf("cannot reach the gateway at %s (%s); trying again until it answers (check that the gateway runs there and AGENTMAIL_GATEWAY_URL)",
				b.cfg.Settings.GatewayURL, networkReason(err)))
		} else {
			b.log.Debug("still cannot reach the gateway for registration", "err", err, "in", delay)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.after(delay):
		}
		delay = minDuration(delay*2, b.cfg.ReconnectMax)
	}
}

// hintName is the agent name a registration hint names: AGENTMAIL_AGENT_NAME,
// else the platform's name, the name a first start registers its new key
// for (the key's registration decides the name the bridge then takes).
func (b *Bridge) hintName() string {
	if b.cfg.Settings.AgentName != "" {
		return b.cfg.Settings.AgentName
	}
	return b.adapter.Name()
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// networkReason answers why a request found no gateway in the network's
// own words ("connect: connection refused", "no such host"), without the
// request's method and endpoint; any other error as it reads.
func networkReason(err error) string {
	if op := (*net.OpError)(nil); errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return gatewayReason(err)
}
