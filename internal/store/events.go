package store

import (
	"context"
	"database/sql"
	"time"
)

// EventRow is one entry of the event log: one row per recipient and event.
// ID is the SSE id.
type EventRow struct {
	ID        int64
	Recipient string
	Type      string
	Data      []byte
	CreatedAt time.Time
}

// InsertEvent appends an event for one recipient and answers its id. Call it
// in the same transaction as the write it announces.
func (q *Q) InsertEvent(ctx context.Context, recipient, typ string, data []byte, now time.Time) (int64, error) {
	const insert = `INSERT INTO events (recipient, type, data, created_at) VALUES (?, ?, ?, ?)`
	var id int64
	var err error
	if q.d.LastInsertID() {
		var res sql.Result
		if res, err = q.Exec(ctx, insert, recipient, typ, string(data), Millis(now)); err == nil {
			id, err = res.LastInsertId()
		}
	} else {
		err = q.QueryRow(ctx, insert+` RETURNING event_id`, recipient, typ, string(data), Millis(now)).Scan(&id)
	}
	if err == nil {
		q.appended++
	}
	return id, err
}

// MaxEventID answers the newest event id (0 when the log is empty).
func (q *Q) MaxEventID(ctx context.Context) (int64, error) {
	var id int64
	err := q.QueryRow(ctx, `SELECT COALESCE(MAX(event_id), 0) FROM events`).Scan(&id)
	return id, err
}

// EventsAfter answers up to limit events with id > after, oldest first, for
// every recipient (the hub's poll of the log).
func (q *Q) EventsAfter(ctx context.Context, after int64, limit int) ([]EventRow, error) {
	return q.eventRows(ctx, `SELECT event_id, recipient, type, data, created_at FROM events
		WHERE event_id > ? ORDER BY event_id LIMIT ?`, after, limit)
}

// RecipientEvents answers one recipient's events with after < id <= upTo,
// oldest first, at most limit (Last-Event-ID replay).
func (q *Q) RecipientEvents(ctx context.Context, recipient string, after, upTo int64, limit int) ([]EventRow, error) {
	return q.eventRows(ctx, `SELECT event_id, recipient, type, data, created_at FROM events
		WHERE recipient = ? AND event_id > ? AND event_id <= ? ORDER BY event_id LIMIT ?`, recipient, after, upTo, limit)
}

func (q *Q) eventRows(ctx context.Context, query string, args ...any) ([]EventRow, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []EventRow
	for rows.Next() {
		var e EventRow
		var data string
		var created int64
		if err := rows.Scan(&e.ID, &e.Recipient, &e.Type, &data, &created); err != nil {
			return nil, err
		}
		e.Data, e.CreatedAt = []byte(data), FromMillis(created)
		out = append(out, e)
	}
	return out, rows.Err()
}
