package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteConn is the SQLite writer connection of the write loop
// (writebatch.go), opened on modernc.org/sqlite's library itself rather
// than through database/sql and the driver. Every statement of every write
// runs on it, one at a time on the write loop's goroutine, so it needs
// none of what a shared connection pays for on each call: no connection
// lock (database/sql's, nor SQLite's own mutex: the connection is opened
// SQLITE_OPEN_NOMUTEX), no argument conversion through reflection, no
// per-call C allocation of each text argument (a statement copies its
// arguments into C memory of its own, reused from call to call), no
// column names read for each query. Statements are prepared once per
// query text and kept (at most stmtCacheMax texts; scripts and texts with
// more than 1024 parameters are prepared for the call and finalized).
//
// It is not safe for concurrent use.
type sqliteConn struct {
	tls   *libc.TLS
	db    uintptr // sqlite3*
	out   uintptr // C memory for the two out-pointers of prepare and open
	stmts map[string]*sqliteStmt
}

// sqliteStmt is one prepared statement of a sqliteConn.
type sqliteStmt struct {
	c      *sqliteConn
	p      uintptr // sqlite3_stmt*
	nparam int
	ncol   int
	cached bool
	busy   bool    // rows of it are being read
	buf    uintptr // C memory the text and blob arguments are copied into
	bufCap int
	vals   []any // the arguments converted, reused from call to call
}

// sqliteErr is an error of the SQLite library: its extended result code
// and the message the driver gives the same error ("errstr: errmsg (code)"),
// so that callers matching either (IsUniqueViolation, storage full) see
// the same thing as on the reader pool.
type sqliteErr struct {
	code int
	msg  string
}

func (e *sqliteErr) Error() string { return e.msg }

// Code answers the extended result code (2067: a unique constraint).
func (e *sqliteErr) Code() int { return e.code }

const ptrSize = int(unsafe.Sizeof(uintptr(0)))

// openSQLiteConn opens the database file at path for reading and writing
// and runs pragmas (each a statement without arguments) on it.
func openSQLiteConn(path string, pragmas []string) (*sqliteConn, error) {
	c := &sqliteConn{tls: libc.NewTLS(), stmts: map[string]*sqliteStmt{}}
	c.out = libc.Xmalloc(c.tls, types.Size_t(2*ptrSize))
	if c.out == 0 {
		c.tls.Close()
		return nil, errors.New("store: sqlite: out of memory")
	}
	name := c.cString(path)
	defer libc.Xfree(c.tls, name)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, c.out,
		sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	c.db = c.outPtr(0)
	if rc != sqlite3.SQLITE_OK {
		err := c.errorOf(rc)
		c.close()
		return nil, err
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	for _, p := range pragmas {
		if _, err := c.exec(p, nil); err != nil {
			c.close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return c, nil
}

// close finalizes the statements and closes the connection.
func (c *sqliteConn) close() {
	for _, st := range c.stmts {
		st.finalize()
	}
	c.stmts = nil
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	if c.out != 0 {
		libc.Xfree(c.tls, c.out)
		c.out = 0
	}
	c.tls.Close()
}

// cString copies s into new C memory, NUL-terminated; the caller frees it.
func (c *sqliteConn) cString(s string) uintptr {
	p := libc.Xmalloc(c.tls, types.Size_t(len(s)+1))
	if p == 0 {
		panic("store: sqlite: out of memory")
	}
	b := libc.GoBytes(p, len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return p
}

// outPtr reads the i-th out-pointer.
func (c *sqliteConn) outPtr(i int) uintptr {
	return *(*uintptr)(unsafe.Pointer(&libc.GoBytes(c.out+uintptr(i*ptrSize), ptrSize)[0]))
}

// errorOf turns a result code into an error carrying the connection's
// message, in the driver's words.
func (c *sqliteConn) errorOf(rc int32) error {
	str := libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	busy := ""
	if rc&0xff == sqlite3.SQLITE_BUSY {
		busy = " (SQLITE_BUSY)"
	}
	if c.db == 0 {
		return &sqliteErr{code: int(rc), msg: fmt.Sprintf("%s (%d)%s", str, rc, busy)}
	}
	if msg := libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db)); msg != "" && msg != str {
		return &sqliteErr{code: int(rc), msg: fmt.Sprintf("%s: %s (%d)%s", str, msg, rc, busy)}
	}
	return &sqliteErr{code: int(rc), msg: fmt.Sprintf("%s (%d)%s", str, rc, busy)}
}

// cacheable reports whether a query text is kept prepared: not a script,
// and at most 1024 parameters (a batch's search rows, ftsbatch.go, are one
// statement of up to maxBatch rows of 6).
func (c *sqliteConn) cacheable(query string) bool {
	return len(c.stmts) < stmtCacheMax && !strings.Contains(query, ";") && strings.Count(query, "?") <= 1024
}

// prepare compiles the first statement of text; it answers the statement
// (nil when text holds only white space or comments) and the rest of text
// after it.
func (c *sqliteConn) prepare(text string, persistent bool) (*sqliteStmt, string, error) {
	z := c.cString(text)
	defer libc.Xfree(c.tls, z)
	var flags uint32
	if persistent {
		flags = sqlite3.SQLITE_PREPARE_PERSISTENT
	}
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, int32(len(text)), flags, c.out, c.out+uintptr(ptrSize))
	if rc != sqlite3.SQLITE_OK {
		return nil, "", c.errorOf(rc)
	}
	p, tail := c.outPtr(0), c.outPtr(1)
	rest := ""
	if off := int(tail - z); tail != 0 && off >= 0 && off < len(text) {
		rest = text[off:]
	}
	if p == 0 {
		return nil, rest, nil
	}
	st := &sqliteStmt{c: c, p: p, nparam: int(sqlite3.Xsqlite3_bind_parameter_count(c.tls, p)),
		ncol: int(sqlite3.Xsqlite3_column_count(c.tls, p))}
	return st, rest, nil
}

// statement answers the prepared statement of a single-statement query:
// the cached one when it is free, else one for this call (release
// finalizes it). ok is false for a script, which exec runs statement by
// statement.
func (c *sqliteConn) statement(query string) (st *sqliteStmt, ok bool, err error) {
	if st := c.stmts[query]; st != nil && !st.busy {
		return st, true, nil
	}
	if strings.Contains(query, ";") {
		return nil, false, nil
	}
	cache := c.cacheable(query) && c.stmts[query] == nil
	st, rest, err := c.prepare(query, cache)
	if err != nil {
		return nil, true, err
	}
	if st == nil || strings.TrimSpace(rest) != "" {
		if st != nil {
			st.finalize()
		}
		return nil, false, nil
	}
	if cache {
		st.cached = true
		c.stmts[query] = st
	}
	return st, true, nil
}

// release makes a statement ready for its next call (or finalizes one
// prepared for a single call). The bindings stay: every call binds every
// parameter again before it steps, and sqlite3_clear_bindings would expire
// a statement whose plan looked at a parameter (a partial index's
// condition), which SQLite then prepares again at its next step.
func (st *sqliteStmt) release() {
	sqlite3.Xsqlite3_reset(st.c.tls, st.p)
	st.busy = false
	if !st.cached {
		st.finalize()
	} else if st.bufCap > 64<<10 {
		// A large argument (a long body) is not kept for every later call.
		libc.Xfree(st.c.tls, st.buf)
		st.buf, st.bufCap = 0, 0
	}
}

func (st *sqliteStmt) finalize() {
	if st.p != 0 {
		sqlite3.Xsqlite3_finalize(st.c.tls, st.p)
		st.p = 0
	}
	if st.buf != 0 {
		libc.Xfree(st.c.tls, st.buf)
		st.buf, st.bufCap = 0, 0
	}
}

// exec runs query (one statement, or a script of several, each given the
// same arguments as the driver does) to its end and answers the changes
// and the last inserted rowid.
func (c *sqliteConn) exec(query string, args []any) (sql.Result, error) {
	st, single, err := c.statement(query)
	if err != nil {
		return nil, err
	}
	if !single {
		return c.execScript(query, args)
	}
	defer st.release()
	if err := st.run(args); err != nil {
		return nil, err
	}
	return c.result(), nil
}

func (c *sqliteConn) result() sqliteResult {
	return sqliteResult{changes: int64(sqlite3.Xsqlite3_changes64(c.tls, c.db)),
		lastID: int64(sqlite3.Xsqlite3_last_insert_rowid(c.tls, c.db))}
}

// execScript runs the statements of a script one after another.
func (c *sqliteConn) execScript(script string, args []any) (sql.Result, error) {
	res := sqliteResult{}
	for rest := script; strings.TrimSpace(rest) != ""; {
		st, next, err := c.prepare(rest, false)
		if err != nil {
			return nil, err
		}
		rest = next
		if st == nil {
			continue
		}
		var bound []any
		if st.nparam > 0 {
			bound = args
		}
		err = st.run(bound)
		if err == nil {
			res = c.result()
		}
		st.release()
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// run binds args and steps the statement to its end (rows are skipped,
// as the driver's Exec does).
func (st *sqliteStmt) run(args []any) error {
	if err := st.bind(args); err != nil {
		return err
	}
	for {
		switch rc := sqlite3.Xsqlite3_step(st.c.tls, st.p); rc {
		case sqlite3.SQLITE_ROW:
		case sqlite3.SQLITE_DONE:
			return nil
		default:
			return st.c.errorOf(rc)
		}
	}
}

// query runs a query and answers its rows, read with Next and Scan until
// Close.
func (c *sqliteConn) query(query string, args []any) (*sqliteRows, error) {
	st, single, err := c.statement(query)
	if err != nil {
		return nil, err
	}
	if !single {
		return nil, fmt.Errorf("store: a query must be one statement: %.80s", query)
	}
	st.busy = true
	if err := st.bind(args); err != nil {
		st.release()
		return nil, err
	}
	// The first step runs now, as the driver's does, so that a query's
	// time (--statement-times) includes finding its first row.
	r := &sqliteRows{st: st, first: sqlite3.Xsqlite3_step(c.tls, st.p), pending: true}
	if r.first != sqlite3.SQLITE_ROW && r.first != sqlite3.SQLITE_DONE {
		err := c.errorOf(r.first)
		r.close()
		return nil, err
	}
	return r, nil
}

// bind binds args to the statement's parameters ?1..?n: text and blobs
// are copied into the statement's C memory, which SQLite reads until the
// statement is reset (SQLITE_STATIC).
func (st *sqliteStmt) bind(args []any) error {
	if len(args) != st.nparam {
		return fmt.Errorf("sql: expected %d arguments, got %d", st.nparam, len(args))
	}
	if st.nparam == 0 {
		return nil
	}
	if cap(st.vals) < len(args) {
		st.vals = make([]any, len(args))
	}
	vals := st.vals[:len(args)]
	defer clear(vals) // keep no argument alive past the call
	need := 1         // a zero-length text still needs a pointer that is not NULL
	for i, a := range args {
		v, err := driverValue(a)
		if err != nil {
			return fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
		}
		vals[i] = v
		switch x := v.(type) {
		case string:
			need += len(x)
		case []byte:
			need += len(x)
		}
	}
	if need > st.bufCap {
		if st.buf != 0 {
			libc.Xfree(st.c.tls, st.buf)
		}
		n := max(need, 256)
		st.buf = libc.Xmalloc(st.c.tls, types.Size_t(n))
		if st.buf == 0 {
			st.bufCap = 0
			return errors.New("store: sqlite: out of memory")
		}
		st.bufCap = n
	}
	mem := libc.GoBytes(st.buf, st.bufCap)
	off := 0
	tls, p := st.c.tls, st.p
	for i, v := range vals {
		idx := int32(i + 1)
		var rc int32
		switch x := v.(type) {
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(tls, p, idx)
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(tls, p, idx, x)
		case float64:
			rc = sqlite3.Xsqlite3_bind_double(tls, p, idx, x)
		case bool:
			var n int64
			if x {
				n = 1
			}
			rc = sqlite3.Xsqlite3_bind_int64(tls, p, idx, n)
		case string:
			copy(mem[off:], x)
			rc = sqlite3.Xsqlite3_bind_text(tls, p, idx, st.buf+uintptr(off), int32(len(x)), 0)
			off += len(x)
		case []byte:
			if x == nil {
				rc = sqlite3.Xsqlite3_bind_null(tls, p, idx)
				break
			}
			copy(mem[off:], x)
			rc = sqlite3.Xsqlite3_bind_blob(tls, p, idx, st.buf+uintptr(off), int32(len(x)), 0)
			off += len(x)
		default:
			return fmt.Errorf("sqlite: invalid driver.Value type %T", x)
		}
		if rc != sqlite3.SQLITE_OK {
			return st.c.errorOf(rc)
		}
	}
	return nil
}

// sqliteTimeFormat is how the driver writes a time.Time argument
// (_time_format=sqlite); the store itself passes times as milliseconds.
const sqliteTimeFormat = "2006-01-02 15:04:05.999999999-07:00"

// driverValue converts an argument as database/sql does for the driver:
// nil, int64, float64, bool, string or []byte.
func driverValue(a any) (any, error) {
	switch x := a.(type) {
	case nil, int64, float64, bool, string, []byte:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case time.Time:
		return x.Format(sqliteTimeFormat), nil
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(a)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil, int64, float64, bool, string, []byte:
		return x, nil
	case time.Time:
		return x.Format(sqliteTimeFormat), nil
	default:
		return nil, fmt.Errorf("unsupported type %T", v)
	}
}

// sqliteResult is what an exec answers.
type sqliteResult struct{ changes, lastID int64 }

// LastInsertId answers the rowid of the connection's last insert.
func (r sqliteResult) LastInsertId() (int64, error) { return r.lastID, nil }

// RowsAffected answers the rows the statement changed.
func (r sqliteResult) RowsAffected() (int64, error) { return r.changes, nil }

// sqliteRows reads the rows of a query.
type sqliteRows struct {
	st      *sqliteStmt
	err     error
	closed  bool
	first   int32 // the result of the first step, taken by query
	pending bool  // next has not yet answered first
}

// next steps to the next row; false at the end or on an error (err).
func (r *sqliteRows) next() bool {
	if r.closed {
		return false
	}
	rc := r.first
	if r.pending {
		r.pending = false
	} else {
		rc = sqlite3.Xsqlite3_step(r.st.c.tls, r.st.p)
	}
	switch rc {
	case sqlite3.SQLITE_ROW:
		return true
	case sqlite3.SQLITE_DONE:
		r.close()
		return false
	default:
		r.err = r.st.c.errorOf(rc)
		r.close()
		return false
	}
}

func (r *sqliteRows) close() {
	if !r.closed {
		r.closed = true
		r.st.release()
	}
}

// scan copies the current row's columns into dest, converting as
// database/sql's Scan does for the types the store reads into.
func (r *sqliteRows) scan(dest []any) error {
	if r.closed {
		return errors.New("sql: Rows are closed")
	}
	if len(dest) != r.st.ncol {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", r.st.ncol, len(dest))
	}
	tls, p := r.st.c.tls, r.st.p
	for i, d := range dest {
		col := int32(i)
		ct := sqlite3.Xsqlite3_column_type(tls, p, col)
		if err := scanColumn(tls, p, col, ct, d); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d: %w", i, err)
		}
	}
	return nil
}

// columnText answers a TEXT (or BLOB) column as a Go string.
func columnText(tls *libc.TLS, p uintptr, col int32) string {
	z := sqlite3.Xsqlite3_column_text(tls, p, col)
	n := int(sqlite3.Xsqlite3_column_bytes(tls, p, col))
	if z == 0 || n == 0 {
		return ""
	}
	return string(libc.GoBytes(z, n))
}

func columnBlob(tls *libc.TLS, p uintptr, col int32) []byte {
	z := sqlite3.Xsqlite3_column_blob(tls, p, col)
	n := int(sqlite3.Xsqlite3_column_bytes(tls, p, col))
	out := make([]byte, n)
	if z != 0 && n > 0 {
		copy(out, libc.GoBytes(z, n))
	}
	return out
}

// columnValue answers a column as the driver would hand it to
// database/sql: int64, float64, string, []byte or nil.
func columnValue(tls *libc.TLS, p uintptr, col, ct int32) any {
	switch ct {
	case sqlite3.SQLITE_INTEGER:
		return int64(sqlite3.Xsqlite3_column_int64(tls, p, col))
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(tls, p, col)
	case sqlite3.SQLITE_TEXT:
		return columnText(tls, p, col)
	case sqlite3.SQLITE_BLOB:
		return columnBlob(tls, p, col)
	default:
		return nil
	}
}

func scanColumn(tls *libc.TLS, p uintptr, col, ct int32, d any) error {
	switch dst := d.(type) {
	case *string:
		switch ct {
		case sqlite3.SQLITE_TEXT, sqlite3.SQLITE_BLOB:
			*dst = columnText(tls, p, col)
		case sqlite3.SQLITE_INTEGER:
			*dst = strconv.FormatInt(int64(sqlite3.Xsqlite3_column_int64(tls, p, col)), 10)
		case sqlite3.SQLITE_FLOAT:
			*dst = strconv.FormatFloat(sqlite3.Xsqlite3_column_double(tls, p, col), 'g', -1, 64)
		default:
			return errors.New("converting NULL to string is unsupported")
		}
		return nil
	case *int64:
		n, err := columnInt(tls, p, col, ct, 64)
		*dst = n
		return err
	case *int:
		n, err := columnInt(tls, p, col, ct, strconv.IntSize)
		*dst = int(n)
		return err
	case *int32:
		n, err := columnInt(tls, p, col, ct, 32)
		*dst = int32(n)
		return err
	case *bool:
		switch ct {
		case sqlite3.SQLITE_INTEGER:
			switch n := sqlite3.Xsqlite3_column_int64(tls, p, col); n {
			case 0, 1:
				*dst = n == 1
				return nil
			default:
				return fmt.Errorf("sql/driver: couldn't convert %d into type bool", n)
			}
		case sqlite3.SQLITE_NULL:
			return errors.New("converting NULL to bool is unsupported")
		}
	case *float64:
		switch ct {
		case sqlite3.SQLITE_INTEGER, sqlite3.SQLITE_FLOAT:
			*dst = sqlite3.Xsqlite3_column_double(tls, p, col)
			return nil
		case sqlite3.SQLITE_NULL:
			return errors.New("converting NULL to float64 is unsupported")
		}
	case *[]byte:
		if ct == sqlite3.SQLITE_NULL {
			*dst = nil
		} else {
			*dst = columnBlob(tls, p, col)
		}
		return nil
	case *sql.NullString:
		if ct == sqlite3.SQLITE_NULL {
			*dst = sql.NullString{}
			return nil
		}
		var s string
		if err := scanColumn(tls, p, col, ct, &s); err != nil {
			return err
		}
		*dst = sql.NullString{String: s, Valid: true}
		return nil
	case *sql.NullInt64:
		if ct == sqlite3.SQLITE_NULL {
			*dst = sql.NullInt64{}
			return nil
		}
		n, err := columnInt(tls, p, col, ct, 64)
		*dst = sql.NullInt64{Int64: n, Valid: err == nil}
		return err
	case *sql.NullBool:
		if ct == sqlite3.SQLITE_NULL {
			*dst = sql.NullBool{}
			return nil
		}
		var b bool
		if err := scanColumn(tls, p, col, ct, &b); err != nil {
			return err
		}
		*dst = sql.NullBool{Bool: b, Valid: true}
		return nil
	case *any:
		*dst = columnValue(tls, p, col, ct)
		return nil
	case sql.Scanner:
		return dst.Scan(columnValue(tls, p, col, ct))
	}
	if b, ok := d.(*bool); ok && ct == sqlite3.SQLITE_TEXT {
		v, err := strconv.ParseBool(columnText(tls, p, col))
		*b = v
		return err
	}
	return fmt.Errorf("unsupported Scan, storing driver.Value type %T into type %T", columnValue(tls, p, col, ct), d)
}

// columnInt answers an integer column (or a text one holding an integer)
// within bits.
func columnInt(tls *libc.TLS, p uintptr, col, ct int32, bits int) (int64, error) {
	var n int64
	switch ct {
	case sqlite3.SQLITE_INTEGER:
		n = int64(sqlite3.Xsqlite3_column_int64(tls, p, col))
	case sqlite3.SQLITE_TEXT, sqlite3.SQLITE_BLOB:
		s := columnText(tls, p, col)
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return 0, fmt.Errorf("converting driver.Value type string (%q) to a int%d: invalid syntax", s, bits)
		}
		return v, nil
	case sqlite3.SQLITE_FLOAT:
		f := sqlite3.Xsqlite3_column_double(tls, p, col)
		return 0, fmt.Errorf("converting driver.Value type float64 (%g) to a int%d: invalid syntax", f, bits)
	default:
		return 0, fmt.Errorf("converting NULL to int%d is unsupported", bits)
	}
	if bits < 64 && (n > math.MaxInt32 || n < math.MinInt32) {
		return 0, fmt.Errorf("converting driver.Value type int64 (%d) to a int%d: value out of range", n, bits)
	}
	return n, nil
}
