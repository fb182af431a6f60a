package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Statements queued in a PostgreSQL write transaction (pipeline.go) are
// their request's: a queued insert that fails fails its own request only,
// with nothing of it kept, while the requests sharing its transaction
// commit; a read after queued writes sees them; queued events get their
// ids in the order queued; and a request's queued statements share a
// round trip. On SQLite the same calls run at once, with the same
// outcome.
func TestQueuedStatementFailsOnlyItsRequest(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	const n = 40
	now := time.Now()
	failing := func(i int) bool { return i%7 == 3 }
	name := func(i int) string { return fmt.Sprintf("pipe%d", i) }
	const insert = `INSERT INTO names (name, kind, created_at) VALUES (?, ?, ?)`
	stats := TraceStatements()
	errs := asOneBatch(st, n, func(i int, q *Q) error {
		q.ExecLater(ctx, insert, name(i), KindPerson, Millis(now))
		a := q.QueueEvent(ctx, name(i), "test", []byte(`{}`), now)
		b := q.QueueEvent(ctx, name(i), "test", []byte(`{}`), now)
		if failing(i) {
			// The name a second time: this insert fails, when the queue
			// runs at the request's end (PostgreSQL: Err is nil while it
			// waits) or at once (SQLite: Err is its error).
			return q.ExecLater(ctx, insert, name(i), KindPerson, Millis(now)).Err()
		}
		var kind string
		if err := q.QueryRow(ctx, `SELECT kind FROM names WHERE name = ?`, name(i)).Scan(&kind); err != nil {
			return fmt.Errorf("the queued insert is not seen by a read after it: %w", err)
		}
		ia, err := a.EventID(ctx)
		if err != nil {
			return err
		}
		ib, err := b.EventID(ctx)
		if err != nil {
			return err
		}
		if ia <= 0 || ib <= ia {
			return fmt.Errorf("queued events got ids %d and %d, not in the order queued", ia, ib)
		}
		return nil
	})
	StopTracingStatements()
	for i, err := range errs {
		if failing(i) && !st.dialect.IsUniqueViolation(err) {
			t.Errorf("write %d: %v, want its queued insert's unique violation", i, err)
		}
		if !failing(i) && err != nil {
			t.Errorf("write %d: %v, want success beside the failing ones", i, err)
		}
		var names, events int
		if err := st.Read().QueryRow(ctx, `SELECT COUNT(*) FROM names WHERE name = ?`, name(i)).Scan(&names); err != nil {
			t.Fatal(err)
		}
		if err := st.Read().QueryRow(ctx, `SELECT COUNT(*) FROM events WHERE recipient = ?`, name(i)).Scan(&events); err != nil {
			t.Fatal(err)
		}
		want := 1
		if failing(i) {
			want = 0
		}
		if names != want || events != 2*want {
			t.Errorf("write %d (failing %v): %d names and %d events kept, want %d and %d", i, failing(i), names, events, want, 2*want)
		}
	}
	if st.dialect.Name() != "postgres" {
		return
	}
	statements := 0
	pairs := 0
	for _, s := range stats.Top() {
		statements += s.Count
		if s.Query == `INSERT INTO events (recipient, type, data, created_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?) RETURNING event_id` {
			pairs = s.Count
		}
	}
	if pairs < n {
		t.Errorf("%d two-row event inserts, want one per write (%d): events queued together go as one insert", pairs, n)
	}
	// Each write's insert and its events go in one round trip, at least.
	if trips := stats.RoundTrips(); trips > statements-n {
		t.Errorf("%d statements in %d round trips, want at most %d: a write's queued statements share one", statements, trips, statements-n)
	}
}
