// Package bridge is the platform-agnostic bridge contract (seed 000): it turns
// an arriving mail into one turn of an agent platform in the mail's directory
// and sends the platform's last words back. Every platform adapter implements
// Adapter; everything else (delivery, de-duplication, catch-up, relay policy,
// workspace rules, model fallback, alias ladder, snapshot rules, permission
// forwarding, run supervision) lives in this package once, so platforms
// cannot drift apart.
package bridge

import (
	"context"
	"time"

	"github.com/agentmail/agentmail/client"
)

// Capabilities declares which platform capabilities of seed 000 section 1 an
// adapter has. C-1..C-7 are required; the core refuses to start an adapter
// that lacks one. C-8..C-14 are optional and the core degrades as section 4
// says, logging each degradation once at start.
type Capabilities struct {
	InjectTurn           bool // C-1: inject a user turn outside the platform UI
	CreateSessionWithCwd bool // C-2: create a session bound to a working directory
	StableSessionID      bool // C-3: a session id that can be delivered to again
	TurnEndSignal        bool // C-4: a turn-end signal that tells success from failure
	ReadMessages         bool // C-5: read the last assistant message's text blocks
	RegisterTools        bool // C-6: give the model tools (AgentMail tools through MCP or an extension)
	LongRunning          bool // C-7: the bridge can hold an SSE stream and a 30 s timer
	PermissionHook       bool // C-8: the platform asks before dangerous tools
	AsyncPermission      bool // C-9: the hook can wait for the person's answer
	ListSessions         bool // C-10: list platform sessions for the heartbeat snapshot
	ModelTitle           bool // C-11: the platform names sessions itself (slug or title)
	ListModels           bool // C-12: list the models the platform can use
	PerTurnModel         bool // C-13: choose the model per turn (enables D-3 fallback)
	FileTools            bool // C-14: the model can read and write files in the session
	// PersistentProcess: the platform's process outlives a turn (opencode's
	// server, pi's per-session process, ACP agents). Between turns its run is
	// idle, not finished (seed 004 section 1), and a stop proves quiescence
	// on the turn's tool processes, not on the platform process itself.
	PersistentProcess bool
	// InProcess: the turn runs inside the bridge and starts no process
	// (the demo platform). Once RunTurn has returned nothing of the turn
	// runs, so a stop's quiescence is proven without a pid to check.
	InProcess bool
}

// Env is what the core hands an adapter at Start.
type Env struct {
	// AgentName is the agent's AgentMail name.
	AgentName string
	// GatewayURL is the gateway's base URL, e.g. http://127.0.0.1:8180.
	GatewayURL string
	// MCPCommand is the argv that starts the AgentMail MCP tool server
	// (`agentmail mcp`) over stdio. Adapters configure the platform with it.
	MCPCommand []string
	// Bin is the platform executable (from PATH or AGENTMAIL_<PLATFORM>_BIN).
	Bin string
	// Log receives the adapter's log lines (the core uses log/slog).
	Log func(msg string, args ...any)
	// Sandbox confines every platform process (see Command); nil runs them
	// unconfined (AGENTMAIL_SANDBOX=off, or no bubblewrap).
	Sandbox Sandbox
}

// PermissionAsk is one permission question the platform raised itself (I-1,
// B-8). PlatformID is the platform's own permission id, used as relay_key
// (B-8.1); when the platform gives none the adapter builds
// "<session>:<tool>:<call id>".
type PermissionAsk struct {
	PlatformID string
	ToolName   string
	Input      map[string]any
	ToolUseID  string
	Summary    string // one line for the mail: tool and argument summary (B-8.4)
}

// PermissionAnswer is the person's verdict as the adapter gives it to the
// platform. Allow false is also the fail-closed answer (B-9.2).
type PermissionAnswer struct {
	Allow   bool
	Message string // shown to the model on deny, e.g. the person's note
	// Standing names what allowed the ask without a person deciding this
	// one: AllowedByGrant (an "always allow" grant covers tool and
	// workspace) or AllowedByTier (the bridge runs in the full tier); ""
	// when a person decided it (or for a deny). Adapters may tell the
	// person so; platforms never see it.
	Standing string
}

// The values of PermissionAnswer.Standing.
const (
	AllowedByGrant = "grant"
	AllowedByTier  = "tier"
)

// PermissionFunc asks a person and blocks until the decision, the context's
// end, or shutdown (then it answers deny: fail closed, N-9). Adapters with
// C-9 call it from their hook; adapters without C-9 must not block their
// event loop on it (D-2.1) and call it from a separate goroutine.
type PermissionFunc func(ctx context.Context, ask PermissionAsk) PermissionAnswer

// RunFacts are the process facts of one turn (seed 004): every field is
// backed by something observed, never a default that looks good.
type RunFacts struct {
	PID           int
	ExitCode      *int
	StartedAt     time.Time
	EndedAt       time.Time
	BytesRead     int64
	UnparsedLines int
	StopReason    string
	// ProcessExited, for a PersistentProcess platform, is closed when the
	// process the turn ran in has exited (nil: unknown); the core then
	// settles the idle run as finished.
	ProcessExited <-chan struct{}
}

// ActivityKind names what a TurnActivity is.
type ActivityKind string

// Activity kinds.
const (
	ActivityText       ActivityKind = "text"        // assistant text (never reasoning)
	ActivityToolCall   ActivityKind = "tool_call"   // the model called a tool
	ActivityToolResult ActivityKind = "tool_result" // a tool answered
)

// TurnActivity is one thing the platform did in a turn, as the adapter saw
// it in the platform's output: the run's live progress and transcript
// (issue 16) are built from these. Thinking blocks are never reported.
type TurnActivity struct {
	Kind ActivityKind
	// Text is the assistant text or the tool's result (adapters may cut it).
	Text string
	// Tool and Input name the tool called (ActivityToolCall) or answering.
	Tool    string
	Input   map[string]any
	IsError bool
	// BytesRead is the bytes read from the platform for this turn so far
	// (0: unknown).
	BytesRead int64
}

// TurnRequest is one turn to run.
type TurnRequest struct {
	// MailSessionID is the AgentMail session id the turn belongs to.
	MailSessionID string
	// MailID is the mail that caused the turn.
	MailID string
	// PlatformSessionID continues that platform session; "" creates a new
	// one (B-3.2: never with a placeholder title).
	PlatformSessionID string
	// Cwd is an existing absolute directory (D-6, already checked by the core).
	Cwd string
	// Prompt is the user message for the turn.
	Prompt string
	// Model is the model for this attempt; nil lets the platform choose (D-3
	// without C-13, or models_unrestricted).
	Model *client.ModelRef
	// ToolEnv is extra environment for the AgentMail tool server of this turn
	// (AGENTMAIL_SESSION_ID, AGENTMAIL_MAIL_ID, AGENTMAIL_WORKSPACE,
	// AGENTMAIL_PERMISSION_MODE, and TurnTokenEnv, the turn's only
	// credential), where the platform allows per-turn values. The agent key
	// is never among them: adapters never see it (Env has none).
	ToolEnv map[string]string
	// Permission asks a person; nil when the platform's permission
	// forwarding is off.
	Permission PermissionFunc
	// OnVerdict is called at most once, as soon as the platform shows whether
	// this attempt's model really runs (D-3.1): nil error once the model
	// produces output, an error when the platform reports the model failed.
	// The core treats 60 s without a verdict as success (D-3.4).
	OnVerdict func(err error)
	// OnStart is called once the platform process or session exists, with
	// its pid (0 when not a separate process) and platform session id.
	OnStart func(pid int, platformSessionID string)
	// OnActivity, when set, is called for each activity of the turn, in
	// order, from the adapter's reading goroutine; it does not block.
	OnActivity func(TurnActivity)
}

// TurnResult is what a finished turn produced.
type TurnResult struct {
	PlatformSessionID string
	// Slug is the platform's own short name for the session (D-5 level 1),
	// Title its generated title (level 2); either may be empty.
	Slug  string
	Title string
	// Text is the last assistant message's text blocks only, joined with
	// blank lines (B-5.1, N-6: never reasoning). It is not altered (N-10).
	Text string
	// MessageID is the platform's stable id of that assistant message, used
	// as the summary relay_key (B-5.2).
	MessageID string
	// Translations, when set, are Text in the readers' languages ("en",
	// "zh"; an empty Subject keeps the reply's): the gateway stores the one
	// in the person's language (client.SendMailRequest.Translations). Only
	// a platform that writes its answer itself in both languages sets them
	// (the demo platform); a model's answer is never translated.
	Translations []client.MailTranslation
	// Failed is true when the platform reported the turn failed (C-4);
	// FailureReason says why, in the platform's words.
	Failed        bool
	FailureReason string
	Facts         RunFacts
}

// Adapter connects one agent platform. Methods may be called concurrently
// for different mail sessions; the core never runs two turns of one mail
// session at once.
type Adapter interface {
	// Name is the platform name, e.g. "claude", "opencode", "pi".
	Name() string
	// Capabilities declares C-1..C-14.
	Capabilities() Capabilities
	// Start prepares the platform (e.g. starts its server). It is called
	// once before any other method except Name and Capabilities.
	Start(ctx context.Context, env Env) error
	// RunTurn runs one turn and blocks until it ends or ctx ends (then the
	// turn is stopped: a turn never outlives the bridge). An error means
	// the turn could not run at all (session creation failed, process did
	// not start); a model failure is TurnResult.Failed.
	RunTurn(ctx context.Context, req TurnRequest) (TurnResult, error)
	// ListSessions returns the platform's sessions for the heartbeat (C-10);
	// the core applies S-1..S-4. Adapters without C-10 return ErrUnsupported.
	ListSessions(ctx context.Context) ([]client.PlatformSession, error)
	// ListModels returns the models the platform can use (C-12), or
	// ErrUnsupported.
	ListModels(ctx context.Context) ([]client.Model, error)
	// RenameSession writes the gateway's final alias back into the platform
	// (D-5) through the platform's own rename; never with an empty name.
	// Adapters that cannot rename return ErrUnsupported.
	RenameSession(ctx context.Context, platformSessionID, name string) error
	// Close stops everything the adapter started.
	Close() error
}
