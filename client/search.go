package client

import (
	"context"
	"net/url"
	"strconv"
)

// SearchQuery selects a page of a mail search (GET /api/v1/me/mail/search
// for people, GET /api/v1/mail/search for agents): Q is the query
// (docs/API.md "Search": words, "phrases", prefix*, from:, to:, session:,
// has:attachment, is:unread, before:/after: dates; required, at most 200
// characters); Sort is SearchRelevance (default) or SearchNewest; Limit 0
// takes the gateway's default (20, at most 100); Cursor is the NextCursor
// of the previous page.
type SearchQuery struct {
	Q      string
	Sort   string
	Limit  int
	Cursor string
}

func (q SearchQuery) values() url.Values {
	v := url.Values{"q": {q.Q}}
	if q.Sort != "" {
		v.Set("sort", q.Sort)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	return v
}

// MeSearch searches the mails the person sent or received
// (GET /api/v1/me/mail/search). Errors: 400 field q (empty, over 200
// characters, not UTF-8, a malformed filter), sort or cursor.
func (c *Client) MeSearch(ctx context.Context, q SearchQuery) (*SearchResults, error) {
	return getAs[SearchResults](ctx, c, apiPath("/me/mail/search"), q.values())
}

// SearchMail searches the mails the agent sent or received
// (GET /api/v1/mail/search); a turn token searches its turn's session and
// those delegated from it. Errors as MeSearch.
func (c *Client) SearchMail(ctx context.Context, q SearchQuery) (*SearchResults, error) {
	return getAs[SearchResults](ctx, c, apiPath("/mail/search"), q.values())
}
