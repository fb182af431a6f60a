package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// MaxRunsListed bounds a run listing.
const MaxRunsListed = 200

func runView(r store.RunRow) client.Run {
	return client.Run{RunID: r.RunID, SessionID: r.SessionID, MailID: r.MailID, AgentName: r.AgentName, State: r.State,
		Model: r.Model, Attempt: r.Attempt, PID: r.PID, ExitCode: r.ExitCode, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
		DurationMS: r.DurationMS, BytesRead: r.BytesRead, UnparsedLines: r.UnparsedLines, StopReason: r.StopReason,
		Error: r.Error, UpdatedAt: r.UpdatedAt}
}

// PutRun stores the bridge's report of a run (PUT /runs/{id}, an upsert,
// seed 004: one state vocabulary running | idle | finished | failed). The
// agent must take part in the run's session; the run's agent is always the
// key's agent. A mail_id, when given, must name a mail of that session the
// agent received (to or cc): an unknown mail, another session's, or one the
// agent only sent answers 404 mail_not_found (field mail_id), the same for
// all, so that a run card never points at a mail of another conversation.
// People of the session get a run_updated event.
func (s *Service) PutRun(ctx context.Context, p *Principal, id string, req client.Run) (*client.Run, error) {
	id = strings.TrimSpace(id)
	if id == "" || len(id) > 200 {
		return nil, Invalid("run_id", "run_id must have 1 to 200 characters", "")
	}
	if req.RunID != "" && req.RunID != id {
		return nil, Invalid("run_id", fmt.Sprintf("body run_id %q differs from the path's %q", req.RunID, id), "send the same id or leave it out")
	}
	switch req.State {
	case client.RunRunning, client.RunIdle, client.RunFinished, client.RunFailed:
	default:
		return nil, Invalid("state", fmt.Sprintf("state %q is not one of running, idle, finished, failed", req.State), "")
	}
	if req.SessionID == "" {
		return nil, Invalid("session_id", "session_id is required", "the mail session the run works for")
	}
	var out client.Run
	err := s.Write(ctx, func(tx *Tx) error {
		if _, err := sessionFor(ctx, tx.Q, req.SessionID, p.Name); err != nil {
			return err
		}
		if req.MailID != "" {
			v, err := viewMail(ctx, tx.Q, req.MailID, p.Name)
			if errors.Is(err, store.ErrNotFound) || (err == nil && (v.Role == "" || v.SessionID != req.SessionID)) {
				return &Error{Kind: KindNotFound, Code: "mail_not_found", Field: "mail_id",
					Message: "mail_id names no mail you received in this session", Suggestion: "use the mail_id of the mail the run answers"}
			}
			if err != nil {
				return err
			}
		}
		if old, err := tx.GetRun(ctx, id); err == nil && old.AgentName != p.Name {
			return NotFound("run_not_found", "no such run", "choose a new run id")
		}
		started := req.StartedAt
		if started.IsZero() {
			started = tx.Now
		}
		row := store.RunRow{RunID: id, SessionID: req.SessionID, MailID: req.MailID, AgentName: p.Name, State: req.State,
			Model: req.Model, Attempt: req.Attempt, PID: req.PID, ExitCode: req.ExitCode, StartedAt: started.UTC(),
			EndedAt: req.EndedAt, DurationMS: req.DurationMS, BytesRead: req.BytesRead, UnparsedLines: req.UnparsedLines,
			StopReason: req.StopReason, Error: req.Error, UpdatedAt: tx.Now}
		if err := tx.UpsertRun(ctx, row); err != nil {
			return err
		}
		got, err := tx.GetRun(ctx, id)
		if err != nil {
			return err
		}
		out = runView(got)
		parts, err := tx.Participants(ctx, req.SessionID)
		if err != nil {
			return err
		}
		for _, pt := range parts {
			if pt.Kind == store.KindPerson {
				if _, err := tx.Emit(ctx, pt.Name, client.EventRunUpdated, out); err != nil {
					return err
				}
			}
		}
		if req.State == client.RunFinished && req.StopReason == StopReasonStopped { // reservations.go
			_, err := s.releaseOfSessionTx(ctx, tx, p.Name, req.SessionID)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SessionRuns answers the runs of a session the principal takes part in,
// newest first.
func (s *Service) SessionRuns(ctx context.Context, p *Principal, sessionID string) (*client.RunList, error) {
	q := s.Read()
	if _, err := sessionFor(ctx, q, sessionID, p.Name); err != nil {
		return nil, err
	}
	rows, err := q.SessionRuns(ctx, sessionID, MaxRunsListed)
	if err != nil {
		return nil, err
	}
	out := &client.RunList{Runs: []client.Run{}}
	for _, r := range rows {
		out.Runs = append(out.Runs, runView(r))
	}
	return out, nil
}
