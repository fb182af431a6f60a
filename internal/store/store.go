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
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	// Statement caches of the SQLite writer connection and reader pool
	// (nil for PostgreSQL, whose driver caches statements itself). wconn is
	// the writer connection the write loop holds (writebatch.go); wconn and
	// wstmts belong to the write loop.
	wstmts, rstmts *stmtCache
	wconn          *sql.Conn
	ckpt           *checkpointer // background WAL checkpoints (SQLite, checkpoint.go)
	batch          writeBatcher
	pgURL          string // PostgreSQL connection URL, "" for SQLite (postgres.go)
	sync           string // SQLite PRAGMA synchronous: "FULL" or "NORMAL"
	closeMu        sync.Once
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
	s := &Store{dialect: SQLite{}, lock: lock, path: path, sync: sync}
	dsn := func(extra string) string {
		return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
			"&_pragma=synchronous(" + sync + ")&_pragma=foreign_keys(ON)&_pragma=temp_store(MEMORY)&_pragma=cache_size(-32768)&_time_format=sqlite" + extra
	}
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
	if err := s.startCheckpointer(dsn("")); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
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
		s.batch.stop() // the write loop closes the writer connection
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
// durable.
func (s *Store) Write(ctx context.Context, fn func(q *Q) error) error {
	return s.groupWrite(ctx, fn)
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
}

// InTx reports whether q is a write transaction.
func (q *Q) InTx() bool { return q.tx }

// Dialect answers the handle's dialect.
func (q *Q) Dialect() Dialect { return q.d }

// Statements inside a write transaction are not cancelled with the
// caller's context: an interrupted SQLite write rolls back the whole
// (shared) transaction, and a request that has begun writing finishes its
// few statements anyway.

// Exec runs a statement with `?` placeholders.
func (q *Q) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if t, t0 := traceStart(); t != nil {
		defer func() { t.add(query, time.Since(t0)) }()
	}
	if q.tx {
		ctx = context.WithoutCancel(ctx)
	}
	if st := q.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return q.db.ExecContext(ctx, q.d.Rebind(query), args...)
}

// Query runs a query with `?` placeholders.
func (q *Q) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if t, t0 := traceStart(); t != nil {
		defer func() { t.add(query, time.Since(t0)) }()
	}
	if q.tx {
		ctx = context.WithoutCancel(ctx)
	}
	if st := q.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.db.QueryContext(ctx, q.d.Rebind(query), args...)
}

// QueryRow runs a single-row query with `?` placeholders.
func (q *Q) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if t, t0 := traceStart(); t != nil {
		defer func() { t.add(query, time.Since(t0)) }()
	}
	if q.tx {
		ctx = context.WithoutCancel(ctx)
	}
	if st := q.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return q.db.QueryRowContext(ctx, q.d.Rebind(query), args...)
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
