package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmail/agentmail/internal/bridge"
)

// keptProc is the agent process of one mail session in ProcessPerSession mode: the ACP
// session it holds, created (or loaded) once, and the file through which its AgentMail
// tool server learns each turn's token.
type keptProc struct {
	p         *agentProc
	key       string // keptKey of its mail session
	sid       string // the ACP session id
	cwd       string
	tokenFile string
	models    []modelEntry
	idle      *time.Timer // stops the process after IdleTimeout without a turn
}

// keptKey is the key of a turn's kept process: the mail session, or for a turn that
// names none (a caller outside the core) the ACP session it continues.
func keptKey(req bridge.TurnRequest) string {
	if req.MailSessionID != "" {
		return "mail:" + req.MailSessionID
	}
	return "acp:" + req.PlatformSessionID
}

// runKept runs one turn in the mail session's kept process (ProcessPerSession). The
// process is started (session/new, or session/load for a session the bridge knew before
// a restart or an idle stop) when the session has none, or when the turn wants another
// ACP session or directory than the one it holds (the core's fresh session after a
// failed attempt); otherwise the turn is one more session/prompt in it. The tool
// server's token file holds the turn's token while the turn runs and is emptied after.
// The process is kept for the next turn unless it exited, or a stopped turn's prompt
// did not end after session/cancel.
func (a *Adapter) runKept(ctx context.Context, env bridge.Env, req bridge.TurnRequest) (bridge.TurnResult, error) {
	k := a.takeKept(keptKey(req))
	if k != nil && (k.sid != req.PlatformSessionID || k.cwd != req.Cwd || k.p.hasExited()) {
		go a.dropKept(k) // its stop must not hold up this turn
		k = nil
	}
	hooks := &clientHooks{ctx: ctx, req: &req, log: env.Log}
	res := bridge.TurnResult{Facts: bridge.RunFacts{StartedAt: time.Now()}}
	token := req.ToolEnv[bridge.TurnTokenEnv]
	sctx, cancelStart := context.WithTimeout(ctx, a.opts.StartTimeout)
	defer cancelStart()
	if k == nil {
		var err error
		k, err = a.startKept(sctx, ctx, env, hooks, req, token)
		if err != nil {
			var af *authFailure
			if errors.As(err, &af) {
				res.Failed, res.FailureReason = true, af.Error()
				res.Facts.EndedAt = time.Now()
				hooks.judge(af)
				return res, nil
			}
			return res, err
		}
	} else {
		if err := writeTurnToken(k.tokenFile, token); err != nil {
			go a.dropKept(k)
			return res, err
		}
		k.p.router.set(hooks)
	}
	k.key = keptKey(bridge.TurnRequest{MailSessionID: req.MailSessionID, PlatformSessionID: k.sid})
	p := k.p
	bytesBefore, unparsedBefore := p.reader.n.Load(), p.unparsed.Load()
	res.Facts.PID = p.pid()
	res.Facts.ProcessExited = p.exited
	facts := func() {
		res.Facts.EndedAt = time.Now()
		res.Facts.BytesRead = p.reader.n.Load() - bytesBefore
		res.Facts.UnparsedLines = int(p.unparsed.Load() - unparsedBefore)
		if p.hasExited() {
			res.Facts.ExitCode = p.exitCode
		}
	}
	// after ends the turn's hold on the process: no token, no hooks; kept for the next
	// turn when usable.
	after := func(usable bool) {
		p.router.set(nil)
		_ = writeTurnToken(k.tokenFile, "")
		if usable && !p.hasExited() {
			a.keep(k)
		} else {
			go a.dropKept(k)
		}
	}
	res.PlatformSessionID = k.sid
	a.noteModels(env, k.models)
	if req.OnStart != nil {
		req.OnStart(res.Facts.PID, k.sid)
	}
	if req.Model != nil {
		if err := a.setModel(sctx, env, p, k.sid, k.models, req.Model); err != nil {
			after(true)
			facts()
			res.Failed, res.FailureReason = true, err.Error()
			hooks.judge(err)
			return res, nil
		}
	}
	cancelStart()

	// The process stays; what the agent still runs in the turn's directory is ended.
	out := a.prompt(ctx, p, hooks, k.sid, req.Prompt, func() {
		ended := bridge.EndDescendants(p.pid(), req.Cwd, time.Second)
		env.Log("the ACP agent did not end the stopped turn after session/cancel: its tool processes were ended", "session", k.sid, "pids", fmt.Sprint(ended), "waited", a.opts.CancelWait)
	})
	after(!out.interrupted || out.settled)
	facts()
	return a.result(res, hooks, k.sid, out), out.ctxErr
}

// startKept starts the process of a mail session: a token file holding the turn's
// token, the agent, and the session created or loaded in the turn's directory with the
// tool server reading that file (the environment of the tool server is fixed here).
func (a *Adapter) startKept(ctx, turnCtx context.Context, env bridge.Env, hooks *clientHooks, req bridge.TurnRequest, token string) (*keptProc, error) {
	if err := a.checkLoadable(req); err != nil {
		return nil, err
	}
	file, err := a.newTokenFile()
	if err != nil {
		return nil, err
	}
	if err := writeTurnToken(file, token); err != nil {
		return nil, err
	}
	// The process works in the adapter's own folder, not in the mail's directory (which
	// session/new names): stopping a turn ends the processes working in the turn's
	// directory (issue 16), and the agent and its tool server outlive the turn.
	p, err := a.startProc(ctx, filepath.Dir(file), hooks)
	if err != nil {
		os.Remove(file)
		return nil, err
	}
	sid, models, err := a.openSession(ctx, turnCtx, p, hooks, req, mcpServers(env, keptToolEnv(req.ToolEnv, file)))
	if err != nil {
		p.stop(a.opts.KillGrace)
		os.Remove(file)
		return nil, err
	}
	return &keptProc{p: p, sid: sid, cwd: req.Cwd, tokenFile: file, models: models}, nil
}

// keptToolEnv is the tool server's environment for a kept process: the turn's values
// that hold for the whole mail session (its id, directory and tier) and the token file
// in place of the token. The mail id is left out: it would be the first turn's.
func keptToolEnv(toolEnv map[string]string, tokenFile string) map[string]string {
	out := map[string]string{TurnTokenFileEnv: tokenFile}
	for k, v := range toolEnv {
		if k != bridge.TurnTokenEnv && k != "AGENTMAIL_MAIL_ID" {
			out[k] = v
		}
	}
	return out
}

// newTokenFile names a new turn token file in the adapter's private folder.
func (a *Adapter) newTokenFile() (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tokenDir == "" {
		return "", errors.New("acp: no folder for turn token files (process mode session needs Start)")
	}
	a.nextToken++
	return filepath.Join(a.tokenDir, fmt.Sprintf("turn-%d.token", a.nextToken)), nil
}

// writeTurnToken replaces the token file atomically (mode 0600); "" empties it.
func writeTurnToken(path, token string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(token), 0o600); err != nil {
		return fmt.Errorf("acp: writing the turn token file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("acp: writing the turn token file: %w", err)
	}
	return nil
}

// takeKept takes the idle process kept under key out of the map (nil when none).
func (a *Adapter) takeKept(key string) *keptProc {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := a.kept[key]
	if k == nil {
		return nil
	}
	delete(a.kept, key)
	k.idle.Stop()
	return k
}

// keep puts k back for its session's next turn, stopped after IdleTimeout without one.
// A process of a closing adapter is stopped instead.
func (a *Adapter) keep(k *keptProc) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		go a.dropKept(k)
		return
	}
	if old := a.kept[k.key]; old != nil && old != k {
		old.idle.Stop()
		go a.dropKept(old)
	}
	a.kept[k.key] = k
	k.idle = time.AfterFunc(a.opts.IdleTimeout, func() {
		a.mu.Lock()
		mine, env := a.kept[k.key] == k, a.env
		if mine {
			delete(a.kept, k.key)
		}
		a.mu.Unlock()
		if mine {
			env.Log("stopping the ACP agent process of an idle session", "session", k.sid, "idle", a.opts.IdleTimeout)
			a.dropKept(k)
		}
	})
	a.mu.Unlock()
}

// dropKept stops k's process and removes its token file.
func (a *Adapter) dropKept(k *keptProc) {
	k.p.stop(a.opts.KillGrace)
	os.Remove(k.tokenFile)
	os.Remove(k.tokenFile + ".tmp")
}
