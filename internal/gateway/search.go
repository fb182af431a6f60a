package gateway

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
)

// MaxSearchRunes bounds the text of a mail search.
const MaxSearchRunes = 200

// Search answers the mails the person sent or received whose subject,
// body or sender name contains q (GET /api/v1/me/mail/search): newest first,
// at most limit, older than cursor (a next_cursor) when given, with the
// viewer's read state and the total unread count, as the inbox. '%' and '_'
// in q match themselves. Case is ignored (for every letter on PostgreSQL,
// for ASCII letters on SQLite).
//
// Errors: 400 naming q when it is empty after trimming, longer than
// MaxSearchRunes, holds a NUL or is not UTF-8; 400 naming cursor for a
// cursor this endpoint did not give.
func (s *Service) Search(ctx context.Context, p *Principal, q string, limit int, cursor string) (*client.MailList, error) {
	q = strings.TrimSpace(q)
	switch {
	case q == "":
		return nil, Invalid("q", "q is required", "send the words to look for, e.g. ?q=deploy")
	case !utf8.ValidString(q):
		return nil, InvalidCode("invalid_utf8", "q", "q is not valid UTF-8 text", "send the query encoded as UTF-8")
	case strings.IndexByte(q, 0) >= 0:
		return nil, InvalidCode("nul_character", "q", "q contains a NUL character (U+0000)", "remove it")
	case utf8.RuneCountInString(q) > MaxSearchRunes:
		return nil, Invalid("q", fmt.Sprintf("q is longer than %d characters", MaxSearchRunes), "search for fewer words")
	}
	if err := checkMailCursor(cursor); err != nil {
		return nil, err
	}
	rq := s.Read()
	rows, err := rq.SearchMails(ctx, p.Name, q, limit, cursor)
	if err != nil {
		return nil, err
	}
	views, err := s.mailViews(ctx, rq, rows)
	if err != nil {
		return nil, err
	}
	out := &client.MailList{Mails: views}
	if out.Unread, err = rq.Unread(ctx, p.Name); err != nil {
		return nil, err
	}
	if len(rows) == limit && len(rows) > 0 {
		out.NextCursor = rows[len(rows)-1].MailID
	}
	return out, nil
}
