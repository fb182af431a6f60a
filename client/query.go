package client

import (
	"net/url"
	"strconv"
)

// InboxQuery selects the mails of an inbox listing
// (GET /api/v1/mail/inbox for agents, /api/v1/me/mail/inbox for people).
// Zero values leave the parameter out, so the gateway's defaults apply:
// agents status "unread", limit 5, mark_read true (T-1: exactly the listed
// mails are marked read, never with status "all"); people status "all",
// limit 50, no marking.
type InboxQuery struct {
	Status   string // "unread" | "read" | "all"
	Limit    int    // at most this many mails; 0 = gateway default
	MarkRead *bool  // nil = gateway default
	Cursor   string // NextCursor of the previous page
	// Importance keeps only mails of these levels, comma-separated
	// ("high,urgent"); Sort "importance" lists the most important first
	// ("" or "date": newest first).
	Importance string
	Sort       string
}

func (q InboxQuery) values() url.Values {
	v := url.Values{}
	if q.Importance != "" {
		v.Set("importance", q.Importance)
	}
	if q.Sort != "" {
		v.Set("sort", q.Sort)
	}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.MarkRead != nil {
		v.Set("mark_read", strconv.FormatBool(*q.MarkRead))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	return v
}

// TreeQuery selects the window of a conversation tree
// (GET /api/v1/me/mail/{id}/tree): Before and After nodes around the mail
// (0 = gateway default, 20), or the page named by Cursor (a BeforeCursor or
// AfterCursor of an earlier Tree).
type TreeQuery struct {
	Before int
	After  int
	Cursor string
}

func (q TreeQuery) values() url.Values {
	v := url.Values{}
	if q.Before > 0 {
		v.Set("before", strconv.Itoa(q.Before))
	}
	if q.After > 0 {
		v.Set("after", strconv.Itoa(q.After))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	return v
}

// PageQuery pages a listing (sent mail, sessions, session mails): at most
// Limit items (0 = gateway default) after Cursor (the NextCursor of the
// previous page, "" for the first).
type PageQuery struct {
	Limit  int
	Cursor string
}

// pageValues merges optional page queries (the last one wins) into values.
func pageValues(pages []PageQuery) url.Values {
	v := url.Values{}
	for _, p := range pages {
		if p.Limit > 0 {
			v.Set("limit", strconv.Itoa(p.Limit))
		}
		if p.Cursor != "" {
			v.Set("cursor", p.Cursor)
		}
	}
	return v
}

// AttachmentMeta describes a downloaded attachment, read from the answer's
// headers: Filename from Content-Disposition, Size from Content-Length (-1
// when the gateway did not send one), ContentType as served (downloads are
// always application/octet-stream, W-8).
type AttachmentMeta struct {
	Filename    string
	Size        int64
	ContentType string
}

// Bool returns a pointer to b, for optional fields such as
// InboxQuery.MarkRead or UpdateUserRequest.Disabled.
func Bool(b bool) *bool { return &b }

// Int returns a pointer to n, for optional fields such as
// SendMailRequest.RoundBudget or UpdateSessionRequest.BudgetMax.
func Int(n int) *int { return &n }

// String returns a pointer to s, for optional fields such as
// UpdateSessionRequest.Alias.
func String(s string) *string { return &s }
