package bridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/google/uuid"
)

// runReportTimeout bounds one PUT /runs/{id}; a final report is still sent
// after the bridge's context ended (the run's end is a fact worth keeping).
const runReportTimeout = 5 * time.Second

// progressInterval is the least time between two progress reports of a
// running run (issue 16: at most once a second).
const progressInterval = time.Second

// interruptedError is the Error text of a run stopped because the bridge
// stopped (B-9). Catch-up delivers such a mail again after a restart.
const interruptedError = "interrupted: the bridge stopped before the turn ended"

// runReporter reports one attempt of one turn as a run (seed 004) with
// PUT /api/v1/runs/{run_id}. Every field comes from RunFacts, OnStart,
// OnActivity or the core's own clock; nothing is a default that only looks
// good. Report failures are logged at debug level and never stop the turn.
// Reports of one run are sent one at a time, in order; after the final one
// no progress report follows.
type runReporter struct {
	gw  Gateway
	log *slog.Logger
	now func() time.Time

	putMu sync.Mutex // held for a whole PUT: reports never overtake each other
	final bool       // the final report was sent (putMu)

	mu        sync.Mutex
	run       client.Run
	dirty     bool // progress not reported yet
	lastPut   time.Time
	stopTick  chan struct{}
	tickState sync.Once
}

func newRun(gw Gateway, log *slog.Logger, now func() time.Time, agent, sessionID, mailID, model string, attempt int) *runReporter {
	return &runReporter{gw: gw, log: log, now: now, stopTick: make(chan struct{}), run: client.Run{
		RunID:     uuid.NewString(),
		SessionID: sessionID,
		MailID:    mailID,
		AgentName: agent,
		Model:     model,
		Attempt:   attempt,
	}}
}

// id is the run's id.
func (r *runReporter) id() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run.RunID
}

// setModel names the attempt's model (a queued run learns it when it
// starts).
func (r *runReporter) setModel(model string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.run.Model = model
}

// view is the run as last set.
func (r *runReporter) view() client.Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run
}

// queue reports state queued: ahead turns wait before it, the bridge runs
// at most max at once (seed 004 A6).
func (r *runReporter) queue(ctx context.Context, ahead, max int) {
	r.mu.Lock()
	if r.run.State == client.RunQueued && r.run.QueuePosition == ahead && r.run.MaxTurns == max {
		r.mu.Unlock()
		return
	}
	r.run.State = client.RunQueued
	if r.run.StartedAt.IsZero() {
		r.run.StartedAt = r.now().UTC()
	}
	r.run.QueuePosition, r.run.MaxTurns = ahead, max
	run := r.run
	r.mu.Unlock()
	r.put(ctx, run, false)
}

// start reports state running and starts the progress reports.
func (r *runReporter) start(ctx context.Context) {
	r.mu.Lock()
	r.run.State = client.RunRunning
	r.run.StartedAt = r.now().UTC()
	r.run.QueuePosition, r.run.MaxTurns = 0, 0
	run := r.run
	r.mu.Unlock()
	r.put(ctx, run, false)
	go r.tick(context.WithoutCancel(ctx))
}

// tick sends the progress collected since the last report, until the
// final report; two reports of the run are never less than
// progressInterval apart (issue 16: at most once a second).
func (r *runReporter) tick(ctx context.Context) {
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stopTick:
			return
		case <-t.C:
		}
		r.mu.Lock()
		if !r.dirty || r.now().Sub(r.lastPut) < progressInterval {
			// Nothing new, or a report went out less than progressInterval
			// ago (a late tick, or another report): the next tick sends it.
			r.mu.Unlock()
			continue
		}
		r.dirty = false
		run := r.run
		r.mu.Unlock()
		r.put(ctx, run, false)
	}
}

// started records the platform's pid (OnStart) and reports it.
func (r *runReporter) started(ctx context.Context, pid int) {
	r.mu.Lock()
	if pid == r.run.PID {
		r.mu.Unlock()
		return
	}
	r.run.PID = pid
	run := r.run
	r.mu.Unlock()
	r.put(ctx, run, false)
}

// activity records one activity of the turn as progress: tool calls, the
// last tool and its input, bytes read, the last activity time. The report
// follows within progressInterval.
func (r *runReporter) activity(a TurnActivity) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now().UTC()
	r.run.LastActivityAt = &now
	if a.BytesRead > r.run.BytesRead {
		r.run.BytesRead = a.BytesRead
	}
	if a.Kind == ActivityToolCall {
		r.run.ToolCalls++
		r.run.LastTool = cutRunes(foldSpace(a.Tool), client.MaxRunToolNameRunes)
		r.run.LastToolInput = cutRunes(InputSummary(a.Input), client.MaxRunToolInputRunes)
	}
	r.dirty = true
}

// toolCalls is the number of tool calls so far.
func (r *runReporter) toolCalls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run.ToolCalls
}

// stopFacts are what the final report of a stopped run adds.
type stopFacts struct {
	by         string
	at         time.Time
	quiescence string
}

// finish reports the end of the attempt: state finished (idle when the
// platform process stays: persistent), or failed with errText; the process
// facts come from the adapter's RunFacts. stop, when not nil, makes it a
// stopped run (finished, stop_reason "stopped").
func (r *runReporter) finish(ctx context.Context, facts RunFacts, failed bool, errText string) client.Run {
	return r.end(ctx, facts, failed, errText, false, nil)
}

func (r *runReporter) end(ctx context.Context, facts RunFacts, failed bool, errText string, persistent bool, stop *stopFacts) client.Run {
	r.mu.Lock()
	run := r.run
	if facts.PID != 0 {
		run.PID = facts.PID
	}
	run.ExitCode = facts.ExitCode
	if !facts.StartedAt.IsZero() {
		run.StartedAt = facts.StartedAt.UTC()
	}
	if run.StartedAt.IsZero() {
		run.StartedAt = r.now().UTC()
	}
	end := facts.EndedAt
	if end.IsZero() {
		end = r.now()
	}
	end = end.UTC()
	run.EndedAt = &end
	if d := end.Sub(run.StartedAt); d > 0 {
		run.DurationMS = d.Milliseconds()
	}
	if facts.BytesRead > run.BytesRead {
		run.BytesRead = facts.BytesRead
	}
	run.UnparsedLines = facts.UnparsedLines
	run.StopReason = facts.StopReason
	run.QueuePosition, run.MaxTurns = 0, 0
	run.State = client.RunFinished
	if persistent && !failed && stop == nil {
		run.State = client.RunIdle
	}
	switch {
	case stop != nil:
		run.StopReason = client.StopReasonStopped
		run.StoppedBy = stop.by
		run.Quiescence = stop.quiescence
		if !stop.at.IsZero() {
			at := stop.at.UTC()
			run.StopRequestedAt = &at
		}
	case failed:
		run.State = client.RunFailed
		run.Error = cutRunes(errText, client.MaxRunErrorRunes) // snapshot.go; the gateway refuses a longer one
	}
	r.run = run
	r.dirty = false
	r.mu.Unlock()
	r.tickState.Do(func() { close(r.stopTick) })
	r.put(context.WithoutCancel(ctx), run, run.State != client.RunIdle)
	return run
}

// settle reports an idle run finished: the platform process it ran in
// exited, or the session's next turn started.
func (r *runReporter) settle(ctx context.Context) {
	r.mu.Lock()
	if r.run.State != client.RunIdle {
		r.mu.Unlock()
		return
	}
	r.run.State = client.RunFinished
	run := r.run
	r.mu.Unlock()
	r.put(context.WithoutCancel(ctx), run, true)
}

// resend sends the run as last set once more, final or not: the gateway
// lists it in another state because a report did not reach it (the
// gateway was down, reconcile.go).
func (r *runReporter) resend(ctx context.Context) {
	r.putMu.Lock()
	defer r.putMu.Unlock()
	r.send(ctx, r.view())
}

func (r *runReporter) put(ctx context.Context, run client.Run, final bool) {
	r.putMu.Lock()
	defer r.putMu.Unlock()
	if r.final {
		return
	}
	r.final = final
	r.send(ctx, run)
}

func (r *runReporter) send(ctx context.Context, run client.Run) {
	ctx, cancel := context.WithTimeout(ctx, runReportTimeout)
	defer cancel()
	run.UpdatedAt = r.now().UTC()
	if _, err := r.gw.PutRun(ctx, run); err != nil {
		r.log.Debug("run report failed", "run_id", run.RunID, "state", run.State, "err", err)
	}
	r.mu.Lock()
	r.lastPut = r.now()
	r.mu.Unlock()
}

// InputSummary is a one-line summary of a tool's input for a run card: the
// main argument (command, file path, URL, ...) when there is one, else the
// arguments as key=value, keys sorted.
func InputSummary(input map[string]any) string {
	for _, k := range []string{"command", "cmd", "file_path", "filePath", "path", "url", "pattern", "query"} {
		if v, ok := input[k].(string); ok && strings.TrimSpace(v) != "" {
			return foldSpace(v)
		}
	}
	keys := make([]string, 0, len(input))
	for k := range input {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		v, ok := input[k].(string)
		if !ok {
			b, _ := json.Marshal(input[k])
			v = string(b)
		}
		parts = append(parts, k+"="+v)
	}
	return foldSpace(strings.Join(parts, ", "))
}

// foldSpace folds whitespace runs (newlines included) into single spaces.
func foldSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes cuts s to at most n characters, the last one "…" when cut.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
