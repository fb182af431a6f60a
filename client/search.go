package client

import (
	"context"
	"net/url"
	"strconv"
)

// SearchQuery selects a page of a mail search
// (GET /api/v1/me/mail/search): Q is the text to look for in subject, body
// and sender name (required; '%' and '_' match themselves, case is
// ignored); Limit 0 takes the gateway's default (50, at most 500); Cursor
// is the NextCursor of the previous page.
type SearchQuery struct {
	Q      string
	Limit  int
	Cursor string
}

func (q SearchQuery) values() url.Values {
	v := url.Values{"q": {q.Q}}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	return v
}

// MeSearch searches the person's own mails, sent and received, newest first
// (GET /api/v1/me/mail/search). Errors: 400 field q (empty, over 200
// characters, not UTF-8) or cursor.
func (c *Client) MeSearch(ctx context.Context, q SearchQuery) (*MailList, error) {
	return getAs[MailList](ctx, c, apiPath("/me/mail/search"), q.values())
}
