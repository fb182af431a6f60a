package acp

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentmail/agentmail/internal/bridge"
)

// clientHooks is the client side of one turn (sdk.Client, reached through the process's
// router): it collects the turn's reply from session/update and answers
// session/request_permission, and holds that turn's state.
type clientHooks struct {
	// Set before the process starts; nil for a process that runs no turn.
	ctx context.Context
	req *bridge.TurnRequest
	log func(msg string, args ...any)

	mu         sync.Mutex
	sessionID  string
	collecting bool // the prompt was sent: updates belong to this turn (not a load's replay)
	text       strings.Builder
	messageID  string
	title      string
	verdict    sync.Once
	// callNames holds the names each tool call was announced with in its tool_call
	// update (Claude Agent's _meta tool name; opencode's title, the tool's name before
	// the title becomes the command); announced wakes RequestPermission waiting for one.
	callNames map[string]announcement
	announced chan struct{}
	calls     map[string]string         // tool call id → "called" | "ended" (OnActivity)
	inputs    map[string]map[string]any // tool call id → its input as the updates told it
}

// announceWait bounds how long a permission request waits for its tool call's
// announcement: requests are served concurrently with the ordered updates, so the
// tool_call update sent just before a request may still be on its way.
const announceWait = 2 * time.Second

var _ sdk.Client = (*clientHooks)(nil)

// begin marks the prompt of session sid as sent: from now on updates are the turn's.
func (h *clientHooks) begin(sid string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessionID, h.collecting = sid, true
}

// setSession names the session whose updates are expected (a load replays history first).
func (h *clientHooks) setSession(sid string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessionID = sid
}

// output reports that the model runs (D-3.1: nil verdict on its first output).
func (h *clientHooks) output() { h.judge(nil) }

func (h *clientHooks) judge(err error) {
	if h.req == nil || h.req.OnVerdict == nil {
		return
	}
	h.verdict.Do(func() { h.req.OnVerdict(err) })
}

// reply returns the text after the turn's last tool call, the message id of the agent
// when it gave one, and the session's last title.
func (h *clientHooks) reply() (text, messageID, title string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.TrimSpace(h.text.String()), h.messageID, h.title
}

// SessionUpdate collects the reply: agent_message_chunk text (C-5), cut at every
// tool_call (text before a tool call is not the last message) and at a new messageId;
// agent_thought_chunk is never collected (B-5.1, N-6). session_info_update gives the
// title (D-5 level 2).
func (h *clientHooks) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessionID != "" && string(n.SessionId) != h.sessionID {
		return nil
	}
	u := n.Update
	if u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil {
		h.title = strings.TrimSpace(*u.SessionInfoUpdate.Title)
	}
	if !h.collecting {
		return nil
	}
	switch {
	case u.AgentMessageChunk != nil:
		c := u.AgentMessageChunk
		if c.MessageId != nil && *c.MessageId != h.messageID {
			if h.messageID != "" {
				h.text.Reset()
			}
			h.messageID = *c.MessageId
		}
		if c.Content.Text != nil {
			h.text.WriteString(c.Content.Text.Text)
		}
		go h.output()
	case u.AgentThoughtChunk != nil:
		go h.output()
	case u.ToolCall != nil:
		h.announce(string(u.ToolCall.ToolCallId), announcement{meta: metaToolName(u.ToolCall.Meta), title: strings.TrimSpace(u.ToolCall.Title)})
		h.toolActivity(string(u.ToolCall.ToolCallId), u.ToolCall.RawInput, string(u.ToolCall.Status), u.ToolCall.RawOutput)
		h.text.Reset()
		h.messageID = ""
		go h.output()
	case u.ToolCallUpdate != nil:
		status := ""
		if u.ToolCallUpdate.Status != nil {
			status = string(*u.ToolCallUpdate.Status)
		}
		h.toolActivity(string(u.ToolCallUpdate.ToolCallId), u.ToolCallUpdate.RawInput, status, u.ToolCallUpdate.RawOutput)
	}
	return nil
}

// toolActivity reports a tool call to the core (TurnRequest.OnActivity) once its input
// is known (or it ended without one), and its result once it completed or failed; the
// name is the one the call was announced with (caller holds h.mu).
func (h *clientHooks) toolActivity(id string, rawInput any, status string, rawOutput any) {
	if h.req == nil || h.req.OnActivity == nil || id == "" {
		return
	}
	if h.calls == nil {
		h.calls = map[string]string{}
	}
	if h.inputs == nil {
		h.inputs = map[string]map[string]any{}
	}
	if in, ok := rawInput.(map[string]any); ok {
		merged := h.inputs[id]
		if merged == nil {
			merged = map[string]any{}
			h.inputs[id] = merged
		}
		for k, v := range in {
			merged[k] = v
		}
	}
	ended := status == string(sdk.ToolCallStatusCompleted) || status == string(sdk.ToolCallStatusFailed)
	// The input is complete once the tool runs; updates before may carry parts of it.
	if h.calls[id] == "" && (status == string(sdk.ToolCallStatusInProgress) || ended) {
		h.calls[id] = "called"
		h.req.OnActivity(bridge.TurnActivity{Kind: bridge.ActivityToolCall, Tool: h.callName(id), Input: h.inputs[id]})
	}
	if ended && h.calls[id] != "ended" {
		h.calls[id] = "ended"
		out := ""
		switch v := rawOutput.(type) {
		case string:
			out = v
		case map[string]any:
			if s, ok := v["output"].(string); ok {
				out = s
			} else {
				b, _ := json.Marshal(v)
				out = string(b)
			}
		}
		h.req.OnActivity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: h.callName(id), Text: out,
			IsError: status == string(sdk.ToolCallStatusFailed)})
	}
}

// announcement is what a tool_call update says of the call's tool.
type announcement struct{ meta, title string }

// callName is the name a tool call was announced with: the _meta tool name, else the
// title (caller holds h.mu).
func (h *clientHooks) callName(id string) string {
	a := h.callNames[id]
	if a.meta != "" {
		return a.meta
	}
	return a.title
}

// announce records a tool call's first announcement (caller holds h.mu).
func (h *clientHooks) announce(id string, a announcement) {
	if h.callNames == nil {
		h.callNames = map[string]announcement{}
	}
	if _, ok := h.callNames[id]; ok {
		return
	}
	h.callNames[id] = a
	if h.announced != nil {
		close(h.announced)
		h.announced = nil
	}
}

// announcedName waits up to announceWait for tool call id's announcement and returns
// what it said (nothing when none came).
func (h *clientHooks) announcedName(ctx context.Context, id string) announcement {
	deadline := time.NewTimer(announceWait)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		name, ok := h.callNames[id]
		if ok {
			h.mu.Unlock()
			return name
		}
		if h.announced == nil {
			h.announced = make(chan struct{})
		}
		ch := h.announced
		h.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return announcement{}
		case <-ctx.Done():
			return announcement{}
		}
	}
}

// RequestPermission answers the agent's permission question. AgentMail's own tools are
// allowed at once (the tool server applies its own gate to run_command and write_file).
// Every other tool goes to the core (plan refuses, full allows, workspace asks a person
// by mail and waits, C-9); the answer is allow_once or reject_once, never allow_always
// (a person's "always" is a gateway grant). No forwarding, a refusal, shutdown, the
// turn's end or an answer that maps to no offered option is reject_once (fail closed,
// B-9.2).
func (h *clientHooks) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	tc := p.ToolCall
	// The agent waits for the answer, so text it sent before the request may still be on
	// its way through the ordered updates when the request arrives: cut at both ends.
	h.toolCallSeen()
	defer h.toolCallSeen()
	if ownTool(tc) {
		if id, ok := optionOf(p.Options, sdk.PermissionOptionKindAllowOnce); ok {
			h.logf("AgentMail tool allowed without asking", "tool", toolName(tc, announcement{}), "tool_call", string(tc.ToolCallId))
			h.announceFromRequest(tc)
			h.allowed(tc)
			return selected(id), nil
		}
	}
	allow := false
	if h.req != nil && h.req.Permission != nil && h.ctx != nil {
		pctx, cancel := context.WithCancel(h.ctx)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		announced := h.announcedName(pctx, string(tc.ToolCallId))
		if announced == (announcement{}) {
			// No tool_call update came (Gemini CLI announces a call that needs a
			// confirmation only by this request): the request names the call.
			h.announceFromRequest(tc)
		}
		ask := permissionAsk(string(p.SessionId), tc, announced)
		ans := h.req.Permission(pctx, ask)
		allow = ans.Allow
	} else {
		h.logf("permission request refused: no permission forwarding for this process", "tool_call", string(tc.ToolCallId))
	}
	if allow {
		if id, ok := optionOf(p.Options, sdk.PermissionOptionKindAllowOnce); ok {
			h.allowed(tc)
			return selected(id), nil
		}
		h.logf("the agent offers no allow_once option; refused (allow_always is never chosen: a person's always is a gateway grant)", "tool_call", string(tc.ToolCallId))
	}
	for _, k := range []sdk.PermissionOptionKind{sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways} {
		if id, ok := optionOf(p.Options, k); ok {
			return selected(id), nil
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
}

// toolCallSeen cuts the reply at a tool call the agent announced by a permission request
// rather than a tool_call update (Gemini CLI): text before it is not the last message.
// Requests are served concurrently with the ordered updates; no new text comes while the
// agent waits for the answer.
func (h *clientHooks) toolCallSeen() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.collecting {
		h.text.Reset()
		h.messageID = ""
	}
}

// announceFromRequest records a permission request's tool call as its announcement when
// no tool_call update announced it: the tool's name as toolName reads it, and for a
// command without rawInput (Gemini CLI, whose title is the command) the title as the
// input's command, so that the run card shows what runs.
func (h *clientHooks) announceFromRequest(tc sdk.ToolCallUpdate) {
	id := string(tc.ToolCallId)
	if id == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.callNames[id]; ok {
		return
	}
	if h.inputs == nil {
		h.inputs = map[string]map[string]any{}
	}
	title := strings.TrimSpace(deref(tc.Title))
	if in, _ := tc.RawInput.(map[string]any); len(in) == 0 && title != "" && h.inputs[id] == nil && tc.Kind != nil && *tc.Kind == sdk.ToolKindExecute {
		h.inputs[id] = map[string]any{"command": title}
	}
	h.announce(id, announcement{meta: toolName(tc, announcement{}), title: title})
}

// allowed reports an allowed tool call to the core with the input its permission request
// carries: it runs now (once its tool_call update announced it; caller does not hold h.mu). Some agents send the input only there (Qwen Code's tool_call
// update has an empty rawInput, and no in_progress update follows).
func (h *clientHooks) allowed(tc sdk.ToolCallUpdate) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.collecting || tc.ToolCallId == "" {
		return
	}
	status := string(sdk.ToolCallStatusInProgress)
	if _, announced := h.callNames[string(tc.ToolCallId)]; !announced {
		status = "" // keep the input; the call is reported once its announcement names it
	}
	h.toolActivity(string(tc.ToolCallId), tc.RawInput, status, nil)
}

func (h *clientHooks) logf(msg string, args ...any) {
	if h.log != nil {
		h.log(msg, args...)
	}
}

func selected(id sdk.PermissionOptionId) sdk.RequestPermissionResponse {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: id, Outcome: "selected"}}}
}

func optionOf(opts []sdk.PermissionOption, kind sdk.PermissionOptionKind) (sdk.PermissionOptionId, bool) {
	for _, o := range opts {
		if o.Kind == kind {
			return o.OptionId, true
		}
	}
	return "", false
}

// agentMailTool matches the names under which agents expose AgentMail's tools:
// mcp__agentmail__read_inbox (Claude, Qwen), agentmail_read_inbox (opencode),
// mcp_agentmail_read_inbox (Gemini).
var agentMailTool = regexp.MustCompile(`^(mcp__` + MCPServerName + `__|mcp_` + MCPServerName + `_|` + MCPServerName + `_)[a-z][a-z0-9_]*$`)

// geminiMCPTitle is Gemini CLI's title of an MCP tool call: "<tool> (agentmail MCP Server)".
var geminiMCPTitle = regexp.MustCompile(`^[a-z][a-z0-9_]* \(` + MCPServerName + ` MCP Server\)$`)

// ownTool reports whether a permission request is for one of AgentMail's own MCP tools.
// Names the agent sets itself (_meta tool names, Codex's server_name) are trusted; a
// title, which for a shell call is the command, counts only as an exact tool name and
// only when the call is not of a kind that runs or changes something.
func ownTool(tc sdk.ToolCallUpdate) bool {
	if agentMailTool.MatchString(metaToolName(tc.Meta)) {
		return true
	}
	if in, ok := tc.RawInput.(map[string]any); ok {
		if s, _ := in["server_name"].(string); s == MCPServerName && deref(tc.Title) == "Approve MCP tool call" {
			return true
		}
	}
	if tc.Kind != nil {
		switch *tc.Kind {
		case sdk.ToolKindExecute, sdk.ToolKindEdit, sdk.ToolKindDelete, sdk.ToolKindMove:
			return false
		}
	}
	title := strings.TrimSpace(deref(tc.Title))
	return agentMailTool.MatchString(title) || geminiMCPTitle.MatchString(title)
}

// metaToolName is the tool name an agent puts into _meta: Qwen's toolName, Claude
// Agent's claudeCode.toolName.
func metaToolName(meta map[string]any) string {
	if s, ok := meta["toolName"].(string); ok && s != "" {
		return s
	}
	if cc, ok := meta["claudeCode"].(map[string]any); ok {
		if s, ok := cc["toolName"].(string); ok {
			return s
		}
	}
	return ""
}

// plainName is a title that is a tool's name rather than a description or a command.
var plainName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// callIDTool is a toolCallId that starts with its tool's name (Gemini CLI:
// run_shell_command-1700000000, run_shell_command__run_shell_command_1796192059903_0).
var callIDTool = regexp.MustCompile(`^([a-z][a-z0-9]*_[a-z0-9_]*?)(?:__|-)[A-Za-z0-9_]*[0-9]`)

// toolName is the tool a permission request is about, as the model calls it where the
// agent says so: the _meta tool name (the request's, else the announcement's), else a
// title that is a plain name (the request's, else the announcement's), else the part
// of the toolCallId before its counter (callIDTool), else the
// ACP kind.
func toolName(tc sdk.ToolCallUpdate, announced announcement) string {
	if s := metaToolName(tc.Meta); s != "" {
		return s
	}
	if announced.meta != "" {
		return announced.meta
	}
	if t := strings.TrimSpace(deref(tc.Title)); plainName.MatchString(t) {
		return t
	}
	if plainName.MatchString(announced.title) {
		return announced.title
	}
	if m := callIDTool.FindStringSubmatch(string(tc.ToolCallId)); m != nil {
		return m[1]
	}
	if tc.Kind != nil && *tc.Kind != "" {
		return string(*tc.Kind)
	}
	return "tool"
}

// permissionAsk is the core's view of one permission request: relay key
// "<ACP session id>:<toolCallId>" (B-8.1; call ids repeat across sessions), the tool,
// its raw input, and a one-line context with the title and the locations (B-8.4).
func permissionAsk(sessionID string, tc sdk.ToolCallUpdate, announced announcement) bridge.PermissionAsk {
	input, _ := tc.RawInput.(map[string]any)
	tool := toolName(tc, announced)
	ask := bridge.PermissionAsk{PlatformID: sessionID + ":" + string(tc.ToolCallId), ToolName: tool, Input: input, ToolUseID: string(tc.ToolCallId)}
	parts := []string{bridge.AskSummary(bridge.PermissionAsk{ToolName: tool, Input: input})}
	if t := strings.TrimSpace(deref(tc.Title)); t != "" && t != tool {
		parts = append(parts, "("+oneLine(t, 300)+")")
	}
	var paths []string
	for _, l := range tc.Locations {
		paths = append(paths, l.Path)
	}
	if len(paths) > 0 {
		sort.Strings(paths)
		parts = append(parts, "in "+strings.Join(paths, ", "))
	}
	ask.Summary = strings.Join(parts, " ")
	return ask
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// ReadTextFile is not offered (no fs capability).
func (h *clientHooks) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsReadTextFile)
}

// WriteTextFile is not offered (no fs capability).
func (h *clientHooks) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsWriteTextFile)
}

// CreateTerminal is not offered (no terminal capability).
func (h *clientHooks) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalCreate)
}

// KillTerminal is not offered.
func (h *clientHooks) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalKill)
}

// TerminalOutput is not offered.
func (h *clientHooks) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalOutput)
}

// ReleaseTerminal is not offered.
func (h *clientHooks) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalRelease)
}

// WaitForTerminalExit is not offered.
func (h *clientHooks) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalWaitForExit)
}
