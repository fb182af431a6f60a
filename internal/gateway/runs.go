package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// MaxRunsListed bounds a run listing.
const MaxRunsListed = 200

func runView(r store.RunRow) client.Run {
	return client.Run{RunID: r.RunID, SessionID: r.SessionID, MailID: r.MailID, AgentName: r.AgentName, State: r.State,
		Model: r.Model, Attempt: r.Attempt, PID: r.PID, ExitCode: r.ExitCode, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
		DurationMS: r.DurationMS, BytesRead: r.BytesRead, UnparsedLines: r.UnparsedLines, StopReason: r.StopReason,
		Error: r.Error, UpdatedAt: r.UpdatedAt, QueuePosition: r.QueuePosition, MaxTurns: r.MaxTurns, ToolCalls: r.ToolCalls,
		LastTool: r.LastTool, LastToolInput: r.LastToolInput, LastActivityAt: r.LastActivityAt,
		StopRequestedAt: r.StopRequestedAt, StoppedBy: r.StoppedBy, Quiescence: r.Quiescence,
		TranscriptAttachmentID: r.TranscriptAttachmentID}
}

// IsStopWord reports whether a mail body is a stop word (issue 16): its
// whole text, trimmed, in any case, is "stop" or "停止".
func IsStopWord(body string) bool { return client.IsStopWord(body) }

// checkRunText bounds one of a run's text fields to max characters.
func checkRunText(field, v string, max int) error {
	if !utf8.ValidString(v) {
		return Invalid(field, field+" is not valid UTF-8", "")
	}
	if n := utf8.RuneCountInString(v); n > max {
		return Invalid(field, fmt.Sprintf("%s has %d characters, at most %d", field, n, max), "shorten it")
	}
	return nil
}

// PutRun stores the bridge's report of a run (PUT /runs/{id}, an upsert,
// seed 004: one state vocabulary running | idle | finished | failed). The
// agent must take part in the run's session; the run's agent is always the
// key's agent. A mail_id, when given, must name a mail of that session the
// agent received (to or cc): an unknown mail, another session's, or one the
// agent only sent answers 404 mail_not_found (field mail_id), the same for
// all, so that a run card never points at a mail of another conversation.
// People of the session get a run_updated event.
//
// Run control (issue 16): state queued carries queue_position and
// max_turns; tool_calls, last_tool (at most 200 characters),
// last_tool_input (200) and last_activity_at are the live progress;
// stop_reason "stopped" needs stopped_by, a person taking part in the
// session who asked for the stop: when the stop came through the API, the
// one who asked, whose name stands whatever the report says; otherwise a
// person whose stop mail the agent received in the conversation after the
// run's mail (sentStopMail), else 400 stopped_by. Quiescence is "proven" or "unproven"; a
// transcript_attachment_id must name an attachment the agent uploaded
// (400 otherwise). A stopped run's reservations end with it
// (ReleaseReservationsOfRun); once a stop was asked (stopped_by known),
// every report but queued closes the run's pending permission requests
// (closeRunPermissionsTx, B-9.2).
func (s *Service) PutRun(ctx context.Context, p *Principal, id string, req client.Run) (*client.Run, error) {
	id = strings.TrimSpace(id)
	if id == "" || len(id) > 200 {
		return nil, Invalid("run_id", "run_id must have 1 to 200 characters", "")
	}
	if req.RunID != "" && req.RunID != id {
		return nil, Invalid("run_id", fmt.Sprintf("body run_id %q differs from the path's %q", req.RunID, id), "send the same id or leave it out")
	}
	switch req.State {
	case client.RunRunning, client.RunIdle, client.RunQueued, client.RunFinished, client.RunFailed:
	default:
		return nil, Invalid("state", fmt.Sprintf("state %q is not one of running, idle, queued, finished, failed", req.State), "")
	}
	if req.QueuePosition < 0 || req.MaxTurns < 0 || req.ToolCalls < 0 {
		return nil, Invalid("queue_position", "queue_position, max_turns and tool_calls are never negative", "")
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"last_tool", req.LastTool, client.MaxRunToolNameRunes}, {"last_tool_input", req.LastToolInput, client.MaxRunToolInputRunes},
		{"stopped_by", req.StoppedBy, 200}, {"transcript_attachment_id", req.TranscriptAttachmentID, 200},
		{"model", req.Model, MaxModelRunes}, {"error", req.Error, MaxRunErrorRunes}} { // textbounds.go
		if err := checkRunText(f.name, f.v, f.max); err != nil {
			return nil, err
		}
	}
	switch req.Quiescence {
	case "", client.QuiescenceProven, client.QuiescenceUnproven:
	default:
		return nil, Invalid("quiescence", fmt.Sprintf("quiescence %q is not proven or unproven", req.Quiescence), "")
	}
	if req.SessionID == "" {
		return nil, Invalid("session_id", "session_id is required", "the mail session the run works for")
	}
	var out client.Run
	err := s.writeClosing(ctx, func(tx *Tx) error {
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
		old, oldErr := tx.GetRun(ctx, id)
		if oldErr == nil && old.AgentName != p.Name {
			return NotFound("run_not_found", "no such run", "choose a new run id")
		}
		if oldErr != nil && !errors.Is(oldErr, store.ErrNotFound) {
			return oldErr
		}
		stoppedBy := req.StoppedBy
		if oldErr == nil && old.StoppedBy != "" {
			stoppedBy = old.StoppedBy // the person who asked through the API
		}
		if stoppedBy != "" && (oldErr != nil || old.StoppedBy == "") {
			ok, err := personTakesPart(ctx, tx.Q, req.SessionID, stoppedBy)
			if err != nil {
				return err
			}
			if !ok {
				return Invalid("stopped_by", "stopped_by names no person taking part in the session", "name the person who asked to stop the run")
			}
			// No stop was recorded through the API: the name must be that
			// of a person whose stop mail this agent received in the
			// conversation after the run's mail, or the agent could
			// name anyone as having stopped the run and closed its
			// permission requests (trust boundary).
			runMail := req.MailID
			if oldErr == nil && old.MailID != "" {
				runMail = old.MailID
			}
			asked, err := sentStopMail(ctx, tx.Q, p.Name, stoppedBy, req.SessionID, runMail)
			if err != nil {
				return err
			}
			if !asked {
				return Invalid("stopped_by", "stopped_by names a person who did not ask to stop this run: the gateway has no stop of theirs "+
					"(POST /api/v1/me/runs/{run_id}/stop) and no stop mail from them in this conversation since the run's mail",
					"send stopped_by only for a stop the gateway delivered (a run_stop event, or a new_mail event with stop_word)")
			}
		}
		if req.StopReason == client.StopReasonStopped && stoppedBy == "" {
			return Invalid("stopped_by", "a stopped run names who stopped it", "send stopped_by")
		}
		if req.TranscriptAttachmentID != "" {
			if err := checkAttachments(ctx, tx.Q, p.Name, []string{req.TranscriptAttachmentID}); err != nil {
				return Invalid("transcript_attachment_id", "transcript_attachment_id names no attachment you uploaded", "upload the transcript first")
			}
		}
		started := req.StartedAt
		if started.IsZero() {
			started = tx.Now
		}
		row := store.RunRow{RunID: id, SessionID: req.SessionID, MailID: req.MailID, AgentName: p.Name, State: req.State,
			Model: req.Model, Attempt: req.Attempt, PID: req.PID, ExitCode: req.ExitCode, StartedAt: started.UTC(),
			EndedAt: req.EndedAt, DurationMS: req.DurationMS, BytesRead: req.BytesRead, UnparsedLines: req.UnparsedLines,
			StopReason: req.StopReason, Error: req.Error, UpdatedAt: tx.Now, QueuePosition: req.QueuePosition,
			MaxTurns: req.MaxTurns, ToolCalls: req.ToolCalls, LastTool: req.LastTool, LastToolInput: req.LastToolInput,
			LastActivityAt: req.LastActivityAt, StoppedBy: stoppedBy, Quiescence: req.Quiescence, StopRequestedAt: req.StopRequestedAt,
			TranscriptAttachmentID: req.TranscriptAttachmentID}
		if row.State != client.RunQueued {
			row.QueuePosition, row.MaxTurns = 0, 0
		}
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
		if stoppedBy != "" && req.State != client.RunQueued {
			// The stopped turn's permission requests are closed (B-9.2).
			if _, err := s.closeRunPermissionsTx(ctx, tx, id, stoppedBy); err != nil {
				return err
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
	return runList(rows), nil
}

// sentStopMail reports whether person sent agent a stop mail (IsStopWord)
// in the session or in one delegated from it, after the mail afterMailID
// ("" for any): the recorded stop a run's report may name when no stop was
// asked through the API.
func sentStopMail(ctx context.Context, q *store.Q, agent, person, sessionID, afterMailID string) (bool, error) {
	bodies, err := q.StopMailBodies(ctx, agent, person, sessionID, afterMailID)
	if err != nil {
		return false, err
	}
	for _, b := range bodies {
		if IsStopWord(b) {
			return true, nil
		}
	}
	return false, nil
}

// AgentOpenRuns is GET /api/v1/runs (issue 16): the calling agent's own
// runs that have not ended (running, queued, idle), oldest first, at most
// MaxRunsListed. A bridge lists them when its event stream connects and
// ends the ones it does not hold (a restart or a crash left them). Only an
// agent key may ask (a turn token is refused by the route); a person gets
// 404 run_not_found, as for a run that is not theirs. instanceID is the
// calling bridge's instance ("" an older bridge): 409
// bridge_instance_conflict while another instance holds the agent's
// bridge lease (bridgelease.go), so no bridge ends a live one's runs.
func (s *Service) AgentOpenRuns(ctx context.Context, p *Principal, instanceID string) (*client.RunList, error) {
	if !p.IsAgent() || p.IsTurnToken() {
		return nil, errRunNotFound
	}
	q := s.Read()
	if err := s.checkLeaseHolder(ctx, q, p.Name, instanceID); err != nil {
		return nil, err
	}
	rows, err := q.AgentOpenRuns(ctx, p.Name, MaxRunsListed)
	if err != nil {
		return nil, err
	}
	return runList(rows), nil
}

// personTakesPart reports whether name is a person taking part in the
// session.
func personTakesPart(ctx context.Context, q *store.Q, sessionID, name string) (bool, error) {
	parts, err := q.Participants(ctx, sessionID)
	if err != nil {
		return false, err
	}
	for _, pt := range parts {
		if pt.Kind == store.KindPerson && pt.Name == name {
			return true, nil
		}
	}
	return false, nil
}

var errRunNotFound = NotFound("run_not_found", "no such run", "list the session's runs with GET /api/v1/me/sessions/{id}/runs")

// StopRun is POST /api/v1/me/runs/{run_id}/stop (issue 16, seed 004
// section 3): a person taking part in the run's session asks its agent to
// stop the run. A run in state running or queued gets the request recorded
// (stop_requested_at, stopped_by: the first asker stands), its agent a
// run_stop event (replayed with Last-Event-ID like every event), the
// session's people a run_updated event, and the agent's reservations of the
// session end (ReleaseReservationsOfRun's rule), its pending permission
// requests are closed as denied (closeRunPermissionsTx, B-9.2); the answer is the run as
// it is now (the bridge reports its end). A run that ended (idle, finished,
// failed) is 409 run_not_running; an unknown run and one of a session the
// person does not take part in are the same 404 run_not_found. Asking again
// while the stop is under way sends the event again (a bridge that missed
// it gets a second chance) and keeps the first asker.
func (s *Service) StopRun(ctx context.Context, p *Principal, runID string) (*client.RunStopResponse, error) {
	if !p.IsPerson() {
		return nil, errRunNotFound
	}
	var out client.RunStopResponse
	err := s.writeClosing(ctx, func(tx *Tx) error {
		run, err := tx.GetRun(ctx, runID)
		if errors.Is(err, store.ErrNotFound) {
			return errRunNotFound
		}
		if err != nil {
			return err
		}
		ok, err := personTakesPart(ctx, tx.Q, run.SessionID, p.Name)
		if err != nil {
			return err
		}
		if !ok {
			return errRunNotFound
		}
		if run.State != client.RunRunning && run.State != client.RunQueued {
			return Conflict("run_not_running", fmt.Sprintf("the run is %s: there is no turn to stop", run.State),
				"a new mail starts a new turn; stop that one while it runs")
		}
		if _, err := tx.RequestRunStop(ctx, runID, p.Name, tx.Now); err != nil {
			return err
		}
		got, err := tx.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		// Its pending permission requests are closed at once: nobody may
		// approve a command of a turn that is being stopped (B-9.2).
		if _, err := s.closeRunPermissionsTx(ctx, tx, runID, got.StoppedBy); err != nil {
			return err
		}
		out = client.RunStopResponse{Status: "stopping", Run: runView(got)}
		if _, err := tx.Emit(ctx, got.AgentName, client.EventRunStop, client.RunStopEvent{RunID: got.RunID,
			SessionID: got.SessionID, MailID: got.MailID, StoppedBy: got.StoppedBy}); err != nil {
			return err
		}
		parts, err := tx.Participants(ctx, got.SessionID)
		if err != nil {
			return err
		}
		for _, pt := range parts {
			if pt.Kind == store.KindPerson {
				if _, err := tx.Emit(ctx, pt.Name, client.EventRunUpdated, out.Run); err != nil {
					return err
				}
			}
		}
		_, err = s.releaseOfSessionTx(ctx, tx, got.AgentName, got.SessionID) // what ReleaseReservationsOfRun ends
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// writeClosing is Write for a transaction that closes permission requests
// (closeRunPermissionsTx): one that lost a request to a concurrent decision
// is tried again, at most three times in all.
func (s *Service) writeClosing(ctx context.Context, fn func(tx *Tx) error) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = s.Write(ctx, fn); !errors.Is(err, errDecisionLost) {
			return err
		}
	}
	return err
}

// MyRuns answers the runs in the sessions the person takes part in, newest
// first (at most MaxRunsListed): the running, idle and queued ones, or
// with all every state (`agentmail runs [--all]`).
func (s *Service) MyRuns(ctx context.Context, p *Principal, all bool) (*client.RunList, error) {
	if !p.IsPerson() {
		return nil, errRunNotFound
	}
	rows, err := s.Read().PersonRuns(ctx, p.Name, !all, MaxRunsListed)
	if err != nil {
		return nil, err
	}
	return runList(rows), nil
}

// runList is the wire form of stored runs.
func runList(rows []store.RunRow) *client.RunList {
	out := &client.RunList{Runs: []client.Run{}}
	for _, r := range rows {
		out.Runs = append(out.Runs, runView(r))
	}
	return out
}
