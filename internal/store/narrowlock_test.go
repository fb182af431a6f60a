package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Shared writes on PostgreSQL (Store.WriteShared): they run beside each
// other, a deadlock between them is run again, and the unread counters a
// batch holds back are written at its commit.

// twoPostgresStores answers two stores on one scratch database: what two
// replicas are.
func twoPostgresStores(t *testing.T) (*Store, *Store) {
	t.Helper()
	needPostgres(t)
	url := scratchURL(t, true)
	var out [2]*Store
	for i := range out {
		st, err := Open(context.Background(), Options{DatabaseURL: url, DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		out[i] = st
	}
	return out[0], out[1]
}

func TestSharedWritesOfDifferentKeysRunInParallel(t *testing.T) {
	a, b := twoPostgresStores(t)
	ctx := context.Background()
	held, release := make(chan struct{}), make(chan struct{})
	holdDone := make(chan error, 1)
	go func() {
		holdDone <- a.WriteShared(ctx, func(q *Q) error {
			if err := q.LockKeys(ctx, "session", "one"); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	defer func() {
		if release != nil {
			close(release)
		}
	}()
	// With the transaction of replica a open, writes of another key commit
	// on the other replica and on a itself (another of its writers).
	for name, st := range map[string]*Store{"other replica": b, "same replica": a} {
		done := make(chan error, 1)
		go func() {
			done <- st.WriteShared(ctx, func(q *Q) error {
				if err := q.LockKeys(ctx, "session", "two"); err != nil {
					return err
				}
				_, err := q.InsertEvent(ctx, "bob", "test", []byte(`{}`), time.Now())
				return err
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: a write of another key waited for the open transaction", name)
		}
	}
	close(release)
	release = nil
	if err := <-holdDone; err != nil {
		t.Fatal(err)
	}
}

func TestSharedWritesOfOneKeyRunOneAfterTheOther(t *testing.T) {
	a, b := twoPostgresStores(t)
	ctx := context.Background()
	// 40 increments read-then-written under one key through both replicas:
	// without the lock, two would read the same value and one be lost.
	if _, err := a.Read().Exec(ctx, `INSERT INTO mailbox_counts (name, unread) VALUES ('tally', 0)`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- st.WriteShared(ctx, func(q *Q) error {
				if err := q.LockKeys(ctx, "tally", "x"); err != nil {
					return err
				}
				var n int
				if err := q.QueryRow(ctx, `SELECT unread FROM mailbox_counts WHERE name = 'tally'`).Scan(&n); err != nil {
					return err
				}
				_, err := q.Exec(ctx, `UPDATE mailbox_counts SET unread = ? WHERE name = 'tally'`, n+1)
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := a.Read().QueryRow(ctx, `SELECT unread FROM mailbox_counts WHERE name = 'tally'`).Scan(&n); err != nil || n != 40 {
		t.Fatalf("tally %d (%v), want 40", n, err)
	}
}

func TestSharedWriteAbortedAsDeadlockRunsAgain(t *testing.T) {
	a, b := twoPostgresStores(t)
	ctx := context.Background()
	var runs atomic.Int32
	var barrier sync.WaitGroup
	barrier.Add(2)
	write := func(st *Store, first, second string) error {
		var once sync.Once
		return st.WriteShared(ctx, func(q *Q) error {
			runs.Add(1)
			if err := q.LockKeys(ctx, "deadlock", first); err != nil {
				return err
			}
			once.Do(func() { barrier.Done(); barrier.Wait() }) // both hold their first key
			if err := q.LockKeys(ctx, "deadlock", second); err != nil {
				return err
			}
			return q.addUnread(ctx, "counted-"+first, 1)
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- write(a, "x", "y") }()
	go func() { errs <- write(b, "y", "x") }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a write aborted as a deadlock was answered %v, want it run again", err)
		}
	}
	if n := runs.Load(); n != 3 {
		t.Fatalf("%d runs, want 3 (one of the two aborted as a deadlock and run again)", n)
	}
	// Each counter was moved once: the aborted run's delta was dropped.
	for _, name := range []string{"counted-x", "counted-y"} {
		if n, err := a.Read().Unread(ctx, name); err != nil || n != 1 {
			t.Fatalf("%s = %d (%v), want 1", name, n, err)
		}
	}
}

func TestUnreadCountersHeldBackAreCountedInTheTransaction(t *testing.T) {
	st := openTestStore(t)
	ctx := context.Background()
	err := st.Write(ctx, func(q *Q) error {
		if err := q.addUnread(ctx, "carol", 3); err != nil {
			return err
		}
		if n, err := q.Unread(ctx, "carol"); err != nil || n != 3 {
			t.Errorf("in the transaction: unread %d (%v), want 3", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A failed request's deltas are dropped with it.
	_ = st.Write(ctx, func(q *Q) error {
		_ = q.addUnread(ctx, "carol", 5)
		return context.Canceled
	})
	if n, err := st.Read().Unread(ctx, "carol"); err != nil || n != 3 {
		t.Fatalf("after the commit: unread %d (%v), want 3", n, err)
	}
}
