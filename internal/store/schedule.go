package store

import (
	"context"
	"database/sql"
	"time"
)

// ScheduleRow is one stored reminder (seed 001 schedules note).
type ScheduleRow struct {
	ScheduleID          string
	Owner               string
	OwnerKind           string
	Title               string
	Body                string
	EventTime           time.Time
	RemindBeforeMinutes int
	RemindAt            time.Time
	Recipients          string // JSON array of names or addresses; empty array = the owner
	SentAt              *time.Time
	MailID              string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

const scheduleCols = `schedule_id, owner, owner_kind, title, body, event_time, remind_before_minutes, remind_at,
	recipients, sent_at, mail_id, created_at, updated_at`

func scanSchedule(sc interface{ Scan(...any) error }) (ScheduleRow, error) {
	var s ScheduleRow
	var ev, at, created, updated int64
	var sent sql.NullInt64
	err := sc.Scan(&s.ScheduleID, &s.Owner, &s.OwnerKind, &s.Title, &s.Body, &ev, &s.RemindBeforeMinutes, &at,
		&s.Recipients, &sent, &s.MailID, &created, &updated)
	s.EventTime, s.RemindAt, s.SentAt = FromMillis(ev), FromMillis(at), TimePtr(sent)
	s.CreatedAt, s.UpdatedAt = FromMillis(created), FromMillis(updated)
	return s, err
}

func (q *Q) schedules(ctx context.Context, where string, args ...any) ([]ScheduleRow, error) {
	rows, err := q.Query(ctx, `SELECT `+scheduleCols+` FROM schedules `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ScheduleRow
	for rows.Next() {
		s, err := scanSchedule(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// InsertSchedule stores a new schedule.
func (q *Q) InsertSchedule(ctx context.Context, s ScheduleRow) error {
	_, err := q.Exec(ctx, `INSERT INTO schedules (`+scheduleCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ScheduleID, s.Owner, s.OwnerKind, s.Title, s.Body, Millis(s.EventTime), s.RemindBeforeMinutes, Millis(s.RemindAt),
		s.Recipients, NullMillis(s.SentAt), s.MailID, Millis(s.CreatedAt), Millis(s.UpdatedAt))
	return err
}

// GetSchedule answers one schedule or ErrNotFound.
func (q *Q) GetSchedule(ctx context.Context, id string) (ScheduleRow, error) {
	list, err := q.schedules(ctx, `WHERE schedule_id = ?`, id)
	if err != nil {
		return ScheduleRow{}, err
	}
	if len(list) == 0 {
		return ScheduleRow{}, ErrNotFound
	}
	return list[0], nil
}

// SchedulesOf answers the owner's schedules by event time.
func (q *Q) SchedulesOf(ctx context.Context, owner string) ([]ScheduleRow, error) {
	return q.schedules(ctx, `WHERE owner = ? ORDER BY event_time, schedule_id`, owner)
}

// CountSchedulesOf counts the owner's schedules (the per-owner cap).
func (q *Q) CountSchedulesOf(ctx context.Context, owner string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM schedules WHERE owner = ?`, owner).Scan(&n)
	return n, err
}

// UpdateSchedule writes the editable fields of a schedule (title, body,
// times, recipients). When the reminder time moves, a reminder that was not
// sent stays unsent; one already sent is re-armed only if rearm is true.
func (q *Q) UpdateSchedule(ctx context.Context, s ScheduleRow, rearm bool) error {
	query := `UPDATE schedules SET title = ?, body = ?, event_time = ?, remind_before_minutes = ?, remind_at = ?,
		recipients = ?, updated_at = ?`
	args := []any{s.Title, s.Body, Millis(s.EventTime), s.RemindBeforeMinutes, Millis(s.RemindAt), s.Recipients, Millis(s.UpdatedAt)}
	if rearm {
		query += `, sent_at = NULL, mail_id = ''`
	}
	_, err := q.Exec(ctx, query+` WHERE schedule_id = ?`, append(args, s.ScheduleID)...)
	return err
}

// DeleteSchedule removes a schedule; it answers false when there was none.
func (q *Q) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	res, err := q.Exec(ctx, `DELETE FROM schedules WHERE schedule_id = ?`, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DueSchedules answers up to limit unsent schedules whose reminder time is
// at or before now, earliest first.
func (q *Q) DueSchedules(ctx context.Context, now time.Time, limit int) ([]ScheduleRow, error) {
	return q.schedules(ctx, `WHERE sent_at IS NULL AND remind_at <= ? ORDER BY remind_at, schedule_id LIMIT ?`, Millis(now), limit)
}

// ClaimSchedule marks a due schedule sent with the reminder's mail id. The
// condition sent_at IS NULL is in the UPDATE, so of several gateways (or a
// gateway before and after a restart) exactly one claims it; it answers
// whether this call did. Call it in the transaction that stores the mail.
func (q *Q) ClaimSchedule(ctx context.Context, id, mailID string, now time.Time) (bool, error) {
	res, err := q.Exec(ctx, `UPDATE schedules SET sent_at = ?, mail_id = ? WHERE schedule_id = ? AND sent_at IS NULL`,
		Millis(now), mailID, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SetScheduleMail records the reminder mail of a claimed schedule.
func (q *Q) SetScheduleMail(ctx context.Context, id, mailID string) error {
	_, err := q.Exec(ctx, `UPDATE schedules SET mail_id = ? WHERE schedule_id = ?`, mailID, id)
	return err
}

// LatestWorkspace answers the path at which name took part in its most
// recently active session ("" when none has a path).
func (q *Q) LatestWorkspace(ctx context.Context, name string) (string, error) {
	var ws string
	err := q.QueryRow(ctx, `SELECT workspace FROM session_participants WHERE name = ? AND workspace <> ''
		ORDER BY last_activity DESC LIMIT 1`, name).Scan(&ws)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return ws, err
}
