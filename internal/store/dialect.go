package store

import (
	"errors"
	"strconv"
	"strings"
	"sync"
)

// Dialect is the one place where SQLite and PostgreSQL differ. Every query
// in this package is written once, with `?` placeholders and the portable
// subset of SQL both databases share (ON CONFLICT upserts, RETURNING,
// recursive CTEs, `||` concatenation); the dialect rewrites what must differ.
//
// Times are BIGINT unix milliseconds UTC in both databases, so no time
// function ever differs. Ids are TEXT (UUID v7, time ordered) except the
// event log's integer id, whose column type comes from the migration token
// {{AUTO_ID}}.
type Dialect interface {
	// Name is "sqlite" or "postgres".
	Name() string
	// Rebind turns `?` placeholders into the dialect's own ($1, $2, ... for
	// PostgreSQL). Question marks inside single-quoted literals are kept.
	Rebind(query string) string
	// IsUniqueViolation reports whether err is a unique or primary key
	// constraint failure (an idempotency or first-wins rule that held).
	IsUniqueViolation(err error) bool
	// Migration expands dialect tokens in a migration file:
	// {{AUTO_ID}} → an auto-incrementing BIGINT primary key column type;
	// lines between "-- {{sqlite}}" (or "-- {{postgres}}") and "-- {{end}}"
	// are kept for that dialect only (see onlyDialect).
	Migration(sql string) string
	// BeginWrite is the statement that opens every write transaction, or ""
	// when the database already admits one writer at a time (SQLite). It
	// takes the replicas' write lock: exclusive (shared false), so that the
	// transaction runs alone among the writes of every replica, or shared,
	// so that it runs beside the other shared ones and holds its own
	// count-then-insert rules through narrow locks (Q.LockKeys). Either way
	// it answers the transaction's id first, which the event readers'
	// watermark relies on (EventCursor).
	BeginWrite(shared bool) string
	// NotifyEvents is the statement run just before the commit of a write
	// transaction that appended events, or "" when no other process needs
	// waking (SQLite: one gateway per database).
	NotifyEvents() string
	// LastInsertID reports whether the driver's sql.Result.LastInsertId
	// answers the generated id of an insert (SQLite: the rowid, which the
	// event log's id is). Then inserts use it instead of RETURNING, which
	// SQLite runs through a temporary table costing about as much as the
	// insert itself; PostgreSQL answers ids only through RETURNING.
	LastInsertID() bool
}

// SQLite is the dialect of modernc.org/sqlite.
type SQLite struct{}

// Name answers "sqlite".
func (SQLite) Name() string { return "sqlite" }

// Rebind keeps `?`, which SQLite understands.
func (SQLite) Rebind(q string) string { return q }

// IsUniqueViolation matches SQLITE_CONSTRAINT_UNIQUE (2067) and
// SQLITE_CONSTRAINT_PRIMARYKEY (1555) by the driver's message, which names
// them "UNIQUE constraint failed".
func (SQLite) IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	var coder interface{ Code() int }
	if errors.As(err, &coder) {
		c := coder.Code()
		if c == 2067 || c == 1555 {
			return true
		}
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// Migration expands {{AUTO_ID}} to SQLite's rowid alias.
func (SQLite) Migration(sql string) string {
	return strings.ReplaceAll(onlyDialect(sql, "sqlite"), "{{AUTO_ID}}", "INTEGER PRIMARY KEY AUTOINCREMENT")
}

// onlyDialect drops the lines of a migration meant for the other dialect:
// those between a line "-- {{NAME}}" (NAME "sqlite" or "postgres") and the
// next line "-- {{end}}" are kept only when NAME is dialect. What one
// database has and the other has not (SQLite FTS5 tables, PostgreSQL GIN
// indexes) is written so, in the one file both run.
func onlyDialect(sql, dialect string) string {
	var b strings.Builder
	keep := true
	for _, line := range strings.SplitAfter(sql, "\n") {
		switch strings.TrimSpace(line) {
		case "-- {{sqlite}}", "-- {{postgres}}":
			keep = strings.TrimSpace(line) == "-- {{"+dialect+"}}"
			continue
		case "-- {{end}}":
			keep = true
			continue
		}
		if keep {
			b.WriteString(line)
		}
	}
	return b.String()
}

// BeginWrite is "": the single writer connection and BEGIN IMMEDIATE
// already serialise SQLite's writes.
func (SQLite) BeginWrite(bool) string { return "" }

// NotifyEvents is "": the hub of the one gateway is woken in process.
func (SQLite) NotifyEvents() string { return "" }

// LastInsertID is true: sqlite3_last_insert_rowid of the writer connection.
func (SQLite) LastInsertID() bool { return true }

// Postgres is the dialect of PostgreSQL through pgx's database/sql driver
// (opened by openPostgres in postgres.go).
type Postgres struct {
	cache sync.Map // query → rebound query
}

// Name answers "postgres".
func (*Postgres) Name() string { return "postgres" }

// Rebind numbers the placeholders: `a = ? AND b = ?` → `a = $1 AND b = $2`.
func (p *Postgres) Rebind(q string) string {
	if v, ok := p.cache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	inQuote := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			inQuote = !inQuote
			b.WriteByte(c)
		case c == '?' && !inQuote:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	p.cache.Store(q, out)
	return out
}

// IsUniqueViolation matches SQLSTATE 23505.
func (*Postgres) IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		return st.SQLState() == "23505"
	}
	return strings.Contains(err.Error(), "SQLSTATE 23505")
}

// Migration expands {{AUTO_ID}} to an identity column.
func (*Postgres) Migration(sql string) string {
	return strings.ReplaceAll(onlyDialect(sql, "postgres"), "{{AUTO_ID}}", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
}

// BeginWrite takes the transaction-scoped advisory lock writeLockKey,
// exclusive or shared, released by COMMIT or ROLLBACK after the commit is
// visible, and the transaction's id (pg_current_xact_id), in one
// statement. The transaction id comes before any event id the transaction
// takes, which the event readers' watermark relies on (EventCursor). An
// exclusive holder runs alone among the writes of every replica (what a
// write whose rules are not held by narrow locks needs); shared holders
// run in parallel with each other (docs/OPERATIONS.md "PostgreSQL").
func (*Postgres) BeginWrite(shared bool) string {
	fn := "pg_advisory_xact_lock("
	if shared {
		fn = "pg_advisory_xact_lock_shared("
	}
	return "SELECT " + fn + strconv.FormatInt(writeLockKey, 10) + "), pg_current_xact_id()"
}

// NotifyEvents queues a notification on EventChannel; PostgreSQL delivers
// it to every listener at commit, and drops it on rollback.
func (*Postgres) NotifyEvents() string { return "SELECT pg_notify('" + EventChannel + "', '')" }

// LastInsertID is false: pgx answers generated ids only through RETURNING.
func (*Postgres) LastInsertID() bool { return false }
