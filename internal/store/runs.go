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
}

const runCols = `run_id, session_id, mail_id, agent_name, state, model, attempt, pid, exit_code, started_at, ended_at,
	duration_ms, bytes_read, unparsed_lines, stop_reason, error, updated_at`

func scanRun(sc interface{ Scan(...any) error }) (RunRow, error) {
	var r RunRow
	var exit sql.NullInt64
	var ended sql.NullInt64
	var started, updated int64
	err := sc.Scan(&r.RunID, &r.SessionID, &r.MailID, &r.AgentName, &r.State, &r.Model, &r.Attempt, &r.PID, &exit,
		&started, &ended, &r.DurationMS, &r.BytesRead, &r.UnparsedLines, &r.StopReason, &r.Error, &updated)
	if exit.Valid {
		v := int(exit.Int64)
		r.ExitCode = &v
	}
	r.StartedAt, r.EndedAt, r.UpdatedAt = FromMillis(started), TimePtr(ended), FromMillis(updated)
	return r, err
}

// UpsertRun inserts the run or replaces every field of the stored one.
func (q *Q) UpsertRun(ctx context.Context, r RunRow) error {
	var exit any
	if r.ExitCode != nil {
		exit = *r.ExitCode
	}
	_, err := q.Exec(ctx, `INSERT INTO runs (`+runCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET session_id = excluded.session_id, mail_id = excluded.mail_id,
		state = excluded.state, model = excluded.model, attempt = excluded.attempt, pid = excluded.pid,
		exit_code = excluded.exit_code, started_at = excluded.started_at, ended_at = excluded.ended_at,
		duration_ms = excluded.duration_ms, bytes_read = excluded.bytes_read, unparsed_lines = excluded.unparsed_lines,
		stop_reason = excluded.stop_reason, error = excluded.error, updated_at = excluded.updated_at`,
		r.RunID, r.SessionID, r.MailID, r.AgentName, r.State, r.Model, r.Attempt, r.PID, exit, Millis(r.StartedAt),
		NullMillis(r.EndedAt), r.DurationMS, r.BytesRead, r.UnparsedLines, r.StopReason, r.Error, Millis(r.UpdatedAt))
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
