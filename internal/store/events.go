package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
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
	if !q.tx {
		// Readers rely on every event being taken inside a write
		// transaction that began with Dialect.BeginWrite (EventCursor).
		return 0, errors.New("store: InsertEvent outside a write transaction")
	}
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
		q.lastEvent = max(q.lastEvent, id)
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

// EventCursor reads the event log in id order for the event hub without
// ever passing an id that a transaction still running may commit later.
//
// On SQLite one writer commits at a time, so the ids a reader sees are
// final: the cursor is "after Last". On PostgreSQL, transactions of
// different connections (and replicas) take event ids from one sequence
// but may commit in another order, so a reader can see id h committed
// while a lower id g is still held by a running transaction. The cursor
// therefore hands out only the gap-free run after Last and stops at a
// missing id g. Having seen the gap, it takes a transaction id R of its
// own (pg_current_xact_id(), after that snapshot), and passes g only in a
// later snapshot whose xmin is above R:
//
//   - every write transaction takes its transaction id first
//     (Dialect.BeginWrite: pg_current_xact_id()), before any event id;
//   - g was missing while a larger id h was visible, so g was taken before
//     h (a sequence only grows), h's transaction committed before that
//     snapshot, and g's transaction had its id before that: its id is
//     below R, which was assigned later;
//   - a snapshot whose xmin (the oldest transaction id still running) is
//     above R has no transaction at or below R running: g's committed, and
//     is then visible in that same snapshot (the rows are read in the same
//     REPEATABLE READ transaction), or it rolled back and g never comes.
//
// So no id a reader passed can commit afterwards: every event id below a
// reader's position is one it was handed (or one that never committed).
// A missing id delays the ids after it until the transactions running when
// it was seen have ended (short: a gateway's transaction is one batch of
// requests); the hub reads again soon while Waiting. A gap costs the reader
// one transaction id; reads without a gap cost none.
type EventCursor struct {
	// Last is the position: every id ≤ Last was handed out or never
	// committed.
	Last       int64
	gapAt      int64 // first missing id being waited for, 0 for none
	gapHorizon int64 // R: a transaction id taken after gapAt was seen missing
}

// Waiting reports whether the cursor stopped before a missing id that a
// running transaction may still commit; read again soon.
func (c *EventCursor) Waiting() bool { return c.gapAt != 0 }

// NextEvents answers up to limit events after c.Last, oldest first, that
// may be handed out (see EventCursor), and moves c past them.
func (s *Store) NextEvents(ctx context.Context, c *EventCursor, limit int) ([]EventRow, error) {
	if s.dialect.Name() != "postgres" {
		evs, err := s.sqliteEventsAfter(ctx, c.Last, limit)
		if len(evs) > 0 {
			c.Last = evs[len(evs)-1].ID
		}
		return evs, err
	}
	xmin, evs, err := s.eventsInSnapshot(ctx, c.Last, limit)
	if err != nil {
		return nil, err
	}
	out, newGap := c.take(evs, xmin)
	if newGap {
		if c.gapHorizon, err = s.newTransactionID(ctx); err != nil {
			c.gapAt = 0 // seen again at the next read
			return out, err
		}
	}
	return out, nil
}

// sqliteEventsAfter is EventsAfter on SQLite, up to the durable watermark
// when the WAL is flushed beside the writer (walsync.go): an event whose
// commit is not yet on disk is handed out after its fsync.
func (s *Store) sqliteEventsAfter(ctx context.Context, after int64, limit int) ([]EventRow, error) {
	if s.wsync == nil {
		return s.Read().EventsAfter(ctx, after, limit)
	}
	upTo := s.wsync.durableEvent()
	if upTo <= after {
		return nil, nil
	}
	return s.Read().eventRows(ctx, `SELECT event_id, recipient, type, data, created_at FROM events
		WHERE event_id > ? AND event_id <= ? ORDER BY event_id LIMIT ?`, after, upTo, limit)
}

// newTransactionID takes a transaction id (in a transaction of its own,
// which ends at once) and answers it: every transaction id taken before
// this call is below it.
func (s *Store) newTransactionID(ctx context.Context) (int64, error) {
	var id int64
	err := s.reader.QueryRowContext(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&id)
	return id, err
}

// eventsInSnapshot reads, in one REPEATABLE READ snapshot, its xmin and
// the events after "after". The transaction's four statements (BEGIN, the
// xmin, the events, COMMIT) go as one pipelined batch on one connection of
// the pool: one round trip instead of four, and the same snapshot (a
// REPEATABLE READ transaction takes it at its first statement).
func (s *Store) eventsInSnapshot(ctx context.Context, after int64, limit int) (xmin int64, evs []EventRow, err error) {
	conn, err := s.reader.Conn(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	query := s.dialect.Rebind(`SELECT event_id, recipient, type, data, created_at FROM events
		WHERE event_id > ? ORDER BY event_id LIMIT ?`)
	t, t0 := traceStart()
	err = conn.Raw(func(dc any) error {
		pc, err := pgxConn(dc)
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
		b.Queue(`SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`)
		b.Queue(query, after, limit)
		b.Queue(`COMMIT`)
		br := pc.SendBatch(ctx, b)
		_, err = br.Exec()
		if err == nil {
			err = br.QueryRow().Scan(&xmin)
		}
		if err == nil {
			var rows pgx.Rows
			if rows, err = br.Query(); err == nil {
				for rows.Next() {
					var e EventRow
					var data string
					var created int64
					if err = rows.Scan(&e.ID, &e.Recipient, &e.Type, &data, &created); err != nil {
						break
					}
					e.Data, e.CreatedAt = []byte(data), FromMillis(created)
					evs = append(evs, e)
				}
				rows.Close()
				if err == nil {
					err = rows.Err()
				}
			}
		}
		if err == nil {
			_, err = br.Exec()
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil && !pc.IsClosed() && pc.PgConn().TxStatus() != 'I' {
			// The batch stopped inside its transaction: end it, or drop
			// the connection rather than hand it back in a transaction.
			if _, rerr := pc.Exec(context.WithoutCancel(ctx), `ROLLBACK`); rerr != nil {
				return errors.Join(err, driver.ErrBadConn)
			}
		}
		return err
	})
	if t != nil {
		t.addPipeline([]string{"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
			"SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint", query, "COMMIT"}, time.Since(t0))
	}
	if err != nil {
		return 0, nil, err
	}
	return xmin, evs, nil
}

// take hands out the gap-free run of evs (ids after c.Last, ascending,
// read in a snapshot with that xmin), passing a missing id only as
// EventCursor explains. newGap reports a missing id seen for the first
// time: the caller then sets c.gapHorizon.
func (c *EventCursor) take(evs []EventRow, xmin int64) (out []EventRow, newGap bool) {
	out = evs[:0:0]
	for _, e := range evs {
		if e.ID != c.Last+1 {
			next := c.Last + 1
			if c.gapAt != next {
				c.gapAt = next
				return out, true
			}
			if xmin <= c.gapHorizon {
				return out, false // a transaction that may hold the missing id runs
			}
			// The missing ids never committed.
		}
		out = append(out, e)
		c.Last, c.gapAt = e.ID, 0
	}
	return out, false
}

// SafeEventStart answers the end of the log for a hub that starts: the
// newest event id, returned once every transaction that may still hold a
// lower id has ended (PostgreSQL; the argument of EventCursor with the
// newest id as h), so that a stream of the new hub misses nothing that
// commits after it. It waits at most until ctx ends.
func (s *Store) SafeEventStart(ctx context.Context) (int64, error) {
	if s.dialect.Name() != "postgres" {
		last, err := s.Read().MaxEventID(ctx)
		if s.wsync != nil {
			last = min(last, s.wsync.durableEvent())
		}
		return last, err
	}
	newest, err := s.Read().MaxEventID(ctx)
	if err != nil {
		return 0, err
	}
	horizon, err := s.newTransactionID(ctx)
	if err != nil {
		return 0, err
	}
	for {
		var xmin int64
		if err := s.reader.QueryRowContext(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`).Scan(&xmin); err != nil {
			return 0, err
		}
		if xmin > horizon {
			return newest, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
