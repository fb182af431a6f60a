package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openTemp answers a fresh store on the test database (SQLite, or
// PostgreSQL with AGENTMAIL_TEST_DATABASE=postgres; postgres_test.go).
func openTemp(t *testing.T) *Store {
	t.Helper()
	return openTestStore(t)
}

func TestOpenAppliesMigrationsOnce(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := Open(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := Migrations()
	var n int
	if err := st.Read().QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("schema_migrations has %d rows (%v), want %d", n, err, len(ms))
	}
	st.Close()
	st, err = Open(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	if err := st.Read().QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("after reopen schema_migrations has %d rows, want %d", n, len(ms))
	}
}

func TestSecondOpenOnSameDataDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(context.Background(), Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = Open(context.Background(), Options{DataDir: dir})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "agentmail.db.lock") {
		t.Fatalf("second Open: %v, want ErrLocked naming the lock file", err)
	}
}

func TestDatabaseURLSelectsSQLitePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "mail.db")
	st, err := Open(context.Background(), Options{DatabaseURL: "sqlite://" + path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Path() != path {
		t.Fatalf("Path() = %q, want %q", st.Path(), path)
	}
	if _, err := Open(context.Background(), Options{DatabaseURL: "mysql://x"}); err == nil {
		t.Fatal("an unknown DATABASE_URL scheme was accepted")
	}
}

func TestWriteRollsBackOnError(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := st.Write(ctx, func(q *Q) error {
		if _, err := q.ClaimName(ctx, "alice", KindPerson, time.Now()); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write = %v", err)
	}
	if _, err := st.Read().NameKind(ctx, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("name survived a rolled back transaction: %v", err)
	}
}

func TestClaimNameIsUniqueAcrossKinds(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	err := st.Write(ctx, func(q *Q) error {
		ok, err := q.ClaimName(ctx, "dsh", KindAgent, time.Now())
		if err != nil || !ok {
			t.Fatalf("first claim: %v %v", ok, err)
		}
		ok, err = q.ClaimName(ctx, "dsh", KindPerson, time.Now())
		if err != nil || ok {
			t.Fatalf("second claim: ok=%v err=%v, want false, nil", ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEventIDsGrow(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	var ids []int64
	for i := 0; i < 3; i++ {
		err := st.Write(ctx, func(q *Q) error {
			id, err := q.InsertEvent(ctx, "dsh", "new_mail", []byte(`{}`), time.Now())
			ids = append(ids, id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !(ids[0] < ids[1] && ids[1] < ids[2]) {
		t.Fatalf("event ids %v do not grow", ids)
	}
	evs, err := st.Read().EventsAfter(ctx, ids[0], 10)
	if err != nil || len(evs) != 2 || evs[0].ID != ids[1] {
		t.Fatalf("EventsAfter = %+v, %v", evs, err)
	}
}

func TestPostgresRebindNumbersPlaceholders(t *testing.T) {
	p := &Postgres{}
	got := p.Rebind(`SELECT a FROM t WHERE a = ? AND b = '?' AND c IN (?, ?)`)
	want := `SELECT a FROM t WHERE a = $1 AND b = '?' AND c IN ($2, $3)`
	if got != want {
		t.Fatalf("Rebind = %q, want %q", got, want)
	}
}

func TestConcurrentWritesKeepEachOthersOutcome(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	boom := errors.New("boom")
	const n = 200
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			errs <- st.Write(ctx, func(q *Q) error {
				if _, err := q.ClaimName(ctx, fmt.Sprintf("n%d", i), KindPerson, time.Now()); err != nil {
					return err
				}
				if i%3 == 0 {
					return boom // written, then refused: must leave nothing
				}
				return nil
			})
		}(i)
	}
	failed := 0
	for i := 0; i < n; i++ {
		if err := <-errs; errors.Is(err, boom) {
			failed++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	var kept int
	if err := st.Read().QueryRow(ctx, `SELECT COUNT(*) FROM names`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if failed != 67 || kept != n-67 {
		t.Fatalf("failed %d kept %d, want 67 and %d", failed, kept, n-67)
	}
	for i := 0; i < n; i += 3 {
		if _, err := st.Read().NameKind(ctx, fmt.Sprintf("n%d", i)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("n%d survived its failed write", i)
		}
	}
}

func TestWritePanicReachesTheCaller(t *testing.T) {
	st := openTemp(t)
	defer func() {
		if p := recover(); p != "kaboom" {
			t.Fatalf("recovered %v, want kaboom", p)
		}
		// The store still works afterwards.
		if err := st.Write(context.Background(), func(q *Q) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}()
	_ = st.Write(context.Background(), func(q *Q) error { panic("kaboom") })
}

func TestWriteAfterCloseFails(t *testing.T) {
	st, err := Open(context.Background(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := st.Write(context.Background(), func(q *Q) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close = %v", err)
	}
}

// TestSQLiteSynchronousIsFullByDefault checks the durability setting the
// writer really runs with: FULL unless NORMAL is asked for, and an unknown
// value is refused naming the variable. FULL is the writer connection's
// NORMAL with every answer after an fsync of the WAL by the syncer beside
// it (walsync.go; TestFullSynchronousAnswersAfterTheWALIsFlushed).
func TestSQLiteSynchronousIsFullByDefault(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		opt    string
		want   int  // the writer connection's PRAGMA synchronous: 1 NORMAL, 2 FULL
		syncer bool // answers wait for the WAL syncer's fsync
		level  string
	}{{"", 1, true, "FULL"}, {"full", 1, true, "FULL"}, {"NORMAL", 1, false, "NORMAL"}} {
		st, err := Open(ctx, Options{DataDir: t.TempDir(), Synchronous: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		var got int
		if err := st.Write(ctx, func(q *Q) error {
			return q.QueryRow(ctx, `PRAGMA synchronous`).Scan(&got)
		}); err != nil {
			t.Fatal(err)
		}
		syncer, level := st.wsync != nil, st.Synchronous()
		st.Close()
		if got != c.want || syncer != c.syncer || level != c.level {
			t.Errorf("Synchronous %q: writer runs PRAGMA synchronous=%d with syncer %v (%s), want %d with syncer %v (%s)",
				c.opt, got, syncer, level, c.want, c.syncer, c.level)
		}
	}
	if _, err := Open(ctx, Options{DataDir: t.TempDir(), Synchronous: "off"}); err == nil || !strings.Contains(err.Error(), "AGENTMAIL_SQLITE_SYNCHRONOUS") {
		t.Errorf("Synchronous off: %v, want a refusal naming AGENTMAIL_SQLITE_SYNCHRONOUS", err)
	}
}

// asOneBatch runs n writes as one batch of the write loop, as if they
// had been queued together, and answers each write's error. The write
// loop must be idle (no other write of the store runs meanwhile).
func asOneBatch(st *Store, n int, fn func(i int, q *Q) error) []error {
	reqs := make([]*writeReq, n)
	for i := range reqs {
		i := i
		reqs[i] = &writeReq{ctx: context.Background(), fn: func(q *Q) error { return fn(i, q) }, done: make(chan error, 1)}
	}
	st.runBatch(reqs)
	errs := make([]error, n)
	for i, r := range reqs {
		errs[i] = <-r.done
	}
	return errs
}

// A SQLite batch in which every request succeeds runs without a
// savepoint per request; one in which a request fails runs again with
// savepoints and keeps every other request's outcome.
func TestSQLiteBatchUsesSavepointsOnlyWhenARequestFails(t *testing.T) {
	st := openTemp(t)
	if st.dialect.Name() != "sqlite" {
		t.Skip("SQLite's batches")
	}
	ctx := context.Background()
	const n = 60
	b0, c0 := st.batch.batches.Load(), st.batch.carefulBatches.Load()
	errs := asOneBatch(st, n, func(i int, q *Q) error {
		_, err := q.ClaimName(ctx, fmt.Sprintf("ok%d", i), KindPerson, time.Now())
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if b, c := st.batch.batches.Load()-b0, st.batch.carefulBatches.Load()-c0; b != 1 || c != 0 {
		t.Fatalf("%d transactions, %d of them with savepoints, where nothing failed; want 1 and 0", b, c)
	}

	boom := errors.New("boom")
	runs := make([]int, n)
	errs = asOneBatch(st, n, func(i int, q *Q) error {
		runs[i]++
		if _, err := q.ClaimName(ctx, fmt.Sprintf("mixed%d", i), KindPerson, time.Now()); err != nil {
			return err
		}
		if i%10 == 3 {
			return boom
		}
		return nil
	})
	for i, err := range errs {
		_, found := st.Read().NameKind(ctx, fmt.Sprintf("mixed%d", i))
		switch {
		case i%10 == 3 && (!errors.Is(err, boom) || !errors.Is(found, ErrNotFound)):
			t.Fatalf("write %d: answer %v, lookup %v; want boom and nothing kept", i, err, found)
		case i%10 != 3 && (err != nil || found != nil):
			t.Fatalf("write %d: answer %v, lookup %v; want it kept", i, err, found)
		}
	}
	if b, c := st.batch.batches.Load()-b0, st.batch.carefulBatches.Load()-c0; b != 3 || c != 1 || runs[0] != 2 || runs[4] != 1 {
		t.Fatalf("%d transactions, %d with savepoints, runs %v; want 3 and 1 (one without failures, then the optimistic run up to the first failure and the run with savepoints), write 0 run twice, write 4 once", b, c, runs)
	}
	// The next batch starts with savepoints, as the last one had a failure;
	// a batch without one lets the one after it run without them again.
	for k := 0; k < 2; k++ {
		if errs := asOneBatch(st, 4, func(i int, q *Q) error {
			_, err := q.ClaimName(ctx, fmt.Sprintf("after%d-%d", k, i), KindPerson, time.Now())
			return err
		}); errs[0] != nil {
			t.Fatal(errs[0])
		}
	}
	if c := st.batch.carefulBatches.Load() - c0; c != 2 {
		t.Fatalf("%d batches with savepoints after the failing one; want exactly the next one", c-1)
	}
}
