package store

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// scanned is one row read into every destination type the store scans
// into.
type scanned struct {
	S            string
	I64          int64
	I            int
	B            bool
	F            float64
	Blob         []byte
	NS, NSNull   sql.NullString
	NI, NINull   sql.NullInt64
	NB, NBNull   sql.NullBool
	Any, AnyNull any
}

const scannedQuery = `SELECT s, i, i, b, f, blob, s, NULL, i, NULL, b, NULL, i, NULL FROM conv_test WHERE s = ?`

func scanRow(r interface{ Scan(...any) error }) (scanned, error) {
	var v scanned
	err := r.Scan(&v.S, &v.I64, &v.I, &v.B, &v.F, &v.Blob, &v.NS, &v.NSNull, &v.NI, &v.NINull, &v.NB, &v.NBNull, &v.Any, &v.AnyNull)
	return v, err
}

// The write loop's SQLite connection (sqliteconn.go) binds arguments and
// scans columns as database/sql does on the reader pool: the same row reads
// the same inside a write and outside it, a script runs all its
// statements, a query with no row is sql.ErrNoRows, a unique violation is
// recognised, and a statement whose rows are still open can run again.
func TestWriterConnectionReadsAsTheReaderPool(t *testing.T) {
	st := openTemp(t)
	if st.Dialect().Name() != "sqlite" {
		t.Skip("the writer connection of SQLite")
	}
	ctx := context.Background()
	var inside, again scanned
	err := st.Write(ctx, func(q *Q) error {
		if _, err := q.Exec(ctx, `CREATE TABLE conv_test (s TEXT PRIMARY KEY, i BIGINT, b BOOLEAN, f REAL, blob BLOB);
			CREATE INDEX conv_test_i ON conv_test (i);`); err != nil {
			return err
		}
		for _, args := range [][]any{
			{"a", int64(42), true, 1.5, []byte{0, 1, 2}},
			{"b", 7, false, float32(2), []byte{}},
			{"", int32(-1), false, 0.0, nil},
			{"long " + strings.Repeat("x", 100000), sql.NullInt64{Int64: 9, Valid: true}, sql.NullBool{Bool: true, Valid: true}, 3.25, []byte("z")},
		} {
			if _, err := q.Exec(ctx, `INSERT INTO conv_test (s, i, b, f, blob) VALUES (?, ?, ?, ?, ?)`, args...); err != nil {
				return err
			}
		}
		var err error
		if inside, err = scanRow(q.QueryRow(ctx, scannedQuery, "a")); err != nil {
			return err
		}
		// The same statement again while its rows are open.
		rows, err := q.Query(ctx, `SELECT s FROM conv_test ORDER BY s`)
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			if again, err = scanRow(q.QueryRow(ctx, scannedQuery, "a")); err != nil {
				return err
			}
			n++
		}
		if err := rows.Err(); err != nil || n != 4 {
			t.Errorf("rows: %d read, err %v; want 4", n, err)
		}
		if err := q.QueryRow(ctx, scannedQuery, "nobody").Scan(new(string)); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("no row: %v, want sql.ErrNoRows", err)
		}
		_, err = q.Exec(ctx, `INSERT INTO conv_test (s, i, b, f, blob) VALUES (?, ?, ?, ?, ?)`, "a", 1, true, 1.0, nil)
		if !q.IsUniqueViolation(err) || !strings.Contains(err.Error(), "UNIQUE constraint failed") {
			t.Errorf("duplicate key: %v, want a unique violation", err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO conv_test (s) VALUES (?)`); err == nil {
			t.Error("a missing argument was accepted")
		}
		res, err := q.Exec(ctx, `UPDATE conv_test SET i = i + 1 WHERE b = ?`, false)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 2 {
			t.Errorf("rows affected %d, want 2", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	outside, err := scanRow(st.Read().QueryRow(ctx, scannedQuery, "a"))
	if err != nil {
		t.Fatal(err)
	}
	want := scanned{S: "a", I64: 42, I: 42, B: true, F: 1.5, Blob: []byte{0, 1, 2},
		NS: sql.NullString{String: "a", Valid: true}, NI: sql.NullInt64{Int64: 42, Valid: true},
		NB: sql.NullBool{Bool: true, Valid: true}, Any: int64(42)}
	for name, got := range map[string]scanned{"inside a write": inside, "with rows open": again, "on the reader pool": outside} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	var empty, long string
	var blob []byte
	var i int64
	if err := st.Write(ctx, func(q *Q) error {
		if err := q.QueryRow(ctx, `SELECT s, blob FROM conv_test WHERE i = ?`, 8).Scan(&empty, &blob); err != nil {
			return err
		}
		return q.QueryRow(ctx, `SELECT s, i FROM conv_test WHERE s LIKE 'long %'`).Scan(&long, &i)
	}); err != nil {
		t.Fatal(err)
	}
	if empty != "b" || blob == nil || len(blob) != 0 || len(long) != 100005 || i != 9 {
		t.Errorf("read back %q, blob %v, long text of %d bytes, i %d", empty, blob, len(long), i)
	}
}
