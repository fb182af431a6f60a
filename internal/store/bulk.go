package store

import (
	"context"
	"strings"

	"github.com/agentmail/agentmail/internal/search"
)

// bulkRows is how many rows one multi-row INSERT of BulkInsertMails holds
// (SQLite allows 32766 parameters; 15 columns × 500 rows stays below).
const bulkRows = 500

// BulkInsertMails stores many mails and their recipients with multi-row
// INSERTs and raises the recipients' unread counters once per name. It is
// for seeding large data sets (the benchmark); it writes no events and does
// not touch sessions or participants, which the caller creates.
func (q *Q) BulkInsertMails(ctx context.Context, mails []MailRow, recips []RecipientRow) error {
	for start := 0; start < len(mails); start += bulkRows {
		end := min(start+bulkRows, len(mails))
		var b strings.Builder
		b.WriteString(`INSERT INTO mails (` + mailCols + `) VALUES `)
		args := make([]any, 0, (end-start)*15)
		for i, m := range mails[start:end] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			var parent any
			if m.ParentMailID != "" {
				parent = m.ParentMailID
			}
			args = append(args, m.MailID, m.SessionID, parent, m.FromName, m.FromKind, m.FromAddress, m.Subject, m.Body,
				m.MailType, m.Relay, m.RelayKey, Millis(m.CreatedAt), m.Importance, m.AckRequired, NullMillis(m.AckDueAt))
		}
		if _, err := q.Exec(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	if err := q.IndexMails(ctx, bulkDocs(mails, recips)); err != nil { // search.go
		return err
	}
	unread := map[string]int{}
	for start := 0; start < len(recips); start += bulkRows {
		end := min(start+bulkRows, len(recips))
		var b strings.Builder
		b.WriteString(`INSERT INTO mail_recipients (mail_id, name, kind, role, address, workspace, is_read, read_at, position, importance) VALUES `)
		args := make([]any, 0, (end-start)*10)
		for i, r := range recips[start:end] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, r.MailID, r.Name, r.Kind, r.Role, r.Address, r.Workspace, r.Read, NullMillis(r.ReadAt), r.Position, r.Importance)
			if !r.Read {
				unread[r.Name]++
			}
		}
		if _, err := q.Exec(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	for name, n := range unread {
		if err := q.addUnread(ctx, name, n); err != nil {
			return err
		}
	}
	return nil
}

// bulkDocs answers the search documents of mails with their recipients.
func bulkDocs(mails []MailRow, recips []RecipientRow) []IndexedMail {
	to := map[string][]string{}
	for _, r := range recips {
		to[r.MailID] = append(to[r.MailID], r.Name)
	}
	out := make([]IndexedMail, len(mails))
	for i, m := range mails {
		out[i] = IndexedMail{MailID: m.MailID, CreatedAt: m.CreatedAt, Doc: search.Doc{Subject: m.Subject, Body: m.Body,
			Sender: m.FromName, From: m.FromName, To: to[m.MailID], SessionID: m.SessionID}}
	}
	return out
}
