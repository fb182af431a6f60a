// Package acp is the bridge adapter for agents that speak the Agent Client Protocol
// (ACP v1: JSON-RPC over the agent's stdin and stdout), through the Go SDK
// github.com/coder/acp-go-sdk. One adapter drives every such agent: `opencode acp`,
// `claude-agent-acp`, `qwen --acp`, `gemini --acp`, `codex-acp` and others. The
// operator names the agent's command line (--acp-command or AGENTMAIL_ACP_COMMAND).
//
// How long an agent process lives is the operator's choice (Options.Process,
// --acp-process; the decision and its measurements are in docs/PLATFORMS.md, "ACP
// agents"):
//
//   - turn (the default): every turn runs in its own agent process, started in the
//     mail's directory: initialize → session/new {cwd, mcpServers: [agentmail mcp]}
//     (first turn of a mail session) or session/load {sessionId, cwd, mcpServers}
//     (follow-ups, C-3) → [session/set_model] → session/prompt → stopReason (C-4) → the
//     process stops. The tool server's environment carries the turn's values.
//   - session: one agent process per mail session, kept between its turns (for agents
//     whose session/load in a new process loses the conversation, such as Gemini CLI):
//     session/new once, then [session/set_model] → session/prompt per turn;
//     session/load only in a new process (after a bridge restart, or once the process
//     was idle for IdleTimeout). The tool server's environment is fixed at session/new,
//     so the turn's token reaches it through a file the bridge rewrites per turn
//     (AGENTMAIL_TURN_TOKEN_FILE, read by `agentmail mcp` at every tool call, empty
//     between turns).
//
// The reply is the text of the agent_message_chunk updates after
// the turn's last tool call (C-5; agent_thought_chunk never reaches mail, B-5.1, N-6). A
// JSON-RPC error on session/prompt is a failed turn (C-4, B-6).
//
// The agent's session/request_permission (C-8, C-9) is answered by the bridge: a request
// to run one of AgentMail's own tools is allowed at once (nobody is asked about reading
// their own mail); every other tool goes through the core's permission tiers (plan
// refuses, full allows, workspace asks a person by mail and waits). The answer is always
// a one-time option (allow_once or reject_once), never the agent's own allow_always: a
// person's "always" is kept as a gateway grant, which they can see and revoke. The relay
// key of a permission mail is "<ACP session id>:<toolCallId>" (B-8.1).
package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/shlex"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// Name is the platform name of this adapter (`agentmail bridge --platform acp`).
const Name = "acp"

// EnvCommand is the variable that names the ACP agent's command line when
// --acp-command is not given, e.g. "opencode acp" or "qwen --acp".
const EnvCommand = "AGENTMAIL_ACP_COMMAND"

// EnvAuthMethod names the authentication method (an id from the agent's authMethods)
// the adapter sends with `authenticate` when the agent asks for a login (I-5).
const EnvAuthMethod = "AGENTMAIL_ACP_AUTH_METHOD"

// MCPServerName is the name under which the agent gets the AgentMail tool server; the
// model sees its tools as agentmail_<tool>, mcp__agentmail__<tool> and the like.
const MCPServerName = "agentmail"

// EnvProcess is the variable that sets the process mode when --acp-process is not
// given: "turn" or "session" (ParseProcessMode).
const EnvProcess = "AGENTMAIL_ACP_PROCESS"

// TurnTokenFileEnv names the tool server's variable that points at the file holding the
// current turn's token (process mode session); `agentmail mcp` reads it at every tool
// call (docs/TOOLS.md).
const TurnTokenFileEnv = "AGENTMAIL_TURN_TOKEN_FILE"

// ProcessMode says how long an agent process lives.
type ProcessMode string

// Process modes.
const (
	// ProcessPerTurn runs every turn in a new agent process; a follow-up loads its
	// session (session/load) there.
	ProcessPerTurn ProcessMode = "turn"
	// ProcessPerSession keeps one agent process per mail session between its turns.
	ProcessPerSession ProcessMode = "session"
)

// ParseProcessMode reads a process mode: "turn", "session", or "" (turn). Errors: any
// other value.
func ParseProcessMode(s string) (ProcessMode, error) {
	switch ProcessMode(strings.ToLower(strings.TrimSpace(s))) {
	case "", ProcessPerTurn:
		return ProcessPerTurn, nil
	case ProcessPerSession:
		return ProcessPerSession, nil
	}
	return "", fmt.Errorf("the ACP process mode %q: use turn (a process per turn) or session (a process per mail session, kept between its turns)", s)
}

// Defaults of Options.
const (
	DefaultStartTimeout   = 2 * time.Minute
	DefaultKillGrace      = 5 * time.Second
	DefaultCancelWait     = 2 * time.Second
	DefaultSessionListTTL = 2 * time.Minute
	DefaultIdleTimeout    = 30 * time.Minute
)

// Options configures the adapter. Zero values take the defaults.
type Options struct {
	// Command is the agent's command line as argv (ParseCommand); required.
	Command []string
	// AuthMethod is the authMethods id sent with `authenticate` when session/new asks
	// for a login ("" = none configured: such a turn fails with a report that names the
	// agent's own ways to log in).
	AuthMethod string
	// Environ is the environment of every agent process (KEY=VALUE lines); nil means
	// os.Environ(). The bridge's credentials are removed (bridge.PlatformEnviron).
	Environ []string
	// StartTimeout bounds initialize, session/new and session/load of one process.
	StartTimeout time.Duration
	// KillGrace is how long a process gets after its stdin closes, and again after
	// SIGTERM, before it is killed.
	KillGrace time.Duration
	// CancelWait is how long a stopped turn's prompt gets to end after session/cancel
	// before the process is stopped (ProcessPerTurn) or dropped (ProcessPerSession).
	CancelWait time.Duration
	// SessionListTTL is how long ListSessions reuses the agent's last session/list.
	SessionListTTL time.Duration
	// Process is the process mode ("" = ProcessPerTurn).
	Process ProcessMode
	// IdleTimeout (ProcessPerSession) is how long a kept process may wait for its
	// session's next turn before it is stopped; the next turn then loads the session
	// in a new process.
	IdleTimeout time.Duration
}

// FindCommand answers the path of the agent command's executable (the first
// word of Options.Command, looked up in PATH), or an error naming the command
// when there is none: the bridge calls it before it makes or prints a key.
func (a *Adapter) FindCommand() (string, error) {
	if len(a.opts.Command) == 0 {
		_, err := ParseCommand("")
		return "", err
	}
	bin, err := exec.LookPath(a.opts.Command[0])
	if err != nil {
		return "", fmt.Errorf("acp: the agent command %q is not an executable: %w; install it or give its full path in --acp-command", a.opts.Command[0], err)
	}
	return bin, nil
}

// ParseCommand splits an operator's command line into argv with shell quoting rules
// (no expansion). Errors: an empty line or unbalanced quotes.
func ParseCommand(line string) ([]string, error) {
	argv, err := shlex.Split(line)
	if err != nil {
		return nil, fmt.Errorf("the ACP command %q: %w", line, err)
	}
	if len(argv) == 0 {
		return nil, errors.New("no ACP command: give --acp-command '<agent command line>' or set " + EnvCommand + " (for example 'opencode acp')")
	}
	return argv, nil
}

// Adapter drives ACP agents, one process per turn or per mail session. It implements
// bridge.Adapter and is safe for concurrent use.
type Adapter struct {
	opts Options

	mu      sync.Mutex
	env     bridge.Env
	bin     string
	started bool
	closed  bool
	// info is what the agent said at the first initialize (logged once, D-1).
	info agentInfo
	// models is the agent's model list from its last session/new or session/load.
	models       []modelEntry
	modelsLogged bool
	noModelSet   bool // logged once: the agent offers no way to choose a model
	sessions     []client.PlatformSession
	sessionsAt   time.Time
	titles       map[string]string // ACP session id → last title the agent reported
	live         map[*agentProc]struct{}
	// kept (ProcessPerSession) holds the idle process of each mail session, keyed by
	// the mail session id (keptKey); a running turn has taken its process out.
	kept map[string]*keptProc
	// tokenDir (ProcessPerSession) holds the turn token files, mode 0700.
	tokenDir  string
	nextToken int
}

var _ bridge.Adapter = (*Adapter)(nil)

// New returns an adapter; call Start before anything else.
func New(opts Options) *Adapter {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.CancelWait <= 0 {
		opts.CancelWait = DefaultCancelWait
	}
	if opts.SessionListTTL <= 0 {
		opts.SessionListTTL = DefaultSessionListTTL
	}
	if opts.Process == "" {
		opts.Process = ProcessPerTurn
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	return &Adapter{opts: opts, titles: map[string]string{}, live: map[*agentProc]struct{}{}, kept: map[string]*keptProc{}}
}

// Name returns "acp".
func (a *Adapter) Name() string { return Name }

// Capabilities declares what an ACP agent offers through the protocol (docs/PLATFORMS.md,
// "ACP agents"). The optional ones depend on the agent and are detected at initialize
// and session/new; what an agent lacks degrades at run time and is logged once: no
// session/list (C-10) omits the snapshot, no model list (C-12) omits the models, no
// session/set_model or model option (C-13) runs the agent's default, no title (C-11)
// leaves the alias to the mail subject.
func (a *Adapter) Capabilities() bridge.Capabilities {
	return bridge.Capabilities{
		InjectTurn:           true, // session/prompt
		CreateSessionWithCwd: true, // session/new {cwd}
		StableSessionID:      true, // session/load (agentCapabilities.loadSession)
		TurnEndSignal:        true, // the prompt's stopReason, or its JSON-RPC error
		ReadMessages:         true, // agent_message_chunk
		RegisterTools:        true, // mcpServers of session/new and session/load
		LongRunning:          true, // the bridge is its own process
		PermissionHook:       true, // session/request_permission
		AsyncPermission:      true, // the agent waits for the answer
		ListSessions:         true, // session/list where offered
		ModelTitle:           true, // session_info_update titles where sent
		ListModels:           true, // the models of session/new where reported
		PerTurnModel:         true, // session/set_model or the model config option
		FileTools:            true, // the agent's own file tools
		// A process kept for its session outlives the turn (its run is idle between
		// turns, seed 004).
		PersistentProcess: a.opts.Process == ProcessPerSession,
	}
}

// Start checks the command and runs one agent process through initialize, logging once
// what the agent is and offers (D-1). Errors: no command, an executable that is not
// found, an agent that does not answer initialize within StartTimeout or speaks another
// protocol version.
func (a *Adapter) Start(ctx context.Context, env bridge.Env) error {
	bin, err := a.FindCommand()
	if err != nil {
		return err
	}
	if env.Log == nil {
		env.Log = func(string, ...any) {}
	}
	tokenDir := ""
	if a.opts.Process == ProcessPerSession {
		if tokenDir, err = os.MkdirTemp("", "agentmail-acp-"); err != nil {
			return fmt.Errorf("acp: a folder for the turn token files: %w", err)
		}
	}
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		if tokenDir != "" {
			os.RemoveAll(tokenDir)
		}
		return errors.New("acp: Start called twice")
	}
	a.env, a.bin, a.started, a.tokenDir = env, bin, true, tokenDir
	a.mu.Unlock()

	sctx, cancel := context.WithTimeout(ctx, a.opts.StartTimeout)
	defer cancel()
	home, _ := os.UserHomeDir()
	p, err := a.startProc(sctx, nonEmpty(os.TempDir(), home), nil)
	if err != nil {
		return err
	}
	defer p.stop(a.opts.KillGrace)
	info := p.info
	a.mu.Lock()
	a.info = info
	a.mu.Unlock()
	env.Log("ACP agent ready", append(info.logArgs(strings.Join(a.opts.Command, " ")), "process", string(a.opts.Process))...)
	if !info.LoadSession {
		if a.opts.Process == ProcessPerSession {
			env.Log("limited: the ACP agent cannot load a session (no loadSession): a follow-up after a bridge restart or an idle stop starts a new agent session", "rule", "C-3")
		} else {
			env.Log("limited: the ACP agent cannot load a session (no loadSession): every mail starts a new agent session, follow-ups by alias lose the conversation (--acp-process session keeps it while the bridge runs)", "rule", "C-3")
		}
	}
	if !info.ListSessions {
		env.Log("limited: the ACP agent has no session/list: its sessions are not mirrored to the gateway", "rule", "C-10")
	}
	return nil
}

// ready returns the environment after Start.
func (a *Adapter) ready() (bridge.Env, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started || a.closed {
		return bridge.Env{}, errors.New("acp: the adapter is not started (call Start) or already closed")
	}
	return a.env, nil
}

// Close stops every agent process still running, kept ones too (a turn that is waiting
// for a person gets reject_once from the core's shutdown first, B-9.2), and removes the
// turn token files.
func (a *Adapter) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	procs := make([]*agentProc, 0, len(a.live))
	for p := range a.live {
		procs = append(procs, p)
	}
	for key, k := range a.kept {
		k.idle.Stop()
		delete(a.kept, key)
	}
	tokenDir := a.tokenDir
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func(p *agentProc) { defer wg.Done(); p.stop(a.opts.KillGrace) }(p)
	}
	wg.Wait()
	if tokenDir != "" {
		os.RemoveAll(tokenDir)
	}
	return nil
}

// ListSessions mirrors the agent's sessions of every directory (session/list without a
// cwd, C-10), cached for SessionListTTL since each listing starts an agent process.
// Agents without session/list answer bridge.ErrUnsupported.
func (a *Adapter) ListSessions(ctx context.Context) ([]client.PlatformSession, error) {
	if _, err := a.ready(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	if !a.info.ListSessions {
		a.mu.Unlock()
		return nil, bridge.ErrUnsupported
	}
	if a.sessions != nil && time.Since(a.sessionsAt) < a.opts.SessionListTTL {
		out := append([]client.PlatformSession(nil), a.sessions...)
		a.mu.Unlock()
		return out, nil
	}
	a.mu.Unlock()
	p, err := a.startProc(ctx, os.TempDir(), nil)
	if err != nil {
		return nil, err
	}
	defer p.stop(a.opts.KillGrace)
	list, err := p.listSessions(ctx)
	if err != nil {
		return nil, err
	}
	sort.Slice(list, func(i, j int) bool {
		ti, tj := list[i].UpdatedAt, list[j].UpdatedAt
		return ti != nil && (tj == nil || ti.After(*tj))
	})
	a.mu.Lock()
	for _, s := range list {
		if s.Title != "" {
			a.titles[s.PlatformID] = s.Title
		}
	}
	a.sessions, a.sessionsAt = list, time.Now()
	a.mu.Unlock()
	return append([]client.PlatformSession(nil), list...), nil
}

// ListModels returns the models the agent reported at its last session/new or
// session/load (C-12); before the first turn, or for an agent that reports none,
// bridge.ErrUnsupported (the heartbeat then omits the models). Ids of the shape
// "provider/model" are split; other ids keep the whole id as the model.
func (a *Adapter) ListModels(ctx context.Context) ([]client.Model, error) {
	if _, err := a.ready(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.models) == 0 {
		return nil, bridge.ErrUnsupported
	}
	out := make([]client.Model, 0, len(a.models))
	for _, m := range a.models {
		out = append(out, m.ref())
	}
	return out, nil
}

// RenameSession is not part of ACP v1: bridge.ErrUnsupported (aliases stay on the
// gateway).
func (a *Adapter) RenameSession(ctx context.Context, platformSessionID, name string) error {
	return bridge.ErrUnsupported
}

func (a *Adapter) track(p *agentProc) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.live[p] = struct{}{}
	return true
}

func (a *Adapter) untrack(p *agentProc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.live, p)
}

// environ is the agent process environment without the bridge's credentials.
func (a *Adapter) environ() []string {
	base := a.opts.Environ
	if base == nil {
		base = os.Environ()
	}
	return bridge.PlatformEnviron(base)
}

func nonEmpty(s, alt string) string {
	if strings.TrimSpace(s) != "" {
		return s
	}
	return alt
}
