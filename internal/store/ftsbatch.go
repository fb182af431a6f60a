package store

import (
	"context"
	"strings"
)

// The full-text rows of a batch, written together (SQLite).
//
// FTS5 keeps the rows written in a transaction in memory and writes them
// to disk as a new index segment when the transaction commits, and also
// whenever a savepoint opens after them: a SAVEPOINT statement, or a
// statement that opens a statement journal (most INSERTs and UPDATEs
// here). In a batch each request runs inside a savepoint of its own
// (writebatch.go), so written one by one every mail became a segment of
// its own, and FTS5 spent more time merging those segments than on
// anything else a send does. So inside a batch IndexMail leaves its
// mail_fts row with the request (Q.ftsRows; search_docs, which gives the
// row its id, is written at once), runBatch keeps the rows of the requests
// that succeeded, and writes them with one statement just before the
// commit: one segment per batch, written in the mails' own transaction, so
// a committed mail is always found.

// ftsRow is one mail_fts row: its rowid (search_docs.doc_id) and the
// columns subject, body, sender, head and facets.
type ftsRow struct {
	docID int64
	cols  [5]string
}

// writeFTS inserts rows into mail_fts with one statement (at most
// maxBatch rows, one per request of a batch).
func writeFTS(ctx context.Context, q *Q, rows []ftsRow) error {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO mail_fts (rowid, subject, body, sender, head, facets) VALUES `)
	args := make([]any, 0, len(rows)*6)
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, r.docID, r.cols[0], r.cols[1], r.cols[2], r.cols[3], r.cols[4])
	}
	_, err := q.Exec(ctx, b.String(), args...)
	return err
}
