package pi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// procSpec says how to start one pi process.
type procSpec struct {
	cwd       string
	session   string           // --session <id>; "" starts a new session
	model     *client.ModelRef // --provider/--model; nil = pi's default (or the session's)
	noSession bool             // --no-session (model listing)
	bare      bool             // no extension (rename, model listing)
	toolEnv   map[string]string
}

func modelKey(m *client.ModelRef) string {
	if m == nil || m.Model == "" {
		return ""
	}
	return m.Provider + "/" + m.Model
}

// rpcResponse is pi's answer to one command.
type rpcResponse struct {
	ID      string          `json:"id"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   string          `json:"error"`
}

// proc is one pi process in RPC mode.
type proc struct {
	a        *Adapter
	log      func(string, ...any)
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	wmu      sync.Mutex
	spec     procSpec
	modelKey string
	envPath  string // the tool environment file ("" for bare processes)
	baseEnv  map[string]string
	done     chan struct{} // closed when the process has exited and its output is read
	stderr   *bridge.TailBuffer

	mu        sync.Mutex
	nextID    int
	waiting   map[string]chan rpcResponse
	sent      []*piTurn // prompts pi accepted whose user message has not started yet
	active    *piTurn   // the turn whose user message started last
	running   bool      // between agent_start and agent_end
	sessionID string
	idleTimer *time.Timer
	stopping  bool
}

// startProc starts pi for spec and waits for its get_state answer.
func (a *Adapter) startProc(ctx context.Context, env bridge.Env, spec procSpec) (*proc, error) {
	args := []string{"--mode", "rpc", "--no-extensions"}
	p := &proc{a: a, log: env.Log, spec: spec, modelKey: modelKey(spec.model), waiting: map[string]chan rpcResponse{},
		done: make(chan struct{}), stderr: bridge.NewTailBuffer(8 << 10)}
	vars := a.baseEnviron()
	if !spec.bare {
		a.mu.Lock()
		ext := a.extPath
		a.mu.Unlock()
		args = append(args, "-e", ext)
		p.envPath = a.toolEnvFile()
		p.baseEnv = map[string]string{
			"AGENTMAIL_GATEWAY_URL": env.GatewayURL,
			"AGENTMAIL_PLATFORM":    Name,
		}
		if env.AgentName != "" {
			p.baseEnv["AGENTMAIL_AGENT_NAME"] = env.AgentName
		}
		if err := p.writeToolEnv(spec.toolEnv); err != nil {
			return nil, err
		}
		if len(env.MCPCommand) > 0 {
			argv, _ := json.Marshal(env.MCPCommand)
			vars = append(vars, envMCP+"="+string(argv))
		}
		vars = append(vars, envToolEnv+"="+p.envPath, envGuarded+"="+strings.Join(GuardedTools, ","))
	}
	if spec.noSession {
		args = append(args, "--no-session")
	}
	if spec.session != "" {
		args = append(args, "--session", spec.session)
	}
	if spec.model != nil && spec.model.Model != "" {
		if spec.model.Provider != "" {
			args = append(args, "--provider", spec.model.Provider)
		}
		args = append(args, "--model", spec.model.Model)
	}
	cmd := env.Command(env.Bin, args...) // its own process group; in the platform sandbox when there is one
	cmd.Dir = spec.cwd
	cmd.Env = vars
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pi: start %s in %s: %w", env.Bin, spec.cwd, err)
	}
	p.cmd, p.stdin = cmd, stdin
	go p.read(stdout)

	sctx, cancel := context.WithTimeout(ctx, a.opts.StartTimeout)
	defer cancel()
	resp, err := p.call(sctx, map[string]any{"type": "get_state"})
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("pi: the process in %s did not answer get_state: %w; stderr: %s", spec.cwd, err, p.stderr.String())
	}
	var st struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(resp.Data, &st); err != nil || (st.SessionID == "" && !spec.noSession) {
		p.stop()
		return nil, fmt.Errorf("pi: get_state gave no session id (%s)", string(resp.Data))
	}
	if spec.session != "" && st.SessionID != spec.session {
		p.stop()
		return nil, fmt.Errorf("pi: resuming session %s in %s opened session %s instead", spec.session, spec.cwd, st.SessionID)
	}
	p.mu.Lock()
	p.sessionID = st.SessionID
	p.mu.Unlock()
	return p, nil
}

// writeToolEnv replaces the tool environment file atomically with the base variables and
// vars (the turn's ToolEnv).
func (p *proc) writeToolEnv(vars map[string]string) error {
	if p.envPath == "" {
		return nil
	}
	all := map[string]string{}
	for k, v := range p.baseEnv {
		all[k] = v
	}
	for k, v := range vars {
		all[k] = v
	}
	b, _ := json.Marshal(all)
	tmp := p.envPath + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("pi: writing the tool environment: %w", err)
	}
	if err := os.Rename(tmp, p.envPath); err != nil {
		return fmt.Errorf("pi: writing the tool environment: %w", err)
	}
	return nil
}

func (p *proc) pid() int {
	if p.cmd != nil && p.cmd.Process != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// write sends one JSON line to pi.
func (p *proc) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err = p.stdin.Write(append(b, '\n'))
	return err
}

// call sends a command with a fresh id and waits for its response. A response with
// success false is an error carrying pi's message.
func (p *proc) call(ctx context.Context, cmd map[string]any) (rpcResponse, error) {
	ch, id, err := p.send(cmd)
	if err != nil {
		return rpcResponse{}, err
	}
	return p.await(ctx, ch, id, cmd["type"])
}

func (p *proc) send(cmd map[string]any) (chan rpcResponse, string, error) {
	p.mu.Lock()
	p.nextID++
	id := "am-" + strconv.Itoa(p.nextID)
	ch := make(chan rpcResponse, 1)
	p.waiting[id] = ch
	p.mu.Unlock()
	cmd["id"] = id
	if err := p.write(cmd); err != nil {
		p.mu.Lock()
		delete(p.waiting, id)
		p.mu.Unlock()
		return nil, "", fmt.Errorf("pi: writing %v: %w", cmd["type"], err)
	}
	return ch, id, nil
}

func (p *proc) await(ctx context.Context, ch chan rpcResponse, id string, what any) (rpcResponse, error) {
	select {
	case r := <-ch:
		if !r.Success {
			return r, fmt.Errorf("pi: %v refused: %s", what, r.Error)
		}
		return r, nil
	case <-p.done:
		return rpcResponse{}, fmt.Errorf("pi: the process exited before answering %v: %s", what, p.stderr.String())
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.waiting, id)
		p.mu.Unlock()
		return rpcResponse{}, ctx.Err()
	}
}

// stop ends the process: stdin closed, then SIGTERM and SIGKILL to its process group.
func (p *proc) stop() {
	p.mu.Lock()
	p.stopping = true
	if p.idleTimer != nil {
		p.idleTimer.Stop()
	}
	p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	p.stdin.Close()
	pgid := p.cmd.Process.Pid
	select {
	case <-p.done:
	case <-time.After(p.a.opts.KillGrace):
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(p.a.opts.KillGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
	}
	// Tool processes pi left behind (a bash command, the tool server) go too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// read consumes pi's stdout line by line (split on "\n" only: RPC strings may hold
// U+2028) until it ends, then fails whatever still waits.
func (p *proc) read(stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			p.handleLine(bytes.TrimRight(line, "\r\n"))
		}
		if err != nil {
			break
		}
	}
	waitErr := p.cmd.Wait()
	p.mu.Lock()
	turns := append([]*piTurn(nil), p.sent...)
	if p.active != nil {
		turns = append(turns, p.active)
	}
	p.sent, p.active, p.running = nil, nil, false
	stopping := p.stopping
	sid := p.sessionID
	p.mu.Unlock()
	close(p.done)
	p.a.forget(sid, p)
	reason := "pi exited"
	if waitErr != nil {
		reason = "pi exited: " + waitErr.Error()
	}
	if tail := p.stderr.String(); tail != "" {
		reason += ": " + lastLines(tail, 5)
	}
	if !stopping {
		p.log("pi process ended", "platform_session", sid, "reason", reason)
	}
	for _, t := range turns {
		t.end(func(t *piTurn) {
			code := -1
			if ps := p.cmd.ProcessState; ps != nil {
				code = ps.ExitCode()
			}
			t.exitCode = &code
			t.crash = reason
		})
	}
}

// event is one line of pi's stdout (responses, events and extension UI requests).
type event struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   string          `json:"error"`
	Message json.RawMessage `json:"message"`
	// message_update
	AssistantMessageEvent struct {
		Type string `json:"type"`
	} `json:"assistantMessageEvent"`
	// extension_ui_request
	Method      string `json:"method"`
	Title       string `json:"title"`
	Placeholder string `json:"placeholder"`
	// extension_error
	ExtensionPath string `json:"extensionPath"`
	Event         string `json:"event"`
	// tool_execution_start / _end
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       map[string]any  `json:"args"`
	Result     json.RawMessage `json:"result"`
	IsError    bool            `json:"isError"`
}

// toolResultText is the text of a tool_execution_end result: its content's
// text blocks, else the raw JSON.
func toolResultText(raw json.RawMessage) string {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &r) == nil && len(r.Content) > 0 {
		if t := textOf(r.Content); t != "" {
			return t
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// activity hands one activity of the active turn to the core. Called with
// p.mu held; OnActivity does not block.
func (p *proc) activity(a bridge.TurnActivity) {
	t := p.active
	if t == nil || t.req.OnActivity == nil {
		return
	}
	t.mu.Lock()
	a.BytesRead = t.bytes
	t.mu.Unlock()
	t.req.OnActivity(a)
}

// agentMessage is a message of pi's events (user, assistant or toolResult).
type agentMessage struct {
	Role       string `json:"role"`
	Content    json.RawMessage
	StopReason string `json:"stopReason"`
	Error      string `json:"errorMessage"`
	ResponseID string `json:"responseId"`
	Provider   string `json:"provider"`
	Model      string `json:"model"`
}

func (p *proc) handleLine(line []byte) {
	var ev event
	if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
		p.mu.Lock()
		if t := p.current(); t != nil {
			t.addUnparsed()
		}
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.current(); t != nil {
		t.addBytes(len(line) + 1)
	}
	switch ev.Type {
	case "response":
		if ch, ok := p.waiting[ev.ID]; ok {
			delete(p.waiting, ev.ID)
			ch <- rpcResponse{ID: ev.ID, Command: ev.Command, Success: ev.Success, Data: ev.Data, Error: ev.Error}
		}
	case "agent_start":
		p.running = true
	case "message_start":
		var m agentMessage
		if json.Unmarshal(ev.Message, &m) == nil && m.Role == "user" && len(p.sent) > 0 {
			// The next prompt of ours starts: the previous turn is over.
			if p.active != nil {
				p.active.end(nil)
			}
			p.active, p.sent = p.sent[0], p.sent[1:]
			if err := p.writeToolEnv(p.active.req.ToolEnv); err != nil {
				p.log("the tool environment of the turn could not be written", "err", err)
			}
		}
	case "message_update":
		if p.active != nil {
			switch ev.AssistantMessageEvent.Type {
			case "text_start", "text_delta", "thinking_start", "thinking_delta", "toolcall_start", "toolcall_delta":
				p.active.output()
			}
		}
	case "message_end":
		var m agentMessage
		if p.active != nil && json.Unmarshal(ev.Message, &m) == nil && m.Role == "assistant" {
			p.active.setLast(m)
			if text := textOf(m.Content); text != "" {
				p.activity(bridge.TurnActivity{Kind: bridge.ActivityText, Text: text})
			}
		}
	case "tool_execution_start":
		p.activity(bridge.TurnActivity{Kind: bridge.ActivityToolCall, Tool: ev.ToolName, Input: ev.Args})
	case "tool_execution_end":
		p.activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: ev.ToolName, Text: toolResultText(ev.Result), IsError: ev.IsError})
	case "agent_end":
		p.running = false
		if p.active != nil {
			p.active.end(nil)
			p.active = nil
		}
		if len(p.sent) > 0 {
			// Every queued prompt starts inside the run that queued it; one that did not is
			// stuck in pi's follow-up queue (9.11). Check, and recover without a silent drop.
			go p.checkStuck()
		} else {
			p.armIdle()
		}
	case "extension_ui_request":
		switch ev.Method {
		case "select", "confirm", "input", "editor":
			if ev.Method == "input" && ev.Title == permissionTitle {
				go p.permission(ev.ID, ev.Placeholder, p.active)
			} else {
				// Nobody can answer another dialog in a mail-driven turn.
				go p.write(map[string]any{"type": "extension_ui_response", "id": ev.ID, "cancelled": true})
			}
		}
	case "extension_error":
		p.log("pi extension error", "extension", ev.ExtensionPath, "event", ev.Event, "error", ev.Error)
	}
}

// current is the turn bytes are counted for. Called with p.mu held.
func (p *proc) current() *piTurn {
	if p.active != nil {
		return p.active
	}
	if len(p.sent) > 0 {
		return p.sent[0]
	}
	return nil
}

// armIdle starts the idle timer: a process without turns for IdleTimeout is stopped.
// Called with p.mu held.
func (p *proc) armIdle() {
	if p.idleTimer != nil {
		p.idleTimer.Stop()
	}
	p.idleTimer = time.AfterFunc(p.a.opts.IdleTimeout, func() {
		p.mu.Lock()
		idle := !p.running && p.active == nil && len(p.sent) == 0 && !p.stopping
		p.mu.Unlock()
		if idle {
			p.log("stopping an idle pi process; the next turn resumes its session", "platform_session", p.sessionID)
			p.a.forget(p.sessionID, p)
			p.stop()
		}
	})
}

func (p *proc) idle() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.running && p.active == nil && len(p.sent) == 0
}

// checkStuck runs after an agent_end that left prompts of ours unstarted. It waits until
// pi is no longer streaming; if a prompt still has not started (a follow-up queued in the
// instant the run was ending stays in pi's queue with nobody to drain it), the process is
// stopped, which discards pi's in-memory queue, and the waiting turns are sent again to a
// fresh process of the same session: never lost, never run twice.
func (p *proc) checkStuck() {
	for i := 0; i < 100; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := p.call(ctx, map[string]any{"type": "get_state"})
		cancel()
		if err != nil {
			return // the process is gone: its turns were ended and are resent by RunTurn
		}
		var st struct {
			IsStreaming bool `json:"isStreaming"`
		}
		_ = json.Unmarshal(resp.Data, &st)
		p.mu.Lock()
		pending := len(p.sent)
		p.mu.Unlock()
		if pending == 0 || st.IsStreaming {
			return // started after all (a new run is under way)
		}
		if i >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.mu.Lock()
	stuck := append([]*piTurn(nil), p.sent...)
	p.sent = nil
	p.mu.Unlock()
	if len(stuck) == 0 {
		return
	}
	p.log("queued prompts did not start after the run ended (9.11); restarting the session's process and sending them again", "platform_session", p.sessionID, "turns", len(stuck))
	p.a.forget(p.sessionID, p)
	for _, t := range stuck {
		t.end(func(t *piTurn) { t.resend = true })
	}
	p.stop()
}

// permission forwards one permission question of the extension to the turn's
// PermissionFunc and answers it. Without a turn or a PermissionFunc it answers deny
// (fail closed: the bridge drives mail, nobody sits at pi).
func (p *proc) permission(uiID, question string, t *piTurn) {
	var q struct {
		ToolName   string         `json:"toolName"`
		ToolCallID string         `json:"toolCallId"`
		Input      map[string]any `json:"input"`
	}
	ans := bridge.PermissionAnswer{Allow: false, Message: "Refused: no person could be asked (fail closed)."}
	if err := json.Unmarshal([]byte(question), &q); err != nil {
		p.log("unreadable permission question from the extension; refused", "err", err)
	} else if t != nil && t.req.Permission != nil {
		p.mu.Lock()
		sid := p.sessionID
		p.mu.Unlock()
		ask := bridge.PermissionAsk{
			PlatformID: sid + ":" + q.ToolName + ":" + q.ToolCallID, // B-8.1: pi gives no permission id
			ToolName:   q.ToolName,
			Input:      q.Input,
			ToolUseID:  q.ToolCallID,
			Summary:    summary(q.ToolName, q.Input),
		}
		ans = t.req.Permission(t.ctx, ask)
	}
	value, _ := json.Marshal(map[string]any{"allow": ans.Allow, "message": ans.Message})
	if err := p.write(map[string]any{"type": "extension_ui_response", "id": uiID, "value": string(value)}); err != nil {
		p.log("answering the permission question failed (the tool stays blocked)", "err", err)
	}
}

// summary is the one-line summary of a guarded call for the mail (B-8.4).
func summary(tool string, input map[string]any) string {
	for _, k := range []string{"command", "path", "file_path"} {
		if v, ok := input[k].(string); ok && v != "" {
			s := strings.Join(strings.Fields(v), " ")
			if r := []rune(s); len(r) > 200 {
				s = string(r[:200]) + "…"
			}
			return tool + ": " + s
		}
	}
	return tool
}

// forget removes p from the live processes when it is still registered for sid.
func (a *Adapter) forget(sid string, p *proc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.procs[sid] == p {
		delete(a.procs, sid)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
