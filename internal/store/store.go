// Package store is the repository layer: every SQL query of the gateway,
// the embedded numbered migrations, and (in dialect.go) the one place where
// SQLite and PostgreSQL differ.
//
// Conventions: times are BIGINT unix milliseconds UTC; ids are TEXT UUID v7
// (time ordered, so ordering by id is ordering by creation); the event log id
// is an integer that only grows. Queries use `?` placeholders and go through
// Q, which rebinds them for the dialect.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrNotFound is returned by single-row lookups that find nothing.
var ErrNotFound = errors.New("store: not found")

// ErrLocked is returned by Open when another gateway holds the data
// directory's lock.
var ErrLocked = errors.New("store: the database is in use by another gateway")

// Store holds the database handles. For SQLite there is one writer
// connection (so writes never contend and SQLITE_BUSY cannot happen between
// our own writers) and a pool of readers (WAL lets them run beside the
// writer).
type Store struct {
	dialect Dialect
	writer  *sql.DB
	reader  *sql.DB
	lock    *os.File
	path    string // SQLite file path, "" for PostgreSQL
	// Statement cache of the SQLite reader pool (nil for PostgreSQL, whose
	// driver caches statements itself).
	rstmts  *stmtCache
	ckpt    *checkpointer // background WAL checkpoints (SQLite, checkpoint.go)
	batch   writeBatcher
	pgURL   string // PostgreSQL connection URL, "" for SQLite (postgres.go)
	writers int    // batches run at once (PostgresPool.Writers; SQLite: 1)
	sync    string // SQLite PRAGMA synchronous: "FULL" or "NORMAL"
	closeMu sync.Once

	// pairsReady is set once every search index row has its character
	// pairs (PostgreSQL, migration 0049); pairsStop ends the indexing of
	// the rows still without them and pairsDone is closed when it has
	// ended (search.go).
	pairsReady atomic.Bool
	pairsStop  context.CancelFunc
	pairsDone  chan struct{}

	// wraw is the SQLite writer connection the write loop holds
	// (writebatch.go, sqliteconn.go), opened with writerPragmas; both
	// belong to the write loop. wsync flushes its WAL for synchronous=FULL
	// (walsync.go), nil otherwise.
	wraw          *sqliteConn
	writerPragmas []string
	wsync         *walSyncer
}

// Options configures Open.
//
// DatabaseURL is "" (SQLite at DataDir/agentmail.db) or
// "sqlite:///absolute/path.db" (or "sqlite://relative.db", "file:..."), or
// "postgres://..." / "postgresql://..." for PostgreSQL (postgres.go; no
// data-directory lock then, replicas share the database). DataDir defaults
// to "./data" and is created with mode 0700.
type Options struct {
	DatabaseURL string
	DataDir     string
	// ReadConns bounds the reader pool; default 8.
	ReadConns int
	// Synchronous is SQLite's durability (AGENTMAIL_SQLITE_SYNCHRONOUS):
	// SyncFull (the default, "" too) or SyncNormal; see SQLiteSynchronous.
	// PostgreSQL ignores it (its own synchronous_commit rules there).
	Synchronous string
	// Log receives what the store reports by itself (a failed fsync of the
	// write-ahead log, walsync.go); default slog.Default().
	Log *slog.Logger
}

// SQLite durability settings (Options.Synchronous), both in WAL mode:
//
//   - SyncFull: every commit waits for the fsync of the WAL, so a mail that
//     was answered survives a power loss or an operating-system crash as
//     well as a killed process. Group commit (writebatch.go) makes one
//     fsync serve every write of a batch, and each answer waits for its
//     batch's fsync.
//   - SyncNormal: the WAL is fsynced at checkpoints only. A killed gateway
//     loses nothing it answered (the WAL is in the operating system's page
//     cache), but a power loss or kernel crash can lose the last answered
//     commits (never corrupt the database).
const (
	SyncFull   = "full"
	SyncNormal = "normal"
)

// SQLiteSynchronous checks an Options.Synchronous value and answers the
// PRAGMA synchronous level ("FULL" or "NORMAL"); "" is SyncFull.
func SQLiteSynchronous(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", SyncFull:
		return "FULL", nil
	case SyncNormal:
		return "NORMAL", nil
	default:
		return "", fmt.Errorf("store: AGENTMAIL_SQLITE_SYNCHRONOUS=%q: use %q (the default: durable on power loss) or %q (durable when the process is killed, not on power loss)", v, SyncFull, SyncNormal)
	}
}

// Open opens (creating if needed) the database, takes the data directory
// lock, and applies pending migrations.
//
// A second gateway on the same SQLite file gets ErrLocked with a message
// naming the lock file (issue 2 item 11), instead of corrupting it.
func Open(ctx context.Context, opt Options) (*Store, error) {
	if IsPostgresURL(opt.DatabaseURL) {
		return openPostgres(ctx, opt)
	}
	path, err := sqlitePath(opt)
	if err != nil {
		return nil, err
	}
	sync, err := SQLiteSynchronous(opt.Synchronous)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: create data directory: %w", err)
	}
	lock, err := takeLock(path + ".lock")
	if err != nil {
		return nil, err
	}
	if err := makeSQLiteFilesPrivate(path, opt.Log); err != nil {
		lock.Close()
		return nil, err
	}
	s := &Store{dialect: SQLite{}, lock: lock, path: path, sync: sync}
	dsn := func(extra string) string {
		return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
			"&_pragma=synchronous(" + sync + ")&_pragma=foreign_keys(ON)&_pragma=temp_store(MEMORY)&_pragma=cache_size(-32768)&_time_format=sqlite" + extra
	}
	// The write loop's own connection (sqliteconn.go) is set up as the
	// writer pool's DSN below sets up its connection, except that FULL is
	// kept by walSyncer's fsyncs beside the writer (walsync.go), whose own
	// commits then need no fsync.
	writerSync := sync
	if sync == "FULL" {
		writerSync = "NORMAL"
		s.wsync = startWALSyncer(path, opt.Log)
	}
	s.writerPragmas = []string{"PRAGMA busy_timeout = 10000", "PRAGMA journal_mode = WAL",
		"PRAGMA synchronous = " + writerSync, "PRAGMA foreign_keys = ON", "PRAGMA temp_store = MEMORY",
		"PRAGMA cache_size = -32768", "PRAGMA wal_autocheckpoint = " + strconv.Itoa(writerAutoCheckpoint)}
	s.writer, err = sql.Open("sqlite", dsn("&_txlock=immediate"+
		"&_pragma=wal_autocheckpoint("+strconv.Itoa(writerAutoCheckpoint)+")"))
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s.writer.SetMaxOpenConns(1)
	s.writer.SetMaxIdleConns(1)
	s.writer.SetConnMaxLifetime(0)
	s.reader, err = sql.Open("sqlite", dsn("&_pragma=query_only(ON)"))
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	n := opt.ReadConns
	if n <= 0 {
		n = 8
	}
	s.reader.SetMaxOpenConns(n)
	s.reader.SetMaxIdleConns(n)
	s.rstmts = newStmtCache(s.reader.PrepareContext)
	if err := s.writer.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if s.wsync != nil {
		last, err := s.Read().MaxEventID(ctx)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
		s.wsync.assumeDurable(last)
	}
	if err := s.startCheckpointer(dsn("")); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
}

// PrivateFileMode is the mode of the SQLite database, its -wal and -shm
// files and of `agentmail backup` copies: they hold password hashes and
// mail bodies, so only the gateway's own user may read them.
const PrivateFileMode os.FileMode = 0o600

// makeSQLiteFilesPrivate creates the database file at path with
// PrivateFileMode before SQLite opens it, and narrows an existing database,
// -wal and -shm file (written by an older gateway) to that mode, whatever
// the umask. SQLite creates the -wal and -shm files with the database
// file's mode on Unix, so they follow. It logs a warning (never fails) when
// the directory holding path can be read or entered by other users.
// Errors: the file cannot be created or its mode changed.
func makeSQLiteFilesPrivate(path string, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, PrivateFileMode)
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return fmt.Errorf("store: %w", err)
		}
		if st.Mode().Perm() != PrivateFileMode {
			if err := os.Chmod(p, PrivateFileMode); err != nil {
				return fmt.Errorf("store: make %s private (mode 0600): %w", p, err)
			}
		}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o077 != 0 {
		log.Warn("store: the data directory can be read by other users; it holds password hashes and mail bodies: run chmod 700 on it",
			"dir", dir, "mode", fmt.Sprintf("%#o", st.Mode().Perm()))
	}
	return nil
}

// sqlitePath turns Options into the SQLite file path.
func sqlitePath(opt Options) (string, error) {
	u := strings.TrimSpace(opt.DatabaseURL)
	switch {
	case u == "":
		dir := opt.DataDir
		if dir == "" {
			dir = "./data"
		}
		return filepath.Join(dir, "agentmail.db"), nil
	case strings.HasPrefix(u, "sqlite://"):
		p, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("store: DATABASE_URL: %w", err)
		}
		path := p.Host + p.Path // sqlite:///abs → "/abs"; sqlite://rel.db → "rel.db"
		if path == "" {
			return "", errors.New("store: DATABASE_URL sqlite:// needs a file path, e.g. sqlite:///var/lib/agentmail/mail.db")
		}
		return path, nil
	case strings.HasPrefix(u, "file:"):
		return strings.TrimPrefix(u, "file:"), nil
	default:
		return "", fmt.Errorf("store: DATABASE_URL %q: use sqlite:///path or postgres://...", u)
	}
}

// takeLock holds an exclusive advisory lock on path for the life of the
// process.
func takeLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		msg := strings.TrimSpace(string(holder))
		if msg != "" {
			msg = " (held by " + msg + ")"
		}
		return nil, fmt.Errorf("%w: %s is locked%s; stop the other gateway or give this one another AGENTMAIL_DATA_DIR", ErrLocked, path, msg)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "pid %d since %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	return f, nil
}

// Close closes the handles and releases the lock.
func (s *Store) Close() error {
	var err error
	s.closeMu.Do(func() {
		if s.pairsStop != nil {
			s.pairsStop()
			<-s.pairsDone
		}
		s.batch.stop() // the write loop closes the writer connection
		s.wsync.stop() // answers what the write loop's last batch handed over
		err = errors.Join(err, s.ckpt.stop())
		s.rstmts.close()
		if s.reader != nil {
			err = errors.Join(err, s.reader.Close())
		}
		if s.writer != nil {
			err = errors.Join(err, s.writer.Close())
		}
		if s.lock != nil {
			_ = syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
			err = errors.Join(err, s.lock.Close())
		}
	})
	return err
}

// Dialect answers the store's dialect.
func (s *Store) Dialect() Dialect { return s.dialect }

// Synchronous answers SQLite's PRAGMA synchronous level in force ("FULL"
// or "NORMAL"), "" for PostgreSQL.
func (s *Store) Synchronous() string { return s.sync }

// Path answers the SQLite file path ("" for PostgreSQL).
func (s *Store) Path() string { return s.path }

// StorageFailure answers why the store refuses writes: an error wrapping
// ErrStorageFailed once an fsync of the SQLite write-ahead log failed
// (synchronous=full, walsync.go), which stays until the process restarts;
// nil otherwise (always on PostgreSQL and with synchronous=normal). For
// /readyz, which reports the gateway not ready then.
func (s *Store) StorageFailure() error { return s.wsync.failure() }

// FailWALFlushesForTest makes every later fsync of the SQLite write-ahead
// log answer err instead of flushing (nil: flush again), so tests of
// other packages can see what a failed flush does (walsync.go); no effect
// without a WAL syncer (PostgreSQL, synchronous=normal). Never call it
// outside tests.
func (s *Store) FailWALFlushesForTest(err error) {
	if s.wsync == nil {
		return
	}
	if err == nil {
		s.wsync.syncHook.Store(nil)
		return
	}
	fn := func(*os.File) error { return err }
	s.wsync.syncHook.Store(&fn)
}

// Ping checks that the database answers (for /readyz).
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Read answers a query handle on the reader pool. Use it for reads outside
// a transaction; it must not write.
func (s *Store) Read() *Q { return &Q{db: s.reader, d: s.dialect, stmts: s.rstmts} }

// Write runs fn in a write transaction and commits when it returns nil;
// any error (or panic) undoes everything fn wrote, so a failed request
// leaves nothing half-written (W-9). Writes that arrive together share one
// transaction (group commit, see writebatch.go), each inside its own
// savepoint; Write returns only after the commit, so a nil answer means
// durable. On PostgreSQL the transaction holds the replicas' write lock
// exclusively: it runs alone among the writes of every replica, so any
// read-then-write rule of fn holds without more. fn may run more than once
// (a transaction PostgreSQL aborts as a deadlock is run again; a SQLite
// batch in which another request failed runs again with savepoints): it
// must not accumulate results outside the transaction (assign them, do not
// append).
func (s *Store) Write(ctx context.Context, fn func(q *Q) error) error {
	return s.groupWrite(ctx, fn, false)
}

// WriteShared is Write for a write that holds its own count-then-insert
// rules: on PostgreSQL its transaction takes the replicas' write lock in
// shared mode and runs in parallel with the other shared writes of every
// replica (an exclusive Write still runs alone), so fn must take the
// narrow lock of each rule it checks (Q.LockKeys) before the read the rule
// rests on. Rows it updates lock as usual (two writes of one session's
// row run one after the other). On SQLite it is Write. fn may run more
// than once, as for Write.
func (s *Store) WriteShared(ctx context.Context, fn func(q *Q) error) error {
	return s.groupWrite(ctx, fn, true)
}

// dbtx is what *sql.DB and *sql.Tx share.
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Q is a query handle: the reader pool (Store.Read) or a write transaction
// (Store.Write). Every repository method hangs off Q, so the same method
// serves reads outside and inside a transaction.
type Q struct {
	db       dbtx
	d        Dialect
	tx       bool
	appended int // events appended in this transaction (InsertEvent)
	// For SQLite: prepared statements cached per query text (sqltx is the
	// transaction to bind them to, nil on the reader pool).
	stmts *stmtCache
	sqltx *sql.Tx
	// In a write transaction: the state of its batch (the unread counter
	// deltas held until the commit, whether the batch runs under the
	// shared write lock), this request's own unread deltas (merged into
	// the batch's when the request succeeds), and whether a statement
	// failed as a deadlock or serialization failure (the request is then
	// run again in a new transaction).
	batch  *batchState
	staged map[string]int
	retry  bool

	// raw is the SQLite writer connection in a write transaction
	// (sqliteconn.go); every statement then runs on it, db is unused.
	raw *sqliteConn
	// lastEvent is the highest id of the events appended (InsertEvent).
	lastEvent int64
	// ftsLater: IndexMail leaves its mail_fts row in ftsRows for the
	// batch to write before its commit (SQLite, ftsbatch.go).
	ftsLater bool
	ftsRows  []ftsRow

	// pipe queues the statements of a PostgreSQL write transaction that
	// can wait (pipeline.go), nil elsewhere; pipeErr is the first error a
	// run of it answered in this request, which every later statement of
	// the request answers too.
	pipe    *pgPipe
	pipeErr error
}

// InTx reports whether q is a write transaction.
func (q *Q) InTx() bool { return q.tx }

// Dialect answers the handle's dialect.
func (q *Q) Dialect() Dialect { return q.d }

// Statements inside a write transaction are not cancelled with the
// caller's context: an interrupted SQLite write rolls back the whole
// (shared) transaction, and a request that has begun writing finishes its
// few statements anyway.

// Exec runs a statement with `?` placeholders (in a PostgreSQL write
// transaction after the statements queued before it, pipeline.go).
func (q *Q) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if q.pipe != nil {
		if err := q.Flush(ctx); err != nil {
			return nil, err
		}
	}
	if t, t0 := traceStart(); t != nil {
		defer func() { t.add(query, time.Since(t0)) }()
	}
	if q.raw != nil {
		return q.raw.exec(query, args)
	}
	if q.tx {
		ctx = context.WithoutCancel(ctx)
	}
	var res sql.Result
	var err error
	if st := q.stmt(ctx, query); st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = q.db.ExecContext(ctx, q.d.Rebind(query), args...)
	}
	q.note(err)
	return res, err
}

// Query runs a query with `?` placeholders. The rows must be closed.
func (q *Q) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	if q.pipe != nil {
		if err := q.Flush(ctx); err != nil {
			return nil, err
		}
	}
	if t, t0 := traceStart(); t != nil {
		defer func() { t.add(query, time.Since(t0)) }()
	}
	if q.raw != nil {
		r, err := q.raw.query(query, args)
		if err != nil {
			return nil, err
		}
		return &Rows{raw: r}, nil
	}
	if q.tx {
		ctx = context.WithoutCancel(ctx)
	}
	var rows *sql.Rows
	var err error
	if st := q.stmt(ctx, query); st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = q.db.QueryContext(ctx, q.d.Rebind(query), args...)
	}
	q.note(err)
	if err != nil {
		return nil, err
	}
	return &Rows{sql: rows}, nil
}

// QueryRow runs a single-row query with `?` placeholders; its Scan must
// be called.
func (q *Q) QueryRow(ctx context.Context, query string, args ...any) *Row {
	if q.pipe != nil {
		if err := q.Flush(ctx); err != nil {
			return &Row{err: err}
		}
	}
	if t, t0 := traceStart(); t != nil {
		defer func() { t.add(query, time.Since(t0)) }()
	}
	if q.raw != nil {
		r, err := q.raw.query(query, args)
		return &Row{raw: r, err: err}
	}
	if q.tx {
		ctx = context.WithoutCancel(ctx)
	}
	var row *sql.Row
	if st := q.stmt(ctx, query); st != nil {
		row = st.QueryRowContext(ctx, args...)
	} else {
		row = q.db.QueryRowContext(ctx, q.d.Rebind(query), args...)
	}
	if q.tx {
		q.note(row.Err())
	}
	return &Row{sql: row}
}

// note marks the request for another run when err is a deadlock or a
// serialization failure (PostgreSQL aborted it to let another transaction
// on; running it again in a new transaction succeeds).
func (q *Q) note(err error) {
	if err != nil && q.tx && IsRetryable(err) {
		q.retry = true
	}
}

// IsRetryable reports whether err is PostgreSQL's deadlock_detected
// (SQLSTATE 40P01) or serialization_failure (40001): the transaction was
// aborted so that another could go on, and running it again is safe.
func IsRetryable(err error) bool {
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		c := st.SQLState()
		return c == "40P01" || c == "40001"
	}
	return false
}

// LockKeys takes the narrow locks of one count-then-insert rule, one per
// key (rule "new-session" and the creating principal, for example), held
// until the transaction ends, so that two transactions checking the rule
// for one key run one after the other on every replica while those of
// other keys run in parallel. Take them before the read the rule rests on.
// Keys are locked in one fixed order (of their hashes), so the keys of one
// call never deadlock with another call's. Outside a shared write
// (Store.WriteShared on PostgreSQL) it does nothing: an exclusive write
// and SQLite's single writer run alone already. Errors are the database's.
func (q *Q) LockKeys(ctx context.Context, rule string, keys ...string) error {
	if !q.tx {
		return errors.New("store: LockKeys outside a write transaction")
	}
	if q.batch == nil || !q.batch.shared {
		return nil
	}
	ids := make([]int64, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, narrowLockKey(rule, k))
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if _, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(?)`, id); err != nil {
			return err
		}
	}
	return nil
}

// narrowLockKey is the advisory lock key of (rule, key): 64 bits of
// FNV-1a over both, never one of the fixed keys (postgres.go). Two pairs
// sharing a key by chance only wait for each other.
func narrowLockKey(rule, key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(rule))
	h.Write([]byte{0})
	h.Write([]byte(key))
	k := int64(h.Sum64())
	if k == writeLockKey || k == migrateLockKey {
		k ^= 1 << 62
	}
	return k
}

// IsUniqueViolation reports a unique constraint failure in the dialect.
func (q *Q) IsUniqueViolation(err error) bool { return q.d.IsUniqueViolation(err) }

// NewID answers a new time-ordered id (UUID v7 text).
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// Millis converts a time to the stored form: unix milliseconds UTC.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis converts a stored time back (UTC).
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// NullMillis converts an optional time; nil stays NULL.
func NullMillis(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// TimePtr converts a nullable stored time to *time.Time.
func TimePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := FromMillis(n.Int64)
	return &t
}

// InPlaceholders answers "?, ?, ?" for n values (n ≥ 1).
func InPlaceholders(n int) string {
	if n <= 0 {
		return "NULL"
	}
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
