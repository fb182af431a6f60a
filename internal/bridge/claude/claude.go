// Package claude is the bridge adapter for Claude Code (the `claude` CLI). Each turn is one
// headless process:
//
//	claude -p --output-format stream-json --verbose --input-format stream-json
//	       [--resume <session id>] [--model <model>] --mcp-config <file>
//	       --allowedTools mcp__agentmail__* [--permission-prompt-tool stdio]
//
// started in the turn's working directory (Claude Code has no --cwd), with the prompt sent
// as one stream-json user message on stdin. Permission questions arrive as control_request
// lines (subtype can_use_tool) and are answered on stdin with a control_response after the
// core's PermissionFunc decides (C-8, C-9). The turn ends with the result event (C-4).
package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// Name is the platform name of this adapter.
const Name = "claude"

// MCPServerKey is the key of the AgentMail tool server in --mcp-config; Claude Code names
// its tools mcp__agentmail__<tool>.
const MCPServerKey = "agentmail"

// AllowedTools is the --allowedTools pattern that lets the model call every AgentMail tool
// without a permission question (the tools gate dangerous work themselves).
const AllowedTools = "mcp__" + MCPServerKey + "__*"

// DefaultKillGrace is how long a process gets to exit after SIGTERM (and after its result
// event) before it is killed.
const DefaultKillGrace = 5 * time.Second

// Options configures the adapter.
type Options struct {
	// Environ is the environment of every claude process (KEY=VALUE lines); nil means
	// os.Environ(). ENABLE_TOOL_SEARCH=false is always added so that MCP tools are listed
	// to the model directly instead of being deferred behind ToolSearch.
	Environ []string
	// ExtraArgs are appended to every invocation (e.g. --setting-sources).
	ExtraArgs []string
	// KillGrace replaces DefaultKillGrace when > 0.
	KillGrace time.Duration
}

// Adapter runs Claude Code turns. It implements bridge.Adapter; it is safe for concurrent
// turns of different mail sessions.
type Adapter struct {
	opts Options

	mu      sync.Mutex
	env     bridge.Env
	started bool
}

var _ bridge.Adapter = (*Adapter)(nil)

// New returns an adapter; call Start before RunTurn.
func New(opts Options) *Adapter {
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	return &Adapter{opts: opts}
}

// Name returns "claude".
func (a *Adapter) Name() string { return Name }

// Capabilities declares what Claude Code can do headless (docs/PLATFORMS.md, "Claude Code").
// C-10, C-11 and C-12 are missing: the CLI has no command that lists sessions or models, and
// a headless session gets no generated title.
func (a *Adapter) Capabilities() bridge.Capabilities {
	return bridge.Capabilities{
		InjectTurn:           true, // -p with --resume <id>
		CreateSessionWithCwd: true, // the process working directory
		StableSessionID:      true, // session_id of the init and result events
		TurnEndSignal:        true, // the result event, is_error tells failure
		ReadMessages:         true, // assistant events carry the content blocks
		RegisterTools:        true, // --mcp-config with per-turn environment
		LongRunning:          true, // the bridge is its own process
		PermissionHook:       true, // --permission-prompt-tool stdio
		AsyncPermission:      true, // the CLI waits for the control_response
		PerTurnModel:         true, // --model per process
		FileTools:            true, // Read, Write, Edit
	}
}

// Start records the core's environment. Errors: env.Bin is empty or not executable.
func (a *Adapter) Start(ctx context.Context, env bridge.Env) error {
	if env.Bin == "" {
		return errors.New("claude: Env.Bin is empty: set AGENTMAIL_CLAUDE_BIN or put claude on PATH")
	}
	bin, err := exec.LookPath(env.Bin)
	if err != nil {
		return fmt.Errorf("claude: Env.Bin %q is not an executable: %w", env.Bin, err)
	}
	env.Bin = bin
	a.mu.Lock()
	defer a.mu.Unlock()
	a.env = env
	a.started = true
	return nil
}

// ListSessions returns bridge.ErrUnsupported: Claude Code has no session list (C-10).
func (a *Adapter) ListSessions(ctx context.Context) ([]client.PlatformSession, error) {
	return nil, bridge.ErrUnsupported
}

// ListModels returns bridge.ErrUnsupported: Claude Code has no model list (C-12).
func (a *Adapter) ListModels(ctx context.Context) ([]client.Model, error) {
	return nil, bridge.ErrUnsupported
}

// RenameSession returns bridge.ErrUnsupported: Claude Code can name a session only when a
// turn starts (--name), not rename an existing one.
func (a *Adapter) RenameSession(ctx context.Context, platformSessionID, name string) error {
	return bridge.ErrUnsupported
}

// Close has nothing to stop: every turn's process ends with its turn.
func (a *Adapter) Close() error { return nil }

func (a *Adapter) startedEnv() (bridge.Env, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		return bridge.Env{}, errors.New("claude: RunTurn before Start")
	}
	return a.env, nil
}

// mcpConfig returns the --mcp-config JSON for one turn: the AgentMail tool server started
// with env.MCPCommand, its environment carrying the gateway and the turn's ToolEnv (with the
// turn's token, bridge.TurnTokenEnv); the agent key is never in it.
func mcpConfig(env bridge.Env, toolEnv map[string]string) ([]byte, error) {
	if len(env.MCPCommand) == 0 {
		return nil, nil
	}
	vars := map[string]string{
		"AGENTMAIL_GATEWAY_URL": env.GatewayURL,
	}
	if env.AgentName != "" {
		vars["AGENTMAIL_AGENT_NAME"] = env.AgentName
	}
	for k, v := range toolEnv {
		vars[k] = v
	}
	return json.Marshal(map[string]any{"mcpServers": map[string]any{
		MCPServerKey: map[string]any{
			"type":    "stdio",
			"command": env.MCPCommand[0],
			"args":    env.MCPCommand[1:],
			"env":     vars,
		},
	}})
}

// args builds the command line of one turn.
func (a *Adapter) args(req bridge.TurnRequest, mcpFile string) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	if req.PlatformSessionID != "" {
		args = append(args, "--resume", req.PlatformSessionID)
	}
	if req.Model != nil && req.Model.Model != "" {
		args = append(args, "--model", req.Model.Model)
	}
	if mcpFile != "" {
		args = append(args, "--mcp-config", mcpFile)
	}
	args = append(args, "--allowedTools", AllowedTools)
	if req.Permission != nil {
		args = append(args, "--permission-prompt-tool", "stdio")
	}
	return append(args, a.opts.ExtraArgs...)
}

// environ is the process environment without the bridge's credentials
// (bridge.PlatformEnviron) and with ENABLE_TOOL_SEARCH=false.
func (a *Adapter) environ() []string {
	base := a.opts.Environ
	if base == nil {
		base = os.Environ()
	}
	base = bridge.PlatformEnviron(base)
	out := make([]string, 0, len(base)+1)
	for _, kv := range base {
		if !strings.HasPrefix(kv, "ENABLE_TOOL_SEARCH=") {
			out = append(out, kv)
		}
	}
	return append(out, "ENABLE_TOOL_SEARCH=false")
}

// RunTurn runs one turn (see bridge.Adapter). Errors: RunTurn before Start, a Cwd that is
// not an existing absolute directory, a process that cannot start, bridge.ErrSessionNotFound
// (wrapped) when PlatformSessionID is unknown to Claude Code, and ctx's error when ctx ended
// the turn (the process is stopped; the result still carries the process facts).
// A model failure is TurnResult.Failed with Claude Code's own reason.
func (a *Adapter) RunTurn(ctx context.Context, req bridge.TurnRequest) (bridge.TurnResult, error) {
	env, err := a.startedEnv()
	if err != nil {
		return bridge.TurnResult{}, err
	}
	if !filepath.IsAbs(req.Cwd) {
		return bridge.TurnResult{}, fmt.Errorf("claude: TurnRequest.Cwd %q is not an absolute path", req.Cwd)
	}
	if st, err := os.Stat(req.Cwd); err != nil || !st.IsDir() {
		return bridge.TurnResult{}, fmt.Errorf("claude: TurnRequest.Cwd %q is not an existing directory", req.Cwd)
	}

	var mcpFile string
	cfg, err := mcpConfig(env, req.ToolEnv)
	if err != nil {
		return bridge.TurnResult{}, fmt.Errorf("claude: MCP config: %w", err)
	}
	if cfg != nil {
		// A private file, not an argument: the config holds the agent key.
		dir, err := os.MkdirTemp("", "agentmail-claude-")
		if err != nil {
			return bridge.TurnResult{}, fmt.Errorf("claude: temporary folder for the MCP config: %w", err)
		}
		defer os.RemoveAll(dir)
		mcpFile = filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(mcpFile, cfg, 0o600); err != nil {
			return bridge.TurnResult{}, fmt.Errorf("claude: write MCP config: %w", err)
		}
	}

	t := &turn{req: req, grace: a.opts.KillGrace}
	return t.run(ctx, env, a.args(req, mcpFile), a.environ())
}

// userMessage is the stream-json line that carries the prompt.
func userMessage(prompt string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type":               "user",
		"session_id":         "",
		"parent_tool_use_id": nil,
		"message": map[string]any{
			"role":    "user",
			"content": []any{map[string]any{"type": "text", "text": prompt}},
		},
	})
	return append(b, '\n')
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// signInTimeout bounds `claude auth status`.
const signInTimeout = 20 * time.Second

// SignInProblem runs `claude auth status` (no model call; it reads the stored login and the
// environment, ANTHROPIC_API_KEY and the like) the way turns run claude, and answers what to
// do when it says loggedIn false. It answers "" when signed in or when it cannot tell (an
// older CLI without the command, an answer that is not its JSON, a timeout).
func (a *Adapter) SignInProblem(ctx context.Context) string {
	env, err := a.startedEnv()
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, signInTimeout)
	defer cancel()
	cmd := env.Command(env.Bin, "auth", "status", "--json")
	cmd.Env = a.environ()
	cmd.Dir = os.TempDir()
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return ""
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return ""
	}
	var st struct {
		LoggedIn *bool `json:"loggedIn"`
	}
	if json.Unmarshal([]byte(out.String()), &st) != nil || st.LoggedIn == nil || *st.LoggedIn {
		return ""
	}
	return "Claude Code is not signed in on this machine, so every mail will fail: run `claude` here and type /login " +
		"(or set ANTHROPIC_API_KEY for the bridge and restart it)"
}
