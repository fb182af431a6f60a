package claude

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentmail/agentmail/internal/bridge"
)

// turn is the state of one claude process. The reader goroutine owns the parsing state;
// run reads it only after the reader is done.
type turn struct {
	req   bridge.TurnRequest
	grace time.Duration

	stdinMu sync.Mutex
	stdin   io.WriteCloser
	closed  bool

	pid         int
	startOnce   sync.Once
	verdictOnce sync.Once

	// Parsing state (reader goroutine).
	sessionID     string
	bytesRead     int64
	unparsed      int
	lastMsgID     string
	lastText      []string
	result        *resultEvent
	apiErrorText  string
	toolNames     map[string]string // tool_use id → tool name
	pendingAsks   map[string]context.CancelFunc
	pendingMu     sync.Mutex
	permissionsWG sync.WaitGroup
}

// resultEvent is the fields of the stream-json result event the adapter uses.
type resultEvent struct {
	Subtype        string   `json:"subtype"`
	IsError        bool     `json:"is_error"`
	Result         string   `json:"result"`
	SessionID      string   `json:"session_id"`
	StopReason     string   `json:"stop_reason"`
	TerminalReason string   `json:"terminal_reason"`
	Errors         []string `json:"errors"`
	APIErrorStatus *int     `json:"api_error_status"`
}

// event is the union of the stream-json lines the adapter reads.
type event struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	IsAPIError      bool            `json:"is_api_error_message"`
	Message         json.RawMessage `json:"message"`
	RequestID       string          `json:"request_id"`
	Request         json.RawMessage `json:"request"`
}

type assistantMessage struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Content []struct {
		Type  string         `json:"type"`
		Text  string         `json:"text"`
		ID    string         `json:"id"`    // tool_use
		Name  string         `json:"name"`  // tool_use
		Input map[string]any `json:"input"` // tool_use
	} `json:"content"`
}

// userMessage is the part of a user event the transcript reads: the tool
// results Claude Code hands back to the model.
type toolResults struct {
	Content []struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	} `json:"content"`
}

// resultText is a tool_result's content: a string, or text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

// activity hands one activity to the core (TurnRequest.OnActivity).
func (t *turn) activity(a bridge.TurnActivity) {
	if t.req.OnActivity != nil {
		a.BytesRead = t.bytesRead
		t.req.OnActivity(a)
	}
}

type canUseTool struct {
	Subtype   string         `json:"subtype"`
	ToolName  string         `json:"tool_name"`
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"tool_use_id"`
}

func (t *turn) onStart() {
	t.startOnce.Do(func() {
		if t.req.OnStart != nil {
			t.req.OnStart(t.pid, t.sessionID)
		}
	})
}

func (t *turn) verdict(err error) {
	t.verdictOnce.Do(func() {
		if t.req.OnVerdict != nil {
			t.req.OnVerdict(err)
		}
	})
}

// interruptGrace bounds the wait for Claude Code to end an interrupted turn
// before its process group is signalled.
const interruptGrace = 3 * time.Second

// interrupt sends Claude Code's interrupt control request: the running turn
// ends (its tools are cancelled) and a result follows.
func (t *turn) interrupt() error {
	b, _ := json.Marshal(map[string]any{"type": "control_request", "request_id": "agentmail-stop",
		"request": map[string]any{"subtype": "interrupt"}})
	return t.writeLine(append(b, '\n'))
}

// writeLine writes one line to the process's stdin; after closeStdin it does nothing.
func (t *turn) writeLine(b []byte) error {
	t.stdinMu.Lock()
	defer t.stdinMu.Unlock()
	if t.closed {
		return errors.New("stdin closed")
	}
	_, err := t.stdin.Write(b)
	return err
}

func (t *turn) closeStdin() {
	t.stdinMu.Lock()
	defer t.stdinMu.Unlock()
	if !t.closed {
		t.closed = true
		_ = t.stdin.Close()
	}
}

// run starts the process, feeds the prompt, reads events until the process ends and builds
// the result.
func (t *turn) run(ctx context.Context, env bridge.Env, args, environ []string) (bridge.TurnResult, error) {
	bin := env.Bin
	cmd := env.Command(bin, args...) // its own process group; in the platform sandbox when there is one
	cmd.Dir = t.req.Cwd
	cmd.Env = environ
	stderr := bridge.NewTailBuffer(8 << 10)
	cmd.Stderr = stderr
	cmd.WaitDelay = t.grace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return bridge.TurnResult{}, fmt.Errorf("claude: stdin pipe: %w", err)
	}
	t.stdin = stdin
	pr, pw, err := os.Pipe()
	if err != nil {
		return bridge.TurnResult{}, fmt.Errorf("claude: stdout pipe: %w", err)
	}
	cmd.Stdout = pw
	started := time.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return bridge.TurnResult{}, fmt.Errorf("claude: start %s: %w", bin, err)
	}
	pw.Close()
	t.pid = cmd.Process.Pid
	if t.req.PlatformSessionID != "" {
		t.sessionID = t.req.PlatformSessionID
		t.onStart()
	}
	t.pendingAsks = map[string]context.CancelFunc{}
	turnCtx, cancelTurn := context.WithCancel(ctx)
	defer cancelTurn()

	exitCh := make(chan error, 1)
	go func() { exitCh <- cmd.Wait() }()
	readerDone := make(chan struct{})
	resultCh := make(chan struct{}, 1)
	go func() {
		defer close(readerDone)
		t.read(turnCtx, pr, resultCh)
	}()
	if err := t.writeLine(userMessage(t.req.Prompt)); err != nil {
		// The process died at once; its exit and stderr tell why.
		t.closeStdin()
	}

	var waitErr error
	canceled := false
	ctxDone := ctx.Done()
	var killTimer <-chan time.Time
	killStage := 0
	escalate := func() {
		killStage++
		if killStage == 1 {
			signalGroup(t.pid, syscall.SIGTERM)
		} else {
			signalGroup(t.pid, syscall.SIGKILL)
		}
		killTimer = time.After(t.grace)
	}
	for exited := false; !exited; {
		select {
		case waitErr = <-exitCh:
			exited = true
		case <-ctxDone:
			ctxDone = nil
			canceled = true
			if errors.Is(context.Cause(ctx), bridge.ErrStopRequested) && t.interrupt() == nil {
				// A person stopped the turn: Claude Code's own interrupt first, the
				// process group after a short grace.
				killTimer = time.After(min(t.grace, interruptGrace))
				continue
			}
			t.closeStdin()
			escalate()
		case <-resultCh:
			resultCh = nil
			// The turn is over: stdin is closed, the process should leave by itself.
			killTimer = time.After(t.grace)
		case <-killTimer:
			escalate()
		}
	}
	ended := time.Now()
	// Children that inherited stdout may keep it open; do not wait for them for long.
	select {
	case <-readerDone:
	case <-time.After(t.grace):
		pr.Close()
		<-readerDone
	}
	pr.Close()
	cancelTurn()
	t.permissionsWG.Wait()

	res := bridge.TurnResult{
		PlatformSessionID: t.sessionID,
		Facts: bridge.RunFacts{
			PID:           t.pid,
			StartedAt:     started,
			EndedAt:       ended,
			BytesRead:     t.bytesRead,
			UnparsedLines: t.unparsed,
		},
	}
	if ps := cmd.ProcessState; ps != nil && ps.ExitCode() >= 0 {
		code := ps.ExitCode()
		res.Facts.ExitCode = &code
	}
	exitText := "exited"
	if waitErr != nil {
		exitText = waitErr.Error()
	}
	if canceled {
		res.Failed = true
		res.FailureReason = "turn stopped: " + ctx.Err().Error()
		res.Facts.StopReason = "canceled"
		t.verdict(errors.New(res.FailureReason))
		return res, fmt.Errorf("claude: turn stopped: %w", ctx.Err())
	}
	r := t.result
	if r == nil {
		res.Failed = true
		res.FailureReason = fmt.Sprintf("claude %s without a result event", exitText)
		if tail := stderr.String(); tail != "" {
			res.FailureReason += ": " + lastLines(tail, 5)
		}
		res.Facts.StopReason = "no_result"
		t.verdict(errors.New(res.FailureReason))
		return res, nil
	}
	if r.SessionID != "" {
		res.PlatformSessionID = r.SessionID
	}
	if r.IsError || r.Subtype != "success" {
		reason := r.Result
		if len(r.Errors) > 0 {
			reason = strings.Join(r.Errors, "; ")
		}
		if reason == "" {
			reason = t.apiErrorText
		}
		if reason == "" {
			reason = "claude reported an error (subtype " + r.Subtype + ")"
		}
		res.Failed = true
		res.FailureReason = reason
		res.Facts.StopReason = firstNonEmpty(r.TerminalReason, r.Subtype)
		t.verdict(errors.New(reason))
		if t.req.PlatformSessionID != "" && sessionMissing(r.Errors) {
			return res, fmt.Errorf("claude: session %s: %s: %w", t.req.PlatformSessionID, reason, bridge.ErrSessionNotFound)
		}
		return res, nil
	}
	res.Text = strings.Join(t.lastText, "\n\n")
	res.MessageID = t.lastMsgID
	res.Facts.StopReason = firstNonEmpty(r.StopReason, r.TerminalReason, r.Subtype)
	t.verdict(nil)
	return res, nil
}

// read parses stdout lines until EOF.
func (t *turn) read(ctx context.Context, r io.Reader, resultCh chan<- struct{}) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		t.bytesRead += int64(len(line))
		if trimmed := strings.TrimSpace(string(line)); trimmed != "" {
			t.handle(ctx, []byte(trimmed), resultCh)
		}
		if err != nil {
			return
		}
	}
}

// handle processes one stream-json line.
func (t *turn) handle(ctx context.Context, line []byte, resultCh chan<- struct{}) {
	var ev event
	if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
		t.unparsed++
		return
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" && ev.SessionID != "" {
			t.sessionID = ev.SessionID
			t.onStart()
		}
	case "assistant":
		if ev.ParentToolUseID != nil && *ev.ParentToolUseID != "" {
			return // a subagent's message, not this session's own answer
		}
		var m assistantMessage
		if err := json.Unmarshal(ev.Message, &m); err != nil {
			t.unparsed++
			return
		}
		if ev.IsAPIError || m.Model == "<synthetic>" {
			// Claude Code's own error text ("API Error: 400 …"), not the model's words.
			for _, c := range m.Content {
				if c.Type == "text" {
					t.apiErrorText = c.Text
				}
			}
			return
		}
		t.verdict(nil)
		// Claude Code writes one assistant event per content block; events of one message
		// share its id.
		if m.ID != t.lastMsgID {
			t.lastMsgID = m.ID
			t.lastText = nil
		}
		for _, c := range m.Content {
			switch {
			case c.Type == "text" && c.Text != "":
				t.lastText = append(t.lastText, c.Text)
				t.activity(bridge.TurnActivity{Kind: bridge.ActivityText, Text: c.Text})
			case c.Type == "tool_use":
				if t.toolNames == nil {
					t.toolNames = map[string]string{}
				}
				t.toolNames[c.ID] = c.Name
				t.activity(bridge.TurnActivity{Kind: bridge.ActivityToolCall, Tool: c.Name, Input: c.Input})
			}
		}
	case "user":
		if ev.ParentToolUseID != nil && *ev.ParentToolUseID != "" {
			return
		}
		var m toolResults
		if json.Unmarshal(ev.Message, &m) != nil {
			return
		}
		for _, c := range m.Content {
			if c.Type == "tool_result" {
				t.activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: t.toolNames[c.ToolUseID],
					Text: resultText(c.Content), IsError: c.IsError})
			}
		}
	case "control_request":
		t.controlRequest(ctx, ev)
	case "control_cancel_request":
		t.pendingMu.Lock()
		if cancel := t.pendingAsks[ev.RequestID]; cancel != nil {
			cancel()
		}
		t.pendingMu.Unlock()
	case "result":
		var r resultEvent
		if err := json.Unmarshal(line, &r); err != nil {
			t.unparsed++
			return
		}
		t.result = &r
		if r.SessionID != "" && t.sessionID == "" {
			t.sessionID = r.SessionID
		}
		t.onStart()
		t.closeStdin()
		select {
		case resultCh <- struct{}{}:
		default:
		}
	}
}

// controlRequest answers a control_request: can_use_tool goes to the core's PermissionFunc
// in its own goroutine (the reader keeps draining stdout while a person decides); other
// subtypes are answered with an error so the CLI never waits for nothing.
func (t *turn) controlRequest(ctx context.Context, ev event) {
	var req canUseTool
	_ = json.Unmarshal(ev.Request, &req)
	if req.Subtype != "can_use_tool" {
		t.respond(ev.RequestID, nil, "agentmail bridge does not handle control request "+req.Subtype)
		return
	}
	if t.req.Permission == nil {
		t.respond(ev.RequestID, map[string]any{"behavior": "deny", "message": "Permission forwarding is off for this agent."}, "")
		return
	}
	askCtx, cancel := context.WithCancel(ctx)
	t.pendingMu.Lock()
	t.pendingAsks[ev.RequestID] = cancel
	t.pendingMu.Unlock()
	ask := bridge.PermissionAsk{
		PlatformID: ev.RequestID,
		ToolName:   req.ToolName,
		Input:      req.Input,
		ToolUseID:  req.ToolUseID,
		Summary:    Summary(req.ToolName, req.Input),
	}
	t.permissionsWG.Add(1)
	go func() {
		defer t.permissionsWG.Done()
		defer func() {
			t.pendingMu.Lock()
			delete(t.pendingAsks, ev.RequestID)
			t.pendingMu.Unlock()
			cancel()
		}()
		ans := t.req.Permission(askCtx, ask)
		if askCtx.Err() != nil {
			ans = bridge.PermissionAnswer{Allow: false, Message: "The permission question was withdrawn."}
		}
		if ans.Allow {
			input := req.Input
			if input == nil {
				input = map[string]any{}
			}
			t.respond(ev.RequestID, map[string]any{"behavior": "allow", "updatedInput": input}, "")
			return
		}
		msg := ans.Message
		if msg == "" {
			msg = "The person denied this action."
		}
		t.respond(ev.RequestID, map[string]any{"behavior": "deny", "message": msg}, "")
	}()
}

// respond writes a control_response: success with response, or error with errText.
func (t *turn) respond(requestID string, response map[string]any, errText string) {
	inner := map[string]any{"subtype": "success", "request_id": requestID, "response": response}
	if errText != "" {
		inner = map[string]any{"subtype": "error", "request_id": requestID, "error": errText}
	}
	b, _ := json.Marshal(map[string]any{"type": "control_response", "response": inner})
	_ = t.writeLine(append(b, '\n'))
}

// Summary is the one-line description of a permission question for the mail (B-8.4): the
// tool name and its main argument (command, file path, URL…), at most 200 characters.
func Summary(tool string, input map[string]any) string {
	arg := ""
	for _, k := range []string{"command", "file_path", "path", "notebook_path", "url", "pattern", "query"} {
		if v, ok := input[k].(string); ok && v != "" {
			arg = v
			break
		}
	}
	if arg == "" && len(input) > 0 {
		b, _ := json.Marshal(input)
		arg = string(b)
	}
	s := tool
	if arg != "" {
		s += ": " + strings.Join(strings.Fields(arg), " ")
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

// sessionMissing reports whether the result errors say the resumed session does not exist.
func sessionMissing(errs []string) bool {
	for _, e := range errs {
		if strings.Contains(e, "No conversation found") || strings.Contains(e, "does not match any session") {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// lastLines returns the last n lines of s joined by " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
