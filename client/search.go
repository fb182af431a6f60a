package client

import (
	"context"
	"io"
	"net/url"
	"strconv"
	"time"
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

// ExportQuery selects a page of GET /api/v1/me/export: After (the query
// parameter cursor) is a mail id
// (the NextCursor of the previous page or run; "" from the start), Limit
// 0 takes the gateway's default (200, at most 1000), All (admins only)
// exports every mail instead of the caller's own.
type ExportQuery struct {
	After string
	Limit int
	All   bool
}

// MeExport answers a page of the mails the person may export
// (GET /api/v1/me/export). Errors: 400 cursor or limit; 403 all for one who
// is not an admin.
func (c *Client) MeExport(ctx context.Context, q ExportQuery) (*ExportPage, error) {
	return getAs[ExportPage](ctx, c, apiPath("/me/export"), exportValues(q.After, q.Limit, q.All))
}

// exportValues are the cursor, limit and all parameters of the export routes.
func exportValues(cursor string, limit int, all bool) url.Values {
	v := url.Values{}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if all {
		v.Set("all", "true")
	}
	return v
}

// ExportSessionsQuery selects a page of GET /api/v1/me/export/sessions:
// the sessions changed after ChangedAfter (the ChangesAsOf of the previous
// run), Cursor the NextCursor of the previous page, Limit 0 the gateway's
// default (200, at most 1000), All (admins only) every session.
type ExportSessionsQuery struct {
	ChangedAfter time.Time
	Cursor       string
	Limit        int
	All          bool
}

// MeExportSessions answers a page of the sessions changed since the last
// export (GET /api/v1/me/export/sessions). Errors: 400 changed_after,
// cursor or limit; 403 all for one who is not an admin.
func (c *Client) MeExportSessions(ctx context.Context, q ExportSessionsQuery) (*ExportSessionPage, error) {
	v := exportValues(q.Cursor, q.Limit, q.All)
	v.Set("changed_after", q.ChangedAfter.UTC().Format(time.RFC3339Nano))
	return getAs[ExportSessionPage](ctx, c, apiPath("/me/export/sessions"), v)
}

// AdminDownloadAttachment streams any attachment
// (GET /api/v1/admin/attachments/{id}), for an export of everything.
func (c *Client) AdminDownloadAttachment(ctx context.Context, id string) (io.ReadCloser, *AttachmentMeta, error) {
	return c.download(ctx, apiPath("/admin/attachments/"+url.PathEscape(id)))
}
