package bridge

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/google/uuid"
)

// runReportTimeout bounds one PUT /runs/{id}; a final report is still sent
// after the bridge's context ended (the run's end is a fact worth keeping).
const runReportTimeout = 5 * time.Second

// interruptedError is the Error text of a run stopped because the bridge
// stopped (B-9). Catch-up delivers such a mail again after a restart.
const interruptedError = "interrupted: the bridge stopped before the turn ended"

// runReporter reports one attempt of one turn as a run (seed 004) with
// PUT /api/v1/runs/{run_id}. Every field comes from RunFacts, OnStart or
// the core's own clock; nothing is a default that only looks good. Report
// failures are logged at debug level and never stop the turn.
type runReporter struct {
	gw  Gateway
	log *slog.Logger
	now func() time.Time

	mu  sync.Mutex
	run client.Run
}

func newRun(gw Gateway, log *slog.Logger, now func() time.Time, agent, sessionID, mailID, model string, attempt int) *runReporter {
	return &runReporter{gw: gw, log: log, now: now, run: client.Run{
		RunID:     uuid.NewString(),
		SessionID: sessionID,
		MailID:    mailID,
		AgentName: agent,
		Model:     model,
		Attempt:   attempt,
	}}
}

// start reports state running.
func (r *runReporter) start(ctx context.Context) {
	r.mu.Lock()
	r.run.State = client.RunRunning
	r.run.StartedAt = r.now().UTC()
	run := r.run
	r.mu.Unlock()
	r.put(ctx, run)
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
	r.put(ctx, run)
}

// finish reports the end of the attempt: state finished, or failed with
// errText; the process facts come from the adapter's RunFacts.
func (r *runReporter) finish(ctx context.Context, facts RunFacts, failed bool, errText string) client.Run {
	r.mu.Lock()
	run := r.run
	if facts.PID != 0 {
		run.PID = facts.PID
	}
	run.ExitCode = facts.ExitCode
	if !facts.StartedAt.IsZero() {
		run.StartedAt = facts.StartedAt.UTC()
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
	run.BytesRead = facts.BytesRead
	run.UnparsedLines = facts.UnparsedLines
	run.StopReason = facts.StopReason
	run.State = client.RunFinished
	if failed {
		run.State = client.RunFailed
		run.Error = errText
	}
	r.run = run
	r.mu.Unlock()
	r.put(context.WithoutCancel(ctx), run)
	return run
}

func (r *runReporter) put(ctx context.Context, run client.Run) {
	ctx, cancel := context.WithTimeout(ctx, runReportTimeout)
	defer cancel()
	run.UpdatedAt = r.now().UTC()
	if _, err := r.gw.PutRun(ctx, run); err != nil {
		r.log.Debug("run report failed", "run_id", run.RunID, "state", run.State, "err", err)
	}
}
