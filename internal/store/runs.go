package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// RunRow is one agent run (seed 004) as stored.
type RunRow struct {
	RunID         string
	SessionID     string
	MailID        string
	AgentName     string
	State         string
	Model         string
	Attempt       int
	PID           int
	ExitCode      *int
	StartedAt     time.Time
	EndedAt       *time.Time
	DurationMS    int64
	BytesRead     int64
	UnparsedLines int
	StopReason    string
	Error         string
	UpdatedAt     time.Time
	// Run control (issue 16, migration 0039).
	QueuePosition          int // turns ahead while queued
	MaxTurns               int // the bridge's cap while queued
	ToolCalls              int
	LastTool               string
	LastToolInput          string
	LastActivityAt         *time.Time
	StopRequestedAt        *time.Time
	StoppedBy              string
	Quiescence             string // "", "proven" or "unproven"
	TranscriptAttachmentID string
}

const runCols = `run_id, session_id, mail_id, agent_name, state, model, attempt, pid, exit_code, started_at, ended_at,
	duration_ms, bytes_read, unparsed_lines, stop_reason, error, updated_at, queue_position, max_turns, tool_calls,
	last_tool, last_tool_input, last_activity_at, stop_requested_at, stopped_by, quiescence, transcript_attachment_id`

func scanRun(sc interface{ Scan(...any) error }) (RunRow, error) {
	var r RunRow
	var exit sql.NullInt64
	var ended sql.NullInt64
	var started, updated int64
	var activity, stopAsked sql.NullInt64
	err := sc.Scan(&r.RunID, &r.SessionID, &r.MailID, &r.AgentName, &r.State, &r.Model, &r.Attempt, &r.PID, &exit,
		&started, &ended, &r.DurationMS, &r.BytesRead, &r.UnparsedLines, &r.StopReason, &r.Error, &updated,
		&r.QueuePosition, &r.MaxTurns, &r.ToolCalls, &r.LastTool, &r.LastToolInput, &activity, &stopAsked,
		&r.StoppedBy, &r.Quiescence, &r.TranscriptAttachmentID)
	r.LastActivityAt, r.StopRequestedAt = TimePtr(activity), TimePtr(stopAsked)
	if exit.Valid {
		v := int(exit.Int64)
		r.ExitCode = &v
	}
	r.StartedAt, r.EndedAt, r.UpdatedAt = FromMillis(started), TimePtr(ended), FromMillis(updated)
	return r, err
}

// UpsertRun inserts the run or replaces every field of the stored one but
// stop_requested_at, which keeps its first value (a bridge's report never
// moves or clears a person's stop request).
func (q *Q) UpsertRun(ctx context.Context, r RunRow) error {
	var exit any
	if r.ExitCode != nil {
		exit = *r.ExitCode
	}
	_, err := q.Exec(ctx, `INSERT INTO runs (`+runCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET session_id = excluded.session_id, mail_id = excluded.mail_id,
		state = excluded.state, model = excluded.model, attempt = excluded.attempt, pid = excluded.pid,
		exit_code = excluded.exit_code, started_at = excluded.started_at, ended_at = excluded.ended_at,
		duration_ms = excluded.duration_ms, bytes_read = excluded.bytes_read, unparsed_lines = excluded.unparsed_lines,
		stop_reason = excluded.stop_reason, error = excluded.error, updated_at = excluded.updated_at,
		queue_position = excluded.queue_position, max_turns = excluded.max_turns, tool_calls = excluded.tool_calls,
		last_tool = excluded.last_tool, last_tool_input = excluded.last_tool_input, last_activity_at = excluded.last_activity_at,
		stop_requested_at = COALESCE(runs.stop_requested_at, excluded.stop_requested_at),
		stopped_by = excluded.stopped_by, quiescence = excluded.quiescence,
		transcript_attachment_id = excluded.transcript_attachment_id`,
		r.RunID, r.SessionID, r.MailID, r.AgentName, r.State, r.Model, r.Attempt, r.PID, exit, Millis(r.StartedAt),
		NullMillis(r.EndedAt), r.DurationMS, r.BytesRead, r.UnparsedLines, r.StopReason, r.Error, Millis(r.UpdatedAt),
		r.QueuePosition, r.MaxTurns, r.ToolCalls, r.LastTool, r.LastToolInput, NullMillis(r.LastActivityAt),
		NullMillis(r.StopRequestedAt), r.StoppedBy, r.Quiescence, r.TranscriptAttachmentID)
	return err
}

// GetRun answers one run or ErrNotFound.
func (q *Q) GetRun(ctx context.Context, id string) (RunRow, error) {
	r, err := scanRun(q.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE run_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// SessionRuns answers a session's runs, newest first, at most limit.
func (q *Q) SessionRuns(ctx context.Context, sessionID string, limit int) ([]RunRow, error) {
	rows, err := q.Query(ctx, `SELECT `+runCols+` FROM runs WHERE session_id = ? ORDER BY started_at DESC, run_id DESC LIMIT ?`, sessionID, limit)
	if err != nil {
		return nil, err
	}
	return scanRuns(rows)
}

// RunningRunOf answers the id of agent's newest run of the session in state
// running, or "" when none runs.
func (q *Q) RunningRunOf(ctx context.Context, sessionID, agent string) (string, error) {
	var id string
	err := q.QueryRow(ctx, `SELECT run_id FROM runs WHERE session_id = ? AND agent_name = ? AND state = 'running'
		ORDER BY started_at DESC, run_id DESC LIMIT 1`, sessionID, agent).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// StopMailBodies answers the bodies (of at most 32 characters, newest
// first, at most 50) of the mails person sent to agent in the session or in
// a session delegated from it, newer than afterMailID ("" for any): where
// the gateway finds the stop mail a run's stop report names (the caller
// tests each body for the stop word).
func (q *Q) StopMailBodies(ctx context.Context, agent, person, sessionID, afterMailID string) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT m.body FROM mails m
		JOIN mail_recipients r ON r.mail_id = m.mail_id AND r.name = ? AND r.kind = 'agent'
		JOIN mail_sessions s ON s.session_id = m.session_id
		WHERE m.from_name = ? AND m.from_kind = 'person' AND (m.session_id = ? OR s.origin_session_id = ?)
		AND m.mail_id > ? AND LENGTH(m.body) <= 32
		ORDER BY m.mail_id DESC LIMIT 50`, agent, person, sessionID, sessionID, afterMailID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// AgentOpenRuns answers agent's runs that have not ended (running, queued
// or idle), oldest first, at most limit (migration 0048's index).
func (q *Q) AgentOpenRuns(ctx context.Context, agent string, limit int) ([]RunRow, error) {
	rows, err := q.Query(ctx, `SELECT `+runCols+` FROM runs WHERE agent_name = ? AND state IN ('running', 'queued', 'idle')
		ORDER BY started_at, run_id LIMIT ?`, agent, limit)
	if err != nil {
		return nil, err
	}
	return scanRuns(rows)
}

// RequestRunStop records a person's stop request on a run (issue 16):
// stop_requested_at and stopped_by, unless a request was recorded already
// (the first one stands). It answers whether this call recorded it.
func (q *Q) RequestRunStop(ctx context.Context, runID, by string, at time.Time) (bool, error) {
	res, err := q.Exec(ctx, `UPDATE runs SET stop_requested_at = ?, stopped_by = ? WHERE run_id = ? AND stop_requested_at IS NULL`,
		Millis(at), by, runID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// PersonRuns answers the runs of the sessions person takes part in, newest
// first, at most limit; active keeps only running, idle and queued ones.
func (q *Q) PersonRuns(ctx context.Context, person string, active bool, limit int) ([]RunRow, error) {
	filter := ""
	if active {
		filter = ` AND r.state IN ('running', 'idle', 'queued')`
	}
	rows, err := q.Query(ctx, `SELECT `+prefixed("r.", runCols)+` FROM runs r
		JOIN session_participants p ON p.session_id = r.session_id AND p.name = ? AND p.kind = 'person'
		WHERE 1 = 1`+filter+` ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?`, person, limit)
	if err != nil {
		return nil, err
	}
	return scanRuns(rows)
}

// scanRuns reads every row of a run query and closes it.
func scanRuns(rows *Rows) ([]RunRow, error) {
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
