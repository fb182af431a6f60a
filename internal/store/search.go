package store

import (
	"context"
	"strings"
)

// EscapeLike escapes s for a LIKE pattern with ESCAPE '\': the wildcards
// '%' and '_' and the escape character itself match only themselves.
func EscapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// SearchMails answers the mails viewer sent or received whose subject,
// body or sender name contains text, newest first, older than beforeID when
// given, with the viewer's own state. The match ignores case for what
// lower() folds: every letter on PostgreSQL, ASCII letters on SQLite (the
// text is lower-cased here, the columns by lower() in the query). Both
// dialects run the same SQL.
func (q *Q) SearchMails(ctx context.Context, viewer, text string, limit int, beforeID string) ([]ViewedMail, error) {
	pattern := "%" + EscapeLike(strings.ToLower(text)) + "%"
	query := `SELECT ` + prefixed("m.", mailCols) + `, COALESCE(r.role, ''), COALESCE(r.is_read, ?) FROM mails m
		LEFT JOIN mail_recipients r ON r.mail_id = m.mail_id AND r.name = ?
		WHERE m.mail_id IN (SELECT mail_id FROM mail_recipients WHERE name = ? UNION SELECT mail_id FROM mails WHERE from_name = ?)
		AND (lower(m.subject) LIKE ? ESCAPE '\' OR lower(m.body) LIKE ? ESCAPE '\' OR lower(m.from_name) LIKE ? ESCAPE '\')`
	args := []any{false, viewer, viewer, viewer, pattern, pattern, pattern}
	if beforeID != "" {
		query += ` AND m.mail_id < ?`
		args = append(args, beforeID)
	}
	query += ` ORDER BY m.mail_id DESC LIMIT ?`
	args = append(args, limit)
	return q.viewedMails(ctx, query, args...)
}
