package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. Every Write is queued to one writer goroutine, which takes
// whatever has queued up (at most maxBatch) and runs it in ONE transaction,
// each request inside its own SAVEPOINT: a request that fails is rolled
// back to its savepoint alone, the others commit together. Callers wait for
// the commit, so a nil answer still means the write is durable. On SQLite
// this turns N commits (each writing the WAL frames of every touched page)
// into one; on PostgreSQL it takes the replicas' write lock once per batch,
// and Store.writers loops run batches at once (each its own transaction).
//
// Unread counters (mailbox_counts) are not updated statement by statement:
// a batch adds up its requests' deltas and writes them just before the
// commit, in name order (flushUnread). A recipient's counter row is then
// locked only for the end of each transaction, so parallel batches sending
// to one recipient wait for each other only there, and never deadlock on
// the counters.
//
// A batch first runs without savepoints (optimistically): on SQLite a
// savepoint per request costs two statements and, for every page the
// request changes first, a copy into the statement journal, about a tenth
// of the writer's time per mail; on PostgreSQL two statements and a
// subtransaction (with its own transaction id) per request. When a request of such a batch fails, the
// transaction is rolled back whole and the batch runs again with a
// savepoint per request, so the outcome is the same as if it had run so
// from the start (a request's function may run twice: write functions are
// already required to be safe to run again, as PostgreSQL runs a request
// aborted as a deadlock again). After a batch in which a request failed,
// batches run with savepoints until one runs without a failure, so
// requests that keep failing cost at most one wasted run per batch that
// still fails, not one per failure.
//
// On PostgreSQL the statements of a request whose answers can wait are
// queued and sent as one pipelined batch (pipeline.go) at its end (with
// savepoints, with the RELEASE of its savepoint and the SAVEPOINT of the
// next request): a send costs about three round trips instead of eleven.
// A batch run again after an optimistic run failed runs with savepoints
// whatever the other write loops' last batches did.
//
// A request that PostgreSQL aborts as a deadlock or serialization failure
// (IsRetryable) is rolled back to its savepoint and run again in the next
// transaction, up to maxAttempts runs; a batch whose commit fails so runs
// again whole.

// maxBatch bounds the requests of one transaction.
const maxBatch = 128

// batchLinger bounds how long the writer waits to fill a batch. Under load
// the requests of a batch that just committed come back one by one (their
// senders get the answer, send again); taking the first of them alone
// would cost a whole commit for one request. So when the previous batch
// held more than one request and fewer than half as many are queued, the
// writer waits up to batchLinger for that half (the other requests keep
// the processor busy meanwhile). In the quiet case, one request at a
// time, nothing waits. With the WAL flushed beside the writer (SQLite,
// synchronous=full, walsync.go) the batch grows instead while an fsync
// runs (moreForBatch).
const batchLinger = 2 * time.Millisecond

// maxAttempts bounds the runs of one request that keeps being aborted as
// a deadlock; the last error is then its answer.
const maxAttempts = 5

// ErrClosed answers writes after Close.
var ErrClosed = errors.New("store: closed")

type writeReq struct {
	ctx    context.Context
	fn     func(q *Q) error
	shared bool // Store.WriteShared: the shared write lock is enough
	done   chan error
	panic  any
}

// batchState is what the requests of one transaction share.
type batchState struct {
	// shared: the transaction holds the write lock in shared mode (every
	// request is a WriteShared, PostgreSQL); Q.LockKeys then locks.
	shared bool
	// unread: counter deltas of the requests that succeeded, by name,
	// written by flushUnread before the commit.
	unread map[string]int
}

// writeBatcher owns the writer goroutine; its zero value starts it on the
// first write.
type writeBatcher struct {
	once sync.Once
	reqs chan *writeReq
	quit chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	shut bool
	// careful: the last batch had a request that failed, so the
	// next runs with a savepoint per request (see above).
	careful atomic.Bool
	// batches and carefulBatches count the transactions run, and those of
	// them run with a savepoint per request (a batch's tests read them).
	batches, carefulBatches atomic.Int64
}

func (b *writeBatcher) start(s *Store) {
	b.once.Do(func() {
		b.reqs = make(chan *writeReq)
		b.quit = make(chan struct{})
		n := max(1, s.writers)
		b.wg.Add(n)
		for range n {
			go s.writeLoop()
		}
	})
}

func (b *writeBatcher) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut {
		return
	}
	b.shut = true
	if b.quit != nil {
		close(b.quit)
		b.wg.Wait()
	}
}

// groupWrite queues fn and waits for its outcome.
func (s *Store) groupWrite(ctx context.Context, fn func(q *Q) error, shared bool) error {
	b := &s.batch
	b.mu.Lock()
	shut := b.shut
	b.mu.Unlock()
	if shut {
		return ErrClosed
	}
	if err := s.wsync.failure(); err != nil {
		return err // an fsync failed: no write is taken any more
	}
	b.start(s)
	r := &writeReq{ctx: ctx, fn: fn, shared: shared, done: make(chan error, 1)}
	select {
	case b.reqs <- r:
	case <-b.quit:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	err := <-r.done // once queued, the request is always answered
	if r.panic != nil {
		panic(r.panic)
	}
	return err
}

func (s *Store) writeLoop() {
	b := &s.batch
	defer b.wg.Done()
	defer s.dropWriterConn()
	prev := 0 // size of the previous batches (see batchLinger)
	var linger *time.Timer
	for {
		var first *writeReq
		select {
		case first = <-b.reqs:
		case <-b.quit:
			return
		}
		batch := []*writeReq{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case r := <-b.reqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		if want := prev / 2; s.wsync == nil && len(batch) < want {
			if linger == nil {
				linger = time.NewTimer(batchLinger)
			} else {
				linger.Reset(batchLinger)
			}
		fill:
			for len(batch) < want {
				select {
				case r := <-b.reqs:
					batch = append(batch, r)
				case <-linger.C:
					break fill
				case <-b.quit:
					break fill
				}
			}
			linger.Stop()
		}
		// A batch cut short by the linger lowers the next target by a
		// quarter only: one slow moment does not end the batching.
		prev = max(len(batch), prev-prev/4)
		s.runBatch(batch)
	}
}

// writeTx is the transaction of one batch. On PostgreSQL it is a *sql.Tx.
// On SQLite it is BEGIN IMMEDIATE ... COMMIT on the writer connection the
// write loop holds for good (wraw, sqliteconn.go: the library's connection
// itself, its statements prepared once on it), so a statement runs without
// database/sql or the driver in between.
type writeTx struct {
	s     *Store
	db    dbtx
	sqltx *sql.Tx     // PostgreSQL
	conn  *sql.Conn   // PostgreSQL: the connection sqltx runs on
	pipe  *pgPipe     // PostgreSQL: its queued statements (pipeline.go)
	raw   *sqliteConn // SQLite
	state *batchState
}

// beginWrite opens the transaction of a batch. On PostgreSQL it holds its
// connection (a database/sql Conn) so that queued statements go on the
// transaction's own connection (pipeline.go).
func (s *Store) beginWrite(ctx context.Context) (*writeTx, error) {
	if s.dialect.Name() != "sqlite" {
		conn, err := s.writer.Conn(ctx)
		if err != nil {
			return nil, err
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			conn.Close()
			return nil, err
		}
		return &writeTx{s: s, db: tx, sqltx: tx, conn: conn, pipe: &pgPipe{conn: conn, d: s.dialect}}, nil
	}
	if s.wraw == nil {
		c, err := openSQLiteConn(s.path, s.writerPragmas)
		if err != nil {
			return nil, err
		}
		s.wraw = c
	}
	if _, err := s.wraw.exec("BEGIN IMMEDIATE", nil); err != nil {
		s.dropWriterConn() // a fresh connection next time
		return nil, err
	}
	return &writeTx{s: s, raw: s.wraw}, nil
}

// dropWriterConn closes the SQLite writer connection and its statements.
func (s *Store) dropWriterConn() {
	if s.wraw != nil {
		s.wraw.close()
		s.wraw = nil
	}
}

// q answers a query handle in the transaction.
func (w *writeTx) q() *Q {
	return &Q{db: w.db, d: w.s.dialect, tx: true, sqltx: w.sqltx, raw: w.raw, batch: w.state, pipe: w.pipe}
}

func (w *writeTx) exec(ctx context.Context, query string) error {
	if w.raw != nil {
		_, err := w.raw.exec(query, nil)
		return err
	}
	_, err := w.db.ExecContext(ctx, query)
	return err
}

// control runs the transaction's own statements (write lock, savepoints,
// notification; none with parameters). On PostgreSQL they go in one
// pipelined batch with whatever the transaction queued before them
// (pipeline.go; the batch's counters, flushUnread): one round trip. On
// SQLite (in process, no round trip) each runs alone.
func (w *writeTx) control(ctx context.Context, stmts ...string) error {
	q := w.q()
	if w.pipe != nil {
		q.queueControl(stmts...)
		return q.Flush(ctx)
	}
	if len(stmts) == 0 {
		return nil
	}
	for _, st := range stmts {
		if _, err := q.Exec(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

func (w *writeTx) commit(ctx context.Context) error {
	if t, t0 := traceStart(); t != nil {
		defer func() { t.add("COMMIT", time.Since(t0)) }()
	}
	if w.sqltx != nil {
		defer w.conn.Close()
		return w.sqltx.Commit()
	}
	if err := w.exec(ctx, "COMMIT"); err != nil {
		w.rollback(ctx)
		return err
	}
	return nil
}

// rollback ends the transaction keeping nothing; an error (the database
// may have ended the transaction itself) leaves nothing to undo.
func (w *writeTx) rollback(ctx context.Context) {
	if w.sqltx != nil {
		w.pipe.drop()
		_ = w.sqltx.Rollback()
		_ = w.conn.Close()
		return
	}
	_ = w.exec(ctx, "ROLLBACK")
}

// runBatch runs the requests in one transaction and answers each; those
// aborted as deadlocks run again in a new transaction (maxAttempts).
func (s *Store) runBatch(batch []*writeReq) {
	if err := s.wsync.failure(); err != nil {
		// Queued before an fsync failed: refused like every later write.
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	careful := false
	for attempt := 1; len(batch) > 0; attempt++ {
		batch, careful = s.runBatchOnce(batch, attempt >= maxAttempts, careful)
	}
}

// runBatchOnce runs the requests in one transaction, answers each, and
// answers the requests to run again instead (none when last).
//
// careful runs it with a savepoint per request; rerun answers true when an
// optimistic run failed, so the requests answered to run again are to run
// with savepoints.
func (s *Store) runBatchOnce(batch []*writeReq, last, careful bool) (again []*writeReq, rerun bool) {
	errs := make([]error, len(batch))
	ran := make([]bool, len(batch))
	retry := make([]bool, len(batch))
	var lastEvent int64 // the highest event id the batch keeps
	var fts []ftsRow    // the mail_fts rows it keeps (ftsbatch.go)
	var durable []syncAnswer
	// answer answers each request, or runs it again; after a commit with
	// synchronous=full (walsync.go) those that succeeded are answered once
	// an fsync of the WAL begun after the commit has ended.
	answer := func(committed bool) {
		for i, r := range batch {
			switch {
			case retry[i]:
				again = append(again, r)
			case committed && s.wsync != nil && errs[i] == nil:
				durable = append(durable, syncAnswer{r: r})
			default:
				r.done <- errs[i]
			}
		}
		if len(durable) > 0 {
			s.wsync.answerAfterSync(durable, lastEvent)
		}
	}
	// fail ends the transaction keeping nothing: a deadlock runs the
	// whole batch again, any other error is every request's answer
	// (except those that failed on their own).
	fail := func(tx *writeTx, err error) ([]*writeReq, bool) {
		if tx != nil {
			tx.rollback(context.Background())
		}
		if IsRetryable(err) && !last {
			return batch, false
		}
		for i := range batch {
			if errs[i] == nil || ran[i] || retry[i] {
				errs[i] = err
			}
			retry[i] = false
		}
		answer(false)
		return nil, false
	}
	ctx := context.Background()
	shared := s.dialect.Name() == "postgres"
	for _, r := range batch {
		shared = shared && r.shared
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fail(nil, fmt.Errorf("store: begin: %w", err))
	}
	tx.state = &batchState{shared: shared, unread: map[string]int{}}
	// The transaction's own statements (the write lock, savepoints, the
	// notification) wait in pending and go with the next one: on
	// PostgreSQL in one round trip (control), so a request costs one
	// savepoint round trip instead of two.
	var pending []string
	if l := s.dialect.BeginWrite(shared); l != "" {
		pending = append(pending, l)
	}
	// Alone in its transaction, a request needs no savepoint: a failure
	// rolls the transaction back.
	single := len(batch) == 1
	// optimistic: a batch runs without savepoints; a failure runs it
	// again with them (see the top of this file).
	optimistic := !single && !careful && !s.batch.careful.Load()
	s.batch.batches.Add(1)
	if !single && !optimistic {
		s.batch.carefulBatches.Add(1)
	}
	failed := false
	events := 0
	// open: the savepoint of the next request is open already (PostgreSQL:
	// it went with the previous request's queued statements).
	open := false
	for i := 0; i < len(batch) || s.moreForBatch(&batch); i++ {
		r := batch[i]
		for len(errs) < len(batch) { // moreForBatch added requests
			errs, ran, retry = append(errs, nil), append(ran, false), append(retry, false)
		}
		alone := single && i == 0 // the first ran without a savepoint
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if !alone && !optimistic && !open {
			pending = append(pending, "SAVEPOINT w")
		}
		open = false
		if err := tx.control(ctx, pending...); err != nil {
			return fail(tx, fmt.Errorf("store: write lock or savepoint: %w", err))
		}
		pending = pending[:0]
		q := tx.q()
		q.ftsLater = tx.raw != nil
		err := runFn(r, q)
		if tx.pipe != nil && err != nil {
			tx.pipe.drop() // never sent: the savepoint or transaction is rolled back
		} else if tx.pipe != nil {
			// The request's queued statements go now, with the savepoint
			// statements up to the next request's in the same round trip.
			// Their error is the request's; after a failure PostgreSQL
			// skips the rest of the batch, the savepoint ones included.
			if !alone && !optimistic && i+1 < len(batch) {
				q.queueControl("RELEASE SAVEPOINT w", "SAVEPOINT w")
				open = true
			}
			err = q.Flush(ctx)
			var pe *pipeError
			if errors.As(err, &pe) && pe.control {
				return fail(tx, fmt.Errorf("store: savepoint: %w", err))
			}
			if err != nil {
				open = false
			}
		}
		if err != nil && optimistic {
			// Nothing of the batch is answered yet: all of it runs again,
			// each request in its own savepoint.
			tx.rollback(ctx)
			for _, r := range batch {
				r.panic = nil
			}
			s.batch.careful.Store(true)
			return batch, true
		}
		if err != nil {
			failed = true
		}
		if err != nil && alone {
			tx.rollback(ctx)
			retry[i] = (q.retry || IsRetryable(err)) && r.panic == nil && !last
			errs[i] = err
			answer(false)
			return again, false
		}
		if err != nil {
			errs[i] = err
			retry[i] = (q.retry || IsRetryable(err)) && r.panic == nil && !last
			if rerr := tx.control(ctx, "ROLLBACK TO SAVEPOINT w"); rerr != nil {
				// The database ended the transaction itself (SQLite does on
				// I/O errors): nothing of this batch is kept.
				return fail(tx, fmt.Errorf("store: transaction lost after %v: %w", err, rerr))
			}
		} else {
			ran[i] = true
			events += q.appended
			lastEvent = max(lastEvent, q.lastEvent)
			fts = append(fts, q.ftsRows...)
			for name, d := range q.staged {
				tx.state.unread[name] += d
			}
		}
		if !alone && !optimistic && !open {
			pending = append(pending, "RELEASE SAVEPOINT w")
		}
	}
	if !single && !failed {
		s.batch.careful.Store(false)
	}
	if tx.sqltx == nil {
		// SQLite: the last savepoint ends before the batch's search rows
		// are written (FTS5 flushes its pending rows at savepoints).
		if err := tx.control(ctx, pending...); err != nil {
			return fail(tx, fmt.Errorf("store: release savepoint: %w", err))
		}
		pending = pending[:0]
	}
	// On PostgreSQL the counters are written inside the last savepoint
	// (its release waits in pending): a failure here fails the whole
	// batch anyway. They are queued, and go with the release and the
	// notification in one round trip.
	if err := tx.flushUnread(ctx); err != nil {
		return fail(tx, fmt.Errorf("store: unread counters: %w", err))
	}
	if err := writeFTS(ctx, tx.q(), fts); err != nil {
		return fail(tx, fmt.Errorf("store: search index: %w", err))
	}
	if n := s.dialect.NotifyEvents(); n != "" && events > 0 {
		pending = append(pending, n)
	}
	if err := tx.control(ctx, pending...); err != nil {
		return fail(tx, fmt.Errorf("store: release savepoint or notify: %w", err))
	}
	if err := tx.commit(ctx); err != nil {
		return fail(nil, fmt.Errorf("store: commit: %w", err))
	}
	s.kickCheckpoint()
	answer(true)
	return again, false
}

// moreForBatch adds to a batch whose requests have all run the requests
// that arrive while the WAL syncer's fsync runs (walsync.go), and answers
// whether it added any. Their answers would wait for the fsync after that
// one anyway, which begins when this batch commits; so they share its
// commit (one commit and one index segment for all of them), and the work
// of running them overlaps the fsync instead of stalling the next one. The
// batch commits once the fsync has ended, at maxBatch requests, or at
// Close; without a syncer nothing is added.
func (s *Store) moreForBatch(batch *[]*writeReq) bool {
	if s.wsync == nil || len(*batch) >= maxBatch {
		return false
	}
	b := &s.batch
	idle, busy := s.wsync.idleChan()
	if !busy {
		return false
	}
	select {
	case r := <-b.reqs:
		*batch = append(*batch, r)
		for len(*batch) < maxBatch {
			select {
			case r := <-b.reqs:
				*batch = append(*batch, r)
			default:
				return true
			}
		}
		return true
	case <-idle:
		return false
	case <-b.quit:
		return false
	}
}

// flushUnread writes the batch's unread counter deltas, in name order
// (so two batches lock shared counter rows in one order), at most
// flushRows names per statement.
func (w *writeTx) flushUnread(ctx context.Context) error {
	names := make([]string, 0, len(w.state.unread))
	for name, d := range w.state.unread {
		if d != 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	const flushRows = 64
	q := w.q()
	for len(names) > 0 {
		chunk := names[:min(len(names), flushRows)]
		names = names[len(chunk):]
		var b strings.Builder
		b.WriteString(`INSERT INTO mailbox_counts (name, unread) VALUES `)
		args := make([]any, 0, 2*len(chunk))
		for i, name := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?)")
			args = append(args, name, w.state.unread[name])
		}
		b.WriteString(` ON CONFLICT (name) DO UPDATE SET unread = mailbox_counts.unread + excluded.unread`)
		if w.pipe != nil {
			q.ExecLater(ctx, b.String(), args...) // its error is the control statements' after it
			continue
		}
		if _, err := q.Exec(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	clear(w.state.unread)
	return nil
}

// runFn calls the request's function, turning a panic into an error for
// the batch and handing the panic back to the caller's goroutine.
func runFn(r *writeReq, q *Q) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panic = p
			err = fmt.Errorf("store: panic in write: %v", p)
		}
	}()
	return r.fn(q)
}

// stmtCache keeps prepared statements per query text for the SQLite
// reader pool, so a query is parsed once instead of at every call.
// Scripts and query texts built per call (long IN lists, bulk inserts) are
// not cached; the cache holds at most stmtCacheMax texts. (The writer
// connection keeps its own, sqliteconn.go.)
type stmtCache struct {
	prepare func(ctx context.Context, query string) (*sql.Stmt, error)
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	done    bool
}

const stmtCacheMax = 512

func newStmtCache(prepare func(ctx context.Context, query string) (*sql.Stmt, error)) *stmtCache {
	return &stmtCache{prepare: prepare, m: map[string]*sql.Stmt{}}
}

func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok || c.done {
		return st
	}
	// Scripts (migrations) and texts built per call are run unprepared.
	if len(c.m) >= stmtCacheMax || strings.Contains(query, ";") || strings.Count(query, "?") > 128 {
		return nil
	}
	st, err := c.prepare(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil // the unprepared call reports the error
	}
	c.m[query] = st
	return st
}

func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	for _, st := range c.m {
		st.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// stmt answers the cached statement for query bound to q's transaction, or
// nil to run it unprepared.
func (q *Q) stmt(ctx context.Context, query string) *sql.Stmt {
	if q.stmts == nil {
		return nil
	}
	st := q.stmts.get(ctx, query)
	if st == nil {
		return nil
	}
	if q.sqltx != nil {
		return q.sqltx.StmtContext(ctx, st)
	}
	return st
}
