package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pipelined statements (PostgreSQL). In a PostgreSQL write transaction the
// statements whose answer a request does not need at once (the rows of a
// mail, its recipients, participants, search row, counters, events) are
// queued instead of run one round trip each, and go to the server together
// as one pgx batch (pipeline mode: every statement sent, one Sync, the
// answers read back in order) on the transaction's own connection
// (database/sql Conn.Raw):
//
//   - before any other statement of the transaction (Q.Exec, Query,
//     QueryRow run the queue first), so a read sees every queued write
//     and statements run in the order they were written;
//   - at the end of each request (runBatchOnce), with the savepoint
//     statements between it and the next request in the same round trip;
//   - when a queued answer is asked for (Later.RowsAffected, EventID).
//
// A statement of the queue that fails stops the rest (PostgreSQL skips
// the statements after an error up to the batch's Sync), and its error is
// the request's: the request fails, its savepoint is rolled back, and a
// deadlock runs it again as before. On SQLite (one writer in process, no
// round trip) and outside write transactions nothing is queued: ExecLater
// and QueueEvent run their statement at once.

// Later is the answer of a statement queued with Q.ExecLater or
// Q.QueueEvent, known once the queue ran.
type Later struct {
	q    *Q
	ran  bool
	rows int64 // rows affected
	id   int64 // the event id (QueueEvent)
	err  error
}

// RowsAffected answers how many rows the statement changed, running the
// queue first when the statement still waits in it; errors are the
// statement's (or, when an earlier queued statement failed, that one's).
func (l *Later) RowsAffected(ctx context.Context) (int64, error) {
	if err := l.wait(ctx); err != nil {
		return 0, err
	}
	return l.rows, nil
}

// EventID answers the id of an event queued with Q.QueueEvent, running the
// queue first when it still waits in it.
func (l *Later) EventID(ctx context.Context) (int64, error) {
	if err := l.wait(ctx); err != nil {
		return 0, err
	}
	return l.id, nil
}

// Err answers the statement's error once it ran (at once where nothing is
// queued), nil while it waits in the queue.
func (l *Later) Err() error {
	if !l.ran {
		return nil
	}
	return l.err
}

func (l *Later) wait(ctx context.Context) error {
	if !l.ran && l.q != nil {
		if err := l.q.Flush(ctx); err != nil {
			return err
		}
	}
	if !l.ran {
		return errors.New("store: a queued statement was dropped before it ran")
	}
	return l.err
}

// pipeItem is one queued statement.
type pipeItem struct {
	query   string // `?` placeholders
	args    []any
	later   *Later
	event   bool                 // an events row (args: recipient, type, data, created_at); consecutive ones go as one INSERT
	rows    func(pgx.Rows) error // a query whose rows are read by this
	control bool                 // the transaction's own statement (savepoint, lock, notify)
	owner   *Q                   // the request that queued an event (its lastEvent)
}

// pgPipe is the queue of a PostgreSQL write transaction on its connection.
type pgPipe struct {
	conn  *sql.Conn
	d     Dialect
	items []pipeItem
}

// pending reports whether statements wait.
func (p *pgPipe) pending() bool { return p != nil && len(p.items) > 0 }

// drop forgets the queued statements of a request that failed before they
// ran (its savepoint or transaction is rolled back anyway).
func (p *pgPipe) drop() {
	if p == nil {
		return
	}
	for _, it := range p.items {
		if it.later != nil {
			it.later.ran, it.later.err = true, errors.New("store: the request failed before its queued statement ran")
		}
	}
	p.items = p.items[:0]
}

// pipeError is the error of a run of the queue, naming whether the
// statement that failed was one of the transaction's own (then nothing of
// the batch can be kept).
type pipeError struct {
	err     error
	control bool
}

func (e *pipeError) Error() string { return e.err.Error() }
func (e *pipeError) Unwrap() error { return e.err }

// eventsPerInsert bounds the rows of one queued events INSERT.
const eventsPerInsert = 64

// run sends the queue as one batch and reads every answer; the first
// failing statement's error is the answer (a *pipeError).
func (p *pgPipe) run(ctx context.Context) error {
	items := p.items
	p.items = p.items[:0:0]
	if len(items) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	// spans[k] is the run of items that the k-th batch statement is.
	type span struct{ from, to int }
	spans := make([]span, 0, len(items))
	var texts []string
	t, t0 := traceStart()
	for i := 0; i < len(items); {
		it := items[i]
		if it.event {
			j := i + 1
			for j < len(items) && items[j].event && j-i < eventsPerInsert {
				j++
			}
			var sb strings.Builder
			sb.WriteString(`INSERT INTO events (recipient, type, data, created_at) VALUES `)
			args := make([]any, 0, 4*(j-i))
			for k := i; k < j; k++ {
				if k > i {
					sb.WriteString(", ")
				}
				sb.WriteString("(?, ?, ?, ?)")
				args = append(args, items[k].args...)
			}
			// The ids come back in the order of the rows (each row takes
			// its id from the sequence as it is inserted, and RETURNING
			// answers the rows as they are inserted).
			sb.WriteString(` RETURNING event_id`)
			q := sb.String()
			b.Queue(p.d.Rebind(q), args...)
			spans = append(spans, span{i, j})
			if t != nil {
				texts = append(texts, q)
			}
			i = j
			continue
		}
		b.Queue(p.d.Rebind(it.query), it.args...)
		spans = append(spans, span{i, i + 1})
		if t != nil {
			texts = append(texts, it.query)
		}
		i++
	}
	failed := -1
	var first error
	rerr := p.conn.Raw(func(dc any) error {
		c, err := pgxConn(dc)
		if err != nil {
			return err
		}
		br := c.SendBatch(ctx, b)
		for _, s := range spans {
			it := &items[s.from]
			var err error
			switch {
			case it.event:
				var rows pgx.Rows
				if rows, err = br.Query(); err == nil {
					k := s.from
					for rows.Next() && k < s.to {
						err = rows.Scan(&items[k].later.id)
						if err != nil {
							break
						}
						k++
					}
					rows.Close()
					if err == nil {
						err = rows.Err()
					}
					if err == nil && k != s.to {
						err = fmt.Errorf("store: an events insert of %d rows answered %d ids", s.to-s.from, k-s.from)
					}
				}
			case it.rows != nil:
				var rows pgx.Rows
				if rows, err = br.Query(); err == nil {
					err = it.rows(rows)
					rows.Close()
					if err == nil {
						err = rows.Err()
					}
				}
			default:
				tag, e := br.Exec()
				err = e
				if it.later != nil {
					it.later.rows = tag.RowsAffected()
				}
			}
			if err != nil && first == nil {
				first, failed = err, s.from
			}
		}
		if err := br.Close(); err != nil && first == nil {
			first, failed = err, len(items)-1
		}
		return nil
	})
	if first == nil && rerr != nil {
		first, failed = rerr, len(items)-1
	}
	if t != nil {
		t.addPipeline(texts, time.Since(t0))
	}
	for i := range items {
		it := &items[i]
		if it.event && first == nil {
			it.owner.lastEvent = max(it.owner.lastEvent, it.later.id)
		}
		if it.later != nil {
			it.later.ran = true
			if first != nil {
				it.later.err = first
			}
		}
	}
	if first != nil {
		return &pipeError{err: first, control: failed >= 0 && items[failed].control}
	}
	return nil
}

// pgxConn answers pgx's connection under a database/sql one (Conn.Raw).
func pgxConn(dc any) (*pgx.Conn, error) {
	c, ok := dc.(*stdlib.Conn)
	if !ok {
		return nil, fmt.Errorf("store: the PostgreSQL connection is a %T, not pgx's", dc)
	}
	return c.Conn(), nil
}

// ExecLater runs a statement whose answer the caller does not need at
// once: in a PostgreSQL write transaction it is queued (see the top of
// pipeline.go) and its error, if any, is the request's at the latest when
// the request ends; elsewhere it runs now. The answer is the statement's
// Later: RowsAffected runs the queue when it must.
func (q *Q) ExecLater(ctx context.Context, query string, args ...any) *Later {
	l := &Later{q: q}
	if q.pipe == nil {
		res, err := q.Exec(ctx, query, args...)
		l.ran, l.err = true, err
		if err == nil {
			l.rows, l.err = res.RowsAffected()
		}
		return l
	}
	q.pipe.items = append(q.pipe.items, pipeItem{query: query, args: args, later: l})
	return l
}

// execLater is ExecLater for a caller that only wants the error: the
// statement's when it ran now, nil when it was queued.
func (q *Q) execLater(ctx context.Context, query string, args ...any) error {
	return q.ExecLater(ctx, query, args...).Err()
}

// queueControl queues the transaction's own statements (writebatch.go).
func (q *Q) queueControl(stmts ...string) {
	for _, s := range stmts {
		q.pipe.items = append(q.pipe.items, pipeItem{query: s, control: true})
	}
}

// QueueEvent is InsertEvent queuing the row as ExecLater does; its id is
// the Later's EventID. Events queued one after the other go as one
// multi-row INSERT, their ids in the order queued.
func (q *Q) QueueEvent(ctx context.Context, recipient, typ string, data []byte, now time.Time) *Later {
	l := &Later{q: q}
	if q.pipe == nil {
		l.id, l.err = q.InsertEvent(ctx, recipient, typ, data, now)
		l.ran = true
		return l
	}
	q.appended++
	q.pipe.items = append(q.pipe.items, pipeItem{event: true, later: l, owner: q,
		args: []any{recipient, typ, string(data), Millis(now)}})
	return l
}

// queryPipelined runs a query after the queued statements in the same
// round trip (PostgreSQL write transaction), reading its rows with scan
// (pgx's rows: scan into plain Go types); elsewhere it is Query.
func (q *Q) queryPipelined(ctx context.Context, scan func(next func() bool, scan func(...any) error) error, query string, args ...any) error {
	if q.pipe == nil {
		rows, err := q.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if err := scan(rows.Next, rows.Scan); err != nil {
			return err
		}
		return rows.Err()
	}
	q.pipe.items = append(q.pipe.items, pipeItem{query: query, args: args,
		rows: func(r pgx.Rows) error { return scan(r.Next, r.Scan) }})
	return q.Flush(ctx)
}

// Flush runs the statements queued in this transaction (see ExecLater),
// if any, and answers the first one's error that failed.
func (q *Q) Flush(ctx context.Context) error {
	if !q.pipe.pending() {
		return q.pipeErr
	}
	if err := q.pipe.run(context.WithoutCancel(ctx)); err != nil {
		q.note(err)
		if q.pipeErr == nil {
			q.pipeErr = err
		}
		return err
	}
	return q.pipeErr
}
