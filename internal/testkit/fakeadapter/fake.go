// Package fakeadapter is an in-process agent platform for tests of the
// bridge core: it implements bridge.Adapter with every behaviour scripted
// (text, failures, permission asks, slugs and titles, session and model
// listings, per-model failures, delays) and records everything the core
// asked of it. Its platform sessions outlive a Bridge, so a test can stop a
// bridge and start another on the same fake platform, as a restart would.
package fakeadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// Step scripts one turn. The zero Step answers with the text "done".
type Step struct {
	// Text is the last assistant message's text; "" with Empty false means
	// "done: <mail id>".
	Text  string
	Empty bool // answer with no text at all
	// MessageID is the platform message id (relay_key); "" makes one up
	// from the session and a counter.
	MessageID string
	// Slug and Title name the platform session (C-11) from this turn on.
	Slug, Title string
	// ModelFailures fails attempts whose model label (bridge.ModelLabel)
	// is a key, with the value as the platform's reason, through
	// OnVerdict (D-3.1).
	ModelFailures map[string]string
	// FailAfterStart makes the turn end Failed with this reason after a nil
	// verdict (the model ran, then the platform reported an error).
	FailAfterStart string
	// FailSilently ends the turn Failed with this reason without any
	// verdict (a platform whose only failure signal is the turn end).
	FailSilently string
	// RunErr makes RunTurn return this error (the turn could not run).
	RunErr error
	// Asks are permission questions raised before answering, in order; the
	// answers are recorded in the Turn.
	Asks []bridge.PermissionAsk
	// Hold blocks the turn (after the verdict) until the channel is closed
	// or the turn's context ends (then the turn ends as stopped).
	Hold <-chan struct{}
	// NoVerdict suppresses OnVerdict (the D-3.4 timeout case).
	NoVerdict bool
	// Do runs inside the turn after the asks, e.g. to send a mail as the
	// model would with send_mail. Its error fails the turn.
	Do func(ctx context.Context, req bridge.TurnRequest) error
}

// Turn records one RunTurn call.
type Turn struct {
	Req               bridge.TurnRequest
	Model             string // bridge.ModelLabel(Req.Model)
	PlatformSessionID string // the session the turn ran in
	NewSession        bool
	Answers           []bridge.PermissionAnswer
	Result            bridge.TurnResult
	Err               error
	Stopped           bool // the context ended the turn
	Done              bool
}

// Session is one fake platform session.
type Session struct {
	ID       string
	Cwd      string
	Slug     string
	Title    string
	Name     string   // set by RenameSession
	Prompts  []string // every prompt delivered, in order
	Updated  time.Time
	Parent   string // subagent parent (S-2)
	Subagent bool
}

// Fake is the fake platform. Set the exported fields before the bridge
// starts; use the methods afterwards (they lock).
type Fake struct {
	// PlatformName is Name(); default "fake".
	PlatformName string
	// Caps is Capabilities(); New sets every capability.
	Caps bridge.Capabilities
	// Script chooses each turn's Step; nil answers every turn with the zero
	// Step.
	Script func(req bridge.TurnRequest) Step
	// Models is ListModels' answer; ModelsErr fails it instead.
	Models    []client.Model
	ModelsErr error
	// SessionsErr fails ListSessions.
	SessionsErr error
	// RenameErr fails RenameSession.
	RenameErr error
	// StartErr fails Start.
	StartErr error

	mu       sync.Mutex
	cond     *sync.Cond
	env      bridge.Env
	started  int
	closed   int
	sessions map[string]*Session
	order    []string
	turns    []*Turn
	renames  [][2]string
	seq      int
	now      func() time.Time
}

// New returns a fake platform with every capability (C-1..C-14).
func New() *Fake {
	f := &Fake{
		PlatformName: "fake",
		Caps: bridge.Capabilities{
			InjectTurn: true, CreateSessionWithCwd: true, StableSessionID: true, TurnEndSignal: true,
			ReadMessages: true, RegisterTools: true, LongRunning: true, PermissionHook: true,
			AsyncPermission: true, ListSessions: true, ModelTitle: true, ListModels: true,
			PerTurnModel: true, FileTools: true,
		},
		sessions: map[string]*Session{},
		now:      time.Now,
	}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// Name implements bridge.Adapter.
func (f *Fake) Name() string { return f.PlatformName }

// Capabilities implements bridge.Adapter.
func (f *Fake) Capabilities() bridge.Capabilities { return f.Caps }

// Start implements bridge.Adapter; it records the Env.
func (f *Fake) Start(ctx context.Context, env bridge.Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.StartErr != nil {
		return f.StartErr
	}
	f.env = env
	f.started++
	f.cond.Broadcast()
	return nil
}

// Close implements bridge.Adapter.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed++
	f.cond.Broadcast()
	return nil
}

// RunTurn implements bridge.Adapter following the Step the Script gives.
func (f *Fake) RunTurn(ctx context.Context, req bridge.TurnRequest) (bridge.TurnResult, error) {
	step := Step{}
	if f.Script != nil {
		step = f.Script(req)
	}
	t := &Turn{Req: req, Model: bridge.ModelLabel(req.Model)}
	f.mu.Lock()
	f.turns = append(f.turns, t)
	f.cond.Broadcast()
	f.mu.Unlock()
	res, err := f.run(ctx, req, step, t)
	f.mu.Lock()
	t.Result, t.Err, t.Done = res, err, true
	f.cond.Broadcast()
	f.mu.Unlock()
	return res, err
}

func (f *Fake) run(ctx context.Context, req bridge.TurnRequest, step Step, t *Turn) (bridge.TurnResult, error) {
	start := f.now()
	facts := func(stop string) bridge.RunFacts {
		return bridge.RunFacts{StartedAt: start, EndedAt: f.now(), StopReason: stop, BytesRead: int64(len(req.Prompt))}
	}
	if step.RunErr != nil {
		return bridge.TurnResult{Facts: facts("error")}, step.RunErr
	}
	f.mu.Lock()
	var s *Session
	if req.PlatformSessionID != "" {
		s = f.sessions[req.PlatformSessionID]
		if s == nil {
			f.mu.Unlock()
			return bridge.TurnResult{Facts: facts("error")}, fmt.Errorf("fake session %s: %w", req.PlatformSessionID, bridge.ErrSessionNotFound)
		}
	} else {
		f.seq++
		s = &Session{ID: fmt.Sprintf("fake_ses_%d", f.seq), Cwd: req.Cwd}
		f.sessions[s.ID] = s
		f.order = append(f.order, s.ID)
		t.NewSession = true
	}
	s.Prompts = append(s.Prompts, req.Prompt)
	s.Updated = f.now()
	if step.Slug != "" {
		s.Slug = step.Slug
	}
	if step.Title != "" {
		s.Title = step.Title
	}
	t.PlatformSessionID = s.ID
	f.seq++
	msgID := step.MessageID
	if msgID == "" {
		msgID = fmt.Sprintf("fake_msg_%d", f.seq)
	}
	f.cond.Broadcast()
	f.mu.Unlock()
	if req.OnStart != nil {
		req.OnStart(0, s.ID)
	}

	result := func() bridge.TurnResult {
		f.mu.Lock()
		defer f.mu.Unlock()
		return bridge.TurnResult{PlatformSessionID: s.ID, Slug: s.Slug, Title: s.Title, MessageID: msgID}
	}
	if reason, ok := step.ModelFailures[t.Model]; ok {
		if req.OnVerdict != nil {
			req.OnVerdict(errors.New(reason))
		}
		// The platform keeps the failed turn until the core stops it.
		<-ctx.Done()
		r := result()
		r.Failed, r.FailureReason, r.Facts = true, reason, facts("stopped")
		f.markStopped(t)
		return r, nil
	}
	if step.FailSilently != "" {
		r := result()
		r.Failed, r.FailureReason, r.Facts = true, step.FailSilently, facts("error")
		return r, nil
	}
	if !step.NoVerdict && req.OnVerdict != nil {
		req.OnVerdict(nil)
	}
	for _, ask := range step.Asks {
		if req.Permission == nil {
			break
		}
		a := req.Permission(ctx, ask)
		f.mu.Lock()
		t.Answers = append(t.Answers, a)
		f.cond.Broadcast()
		f.mu.Unlock()
	}
	if step.Do != nil {
		if err := step.Do(ctx, req); err != nil {
			r := result()
			r.Failed, r.FailureReason, r.Facts = true, err.Error(), facts("error")
			return r, nil
		}
	}
	if step.Hold != nil {
		select {
		case <-step.Hold:
		case <-ctx.Done():
		}
	}
	if ctx.Err() != nil {
		f.markStopped(t)
		r := result()
		r.Failed, r.FailureReason, r.Facts = true, "stopped", facts("stopped")
		return r, nil
	}
	r := result()
	r.Facts = facts("end_turn")
	if step.FailAfterStart != "" {
		r.Failed, r.FailureReason = true, step.FailAfterStart
		return r, nil
	}
	switch {
	case step.Empty:
	case step.Text != "":
		r.Text = step.Text
	default:
		r.Text = "done: " + req.MailID
	}
	return r, nil
}

func (f *Fake) markStopped(t *Turn) {
	f.mu.Lock()
	t.Stopped = true
	f.mu.Unlock()
}

// ListSessions implements bridge.Adapter: every non-subagent session.
func (f *Fake) ListSessions(ctx context.Context) ([]client.PlatformSession, error) {
	d, err := f.ListSessionsDetailed(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]client.PlatformSession, 0, len(d))
	for _, s := range d {
		out = append(out, s.PlatformSession)
	}
	return out, nil
}

// ListSessionsDetailed implements bridge.DetailedSessionLister, so the core
// sees subagent sessions and must drop them (S-2).
func (f *Fake) ListSessionsDetailed(ctx context.Context) ([]bridge.ListedSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.Caps.ListSessions {
		return nil, bridge.ErrUnsupported
	}
	if f.SessionsErr != nil {
		return nil, f.SessionsErr
	}
	out := make([]bridge.ListedSession, 0, len(f.order))
	for _, id := range f.order {
		s := f.sessions[id]
		up := s.Updated
		title := s.Title
		if title == "" {
			title = s.Name // a renamed session shows its new name, as pi does
		}
		out = append(out, bridge.ListedSession{
			PlatformSession: client.PlatformSession{PlatformID: s.ID, Workspace: s.Cwd, Slug: s.Slug, Title: title, UpdatedAt: &up},
			ParentID:        s.Parent, Subagent: s.Subagent,
		})
	}
	return out, nil
}

// ListModels implements bridge.Adapter.
func (f *Fake) ListModels(ctx context.Context) ([]client.Model, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.Caps.ListModels {
		return nil, bridge.ErrUnsupported
	}
	if f.ModelsErr != nil {
		return nil, f.ModelsErr
	}
	return append([]client.Model{}, f.Models...), nil
}

// RenameSession implements bridge.Adapter; an empty name is refused, as the
// contract forbids it (D-5: empty means "clear" on some platforms).
func (f *Fake) RenameSession(ctx context.Context, platformSessionID, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.RenameErr != nil {
		return f.RenameErr
	}
	if strings.TrimSpace(name) == "" {
		return errors.New("fake: RenameSession with an empty name")
	}
	s := f.sessions[platformSessionID]
	if s == nil {
		return fmt.Errorf("fake session %s: %w", platformSessionID, bridge.ErrSessionNotFound)
	}
	s.Name = name
	f.renames = append(f.renames, [2]string{platformSessionID, name})
	f.cond.Broadcast()
	return nil
}

// AddSession puts a session on the fake platform, as if a person had opened
// it in the platform's own UI (or a subagent had).
func (f *Fake) AddSession(s Session) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := s
	f.sessions[c.ID] = &c
	f.order = append(f.order, c.ID)
	f.cond.Broadcast()
}

// DeleteSession removes a platform session (the next turn bound to it gets
// ErrSessionNotFound).
func (f *Fake) DeleteSession(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sessions, id)
	for i, x := range f.order {
		if x == id {
			f.order = append(f.order[:i], f.order[i+1:]...)
			break
		}
	}
}

// Env is the Env the core passed to Start.
func (f *Fake) Env() bridge.Env {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.env
}

// Starts and Closes count Start and Close calls.
func (f *Fake) Starts() int { f.mu.Lock(); defer f.mu.Unlock(); return f.started }

// Closes counts Close calls.
func (f *Fake) Closes() int { f.mu.Lock(); defer f.mu.Unlock(); return f.closed }

// Turns returns copies of the recorded turns, in call order.
func (f *Fake) Turns() []Turn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.turnsLocked()
}

func (f *Fake) turnsLocked() []Turn {
	out := make([]Turn, len(f.turns))
	for i, t := range f.turns {
		out[i] = *t
		out[i].Answers = append([]bridge.PermissionAnswer(nil), t.Answers...)
	}
	return out
}

// Session returns a copy of a platform session.
func (f *Fake) Session(id string) (Session, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[id]
	if !ok {
		return Session{}, false
	}
	c := *s
	c.Prompts = append([]string(nil), s.Prompts...)
	return c, true
}

// SessionCount is the number of platform sessions.
func (f *Fake) SessionCount() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.sessions) }

// Renames returns every RenameSession call as (platform session, name).
func (f *Fake) Renames() [][2]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][2]string(nil), f.renames...)
}

// WaitFor blocks until cond (called on a snapshot of the turns; it must
// not call the Fake's methods) holds or the timeout passes; it reports whether cond held.
// Tests use generous timeouts: this waits on a condition, it does not sleep.
func (f *Fake) WaitFor(timeout time.Duration, cond func(turns []Turn) bool) bool {
	deadline := time.Now().Add(timeout)
	stop := time.AfterFunc(timeout, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	defer stop.Stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		if cond(f.turnsLocked()) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		f.cond.Wait()
	}
}
