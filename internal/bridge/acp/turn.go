package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// RunTurn runs one turn: in a new agent process (ProcessPerTurn), or in the mail
// session's kept process (ProcessPerSession; see the package comment). Errors: RunTurn
// before Start, a Cwd that is not an existing absolute directory, an agent that does not
// start or answer initialize, session/new or session/load, and bridge.ErrSessionNotFound
// (wrapped) when the agent does not know PlatformSessionID or cannot load sessions at
// all; ctx's error when ctx ended the turn (session/cancel; the result still carries the
// process facts). A model failure (a JSON-RPC error on session/prompt), a missing login
// and a model the agent refuses are TurnResult.Failed with the agent's own words.
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
	if a.opts.Process == ProcessPerSession {
		return a.runKept(ctx, env, req)
	}
	if err := a.checkLoadable(req); err != nil {
		return bridge.TurnResult{}, err
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
		res.Facts.UnparsedLines = int(p.unparsed.Load())
	}
	sid, models, err := a.openSession(sctx, ctx, p, hooks, req, mcpServers(env, req.ToolEnv))
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

	// A stopped turn's process goes at once, with every process it started (its stdin is
	// not waited on; some agents take seconds to leave after it closes): once the agent
	// ended the prompt after session/cancel, or when it did not within CancelWait.
	out := a.prompt(ctx, p, hooks, sid, req.Prompt, func() {
		env.Log("the ACP agent did not end the stopped turn after session/cancel: its process is ended", "session", sid, "waited", a.opts.CancelWait)
		p.kill(time.Second)
	})
	if out.interrupted {
		p.kill(time.Second)
	}
	finish()
	return a.result(res, hooks, sid, out), out.ctxErr
}

// checkLoadable refuses a follow-up on an agent that cannot load sessions.
func (a *Adapter) checkLoadable(req bridge.TurnRequest) error {
	a.mu.Lock()
	canLoad := a.info.LoadSession
	a.mu.Unlock()
	if req.PlatformSessionID != "" && !canLoad {
		return fmt.Errorf("%w: the ACP agent cannot load session %s (no loadSession)", bridge.ErrSessionNotFound, req.PlatformSessionID)
	}
	return nil
}

// openSession creates the turn's session in p (session/new, req.PlatformSessionID "")
// or loads it (session/load, C-3) with the tool server mcp, and returns its id and the
// models it offers. Errors: *authFailure for a missing login; bridge.ErrSessionNotFound
// (wrapped) for a session the agent does not know (a -32002 error, "not found", or an
// internal error for a session its session/list lacks, checked under turnCtx).
func (a *Adapter) openSession(ctx, turnCtx context.Context, p *agentProc, hooks *clientHooks, req bridge.TurnRequest, mcp []sdk.McpServer) (string, []modelEntry, error) {
	if req.PlatformSessionID == "" {
		resp, err := a.newSession(ctx, p, req.Cwd, mcp)
		if err != nil {
			return "", nil, err
		}
		return string(resp.SessionId), sessionModels(resp.Models, resp.ConfigOptions), nil
	}
	sid := req.PlatformSessionID
	hooks.setSession(sid)
	resp, err := p.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(sid), Cwd: req.Cwd, McpServers: mcp})
	if err != nil {
		if code := rpcCode(err); code == resourceNotFoundCode || sessionUnknown.MatchString(rpcText(err)) || a.unlisted(turnCtx, sid) {
			return "", nil, fmt.Errorf("%w: ACP session %s: %s", bridge.ErrSessionNotFound, sid, rpcText(err))
		}
		return "", nil, fmt.Errorf("acp: session/load %s: %s%s", sid, rpcText(err), p.stderrHint())
	}
	return sid, sessionModels(resp.Models, resp.ConfigOptions), nil
}

// sessionUnknown is how agents word a session/load of a session they do not have:
// "not found", or Gemini CLI's "No previous sessions found for this project."
var sessionUnknown = regexp.MustCompile(`(?i)not found|no (previous )?sessions? found`)

// promptOutcome is how a session/prompt ended.
type promptOutcome struct {
	resp sdk.PromptResponse
	err  error
	// interrupted: ctx ended the turn and session/cancel was sent; settled: the agent
	// then ended the prompt within CancelWait.
	interrupted, settled bool
	ctxErr               error
}

// prompt sends the turn's prompt on session sid and waits for its end, or for ctx's:
// then session/cancel, and up to CancelWait for the agent to end the prompt. When it has
// not by then, stuck runs (it ends what the agent left running: Qwen Code's shell runs
// commands in a process group of their own, which its cancel leaves alone, and its
// prompt ends only with them), and the prompt gets CancelWait again.
func (a *Adapter) prompt(ctx context.Context, p *agentProc, hooks *clientHooks, sid, text string, stuck func()) promptOutcome {
	hooks.begin(sid)
	type promptDone struct {
		resp sdk.PromptResponse
		err  error
	}
	done := make(chan promptDone, 1)
	go func() {
		// The prompt is not cancelled through ctx: a turn is stopped with session/cancel,
		// and the process's end ends the call.
		r, err := p.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: sdk.SessionId(sid), Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		done <- promptDone{r, err}
	}()
	select {
	case d := <-done:
		return promptOutcome{resp: d.resp, err: d.err}
	case <-ctx.Done():
	}
	_ = p.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: sdk.SessionId(sid)})
	out := promptOutcome{interrupted: true, ctxErr: ctx.Err()}
	for round := 0; round < 2 && !out.settled; round++ {
		if round == 1 {
			stuck()
		}
		wait := time.NewTimer(a.opts.CancelWait)
		select {
		case <-done:
			out.settled = true
		case <-wait.C:
		case <-p.exited:
			wait.Stop()
			return out
		}
		wait.Stop()
	}
	return out
}

// result is the turn's result from the prompt's outcome: the reply after the last tool
// call and the session's title, or the failure (a JSON-RPC error on the prompt, a
// refusal without text), or the interruption.
func (a *Adapter) result(res bridge.TurnResult, hooks *clientHooks, sid string, out promptOutcome) bridge.TurnResult {
	res.PlatformSessionID = sid
	if out.interrupted {
		res.Facts.StopReason = "interrupted"
		return res
	}
	text, msgID, title := hooks.reply()
	a.mu.Lock()
	if title != "" {
		a.titles[sid] = title
	} else {
		title = a.titles[sid]
	}
	a.mu.Unlock()
	res.Title = title
	if out.err != nil {
		reason := rpcText(out.err)
		if rpcCode(out.err) == authRequiredCode {
			a.mu.Lock()
			info := a.info
			a.mu.Unlock()
			reason = a.authFailure(info, reason).Error()
		}
		res.Failed, res.FailureReason = true, reason
		res.Facts.StopReason = "error"
		hooks.judge(errors.New(reason))
		return res
	}
	res.Facts.StopReason = string(out.resp.StopReason)
	res.Text, res.MessageID = text, msgID
	if out.resp.StopReason == sdk.StopReasonRefusal && text == "" {
		res.Failed, res.FailureReason = true, "the agent refused to continue (stopReason refusal)"
		hooks.judge(errors.New(res.FailureReason))
		return res
	}
	hooks.judge(nil)
	return res
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
