package pi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/internal/bridge"
)

// piTurn is one RunTurn's prompt inside a pi process.
type piTurn struct {
	req bridge.TurnRequest
	ctx context.Context

	verdictOnce sync.Once
	doneOnce    sync.Once
	done        chan struct{}

	mu       sync.Mutex
	last     *agentMessage
	output_  bool
	bytes    int64
	unparsed int
	crash    string // the process died: why
	exitCode *int
	resend   bool // the prompt never started (9.11 recovery): send it again
}

func newTurn(ctx context.Context, req bridge.TurnRequest) *piTurn {
	return &piTurn{req: req, ctx: ctx, done: make(chan struct{})}
}

func (t *piTurn) verdict(err error) {
	t.verdictOnce.Do(func() {
		if t.req.OnVerdict != nil {
			t.req.OnVerdict(err)
		}
	})
}

func (t *piTurn) output() {
	t.mu.Lock()
	first := !t.output_
	t.output_ = true
	t.mu.Unlock()
	if first {
		t.verdict(nil) // D-3.1: the attempt's model produces output
	}
}

func (t *piTurn) setLast(m agentMessage) {
	t.mu.Lock()
	t.last = &m
	t.mu.Unlock()
	if m.StopReason == "error" {
		t.verdict(errors.New(failureReason(m)))
	}
}

func (t *piTurn) addBytes(n int) {
	t.mu.Lock()
	t.bytes += int64(n)
	t.mu.Unlock()
}

func (t *piTurn) addUnparsed() {
	t.mu.Lock()
	t.unparsed++
	t.mu.Unlock()
}

// end finishes the turn once; fn (optional) records why before done closes.
func (t *piTurn) end(fn func(*piTurn)) {
	t.doneOnce.Do(func() {
		if fn != nil {
			t.mu.Lock()
			fn(t)
			t.mu.Unlock()
		}
		close(t.done)
	})
}

func failureReason(m agentMessage) string {
	if s := strings.TrimSpace(m.Error); s != "" {
		return s
	}
	return "the model request failed (stop reason " + m.StopReason + ")"
}

// textOf joins an assistant message's text blocks with blank lines; thinking and tool
// calls are left out (B-5.1, N-6) and the text is not otherwise altered (N-10).
func textOf(content json.RawMessage) string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		var s string
		if json.Unmarshal(content, &s) == nil {
			return s
		}
		return ""
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// maxResends bounds how often one turn is sent again after its prompt never started.
const maxResends = 2

// RunTurn runs one turn in the mail session's pi process (C-1). Without
// req.PlatformSessionID a new process starts a new session in req.Cwd; with one, the
// live process of that session is used, or a new one resumes it with --session in the
// session's own directory (bridge.ErrSessionNotFound when pi has no such session). A
// different model for an idle process restarts it with --provider/--model (pi's
// set_model would change the user's default model in settings.json). The prompt goes
// with streamingBehavior "followUp": a new run on an idle session, queued after the
// running work on a busy one (9.11). OnVerdict gets nil at the first model output and an
// error when the last assistant message failed. When ctx ends the run is aborted (and a
// turn still queued stops its process) and the error wraps ctx.Err().
func (a *Adapter) RunTurn(ctx context.Context, req bridge.TurnRequest) (bridge.TurnResult, error) {
	res := bridge.TurnResult{Facts: bridge.RunFacts{StartedAt: time.Now()}}
	env, err := a.ready()
	if err != nil {
		return res, err
	}
	if req.Cwd == "" {
		return res, errors.New("pi: TurnRequest.Cwd is empty: the turn needs the mail's directory")
	}
	for attempt := 0; ; attempt++ {
		p, err := a.procForTurn(ctx, env, req)
		if err != nil {
			res.Facts.EndedAt = time.Now()
			return res, err
		}
		res.PlatformSessionID = p.sessionID
		res.Facts.PID = p.pid()
		res.Facts.ProcessExited = p.done
		t := newTurn(ctx, req)
		if err := p.prompt(ctx, t); err != nil {
			res.Facts.EndedAt = time.Now()
			if ctx.Err() != nil {
				return stopped(ctx, res, t)
			}
			return res, err
		}
		if req.OnStart != nil && attempt == 0 {
			req.OnStart(res.Facts.PID, p.sessionID)
		}
		select {
		case <-t.done:
		case <-ctx.Done():
			p.abort(t)
			res.Facts.EndedAt = time.Now()
			return stopped(ctx, res, t)
		}
		t.mu.Lock()
		resend := t.resend
		t.mu.Unlock()
		if resend && attempt < maxResends {
			continue
		}
		return t.result(res), nil
	}
}

// stopped is the result of a turn ended by ctx.
func stopped(ctx context.Context, res bridge.TurnResult, t *piTurn) (bridge.TurnResult, error) {
	res.Failed = true
	res.FailureReason = "turn stopped: " + ctx.Err().Error()
	res.Facts.StopReason = "canceled"
	t.mu.Lock()
	res.Facts.BytesRead, res.Facts.UnparsedLines = t.bytes, t.unparsed
	t.mu.Unlock()
	t.verdict(errors.New(res.FailureReason))
	return res, fmt.Errorf("pi: turn stopped: %w", ctx.Err())
}

// result builds the turn's result from its last assistant message.
func (t *piTurn) result(res bridge.TurnResult) bridge.TurnResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	res.Facts.EndedAt = time.Now()
	res.Facts.BytesRead, res.Facts.UnparsedLines, res.Facts.ExitCode = t.bytes, t.unparsed, t.exitCode
	switch {
	case t.resend:
		res.Failed = true
		res.FailureReason = "the prompt could not be started in pi after being sent again"
		res.Facts.StopReason = "not_started"
	case t.crash != "":
		res.Failed = true
		res.FailureReason = t.crash
		res.Facts.StopReason = "exited"
		if t.last != nil {
			res.Text = textOf(t.last.Content)
			res.MessageID = t.last.ResponseID
		}
	case t.last == nil:
		res.Failed = true
		res.FailureReason = "the turn ended without an assistant message"
		res.Facts.StopReason = "no_message"
	default:
		res.Text = textOf(t.last.Content)
		res.MessageID = t.last.ResponseID
		res.Facts.StopReason = t.last.StopReason
		if t.last.StopReason == "error" || t.last.StopReason == "aborted" {
			res.Failed = true
			res.FailureReason = failureReason(*t.last)
		}
	}
	if res.Failed {
		go t.verdict(errors.New(res.FailureReason))
	} else {
		go t.verdict(nil)
	}
	return res
}

// procForTurn returns the process the turn runs in, starting or restarting one as needed.
func (a *Adapter) procForTurn(ctx context.Context, env bridge.Env, req bridge.TurnRequest) (*proc, error) {
	unlock := a.lockSession(req.PlatformSessionID)
	defer unlock()
	if req.PlatformSessionID == "" {
		p, err := a.startProc(ctx, env, procSpec{cwd: req.Cwd, model: req.Model, toolEnv: req.ToolEnv})
		if err != nil {
			return nil, err
		}
		a.register(p)
		return p, nil
	}
	if p := a.liveProc(req.PlatformSessionID); p != nil {
		want := modelKey(req.Model)
		if want == "" || want == p.modelKey {
			return p, nil
		}
		if !p.idle() {
			env.Log("the session is busy: the queued turn runs with the model of the running one", "platform_session", req.PlatformSessionID, "model", p.modelKey, "wanted", want)
			return p, nil
		}
		a.forget(req.PlatformSessionID, p)
		p.stop()
	}
	sf, ok := a.findSession(req.PlatformSessionID)
	if !ok {
		return nil, fmt.Errorf("%w: pi has no session %s (no session file in %s)", bridge.ErrSessionNotFound, req.PlatformSessionID, a.agentDir())
	}
	cwd := req.Cwd
	if sf.Cwd != "" && sf.Cwd != req.Cwd {
		// pi refuses to resume a session from another directory; its own directory is the
		// one it belongs to.
		env.Log("the pi session belongs to another directory; it is resumed there", "platform_session", sf.ID, "session_dir", sf.Cwd, "mail_dir", req.Cwd)
		cwd = sf.Cwd
	}
	p, err := a.startProc(ctx, env, procSpec{cwd: cwd, session: req.PlatformSessionID, model: req.Model, toolEnv: req.ToolEnv})
	if err != nil {
		return nil, err
	}
	a.register(p)
	return p, nil
}

// register makes p the live process of its session.
func (a *Adapter) register(p *proc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if old := a.procs[p.sessionID]; old != nil && old != p {
		go old.stop()
	}
	a.procs[p.sessionID] = p
}

// lockSession serialises process selection for one session ("" needs none).
func (a *Adapter) lockSession(id string) func() {
	if id == "" {
		return func() {}
	}
	a.mu.Lock()
	if a.sessionLocks == nil {
		a.sessionLocks = map[string]*sync.Mutex{}
	}
	l := a.sessionLocks[id]
	if l == nil {
		l = &sync.Mutex{}
		a.sessionLocks[id] = l
	}
	a.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// prompt sends the turn's prompt with streamingBehavior "followUp" and waits until pi
// accepted it. The turn is queued before the command is written, so its user message
// cannot be missed.
func (p *proc) prompt(ctx context.Context, t *piTurn) error {
	p.mu.Lock()
	if p.idleTimer != nil {
		p.idleTimer.Stop()
	}
	busy := p.running || p.active != nil || len(p.sent) > 0
	p.sent = append(p.sent, t)
	if !busy {
		// pi starts an idle session's run as soon as it reads the prompt, before this
		// side has read its message_start: the turn's tool environment is written first,
		// so a tool called at once never sees the previous turn's.
		if err := p.writeToolEnv(t.req.ToolEnv); err != nil {
			p.log("the tool environment of the turn could not be written", "err", err)
		}
	}
	p.mu.Unlock()
	if busy {
		p.log("the pi session is busy: the prompt is queued after the running work (followUp)", "platform_session", p.sessionID)
	}
	ch, id, err := p.send(map[string]any{"type": "prompt", "message": t.req.Prompt, "streamingBehavior": "followUp"})
	if err == nil {
		_, err = p.await(ctx, ch, id, "prompt")
	}
	if err != nil {
		p.mu.Lock()
		for i, s := range p.sent {
			if s == t {
				p.sent = append(p.sent[:i], p.sent[i+1:]...)
				break
			}
		}
		p.mu.Unlock()
		return err
	}
	return nil
}

// abort stops the turn's work after its context ended: the run is aborted (the
// extension's pending permission question then blocks its tool); a turn that is still
// queued in pi cannot be taken out of pi's queue, so the process is stopped.
func (p *proc) abort(t *piTurn) {
	p.mu.Lock()
	queued := false
	for _, s := range p.sent {
		if s == t {
			queued = true
		}
	}
	p.mu.Unlock()
	if queued {
		p.a.forget(p.sessionID, p)
		p.stop()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.a.opts.KillGrace)
	defer cancel()
	if _, err := p.call(ctx, map[string]any{"type": "abort"}); err != nil {
		p.log("aborting the pi run failed; stopping the process", "err", err)
		p.a.forget(p.sessionID, p)
		p.stop()
		return
	}
	select {
	case <-t.done:
	case <-time.After(p.a.opts.KillGrace):
		p.a.forget(p.sessionID, p)
		p.stop()
	}
}
