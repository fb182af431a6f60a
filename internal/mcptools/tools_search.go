package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/modeltext"
)

// Search limits, mirrored from internal/gateway (TestToolLimitsMatchTheGateway).
const (
	searchLimitDefault, searchLimitMax = 20, 100
	maxSearchRunes                     = 200
)

// registerSearchTools registers search_mail (issue 21 item 4).
func (s *Server) registerSearchTools() {
	s.add("search_mail",
		fmt.Sprintf("Search the mails you sent or received (never anyone else's; with a turn token, only this turn's session and the sessions delegated from it). "+
			"The query (at most %d characters) is words that must all appear (case and Latin accents ignored; Chinese is matched character by character, so 部署 finds 部署 inside longer text), "+
			`"quoted phrases", prefix* (at least 2 characters before the *), -word or -"phrase" to leave out mails holding it, and filters with their value right after the colon: from:NAME, to:NAME (to or cc), session:ALIAS, has:attachment, is:unread, `+
			"before:YYYY-MM-DD and after:YYYY-MM-DD (UTC). Order: relevance (default; every match ranked: all the words in the subject or sender's name first, then some of them, then body only, newest first within each) or newest (every match, newest first). "+
			"Each hit shows the mail's id, session, sender, date and subject, with the matched words in «»; read the whole mail with its mail_id. "+
			"A body is searched in its first 16,000 words.", maxSearchRunes),
		object(map[string]prop{
			"query":  str(fmt.Sprintf("what to look for, at most %d characters, e.g. `deploy* from:ann after:2026-11-01` or `部署 \"build cache\"`", maxSearchRunes)),
			"sort":   enum("relevance (default) or newest", client.SearchRelevance, client.SearchNewest),
			"limit":  intIn("how many hits at most", 1, searchLimitMax, searchLimitDefault),
			"cursor": str("next_cursor of the previous answer, to read the next page of the same query and sort (another query refuses it)"),
		}, "query"),
		s.searchMail)
}

func (s *Server) searchMail(ctx context.Context, a args) (string, error) {
	q, err := a.required("query", "the words to look for, e.g. deploy")
	if err != nil {
		return "", err
	}
	order, err := a.str("sort")
	if err != nil {
		return "", err
	}
	limit, err := a.bounded("limit", searchLimitDefault, 1, searchLimitMax)
	if err != nil {
		return "", err
	}
	cursor, err := a.str("cursor")
	if err != nil {
		return "", err
	}
	r, err := s.gateway().SearchMail(ctx, client.SearchQuery{Q: q, Sort: order, Limit: limit, Cursor: cursor})
	if err != nil {
		return "", err
	}
	return RenderSearch(q, r), nil
}

// RenderSpans renders highlighted spans as text, the matches in «».
func RenderSpans(spans []client.TextSpan) string { return client.MarkedText(spans, "«", "»") }

// RenderSearch renders a page of search hits.
func RenderSearch(q string, r *client.SearchResults) string {
	if len(r.Hits) == 0 {
		return fmt.Sprintf("No mail of yours matches %q.\n", q)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d mails match %q (%s):\n", len(r.Hits), q, r.Sort)
	for _, h := range r.Hits {
		m := h.Mail
		state := ""
		if m.Role != "" && !m.Read {
			state = ", unread"
		}
		fmt.Fprintf(&b, "- mail_id %s, session %s, from %s, %s%s\n  subject: %s\n", m.MailID, m.SessionAlias, m.FromName,
			FormatTime(m.CreatedAt), state, modeltext.OneLine(RenderSpans(h.Subject)))
		if snip := strings.TrimSpace(RenderSpans(h.Snippet)); snip != "" {
			// One line: a snippet's newlines must not start lines that
			// read as another hit.
			fmt.Fprintf(&b, "  %s\n", modeltext.OneLine(snip))
		}
	}
	if r.NextCursor != "" {
		fmt.Fprintf(&b, "More: call search_mail again with cursor %q.\n", r.NextCursor)
	}
	return b.String()
}
