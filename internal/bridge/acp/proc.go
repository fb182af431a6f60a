package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// agentInfo is what an agent says of itself at initialize.
type agentInfo struct {
	Protocol     int
	Name         string
	Version      string
	LoadSession  bool
	ListSessions bool
	AuthMethods  []authMethod
}

// authMethod is one of the agent's ways to log in.
type authMethod struct {
	ID, Name, Description string
}

func (i agentInfo) logArgs(command string) []any {
	methods := make([]string, 0, len(i.AuthMethods))
	for _, m := range i.AuthMethods {
		methods = append(methods, m.ID)
	}
	return []any{"command", command, "agent", i.Name, "version", i.Version, "protocol", i.Protocol,
		"load_session", i.LoadSession, "session_list", i.ListSessions, "auth_methods", strings.Join(methods, ",")}
}

func infoOf(r sdk.InitializeResponse) agentInfo {
	i := agentInfo{Protocol: int(r.ProtocolVersion), LoadSession: r.AgentCapabilities.LoadSession,
		ListSessions: r.AgentCapabilities.SessionCapabilities.List != nil}
	if r.AgentInfo != nil {
		i.Name, i.Version = r.AgentInfo.Name, r.AgentInfo.Version
	}
	for _, m := range r.AuthMethods {
		switch {
		case m.Agent != nil:
			i.AuthMethods = append(i.AuthMethods, authMethod{m.Agent.Id, m.Agent.Name, deref(m.Agent.Description)})
		case m.EnvVar != nil:
			i.AuthMethods = append(i.AuthMethods, authMethod{m.EnvVar.Id, m.EnvVar.Name, deref(m.EnvVar.Description)})
		case m.Terminal != nil:
			b, _ := json.Marshal(m.Terminal)
			var t struct{ ID, Name, Description string }
			_ = json.Unmarshal(b, &t)
			i.AuthMethods = append(i.AuthMethods, authMethod{t.ID, t.Name, t.Description})
		}
	}
	return i
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// modelEntry is one model the agent offers in a session: through session/set_model
// (configID "") or through a select config option of category model.
type modelEntry struct {
	ID       string
	Name     string
	ConfigID string
}

// ref is the model as the gateway names it: "provider/model" ids are split.
func (m modelEntry) ref() client.Model {
	if p, mod, ok := strings.Cut(m.ID, "/"); ok && p != "" && mod != "" {
		return client.Model{Provider: p, Model: mod, DisplayName: m.Name}
	}
	return client.Model{Model: m.ID, DisplayName: m.Name}
}

// sessionModels reads the models a session offers.
func sessionModels(models *sdk.SessionModelState, options []sdk.SessionConfigOption) []modelEntry {
	var out []modelEntry
	if models != nil {
		for _, m := range models.AvailableModels {
			out = append(out, modelEntry{ID: string(m.ModelId), Name: m.Name})
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, o := range options {
		s := o.Select
		if s == nil || s.Category == nil || *s.Category != sdk.SessionConfigOptionCategoryModel {
			continue
		}
		var flat []sdk.SessionConfigSelectOption
		if s.Options.Ungrouped != nil {
			flat = append(flat, *s.Options.Ungrouped...)
		}
		if s.Options.Grouped != nil {
			for _, g := range *s.Options.Grouped {
				flat = append(flat, g.Options...)
			}
		}
		for _, v := range flat {
			out = append(out, modelEntry{ID: string(v.Value), Name: v.Name, ConfigID: string(s.Id)})
		}
		if len(flat) == 0 {
			// An option that lists no values still takes one (Codex accepts any id).
			out = append(out, modelEntry{ID: string(s.CurrentValue), ConfigID: string(s.Id)})
		}
	}
	return out
}

// agentProc is one running agent process and its ACP connection.
type agentProc struct {
	cmd    *exec.Cmd
	conn   *sdk.ClientSideConnection
	stdin  io.WriteCloser
	stderr *bridge.TailBuffer
	reader *countingReader
	info   agentInfo
	router *router
	// unparsed counts the stdout lines the SDK could not parse.
	unparsed atomic.Int64

	exited   chan struct{}
	exitCode *int
	stopOnce sync.Once
}

// hasExited reports whether the process has ended.
func (p *agentProc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// router is the client side (sdk.Client) of one agent process: it hands the agent's
// updates and requests to the hooks of the turn that runs in the process now. Between
// turns (a process kept for its session) there are none: updates are dropped and
// permission requests refused.
type router struct {
	mu sync.Mutex
	h  *clientHooks
}

var _ sdk.Client = (*router)(nil)

// set makes h the turn's hooks (nil: no turn runs).
func (r *router) set(h *clientHooks) {
	r.mu.Lock()
	r.h = h
	r.mu.Unlock()
}

func (r *router) cur() *clientHooks {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h == nil {
		return &clientHooks{}
	}
	return r.h
}

func (r *router) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	return r.cur().SessionUpdate(ctx, n)
}

func (r *router) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return r.cur().RequestPermission(ctx, p)
}

func (r *router) ReadTextFile(ctx context.Context, q sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return r.cur().ReadTextFile(ctx, q)
}

func (r *router) WriteTextFile(ctx context.Context, q sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return r.cur().WriteTextFile(ctx, q)
}

func (r *router) CreateTerminal(ctx context.Context, q sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return r.cur().CreateTerminal(ctx, q)
}

func (r *router) KillTerminal(ctx context.Context, q sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return r.cur().KillTerminal(ctx, q)
}

func (r *router) TerminalOutput(ctx context.Context, q sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return r.cur().TerminalOutput(ctx, q)
}

func (r *router) ReleaseTerminal(ctx context.Context, q sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return r.cur().ReleaseTerminal(ctx, q)
}

func (r *router) WaitForTerminalExit(ctx context.Context, q sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return r.cur().WaitForTerminalExit(ctx, q)
}

// countingReader counts the bytes read from the agent's stdout.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// startProc starts the agent in dir and runs initialize. hooks receives the agent's
// updates and requests (nil: none expected; updates are dropped, permission requests
// refused); the process's router hands them to later turns' hooks.
func (a *Adapter) startProc(ctx context.Context, dir string, hooks *clientHooks) (*agentProc, error) {
	env, err := a.ready()
	if err != nil {
		return nil, err
	}
	cmd := env.Command(a.bin, a.opts.Command[1:]...)
	cmd.Dir = dir
	cmd.Env = a.environ()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &agentProc{cmd: cmd, stdin: stdin, stderr: bridge.NewTailBuffer(16 << 10), router: &router{h: hooks}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("acp: starting %s: %w", strings.Join(a.opts.Command, " "), err)
	}
	if !a.track(p) {
		p.stop(a.opts.KillGrace)
		return nil, errors.New("acp: the adapter is closing")
	}
	go func() {
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		p.exitCode = &code
		close(p.exited)
		a.untrack(p)
	}()
	p.reader = &countingReader{r: stdout}
	p.conn = sdk.NewClientSideConnection(p.router, stdin, p.reader)
	p.conn.SetLogger(slog.New(&unparsedCounter{p: p}))
	init, err := p.conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		// Neither fs nor terminal is offered: the agent's own tools do that work, and
		// they ask before they run (docs/TOOLS.md, "ACP agents").
		ClientCapabilities: sdk.ClientCapabilities{},
		ClientInfo:         &sdk.Implementation{Name: "agentmail-bridge", Version: "1"},
	})
	if err != nil {
		p.stop(a.opts.KillGrace)
		return nil, fmt.Errorf("acp: initialize: %s%s", rpcText(err), p.stderrHint())
	}
	if init.ProtocolVersion != sdk.ProtocolVersionNumber {
		p.stop(a.opts.KillGrace)
		return nil, fmt.Errorf("acp: the agent speaks ACP protocol version %d; the bridge speaks %d", init.ProtocolVersion, sdk.ProtocolVersionNumber)
	}
	p.info = infoOf(init)
	return p, nil
}

// stderrHint is the last lines of the agent's log for an error message.
func (p *agentProc) stderrHint() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return " (the agent's log ends: " + strings.Join(lines, " | ") + ")"
}

func (p *agentProc) pid() int {
	if p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// stop closes the agent's stdin, then signals its process group (SIGTERM, then SIGKILL)
// each after grace, and waits for the exit.
func (p *agentProc) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.exited:
			return
		case <-time.After(grace):
		}
		signalGroup(p.pid(), syscall.SIGTERM)
		select {
		case <-p.exited:
			return
		case <-time.After(grace):
		}
		signalGroup(p.pid(), syscall.SIGKILL)
		<-p.exited
	})
}

// kill ends the process and everything it started at once: SIGTERM to its process group
// and to every descendant (also those in groups of their own), SIGKILL after grace.
func (p *agentProc) kill(grace time.Duration) {
	if p.hasExited() {
		return
	}
	signalGroup(p.pid(), syscall.SIGTERM)
	bridge.EndDescendants(p.pid(), "", grace)
	select {
	case <-p.exited:
		return
	case <-time.After(grace):
	}
	signalGroup(p.pid(), syscall.SIGKILL)
}

func signalGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// listSessions is session/list over every directory, all pages.
func (p *agentProc) listSessions(ctx context.Context) ([]client.PlatformSession, error) {
	var out []client.PlatformSession
	var cursor *string
	for page := 0; page < 50; page++ {
		resp, err := p.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("acp: session/list: %s", rpcText(err))
		}
		for _, s := range resp.Sessions {
			ps := client.PlatformSession{PlatformID: string(s.SessionId), Workspace: s.Cwd, Title: strings.TrimSpace(deref(s.Title))}
			if s.UpdatedAt != nil {
				if t, err := time.Parse(time.RFC3339, *s.UpdatedAt); err == nil {
					t = t.UTC()
					ps.UpdatedAt = &t
				}
			}
			out = append(out, ps)
		}
		if resp.NextCursor == nil || *resp.NextCursor == "" {
			break
		}
		cursor = resp.NextCursor
	}
	return out, nil
}

// rpcText renders an ACP error in the agent's words: the JSON-RPC message and its data
// (a string, or the details/message fields, else the data as JSON).
func rpcText(err error) string {
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		return err.Error()
	}
	msg := strings.TrimSpace(re.Message)
	detail := ""
	switch d := re.Data.(type) {
	case nil:
	case string:
		detail = d
	case map[string]any:
		for _, k := range []string{"details", "message", "error"} {
			if s, ok := d[k].(string); ok && s != "" {
				detail = s
				break
			}
		}
		if detail == "" {
			b, _ := json.Marshal(d)
			detail = string(b)
		}
	default:
		b, _ := json.Marshal(d)
		detail = string(b)
	}
	switch {
	case detail == "" || strings.Contains(msg, detail):
		return msg
	case msg == "" || strings.Contains(detail, msg):
		return detail
	}
	return msg + ": " + detail
}

// rpcCode is the JSON-RPC error code of err, 0 when it is not one.
func rpcCode(err error) int {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

// unparsedCounter is the connection's logger: it counts the lines the SDK could not
// parse (RunFacts.UnparsedLines) and drops the rest.
type unparsedCounter struct{ p *agentProc }

func (u *unparsedCounter) Enabled(context.Context, slog.Level) bool { return true }
func (u *unparsedCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "failed to parse") {
		u.p.unparsed.Add(1)
	}
	return nil
}
func (u *unparsedCounter) WithAttrs([]slog.Attr) slog.Handler { return u }
func (u *unparsedCounter) WithGroup(string) slog.Handler      { return u }
