package client

import (
	"strings"
	"time"
)

// Search orders (GET /api/v1/me/mail/search and /api/v1/mail/search, sort=).
const (
	// SearchRelevance ranks every matching mail (the default): those with
	// all the words in the subject or the sender's name first, then those
	// with some of them there, then the rest; newest first within each.
	SearchRelevance = "relevance"
	// SearchNewest lists every matching mail, newest first.
	SearchNewest = "newest"
)

// SearchResults is the answer of a mail search (issue 21 item 4): the
// matching mails the caller sent or received, as Hits in the order asked
// for. NextCursor, when set, is the cursor of the next page of the same
// query and order (another query or order refuses it). Sort is the order
// used.
type SearchResults struct {
	Hits       []SearchHit `json:"hits"`
	Sort       string      `json:"sort" enum:"relevance,newest"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// SearchHit is one found mail with its highlights. Score is its relevance
// tier (3: every word in the subject or sender's name, 2: some of them, 1:
// only in the body; 0 when the query has only filters or sort is newest).
// Subject is the whole subject and Snippet at most 160 characters of the
// body around its first match, each as spans of plain text with the
// matched words flagged: render each span's text as text (never as HTML),
// marking those with Match.
type SearchHit struct {
	Mail    Mail       `json:"mail"`
	Score   float64    `json:"score"`
	Subject []TextSpan `json:"subject"`
	Snippet []TextSpan `json:"snippet"`
}

// TextSpan is a piece of plain text; Match marks a matched word or phrase.
type TextSpan struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// MarkedText joins spans into one text, each match between open and
// close (the CLI and the tools use « and »).
func MarkedText(spans []TextSpan, open, close string) string {
	var b strings.Builder
	for _, s := range spans {
		if s.Match {
			b.WriteString(open + s.Text + close)
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// ExportPage is one page of GET /api/v1/me/export (issue 21 item 5): the
// mails after the cursor in id order (oldest first), as GET /me/mail/{id}
// shows them (permission requests with their current decision), and the
// sessions those mails belong to (participants, aliases and former
// aliases, dates). NextCursor is the id of the last mail, to pass as
// after= for the next page (and for the next run of an incremental
// export); it is empty when no mail is left. ChangesAsOf is the time to
// pass as changed_after to GET /me/export/sessions on the next run: the
// sessions renamed or otherwise changed after it (it lies a minute before
// the answer, so a change committed while the page was read is answered
// again rather than missed).
type ExportPage struct {
	Mails       []Mail    `json:"mails"`
	Sessions    []Session `json:"sessions"`
	NextCursor  string    `json:"next_cursor,omitempty"`
	ChangesAsOf time.Time `json:"changes_as_of"`
}

// ExportSessionPage is one page of GET /api/v1/me/export/sessions (issue
// 21 item 5): the sessions the person takes part in (every session for an
// admin's all=true) that changed after changed_after in a way an archive
// shows beyond new mail: a new alias, a new subject, an acknowledgement of
// one of their mails. Each carries its participants, alias, former
// aliases, subject and dates, as in ExportPage. Ordered by when they
// changed; NextCursor continues the listing (empty when none is left).
// ChangesAsOf is what ExportPage's is, for the run after this one.
type ExportSessionPage struct {
	Sessions    []Session `json:"sessions"`
	NextCursor  string    `json:"next_cursor,omitempty"`
	ChangesAsOf time.Time `json:"changes_as_of"`
}
