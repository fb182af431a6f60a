package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentmail/agentmail/client"
)

// attemptOutcome is the result of one model attempt.
type attemptOutcome struct {
	ok          bool // the model ran (verdict, turn end or D-3.4 timeout)
	res         TurnResult
	reason      string
	couldNotRun bool // RunTurn returned an error
	sessionGone bool // ... wrapping ErrSessionNotFound
	interrupted bool // the bridge is stopping
	stopped     bool // a person stopped the run (issue 16)
	stoppedRun  client.Run
	transcript  string // the stopped run's transcript attachment id
}

// handleMail is B-3 steps 3-6 and everything after: the platform session
// (B-3.3), model fallback (D-3), the turn itself with run supervision, the
// alias ladder (D-5), the relay (B-5) or the failure report (B-6).
//
// conv is the conversation the turn continues (delegation.go): for an
// answer in a delegated session, its origin's platform session, turn token
// and bind, and a delegation relay instead of the summary.
//
// pre is the run reported as queued while the mail waited for a slot (nil
// when it got one at once): the first attempt continues it.
func (b *Bridge) handleMail(ctx context.Context, in incoming, ws WorkspaceChoice, conv conversation, pre *liveRun) {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID)
	psid := b.boundPlatformSession(ctx, conv.sessionID)
	before, _ := b.agentMailIDs(ctx, in.MailID)
	turnStart := b.now()

	order := AttemptOrder(b.modelScope(ctx), b.caps.PerTurnModel)
	if len(order) == 0 {
		log.Error("the model scope allows no model; sending a failure report")
		b.sendFailure(ctx, in, FailureReport{Stage: StageModel, NoneAllowed: true})
		return
	}
	pin := PromptInput{MailID: in.MailID, From: in.FromName, FromIsAgent: in.FromKind == "agent",
		Subject: in.Subject, ReplyAddress: in.ReplyAddress, SelfAddress: in.SelfAddress, Workspace: ws.Dir,
		Importance: in.Importance, AckRequired: in.AckRequired}
	if conv.delegated() {
		pin.DelegatedAlias, pin.DelegatedOpener = in.SessionAlias, conv.origin.CreatedBy
	}
	prompt := BuildPrompt(pin)

	// The platform and its tools get a token for this turn's session only,
	// never the agent key; it dies when the turn ends (turntoken.go).
	tok := b.turnToken(ctx, log, conv.sessionID)
	defer b.revokeTurnToken(ctx, log, tok)

	var failures []AttemptFailure
	allCouldNotRun := true
	var out attemptOutcome
	okModel := ""
	for i, model := range order {
		sid := psid
		if i > 0 {
			sid = "" // D-3.5: a fresh platform session per retry
		}
		out = b.attempt(ctx, in, conv, tok, ws.Dir, prompt, model, i+1, sid, pre)
		pre = nil
		if out.sessionGone && sid != "" && ctx.Err() == nil && !out.stopped {
			log.Warn("the bound platform session no longer exists; starting a new one", "platform_session", sid)
			out = b.attempt(ctx, in, conv, tok, ws.Dir, prompt, model, i+1, "", nil)
		}
		if out.stopped {
			// The cut turn's text is not relayed; the stop notice is the
			// mail's one summary relay, and no other model is tried.
			b.stopNotice(ctx, in, out.stoppedRun, out.transcript)
			return
		}
		if out.interrupted {
			log.Info("turn stopped: the bridge is stopping")
			return
		}
		if out.ok {
			okModel = ModelLabel(model)
			if len(failures) > 0 {
				names := make([]string, len(failures))
				for j, f := range failures {
					names[j] = f.Model
				}
				log.Info(fmt.Sprintf("%s succeeded (after %d failed: %s)", ModelLabel(model), len(failures), strings.Join(names, ", ")))
			}
			break
		}
		if !out.couldNotRun {
			allCouldNotRun = false
		}
		failures = append(failures, AttemptFailure{Model: ModelLabel(model), Reason: out.reason})
		log.Warn("model attempt failed", "model", ModelLabel(model), "attempt", i+1, "reason", out.reason)
	}
	if !out.ok {
		stage := StageModel
		if allCouldNotRun {
			stage = StageSession
		}
		log.Error("every route failed; sending a failure report", "routes", len(failures))
		b.sendFailure(ctx, in, FailureReport{Stage: stage, Attempts: failures})
		return
	}
	res := out.res
	if res.PlatformSessionID != "" {
		b.bind(ctx, conv.sessionID, res.PlatformSessionID)
	}
	if !conv.delegated() {
		b.syncAlias(ctx, in.SessionID, res, in.Subject)
	}
	if res.Failed && strings.TrimSpace(res.Text) == "" {
		failures = append(failures, AttemptFailure{Model: okModel, Reason: nonEmpty(res.FailureReason, "the platform reported the turn failed")})
		log.Error("the turn failed after the model started; sending a failure report", "reason", res.FailureReason)
		b.sendFailure(ctx, in, FailureReport{Stage: StageModel, Attempts: failures})
		return
	}
	b.noteTurnWorked() // health.go
	if conv.delegated() {
		b.relayDelegation(ctx, in, conv, res)
		return
	}
	b.relaySummary(ctx, in, res, before, turnStart)
}

// attempt runs one model attempt as one run (seed 004) and judges it on
// the platform's asynchronous verdict (D-3.1, D-3.2): a verdict error fails
// the attempt and stops its turn; a nil verdict, a successful turn end, or
// VerdictTimeout without a verdict (D-3.4) counts as success, after which
// the turn is awaited to its end. tok is the turn's token (nil when none
// could be had: the tools then have no credentials).
//
// The run can be stopped while it runs (issue 16, control.go): the turn's
// context ends with errStopRequested, the turn's processes are proven gone
// by pid, and the outcome is stopped. A platform whose process outlives the
// turn reports a run that ended well as idle (seed 004 section 1), until
// the session's next turn starts or the process exits. Every attempt writes
// its transcript and uploads it when it ends (seed 004 A5).
func (b *Bridge) attempt(ctx context.Context, in incoming, conv conversation, tok *client.TurnToken, dir, prompt string, model *client.ModelRef, n int, sid string, pre *liveRun) attemptOutcome {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID, "model", ModelLabel(model), "attempt", n)
	var run *runReporter
	l := pre
	if l != nil {
		run = l.rep
		run.setModel(ModelLabel(model))
	} else {
		run = newRun(b.gw, b.log, b.now, b.AgentName(), in.SessionID, in.MailID, ModelLabel(model), n)
		l = &liveRun{rep: run, session: conv.sessionID, dir: dir}
	}
	b.ctl.settleIdle(ctx, conv.sessionID, nil) // a new turn: the session's idle run is over

	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l.mu.Lock()
	l.cancel, l.queued, l.ticket = cancel, false, nil
	stopFirst := l.stopBy != ""
	l.mu.Unlock()
	b.ctl.add(l)
	defer b.ctl.remove(l)
	run.start(ctx)
	tr := b.openTranscript(run.id(), fmt.Sprintf("Run %s: %s, mail %s, %s", run.id(), b.AgentName(), in.MailID, nonEmpty(ModelLabel(model), "platform default model")), prompt)
	if stopFirst {
		cancel(errStopRequested) // stopped between its slot and its start
	}
	verdict := make(chan error, 1)
	var once sync.Once
	var startedMu sync.Mutex
	startedIn := ""
	req := TurnRequest{
		MailSessionID:     in.SessionID,
		MailID:            in.MailID,
		PlatformSessionID: sid,
		Cwd:               dir,
		Prompt:            prompt,
		Model:             model,
		ToolEnv: map[string]string{
			"AGENTMAIL_SESSION_ID":      in.SessionID,
			"AGENTMAIL_MAIL_ID":         in.MailID,
			"AGENTMAIL_WORKSPACE":       dir,
			"AGENTMAIL_PERMISSION_MODE": string(b.cfg.Settings.Tier),
		},
		OnVerdict: func(err error) { once.Do(func() { verdict <- err }) },
		OnStart: func(pid int, platformSessionID string) {
			startedMu.Lock()
			startedIn = platformSessionID
			startedMu.Unlock()
			l.mu.Lock()
			l.pid = pid
			l.mu.Unlock()
			run.started(ctx, pid)
		},
		OnActivity: func(a TurnActivity) {
			run.activity(a)
			tr.activity(a)
		},
	}
	if tok != nil {
		req.ToolEnv[TurnTokenEnv] = tok.Token
	}
	// bindStarted binds the platform session the turn runs in as soon as the
	// model is known to run (or the turn is interrupted), so a restart in
	// the middle of a long turn still finds the conversation (B-3.3, B-4.2).
	bindStarted := func() {
		startedMu.Lock()
		p := startedIn
		startedMu.Unlock()
		if p != "" {
			bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runReportTimeout)
			defer cancel()
			b.bind(bctx, conv.sessionID, p)
		}
	}
	if b.caps.PermissionHook {
		req.Permission = b.perms.funcFor(askScope{sessionID: in.SessionID, mailID: in.MailID, workspace: dir})
	}
	type turnDone struct {
		res TurnResult
		err error
	}
	done := make(chan turnDone, 1)
	go func() {
		r, err := b.adapter.RunTurn(actx, req)
		done <- turnDone{r, err}
	}()

	// stopped ends a run a person stopped: quiescence by pid, the final
	// report, the transcript; the platform session stays bound, so the
	// next mail continues it.
	stopped := func(d turnDone) attemptOutcome {
		by, at := l.stopRequested()
		q := b.quiesce(l)
		tr.finish("", fmt.Sprintf("*Stopped by %s. Quiescence: %s.*", by, q))
		id := b.uploadTranscript(ctx, tr, run)
		r := run.end(ctx, d.res.Facts, false, "", false, &stopFacts{by: by, at: at, quiescence: q})
		bindStarted()
		if d.res.PlatformSessionID != "" {
			bctx, bcancel := context.WithTimeout(context.WithoutCancel(ctx), runReportTimeout)
			b.bind(bctx, conv.sessionID, d.res.PlatformSessionID)
			bcancel()
		}
		log.Info("turn stopped", "run_id", r.RunID, "stopped_by", by, "quiescence", q)
		return attemptOutcome{stopped: true, stoppedRun: r, transcript: id, res: d.res}
	}
	isStopped := func() bool { by, _ := l.stopRequested(); return by != "" }
	// ended reports the run's end and its transcript.
	ended := func(d turnDone, failed bool, errText string) {
		end := "*Turn ended.*"
		if failed {
			end = "*Turn failed: " + foldSpace(errText) + "*"
		}
		tr.finish(d.res.Text, end)
		b.uploadTranscript(ctx, tr, run)
		persistent := b.caps.PersistentProcess && !failed
		r := run.end(ctx, d.res.Facts, failed, errText, persistent, nil)
		if r.State == client.RunIdle {
			b.ctl.setIdle(ctx, conv.sessionID, run, d.res.Facts.ProcessExited)
		}
	}

	judged := false
	var d turnDone
	select {
	case v := <-verdict:
		if v != nil {
			cancel(nil) // D-3.5: the failed attempt's turn is stopped
			d = <-done
			if isStopped() {
				return stopped(d)
			}
			if ctx.Err() != nil {
				ended(d, true, interruptedError)
				return attemptOutcome{interrupted: true}
			}
			ended(d, true, v.Error())
			return attemptOutcome{reason: v.Error()}
		}
		judged = true
		bindStarted()
		d = <-done
	case d = <-done:
	case <-b.after(b.cfg.VerdictTimeout):
		judged = true
		log.Info("no model verdict in time: counted as success (D-3.4)", "waited", b.cfg.VerdictTimeout)
		bindStarted()
		d = <-done
	}
	if isStopped() {
		return stopped(d)
	}
	if ctx.Err() != nil {
		bindStarted()
		ended(d, true, interruptedError)
		return attemptOutcome{interrupted: true}
	}
	if d.err != nil {
		ended(d, true, d.err.Error())
		return attemptOutcome{reason: d.err.Error(), couldNotRun: true, sessionGone: errors.Is(d.err, ErrSessionNotFound)}
	}
	if d.res.Failed && !judged {
		ended(d, true, nonEmpty(d.res.FailureReason, "the platform reported the turn failed"))
		return attemptOutcome{reason: nonEmpty(d.res.FailureReason, "the platform reported the turn failed")}
	}
	ended(d, d.res.Failed, d.res.FailureReason)
	return attemptOutcome{ok: true, res: d.res}
}

// boundPlatformSession is B-3.3's lookup: the memory map, else the
// platform session id stored on the gateway session (it survives a
// restart); "" when none.
func (b *Bridge) boundPlatformSession(ctx context.Context, sessionID string) string {
	b.mu.Lock()
	psid, ok := b.platformOf[sessionID]
	b.mu.Unlock()
	if ok {
		return psid
	}
	s, err := b.gw.GetSession(ctx, sessionID)
	if err != nil {
		b.log.Warn("reading the session's platform session failed; a new platform session will be used", "session_id", sessionID, "err", err)
		return ""
	}
	if s.AgentName != "" && !strings.EqualFold(s.AgentName, b.AgentName()) {
		// Cc'd into another agent's session: the stored platform session
		// and the alias are that agent's, not ours.
		b.mu.Lock()
		b.foreign[sessionID] = true
		b.mu.Unlock()
		return ""
	}
	if s.PlatformSessionID != "" {
		b.mu.Lock()
		b.platformOf[sessionID] = s.PlatformSessionID
		b.mailDriven[s.PlatformSessionID] = true
		b.mu.Unlock()
	}
	return s.PlatformSessionID
}

// bind stores mail session ↔ platform session in memory and on the gateway
// (B-3.3) when it changed.
func (b *Bridge) bind(ctx context.Context, sessionID, psid string) {
	b.mu.Lock()
	prev := b.platformOf[sessionID]
	b.platformOf[sessionID] = psid
	b.mailDriven[psid] = true
	foreign := b.foreign[sessionID]
	b.mu.Unlock()
	if prev == psid || foreign {
		return // a cc'd agent keeps its map in memory only: the session is another agent's
	}
	if _, err := b.gw.BindPlatformSession(ctx, sessionID, client.BindPlatformSessionRequest{PlatformSessionID: psid}); err != nil {
		b.log.Warn("storing the platform session on the gateway failed; a restart will start a new platform session",
			"session_id", sessionID, "platform_session", psid, "err", err)
		b.mu.Lock()
		if b.platformOf[sessionID] == psid {
			delete(b.platformOf, sessionID) // retry the bind after the next turn
		}
		b.mu.Unlock()
	}
}
