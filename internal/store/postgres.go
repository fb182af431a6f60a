package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// EventChannel is the PostgreSQL notification channel on which a write
// transaction that appended events announces them (NOTIFY, delivered at
// commit). Every replica's event hub LISTENs on it and then reads the event
// log after its last id: the log stays the truth, the notification only
// wakes the reader.
const EventChannel = "agentmail_events"

// Advisory lock keys (pg_advisory_xact_lock / pg_advisory_lock). They only
// have to be distinct from each other and from anything else using advisory
// locks in the same database.
const (
	// writeLockKey is taken by every write transaction of every replica:
	// shared by the writes that hold their rules through narrow locks
	// (Store.WriteShared, Q.LockKeys), exclusive by every other (see
	// Postgres.BeginWrite). Narrow locks use keys hashed from a rule and
	// its key (narrowLockKey).
	writeLockKey int64 = 0x61676d6c_00000001
	// migrateLockKey lets one replica at a time apply migrations.
	migrateLockKey int64 = 0x61676d6c_00000002
)

// Pool defaults for PostgreSQL; each can be overridden by a query parameter
// of DATABASE_URL (see PostgresPool).
const (
	defaultPGMaxConns        = 16
	defaultPGMaxConnIdleTime = 5 * time.Minute
	defaultPGMaxConnLifetime = 30 * time.Minute
	// defaultPGWriters is how many write transactions (group-commit
	// batches) one replica runs at the same time.
	defaultPGWriters = 4
)

// IsPostgresURL reports whether a DATABASE_URL selects PostgreSQL: it starts
// with postgres:// or postgresql:// (seed 001, "database").
func IsPostgresURL(u string) bool {
	u = strings.TrimSpace(u)
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// PostgresPool is the connection pool of a PostgreSQL store. The values
// come from DATABASE_URL query parameters, which are removed before the URL
// reaches pgx:
//
//	pool_max_conns=16            open connections per replica (at least 2)
//	pool_max_conn_idle_time=5m   an idle connection is closed after this
//	pool_max_conn_lifetime=30m   a connection is replaced after this
//	pool_writers=4               write transactions run at once per replica
//	                             (1 to pool_max_conns-1)
//
// Every other parameter (sslmode, connect_timeout, application_name,
// default_query_exec_mode=simple_protocol behind PgBouncer, ...) is pgx's.
type PostgresPool struct {
	MaxConns        int
	MaxConnIdleTime time.Duration
	MaxConnLifetime time.Duration
	// Writers is how many group-commit batches run at once (each its own
	// transaction on its own connection); writes of different sessions
	// then commit in parallel (writebatch.go).
	Writers int
}

// ParsePostgresURL splits DATABASE_URL into the URL handed to pgx and the
// pool settings. Errors name the parameter and what it accepts.
func ParsePostgresURL(raw string) (string, PostgresPool, error) {
	pool := PostgresPool{MaxConns: defaultPGMaxConns, MaxConnIdleTime: defaultPGMaxConnIdleTime,
		MaxConnLifetime: defaultPGMaxConnLifetime, Writers: defaultPGWriters}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", pool, fmt.Errorf("store: DATABASE_URL is not a URL: %w", err)
	}
	q := u.Query()
	if v := q.Get("pool_max_conns"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			return "", pool, fmt.Errorf("store: DATABASE_URL pool_max_conns=%q: give a whole number of at least 2", v)
		}
		pool.MaxConns = n
	}
	if v := q.Get("pool_writers"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", pool, fmt.Errorf("store: DATABASE_URL pool_writers=%q: give a whole number of at least 1", v)
		}
		pool.Writers = n
	}
	if pool.Writers >= pool.MaxConns {
		// A connection stays for the reads and the event hub.
		pool.Writers = pool.MaxConns - 1
	}
	for _, p := range []struct {
		name string
		dst  *time.Duration
	}{{"pool_max_conn_idle_time", &pool.MaxConnIdleTime}, {"pool_max_conn_lifetime", &pool.MaxConnLifetime}} {
		if v := q.Get(p.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return "", pool, fmt.Errorf("store: DATABASE_URL %s=%q: give a duration such as 5m", p.name, v)
			}
			*p.dst = d
		}
	}
	q.Del("pool_max_conns")
	q.Del("pool_max_conn_idle_time")
	q.Del("pool_max_conn_lifetime")
	q.Del("pool_writers")
	u.RawQuery = q.Encode()
	return u.String(), pool, nil
}

// openPostgres opens a PostgreSQL store: one pool serves reads and writes
// (PostgreSQL has no single-writer limit: pool.Writers batches run at once,
// Postgres.BeginWrite and narrow locks keep their rules), no data-directory lock is taken (several replicas share one
// database by design), and pending migrations are applied while holding an
// advisory lock, so replicas starting together migrate once.
func openPostgres(ctx context.Context, opt Options) (*Store, error) {
	dsn, pool, err := ParsePostgresURL(opt.DatabaseURL)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: DATABASE_URL: %w", err)
	}
	db.SetMaxOpenConns(pool.MaxConns)
	db.SetMaxIdleConns(pool.MaxConns)
	db.SetConnMaxIdleTime(pool.MaxConnIdleTime)
	db.SetConnMaxLifetime(pool.MaxConnLifetime)
	s := &Store{dialect: &Postgres{}, writer: db, reader: db, pgURL: dsn, writers: pool.Writers}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect to PostgreSQL (%s): %w; check DATABASE_URL and that the server runs", redactURL(dsn), err)
	}
	if err := s.migrateLocked(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.startPairIndexing(ctx, opt.Log); err != nil { // search.go
		db.Close()
		return nil, err
	}
	return s, nil
}

// migrateLocked runs migrate while holding a session advisory lock on a
// pinned connection, so a second replica waits and then finds every
// migration applied.
func (s *Store) migrateLocked(ctx context.Context) error {
	conn, err := s.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	defer func() {
		// A fresh context: the lock must be released even when ctx ended.
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = conn.ExecContext(uctx, `SELECT pg_advisory_unlock($1)`, migrateLockKey)
	}()
	return s.migrate(ctx)
}

// PostgresURL answers the connection URL of a PostgreSQL store as handed to
// pgx (pool parameters removed), or "" for SQLite. The event hub opens its
// LISTEN connection with it.
func (s *Store) PostgresURL() string { return s.pgURL }

// redactURL hides the password of a connection URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "DATABASE_URL"
	}
	return u.Redacted()
}

// SQLitePath answers the SQLite file that Options select (the data
// directory's agentmail.db, or the sqlite:// / file: DATABASE_URL), or an
// error when DATABASE_URL names PostgreSQL. `agentmail backup` uses it to
// reach the file of a running gateway without taking its lock.
func SQLitePath(opt Options) (string, error) {
	if IsPostgresURL(opt.DatabaseURL) {
		return "", fmt.Errorf("store: DATABASE_URL names PostgreSQL, not a SQLite file")
	}
	return sqlitePath(opt)
}

// PostgresDumpCommand answers the documented backup command for a
// PostgreSQL DATABASE_URL: pg_dump in its custom format (restore with
// pg_restore, docs/OPERATIONS.md), with the password left out of the
// command line (give it through PGPASSWORD or ~/.pgpass). The pool
// parameters, which pg_dump would not understand, are removed.
func PostgresDumpCommand(databaseURL, out string) (string, error) {
	dsn, _, err := ParsePostgresURL(databaseURL)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return "pg_dump --format=custom --no-owner --file " + shellQuote(out) + " " + shellQuote(u.String()), nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
