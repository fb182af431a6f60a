package store

import (
	"database/sql"
)

// Rows is the answer of Q.Query: the rows of database/sql (the reader
// pool, PostgreSQL) or of the SQLite writer connection (sqliteConn).
// Read it as *sql.Rows: Next, Scan, and Close (always), then Err.
type Rows struct {
	sql *sql.Rows
	raw *sqliteRows
}

// Next advances to the next row; false at the end or on an error (Err).
func (r *Rows) Next() bool {
	if r.raw != nil {
		return r.raw.next()
	}
	return r.sql.Next()
}

// Scan copies the current row's columns into dest.
func (r *Rows) Scan(dest ...any) error {
	if r.raw != nil {
		return r.raw.scan(dest)
	}
	return r.sql.Scan(dest...)
}

// Close ends the reading; it may be called more than once.
func (r *Rows) Close() error {
	if r.raw != nil {
		r.raw.close()
		return nil
	}
	return r.sql.Close()
}

// Err answers the error that ended Next, if any.
func (r *Rows) Err() error {
	if r.raw != nil {
		return r.raw.err
	}
	return r.sql.Err()
}

// Row is the answer of Q.QueryRow, read as *sql.Row: Scan answers
// sql.ErrNoRows when the query selected nothing.
type Row struct {
	sql *sql.Row
	raw *sqliteRows
	err error
}

// Scan copies the first row's columns into dest and ends the query.
func (r *Row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if r.raw == nil {
		return r.sql.Scan(dest...)
	}
	defer r.raw.close()
	if !r.raw.next() {
		if r.raw.err != nil {
			return r.raw.err
		}
		return sql.ErrNoRows
	}
	return r.raw.scan(dest)
}

// Err answers the error of running the query, without reading a row.
func (r *Row) Err() error {
	if r.err != nil {
		return r.err
	}
	if r.raw == nil {
		return r.sql.Err()
	}
	return nil
}
