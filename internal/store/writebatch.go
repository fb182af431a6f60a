package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Group commit. Every Write is queued to one writer goroutine, which takes
// whatever has queued up (at most maxBatch) and runs it in ONE transaction,
// each request inside its own SAVEPOINT: a request that fails is rolled
// back to its savepoint alone, the others commit together. Callers wait for
// the commit, so a nil answer still means the write is durable. On SQLite
// this turns N commits (each writing the WAL frames of every touched page)
// into one; on PostgreSQL it takes the replicas' write lock once per batch.

// maxBatch bounds the requests of one transaction.
const maxBatch = 128

// batchLinger bounds how long the writer waits to fill a batch. Under load
// the requests of a batch that just committed come back one by one (their
// senders get the answer, send again); taking the first of them alone
// would cost a whole commit for one request. So when the previous batch
// held more than one request and fewer than half as many are queued, the
// writer waits up to batchLinger for that half (the other requests keep
// the processor busy meanwhile). In the quiet case, one request at a time,
// nothing waits.
const batchLinger = 2 * time.Millisecond

// ErrClosed answers writes after Close.
var ErrClosed = errors.New("store: closed")

type writeReq struct {
	ctx   context.Context
	fn    func(q *Q) error
	done  chan error
	panic any
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
}

func (b *writeBatcher) start(s *Store) {
	b.once.Do(func() {
		b.reqs = make(chan *writeReq)
		b.quit = make(chan struct{})
		b.wg.Add(1)
		go s.writeLoop()
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
func (s *Store) groupWrite(ctx context.Context, fn func(q *Q) error) error {
	b := &s.batch
	b.mu.Lock()
	shut := b.shut
	b.mu.Unlock()
	if shut {
		return ErrClosed
	}
	b.start(s)
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
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
		if want := prev / 2; len(batch) < want {
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
// On SQLite it is BEGIN IMMEDIATE ... COMMIT on the writer connection,
// which the write loop holds for good (wconn) with its statements prepared
// on it (wstmts), so a statement runs without the per-call Tx.StmtContext
// of database/sql.
type writeTx struct {
	s     *Store
	db    dbtx
	sqltx *sql.Tx // PostgreSQL
}

// beginWrite opens the transaction of a batch.
func (s *Store) beginWrite(ctx context.Context) (*writeTx, error) {
	if s.dialect.Name() != "sqlite" {
		tx, err := s.writer.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &writeTx{s: s, db: tx, sqltx: tx}, nil
	}
	if s.wconn == nil {
		conn, err := s.writer.Conn(ctx)
		if err != nil {
			return nil, err
		}
		s.wconn, s.wstmts = conn, newStmtCache(conn.PrepareContext)
	}
	if _, err := s.wconn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		s.dropWriterConn() // a fresh connection next time
		return nil, err
	}
	return &writeTx{s: s, db: s.wconn}, nil
}

// dropWriterConn closes the SQLite writer connection and its statements.
func (s *Store) dropWriterConn() {
	if s.wconn != nil {
		s.wstmts.close()
		_ = s.wconn.Close()
		s.wconn, s.wstmts = nil, nil
	}
}

// q answers a query handle in the transaction.
func (w *writeTx) q() *Q {
	return &Q{db: w.db, d: w.s.dialect, tx: true, stmts: w.s.wstmts, sqltx: w.sqltx}
}

func (w *writeTx) exec(ctx context.Context, query string) error {
	_, err := w.db.ExecContext(ctx, query)
	return err
}

func (w *writeTx) commit(ctx context.Context) error {
	if t, t0 := traceStart(); t != nil {
		defer func() { t.add("COMMIT", time.Since(t0)) }()
	}
	if w.sqltx != nil {
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
		_ = w.sqltx.Rollback()
		return
	}
	_ = w.exec(ctx, "ROLLBACK")
}

// runBatch runs the requests in one transaction and answers each.
func (s *Store) runBatch(batch []*writeReq) {
	errs := make([]error, len(batch))
	ran := make([]bool, len(batch))
	fail := func(err error) {
		for i, r := range batch {
			if errs[i] == nil || ran[i] {
				errs[i] = err
			}
			r.done <- errs[i]
		}
	}
	ctx := context.Background()
	tx, err := s.beginWrite(ctx)
	if err != nil {
		fail(fmt.Errorf("store: begin: %w", err))
		return
	}
	if l := s.dialect.BeginWrite(); l != "" {
		if err := tx.exec(ctx, l); err != nil {
			tx.rollback(ctx)
			fail(fmt.Errorf("store: write lock: %w", err))
			return
		}
	}
	if len(batch) == 1 {
		// Alone in its transaction: no savepoint needed, a failure rolls
		// the transaction back.
		s.runAlone(ctx, tx, batch[0])
		return
	}
	// Savepoint statements go through the statement cache like any other.
	bq := tx.q()
	events := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if _, err := bq.Exec(ctx, "SAVEPOINT w"); err != nil {
			tx.rollback(ctx)
			fail(fmt.Errorf("store: savepoint: %w", err))
			return
		}
		q := tx.q()
		err := runFn(r, q)
		if err != nil {
			errs[i] = err
			if _, rerr := bq.Exec(ctx, "ROLLBACK TO SAVEPOINT w"); rerr != nil {
				// The database ended the transaction itself (SQLite does on
				// I/O errors): nothing of this batch is kept.
				tx.rollback(ctx)
				fail(fmt.Errorf("store: transaction lost after %v: %w", err, rerr))
				return
			}
		} else {
			ran[i] = true
			events += q.appended
		}
		if _, err := bq.Exec(ctx, "RELEASE SAVEPOINT w"); err != nil {
			tx.rollback(ctx)
			fail(fmt.Errorf("store: release savepoint: %w", err))
			return
		}
	}
	if n := s.dialect.NotifyEvents(); n != "" && events > 0 {
		if err := tx.exec(ctx, n); err != nil {
			tx.rollback(ctx)
			fail(fmt.Errorf("store: notify: %w", err))
			return
		}
	}
	if err := tx.commit(ctx); err != nil {
		fail(fmt.Errorf("store: commit: %w", err))
		return
	}
	s.kickCheckpoint()
	for i, r := range batch {
		r.done <- errs[i]
	}
}

// runAlone runs a single request in the open transaction tx.
func (s *Store) runAlone(ctx context.Context, tx *writeTx, r *writeReq) {
	if err := r.ctx.Err(); err != nil {
		tx.rollback(ctx)
		r.done <- err
		return
	}
	q := tx.q()
	if err := runFn(r, q); err != nil {
		tx.rollback(ctx)
		r.done <- err
		return
	}
	if n := s.dialect.NotifyEvents(); n != "" && q.appended > 0 {
		if err := tx.exec(ctx, n); err != nil {
			tx.rollback(ctx)
			r.done <- fmt.Errorf("store: notify: %w", err)
			return
		}
	}
	if err := tx.commit(ctx); err != nil {
		r.done <- fmt.Errorf("store: commit: %w", err)
		return
	}
	s.kickCheckpoint()
	r.done <- nil
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

// stmtCache keeps prepared statements per query text for one SQLite pool
// or connection, so a query is parsed once instead of at every call.
// Scripts and query texts built per call (long IN lists, bulk inserts) are
// not cached; the cache holds at most stmtCacheMax texts. The writer's
// cache prepares on the writer connection the write loop holds, so its
// statements run inside the loop's transactions as they are.
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
