package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// deniedMessage is sent with a rejection when the person gave no note: opencode stops
// the turn at once on a rejection without a message, while with one the model learns
// why and can still answer (the answer then goes back by mail).
const deniedMessage = "A person denied this action by mail."

// turn is the state of one RunTurn while its events arrive.
type turn struct {
	a       *Adapter
	api     *api
	req     bridge.TurnRequest
	dir     string
	session string

	verdictOnce sync.Once

	userMsgID   string          // our prompt's user message, found by its text part
	assistants  map[string]bool // assistant messages answering it
	outputSeen  bool
	tools       map[string]string // tool call id → "running" | "ended"
	busySeen    bool
	failed      bool
	reason      string
	retryAbort  bool
	bytes       int64
	permissions sync.WaitGroup
	askCtx      context.Context
}

func (t *turn) verdict(err error) {
	t.verdictOnce.Do(func() {
		if t.req.OnVerdict != nil {
			t.req.OnVerdict(err)
		}
	})
}

func (t *turn) fail(reason string) {
	if !t.failed {
		t.failed, t.reason = true, reason
	}
	t.verdict(errors.New(reason))
}

// RunTurn runs one turn (C-1, C-4): it creates the session for req.Cwd when
// req.PlatformSessionID is empty (no title: B-3.2) or checks the given one exists
// (bridge.ErrSessionNotFound when not), registers the AgentMail tool server for the
// directory with req.ToolEnv, sends the prompt with POST prompt_async and the attempt's
// model, and waits for the session's idle event. OnVerdict gets nil at the model's first
// output and an error at session.error or a retry status (which also aborts the session,
// so a failing model ends the attempt instead of retrying for minutes). The result is
// the last assistant message's text parts. When ctx ends the session is aborted and the
// error wraps ctx.Err().
func (a *Adapter) RunTurn(ctx context.Context, req bridge.TurnRequest) (bridge.TurnResult, error) {
	res := bridge.TurnResult{Facts: bridge.RunFacts{StartedAt: time.Now(), PID: a.serverPID()}}
	c, st, env, err := a.ready()
	if err != nil {
		return res, err
	}
	if req.Cwd == "" {
		return res, errors.New("opencode: TurnRequest.Cwd is empty: the turn needs the mail's directory")
	}
	t := &turn{a: a, api: c, req: req, dir: req.Cwd, assistants: map[string]bool{}}

	// The session: continue the given one (in its own directory) or create one.
	var s session
	if req.PlatformSessionID != "" {
		dir := req.Cwd
		if err := c.do(ctx, http.MethodGet, "/session/"+url.PathEscape(req.PlatformSessionID), dirQuery(dir), nil, &s); err != nil {
			if isNotFound(err) {
				return res, fmt.Errorf("%w: %s: %v", bridge.ErrSessionNotFound, req.PlatformSessionID, err)
			}
			return res, fmt.Errorf("opencode: reading session %s: %w", req.PlatformSessionID, err)
		}
		if s.Directory != "" && s.Directory != req.Cwd {
			env.Log("the platform session belongs to another directory; the turn runs there", "platform_session", s.ID, "session_dir", s.Directory, "mail_dir", req.Cwd)
			t.dir = s.Directory
		}
	} else {
		body := map[string]any{"permission": guardedRuleset()}
		if err := c.do(ctx, http.MethodPost, "/session", dirQuery(req.Cwd), body, &s); err != nil {
			return res, fmt.Errorf("opencode: creating a session in %s: %w", req.Cwd, err)
		}
		if s.ID == "" {
			return res, errors.New("opencode: POST /session answered without a session id")
		}
	}
	t.session = s.ID
	res.PlatformSessionID = s.ID
	res.Slug = s.Slug
	a.rememberDir(s.ID, t.dir)

	if err := a.registerTools(ctx, c, env, t.dir, req.ToolEnv); err != nil {
		env.Log("the AgentMail tools could not be registered for this directory; the turn runs without them", "dir", t.dir, "err", err)
	}

	w := newWatcher()
	if err := st.watch(s.ID, w); err != nil {
		return res, err
	}
	defer st.unwatch(s.ID, w)
	if req.OnStart != nil {
		req.OnStart(res.Facts.PID, s.ID)
	}

	askCtx, cancelAsks := context.WithCancel(ctx)
	defer cancelAsks()
	t.askCtx = askCtx

	prompt := map[string]any{
		"parts": []map[string]any{{"type": "text", "text": req.Prompt}},
		// Nobody can answer opencode's question tool in a mail-driven turn.
		"tools": map[string]bool{"question": false},
	}
	if req.Model != nil && req.Model.Model != "" {
		prompt["model"] = map[string]string{"providerID": req.Model.Provider, "modelID": req.Model.Model}
	}
	if err := c.do(ctx, http.MethodPost, "/session/"+url.PathEscape(s.ID)+"/prompt_async", dirQuery(t.dir), prompt, nil); err != nil {
		res.Facts.EndedAt = time.Now()
		if ctx.Err() != nil {
			return t.stopped(ctx, res)
		}
		return res, fmt.Errorf("opencode: sending the prompt: %w", err)
	}

	var abortedAt time.Time
	var abortTimer <-chan time.Time
	exited := a.serverExited()
	for {
		select {
		case <-exited:
			res.Facts.EndedAt = time.Now()
			res.Facts.BytesRead = t.bytes
			res.Failed = true
			res.FailureReason = "the opencode server exited during the turn"
			res.Facts.StopReason = "exited"
			t.verdict(errors.New(res.FailureReason))
			return res, nil
		case <-w.notify:
			if t.handle(w.take()) {
				return t.finish(ctx, res, w)
			}
			if t.retryAbort && abortedAt.IsZero() {
				abortedAt = time.Now()
				abortTimer = time.After(a.opts.AbortWait)
				t.abort()
			}
		case <-w.resync:
			if t.idleNow(ctx) {
				return t.finish(ctx, res, w)
			}
		case <-abortTimer:
			env.Log("no idle event after aborting the failing session; the turn ends anyway", "platform_session", s.ID)
			return t.finish(ctx, res, w)
		case <-ctx.Done():
			t.abort()
			res.Facts.EndedAt = time.Now()
			return t.stopped(ctx, res)
		}
	}
}

// stopped is the result of a turn ended by ctx.
func (t *turn) stopped(ctx context.Context, res bridge.TurnResult) (bridge.TurnResult, error) {
	res.Failed = true
	res.FailureReason = "turn stopped: " + ctx.Err().Error()
	res.Facts.StopReason = "canceled"
	res.Facts.BytesRead = t.bytes
	t.verdict(errors.New(res.FailureReason))
	return res, fmt.Errorf("opencode: turn stopped: %w", ctx.Err())
}

// abort stops the session's running work (POST /session/{id}/abort), with its own short
// deadline since the turn's context may be over.
func (t *turn) abort() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := t.api.do(ctx, http.MethodPost, "/session/"+url.PathEscape(t.session)+"/abort", dirQuery(t.dir), nil, nil); err != nil {
		t.a.env.Log("aborting the opencode session failed", "platform_session", t.session, "err", err)
	}
}

// handle processes events; it reports whether the turn is over.
func (t *turn) handle(evs []event) bool {
	done := false
	for _, ev := range evs {
		t.bytes += int64(ev.Size)
		if ev.Child {
			if ev.Type == "permission.asked" {
				t.permissionAsked(ev)
			}
			continue
		}
		switch ev.Type {
		case "message.part.updated":
			var p struct {
				Part part `json:"part"`
			}
			if json.Unmarshal(ev.Props, &p) != nil {
				continue
			}
			if t.userMsgID == "" && p.Part.Type == "text" && p.Part.Text == t.req.Prompt {
				t.userMsgID = p.Part.MessageID
				continue
			}
			if t.assistants[p.Part.MessageID] && isOutput(p.Part.Type) {
				t.output()
			}
			if t.assistants[p.Part.MessageID] && p.Part.Type == "tool" {
				t.toolActivity(p.Part)
			}
		case "message.part.delta":
			var p struct {
				MessageID string `json:"messageID"`
			}
			if json.Unmarshal(ev.Props, &p) == nil && t.assistants[p.MessageID] {
				t.output()
			}
		case "message.updated":
			var p struct {
				Info messageInfo `json:"info"`
			}
			if json.Unmarshal(ev.Props, &p) != nil || p.Info.Role != "assistant" {
				continue
			}
			if t.userMsgID != "" && p.Info.ParentID == t.userMsgID {
				t.assistants[p.Info.ID] = true
				if p.Info.Error != nil {
					t.fail(p.Info.Error.reason())
				}
			}
		case "session.status":
			var p struct {
				Status struct {
					Type    string `json:"type"`
					Attempt int    `json:"attempt"`
					Message string `json:"message"`
				} `json:"status"`
			}
			if json.Unmarshal(ev.Props, &p) != nil {
				continue
			}
			switch p.Status.Type {
			case "busy":
				t.busySeen = true
			case "retry":
				// D-3: a retry loop is a failing model; the attempt fails now.
				t.busySeen = true
				if !t.failed {
					t.fail(fmt.Sprintf("model request failed and opencode is retrying (attempt %d): %s", p.Status.Attempt, p.Status.Message))
					t.retryAbort = true
				}
			case "idle":
				if t.started() {
					done = true
				}
			}
		case "session.idle":
			if t.started() {
				done = true
			}
		case "session.error":
			var p struct {
				Error *messageError `json:"error"`
			}
			if json.Unmarshal(ev.Props, &p) == nil && t.started() {
				t.fail(p.Error.reason())
			}
		case "permission.asked":
			t.permissionAsked(ev)
		}
	}
	return done
}

// toolActivity reports a tool part's call once it runs and its result once
// it ended (TurnRequest.OnActivity).
func (t *turn) toolActivity(p part) {
	if t.req.OnActivity == nil || p.CallID == "" {
		return
	}
	if t.tools == nil {
		t.tools = map[string]string{}
	}
	seen := t.tools[p.CallID]
	switch p.State.Status {
	case "running", "completed", "error":
		if seen == "" {
			t.tools[p.CallID] = "running"
			t.req.OnActivity(bridge.TurnActivity{Kind: bridge.ActivityToolCall, Tool: p.Tool, Input: p.State.Input, BytesRead: t.bytes})
		}
	}
	switch p.State.Status {
	case "completed", "error":
		if t.tools[p.CallID] != "ended" {
			t.tools[p.CallID] = "ended"
			t.req.OnActivity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: p.Tool,
				Text: p.State.Output + p.State.Error, IsError: p.State.Status == "error", BytesRead: t.bytes})
		}
	}
}

// started reports whether events of this turn's prompt were seen, so that a late idle of
// the previous turn does not end this one.
func (t *turn) started() bool { return t.userMsgID != "" || t.busySeen }

func isOutput(partType string) bool {
	switch partType {
	case "text", "reasoning", "tool":
		return true
	}
	return false
}

// output is the model producing something: the attempt's model runs (D-3.1).
func (t *turn) output() {
	if !t.outputSeen {
		t.outputSeen = true
		t.verdict(nil)
	}
}

// idleNow asks the server whether the session still works (after a stream loss).
func (t *turn) idleNow(ctx context.Context) bool {
	var status map[string]struct {
		Type string `json:"type"`
	}
	if err := t.api.do(ctx, http.MethodGet, "/session/status", dirQuery(t.dir), nil, &status); err != nil {
		return false
	}
	st, ok := status[t.session]
	return !ok || st.Type == "idle"
}

// finish reads the session's messages and builds the result.
func (t *turn) finish(ctx context.Context, res bridge.TurnResult, w *watcher) (bridge.TurnResult, error) {
	res.Facts.BytesRead = t.bytes
	res.Facts.UnparsedLines = w.unparsedCount()
	rctx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(context.Background(), apiTimeout)
		defer cancel()
	}
	var msgs []message
	err := t.api.do(rctx, http.MethodGet, "/session/"+url.PathEscape(t.session)+"/message", dirQuery(t.dir), nil, &msgs)
	res.Facts.EndedAt = time.Now()
	if err != nil {
		res.Failed = true
		res.FailureReason = "reading the session's messages failed: " + err.Error()
		t.verdict(errors.New(res.FailureReason))
		return res, nil
	}
	last := lastAssistant(msgs, t.userMsgID)
	if last != nil {
		res.Text = textOf(last.Parts)
		res.MessageID = last.Info.ID
		res.Facts.StopReason = last.Info.Finish
		if last.Info.Error != nil && !t.failed {
			t.fail(last.Info.Error.reason())
		}
	}
	if t.failed {
		res.Failed = true
		res.FailureReason = t.reason
		res.Facts.StopReason = "error"
	} else if last == nil {
		res.Failed = true
		res.FailureReason = "the turn ended without an assistant message"
		res.Facts.StopReason = "no_message"
		t.verdict(errors.New(res.FailureReason))
	} else {
		t.verdict(nil)
	}
	var s session
	if err := t.api.do(rctx, http.MethodGet, "/session/"+url.PathEscape(t.session), dirQuery(t.dir), nil, &s); err == nil {
		res.Slug = s.Slug
		res.Title = usableTitle(s.Title)
	}
	return res, nil
}

// lastAssistant returns the last assistant message answering userMsgID (any assistant
// message when userMsgID is unknown), or nil.
func lastAssistant(msgs []message, userMsgID string) *message {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if m.Info.Role != "assistant" {
			continue
		}
		if userMsgID == "" || m.Info.ParentID == userMsgID {
			return m
		}
	}
	return nil
}

// textOf joins the text parts with blank lines; reasoning, tool and synthetic parts are
// left out (B-5.1, N-6). The text is not otherwise altered (N-10).
func textOf(parts []part) string {
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && !p.Synthetic && !p.Ignored && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// guardedRuleset is the permission ruleset of a mail-driven session: every guarded
// permission asks.
func guardedRuleset() []permissionRule {
	out := make([]permissionRule, 0, len(GuardedPermissions))
	for _, p := range GuardedPermissions {
		out = append(out, permissionRule{Permission: p, Pattern: "*", Action: "ask"})
	}
	return out
}

// registerTools registers the AgentMail tool server for dir (POST /mcp?directory=dir),
// its environment carrying the gateway and this turn's ToolEnv (with the turn's token,
// bridge.TurnTokenEnv; never the agent key). opencode runs
// one tool server per directory, and registering the same name again replaces the
// process, so each turn's values reach the tools; the core runs one turn per directory
// at a time, so they belong to this turn.
func (a *Adapter) registerTools(ctx context.Context, c *api, env bridge.Env, dir string, toolEnv map[string]string) error {
	if len(env.MCPCommand) == 0 {
		return nil
	}
	a.mu.Lock()
	hasMCP := a.hasMCP
	a.mu.Unlock()
	if !hasMCP {
		return errors.New("the server has no POST /mcp route")
	}
	vars := map[string]string{
		"AGENTMAIL_GATEWAY_URL": env.GatewayURL,
		"AGENTMAIL_PLATFORM":    Name,
	}
	if env.AgentName != "" {
		vars["AGENTMAIL_AGENT_NAME"] = env.AgentName
	}
	for k, v := range toolEnv {
		vars[k] = v
	}
	body := map[string]any{"name": MCPServerKey, "config": map[string]any{
		"type": "local", "command": env.MCPCommand, "environment": vars,
	}}
	var status map[string]struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := c.do(ctx, http.MethodPost, "/mcp", dirQuery(dir), body, &status); err != nil {
		return err
	}
	if st, ok := status[MCPServerKey]; ok && st.Status != "connected" {
		return fmt.Errorf("tool server status %q: %s", st.Status, st.Error)
	}
	return nil
}

// permissionAsked forwards one permission.asked event to the person (B-8) from its own
// goroutine (D-2.1) and replies with the decision. Without a PermissionFunc the request
// is left to opencode's own screens.
func (t *turn) permissionAsked(ev event) {
	var p struct {
		ID         string         `json:"id"`
		SessionID  string         `json:"sessionID"`
		Permission string         `json:"permission"`
		Patterns   []string       `json:"patterns"`
		Metadata   map[string]any `json:"metadata"`
		Tool       struct {
			MessageID string `json:"messageID"`
			CallID    string `json:"callID"`
		} `json:"tool"`
	}
	if json.Unmarshal(ev.Props, &p) != nil || p.ID == "" {
		return
	}
	if t.req.Permission == nil {
		t.a.env.Log("permission request left to opencode's own screens: permission forwarding is off", "permission", p.Permission, "request", p.ID)
		return
	}
	input := map[string]any{}
	for k, v := range p.Metadata {
		input[k] = v
	}
	if len(p.Patterns) > 0 {
		input["patterns"] = p.Patterns
	}
	ask := bridge.PermissionAsk{
		PlatformID: p.ID,
		ToolName:   p.Permission,
		Input:      input,
		ToolUseID:  p.Tool.CallID,
		Summary:    permissionSummary(p.Permission, p.Patterns, p.Metadata),
	}
	dir := t.dir
	if ev.Directory != "" && ev.Directory != "global" {
		dir = ev.Directory
	}
	t.permissions.Add(1)
	go func() {
		defer t.permissions.Done()
		ans := t.req.Permission(t.askCtx, ask)
		if err := t.a.replyPermission(p.SessionID, dir, p.ID, ans); err != nil {
			t.a.env.Log("answering the opencode permission request failed", "request", p.ID, "err", err)
		}
	}()
}

// replyPermission answers a permission request on the route the installed version has:
// once on allow, reject with a message on deny (never "always": grants are the
// gateway's, not the platform's).
func (a *Adapter) replyPermission(sessionID, dir, requestID string, ans bridge.PermissionAnswer) error {
	c, _, _, err := a.ready()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	reply := "once"
	msg := ""
	if !ans.Allow {
		reply = "reject"
		msg = strings.TrimSpace(ans.Message)
		if msg == "" {
			msg = deniedMessage
		}
	}
	a.mu.Lock()
	route := a.route
	a.mu.Unlock()
	if route == routeSessionPermissions {
		return c.do(ctx, http.MethodPost, "/session/"+url.PathEscape(sessionID)+"/permissions/"+url.PathEscape(requestID), dirQuery(dir), map[string]string{"response": reply}, nil)
	}
	body := map[string]string{"reply": reply}
	if msg != "" {
		body["message"] = msg
	}
	return c.do(ctx, http.MethodPost, "/permission/"+url.PathEscape(requestID)+"/reply", dirQuery(dir), body, nil)
}

// permissionSummary is the one-line summary of a request for the mail (B-8.4): the
// permission and what it is about (the command, the file, or the patterns).
func permissionSummary(permission string, patterns []string, meta map[string]any) string {
	for _, k := range []string{"command", "filepath", "filePath", "path", "url"} {
		if v, ok := meta[k].(string); ok && v != "" {
			return permission + ": " + oneLine(v)
		}
	}
	if len(patterns) > 0 {
		return permission + ": " + oneLine(strings.Join(patterns, ", "))
	}
	return permission
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

func sortModels(ms []client.Model) {
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].Provider != ms[j].Provider {
			return ms[i].Provider < ms[j].Provider
		}
		return ms[i].Model < ms[j].Model
	})
}
