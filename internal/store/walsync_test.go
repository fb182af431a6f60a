package store

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// With synchronous=full (the default) a write is answered only after an
// fsync of the WAL that began after its commit, and its events are handed
// out (NextEvents, SafeEventStart) only then; the writer meanwhile goes on
// with the next write, whose answer waits for the next fsync.
func TestFullSynchronousAnswersAfterTheWALIsFlushed(t *testing.T) {
	st, err := Open(context.Background(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.wsync == nil {
		t.Fatal("no WAL syncer with synchronous=full")
	}
	ctx := context.Background()
	var cur EventCursor
	if cur.Last, err = st.SafeEventStart(ctx); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	st.wsync.beforeSync = func() {
		entered <- struct{}{}
		<-release
	}
	write := func(recipient string) (chan error, chan int64) {
		done, id := make(chan error, 1), make(chan int64, 1)
		go func() {
			done <- st.Write(ctx, func(q *Q) error {
				n, err := q.InsertEvent(ctx, recipient, "test", []byte(`{}`), time.Now())
				id <- n
				return err
			})
		}()
		return done, id
	}
	firstDone, firstID := write("a")
	first := <-firstID
	<-entered // the first write committed; its fsync is held
	secondDone, secondID := write("b")
	second := <-secondID // the writer went on while the fsync was held
	select {
	case err := <-firstDone:
		t.Fatalf("the first write was answered (%v) before its fsync", err)
	case <-time.After(50 * time.Millisecond):
	}
	if evs, err := st.NextEvents(ctx, &cur, 10); err != nil || len(evs) != 0 {
		t.Fatalf("before the fsync NextEvents handed out %v (%v), want nothing", evs, err)
	}
	if last, err := st.SafeEventStart(ctx); err != nil || last >= first {
		t.Fatalf("before the fsync SafeEventStart is %d (%v), want below %d", last, err, first)
	}
	release <- struct{}{}
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	evs, err := st.NextEvents(ctx, &cur, 10)
	if err != nil || len(evs) != 1 || evs[0].ID != first {
		t.Fatalf("after the first fsync NextEvents handed out %v (%v), want event %d alone", evs, err, first)
	}
	<-entered // the second write's fsync
	select {
	case err := <-secondDone:
		t.Fatalf("the second write was answered (%v) before its own fsync", err)
	case <-time.After(50 * time.Millisecond):
	}
	release <- struct{}{}
	if err := <-secondDone; err != nil {
		t.Fatal(err)
	}
	if evs, err := st.NextEvents(ctx, &cur, 10); err != nil || len(evs) != 1 || evs[0].ID != second {
		t.Fatalf("after the second fsync NextEvents handed out %v (%v), want event %d", evs, err, second)
	}
	if n := st.wsync.syncs.Load(); n < 2 {
		t.Fatalf("%d fsyncs, want 2", n)
	}
}

// With synchronous=normal nothing waits for an fsync.
func TestNormalSynchronousHasNoWALSyncer(t *testing.T) {
	st, err := Open(context.Background(), Options{DataDir: t.TempDir(), Synchronous: SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.wsync != nil || st.Synchronous() != "NORMAL" {
		t.Fatalf("synchronous=normal: syncer %v, level %q", st.wsync, st.Synchronous())
	}
}

// A failed fsync of the WAL is final (walsync.go, like PostgreSQL's): the
// write that waited for it is answered with ErrStorageFailed, its event
// never reaches a stream (not even once the disk answers again), every
// later write is refused with the same error, and StorageFailure (/readyz)
// reports it.
func TestFailedWALFlushStopsWritesAndHoldsBackEvents(t *testing.T) {
	st, err := Open(context.Background(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var cur EventCursor
	if cur.Last, err = st.SafeEventStart(ctx); err != nil {
		t.Fatal(err)
	}
	insert := func(recipient string) (int64, error) {
		var id int64
		err := st.Write(ctx, func(q *Q) error {
			var err error
			id, err = q.InsertEvent(ctx, recipient, "new_mail", []byte(`{}`), time.Now())
			return err
		})
		return id, err
	}
	if _, err := insert("before"); err != nil {
		t.Fatal(err)
	}
	if evs, err := st.NextEvents(ctx, &cur, 10); err != nil || len(evs) != 1 {
		t.Fatalf("the write before the failure handed out %v (%v), want one event", evs, err)
	}
	st.FailWALFlushesForTest(syscall.EIO)
	failedID, err := insert("failed")
	if !errors.Is(err, ErrStorageFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("the write whose fsync failed answered %v, want ErrStorageFailed wrapping EIO", err)
	}
	if st.StorageFailure() == nil {
		t.Fatal("StorageFailure is nil after a failed fsync")
	}
	st.FailWALFlushesForTest(nil) // the disk answers again
	if _, err := insert("after"); !errors.Is(err, ErrStorageFailed) {
		t.Fatalf("a write after the failed fsync answered %v, want ErrStorageFailed", err)
	}
	if !errors.Is(st.StorageFailure(), syscall.EIO) {
		t.Fatalf("StorageFailure = %v, want the fsync's error", st.StorageFailure())
	}
	evs, err := st.NextEvents(ctx, &cur, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		t.Errorf("event %d for %s reached a stream (the failed write's is %d)", e.ID, e.Recipient, failedID)
	}
	if last, err := st.SafeEventStart(ctx); err != nil || last >= failedID {
		t.Fatalf("SafeEventStart = %d (%v), want below the failed write's event %d", last, err, failedID)
	}
}
