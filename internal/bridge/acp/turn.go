package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// authRequiredCode is ACP's JSON-RPC error code for "authentication required".
const authRequiredCode = -32000

// resourceNotFoundCode is ACP's JSON-RPC error code for an unknown resource (a session
// that session/load does not know).
const resourceNotFoundCode = -32002

// RunTurn runs one turn in a new agent process (see the package comment). Errors:
// RunTurn before Start, a Cwd that is not an existing absolute directory, an agent that
// does not start or answer initialize, session/new or session/load, and
// bridge.ErrSessionNotFound (wrapped) when the agent does not know PlatformSessionID or
// cannot load sessions at all; ctx's error when ctx ended the turn (session/cancel, then
// the process is stopped; the result still carries the process facts). A model failure
// (a JSON-RPC error on session/prompt), a missing login and a model the agent refuses
// are TurnResult.Failed with the agent's own words.
func (a *Adapter) RunTurn(ctx context.Context, req bridge.TurnRequest) (bridge.TurnResult, error) {
	env, err := a.ready()
	if err != nil {
		return bridge.TurnResult{}, err
	}
	if !filepath.IsAbs(req.Cwd) {
		return bridge.TurnResult{}, fmt.Errorf("acp: TurnRequest.Cwd %q is not an absolute path", req.Cwd)
	}
	if st, err := os.Stat(req.Cwd); err != nil || !st.IsDir() {
		return bridge.TurnResult{}, fmt.Errorf("acp: TurnRequest.Cwd %q is not an existing directory", req.Cwd)
	}
	a.mu.Lock()
	canLoad := a.info.LoadSession
	a.mu.Unlock()
	if req.PlatformSessionID != "" && !canLoad {
		return bridge.TurnResult{}, fmt.Errorf("%w: the ACP agent cannot load session %s (no loadSession)", bridge.ErrSessionNotFound, req.PlatformSessionID)
	}

	hooks := &clientHooks{ctx: ctx, req: &req, log: env.Log}
	res := bridge.TurnResult{Facts: bridge.RunFacts{StartedAt: time.Now()}}
	sctx, cancelStart := context.WithTimeout(ctx, a.opts.StartTimeout)
	defer cancelStart()
	p, err := a.startProc(sctx, req.Cwd, hooks)
	if err != nil {
		return res, err
	}
	defer p.stop(a.opts.KillGrace)
	res.Facts.PID = p.pid()
	finish := func() {
		p.stop(a.opts.KillGrace)
		res.Facts.EndedAt = time.Now()
		res.Facts.ExitCode = p.exitCode
		res.Facts.BytesRead = p.reader.n.Load()
		res.Facts.UnparsedLines = int(hooks.unparsed.Load())
	}

	mcp := mcpServers(env, req.ToolEnv)
	var sid string
	var models []modelEntry
	if req.PlatformSessionID == "" {
		resp, err := a.newSession(sctx, p, req.Cwd, mcp)
		if err != nil {
			finish()
			var af *authFailure
			if errors.As(err, &af) {
				res.Failed, res.FailureReason = true, af.Error()
				hooks.judge(af)
				return res, nil
			}
			return res, err
		}
		sid = string(resp.SessionId)
		models = sessionModels(resp.Models, resp.ConfigOptions)
	} else {
		sid = req.PlatformSessionID
		hooks.setSession(sid)
		resp, err := p.conn.LoadSession(sctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(sid), Cwd: req.Cwd, McpServers: mcp})
		if err != nil {
			finish()
			if code := rpcCode(err); code == resourceNotFoundCode || strings.Contains(strings.ToLower(rpcText(err)), "not found") || a.unlisted(ctx, sid) {
				return res, fmt.Errorf("%w: ACP session %s: %s", bridge.ErrSessionNotFound, sid, rpcText(err))
			}
			return res, fmt.Errorf("acp: session/load %s: %s%s", sid, rpcText(err), p.stderrHint())
		}
		models = sessionModels(resp.Models, resp.ConfigOptions)
	}
	res.PlatformSessionID = sid
	a.noteModels(env, models)
	if req.OnStart != nil {
		req.OnStart(res.Facts.PID, sid)
	}
	if req.Model != nil {
		if err := a.setModel(sctx, env, p, sid, models, req.Model); err != nil {
			finish()
			res.Failed, res.FailureReason = true, err.Error()
			hooks.judge(err)
			return res, nil
		}
	}
	cancelStart()

	hooks.begin(sid)
	type promptDone struct {
		resp sdk.PromptResponse
		err  error
	}
	done := make(chan promptDone, 1)
	go func() {
		// The prompt is not cancelled through ctx: a turn is stopped with session/cancel,
		// and the process's end ends the call.
		r, err := p.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: sdk.SessionId(sid), Prompt: []sdk.ContentBlock{sdk.TextBlock(req.Prompt)}})
		done <- promptDone{r, err}
	}()
	var d promptDone
	select {
	case d = <-done:
	case <-ctx.Done():
		_ = p.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: sdk.SessionId(sid)})
		select {
		case <-done:
		case <-time.After(a.opts.KillGrace):
		}
		finish()
		res.Facts.StopReason = "interrupted"
		return res, ctx.Err()
	}
	text, msgID, title := hooks.reply()
	res.Title = title
	if title != "" {
		a.mu.Lock()
		a.titles[sid] = title
		a.mu.Unlock()
	} else {
		a.mu.Lock()
		res.Title = a.titles[sid]
		a.mu.Unlock()
	}
	if d.err != nil {
		finish()
		reason := rpcText(d.err)
		if rpcCode(d.err) == authRequiredCode {
			reason = a.authFailure(p.info, reason).Error()
		}
		res.Failed, res.FailureReason = true, reason
		res.Facts.StopReason = "error"
		hooks.judge(errors.New(reason))
		return res, nil
	}
	finish()
	res.Facts.StopReason = string(d.resp.StopReason)
	res.Text, res.MessageID = text, msgID
	if d.resp.StopReason == sdk.StopReasonRefusal && text == "" {
		res.Failed, res.FailureReason = true, "the agent refused to continue (stopReason refusal)"
		hooks.judge(errors.New(res.FailureReason))
		return res, nil
	}
	hooks.judge(nil)
	return res, nil
}

// unlisted reports whether the agent's session/list (in a process of its own) lacks
// session sid: some agents answer a load of an unknown session with an internal error.
// False when the agent cannot list sessions or the listing fails.
func (a *Adapter) unlisted(ctx context.Context, sid string) bool {
	a.mu.Lock()
	canList := a.info.ListSessions
	a.mu.Unlock()
	if !canList {
		return false
	}
	lctx, cancel := context.WithTimeout(ctx, a.opts.StartTimeout)
	defer cancel()
	p, err := a.startProc(lctx, os.TempDir(), nil)
	if err != nil {
		return false
	}
	defer p.stop(a.opts.KillGrace)
	list, err := p.listSessions(lctx)
	if err != nil {
		return false
	}
	for _, s := range list {
		if s.PlatformID == sid {
			return false
		}
	}
	return true
}

// newSession is session/new; an agent that asks for a login gets `authenticate` with the
// configured method once, else the answer is an *authFailure.
func (a *Adapter) newSession(ctx context.Context, p *agentProc, cwd string, mcp []sdk.McpServer) (sdk.NewSessionResponse, error) {
	req := sdk.NewSessionRequest{Cwd: cwd, McpServers: mcp}
	resp, err := p.conn.NewSession(ctx, req)
	if err == nil {
		return resp, nil
	}
	if rpcCode(err) != authRequiredCode {
		return resp, fmt.Errorf("acp: session/new: %s%s", rpcText(err), p.stderrHint())
	}
	if a.opts.AuthMethod == "" {
		return resp, a.authFailure(p.info, rpcText(err))
	}
	if _, aerr := p.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: a.opts.AuthMethod}); aerr != nil {
		return resp, a.authFailure(p.info, fmt.Sprintf("authenticate with %s: %s", a.opts.AuthMethod, rpcText(aerr)))
	}
	resp, err = p.conn.NewSession(ctx, req)
	if err != nil {
		if rpcCode(err) == authRequiredCode {
			return resp, a.authFailure(p.info, rpcText(err))
		}
		return resp, fmt.Errorf("acp: session/new: %s%s", rpcText(err), p.stderrHint())
	}
	return resp, nil
}

// authFailure is a missing or refused login (I-5): the turn fails with a report that
// names the agent's own ways to log in.
type authFailure struct{ msg string }

func (e *authFailure) Error() string { return e.msg }

func (a *Adapter) authFailure(info agentInfo, agentWords string) *authFailure {
	var b strings.Builder
	fmt.Fprintf(&b, "the ACP agent %q needs a login (%s). ", nonEmpty(info.Name, strings.Join(a.opts.Command, " ")), agentWords)
	if len(info.AuthMethods) == 0 {
		b.WriteString("Log in with the agent's own command as the user the bridge runs as, then send the mail again.")
		return &authFailure{b.String()}
	}
	b.WriteString("Log in with the agent's own command as the user the bridge runs as, or start the bridge with " + EnvAuthMethod + " set to one of its methods:")
	for _, m := range info.AuthMethods {
		fmt.Fprintf(&b, " %s (%s", m.ID, nonEmpty(m.Name, m.ID))
		if m.Description != "" {
			b.WriteString(": " + m.Description)
		}
		b.WriteString(")")
	}
	if a.opts.AuthMethod != "" {
		fmt.Fprintf(&b, "; %s=%s was tried", EnvAuthMethod, a.opts.AuthMethod)
	}
	b.WriteString(".")
	return &authFailure{b.String()}
}

// mcpServers is the AgentMail tool server for session/new and session/load: env's
// MCPCommand with the gateway, the agent name and the turn's ToolEnv (with the turn's
// token, bridge.TurnTokenEnv; never the agent key).
func mcpServers(env bridge.Env, toolEnv map[string]string) []sdk.McpServer {
	if len(env.MCPCommand) == 0 {
		return []sdk.McpServer{}
	}
	vars := map[string]string{"AGENTMAIL_GATEWAY_URL": env.GatewayURL, "AGENTMAIL_PLATFORM": Name}
	if env.AgentName != "" {
		vars["AGENTMAIL_AGENT_NAME"] = env.AgentName
	}
	for k, v := range toolEnv {
		vars[k] = v
	}
	list := make([]sdk.EnvVariable, 0, len(vars))
	for k, v := range vars {
		list = append(list, sdk.EnvVariable{Name: k, Value: v})
	}
	args := append([]string{}, env.MCPCommand[1:]...)
	return []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: MCPServerName, Command: env.MCPCommand[0], Args: args, Env: list}}}
}

// idTokens splits a model id at the separators agents use (| / : ( ) and spaces).
func idTokens(id string) map[string]bool {
	out := map[string]bool{}
	for _, t := range strings.FieldsFunc(id, func(r rune) bool { return strings.ContainsRune("|/:() $", r) }) {
		out[t] = true
	}
	return out
}

// noteModels keeps the session's model list for ListModels and logs it once (D-1).
func (a *Adapter) noteModels(env bridge.Env, models []modelEntry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(models) > 0 {
		a.models = models
	}
	if a.modelsLogged {
		return
	}
	a.modelsLogged = true
	if len(models) == 0 {
		env.Log("limited: the ACP agent reports no models: the admin's model scope cannot be applied and the agent's default runs", "rule", "C-12, C-13")
		return
	}
	ids := make([]string, 0, len(models))
	for _, m := range models {
		ids = append(ids, m.ID)
	}
	how := "session/set_model"
	if models[0].ConfigID != "" {
		how = "session/set_config_option " + models[0].ConfigID
	}
	env.Log("ACP agent models", "models", strings.Join(ids, ","), "set_with", how)
}

// setModel chooses the attempt's model (C-13, D-3): the agent's model whose id is
// "provider/model", else "model", else one ending in "/model"; an agent that lists none
// of them is asked for the model in the shape of its own ids ("provider/model" where they
// hold a provider, else "model"). An agent that reports no models runs
// its default (logged once). The agent's refusal is the attempt's failure.
func (a *Adapter) setModel(ctx context.Context, env bridge.Env, p *agentProc, sid string, models []modelEntry, m *client.ModelRef) error {
	if len(models) == 0 {
		a.mu.Lock()
		first := !a.noModelSet
		a.noModelSet = true
		a.mu.Unlock()
		if first {
			env.Log("limited: the ACP agent offers no model choice; turns run on its default model", "wanted", bridge.ModelLabel(m), "rule", "C-13")
		}
		return nil
	}
	full := m.Model
	if m.Provider != "" {
		full = m.Provider + "/" + m.Model
	}
	pick, found := modelEntry{}, false
	for _, want := range []func(string) bool{
		func(id string) bool { return id == full },
		func(id string) bool { return id == m.Model },
		func(id string) bool { return strings.HasSuffix(id, "/"+m.Model) },
		// Ids with more parts, such as Qwen's "$runtime|openai|m1(openai)".
		func(id string) bool { t := idTokens(id); return t[m.Model] && (m.Provider == "" || t[m.Provider]) },
		func(id string) bool { return idTokens(id)[m.Model] },
	} {
		for _, e := range models {
			if want(e.ID) {
				pick, found = e, true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		// An id the agent does not list: in the agent's own shape (with a provider only
		// where its ids have one; Claude Agent and Gemini accept such ids).
		id := m.Model
		for _, e := range models {
			if strings.Contains(e.ID, "/") {
				id = full
				break
			}
		}
		pick = modelEntry{ID: id, ConfigID: models[0].ConfigID}
	}
	var err error
	if pick.ConfigID != "" {
		_, err = p.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: sdk.SessionId(sid), ConfigId: sdk.SessionConfigId(pick.ConfigID), Value: sdk.SessionConfigValueId(pick.ID)}})
	} else {
		_, err = p.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: sdk.SessionId(sid), ModelId: sdk.UnstableModelId(pick.ID)})
	}
	if err != nil {
		return fmt.Errorf("the ACP agent refused model %s: %s", pick.ID, rpcText(err))
	}
	return nil
}
