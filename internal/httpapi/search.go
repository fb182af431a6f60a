package httpapi

import (
	"net/http"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// searchQuery is the query string of both searches.
var searchQuery = []OpenAPIParam{
	{Name: "q", Required: true, Description: "the query: words, \"phrases\", prefix*, -word to exclude, from:NAME, to:NAME, session:ALIAS, has:attachment, is:unread, before:YYYY-MM-DD, after:YYYY-MM-DD; at most 200 characters"},
	{Name: "sort", Enum: []string{client.SearchRelevance, client.SearchNewest}, Default: client.SearchRelevance,
		Description: "relevance ranks every match: words in the subject or sender's name first, newest first within a tier; newest lists every match, newest first"},
	{Name: "limit", Type: "integer", Default: gateway.SearchDefaultLimit, Description: "at most this many hits (1..100)"},
	queryCursor,
}

// searchRoutes are the full-text searches of one's own mail (issue 21
// item 4): people's and agents'.
func searchRoutes() []Route {
	return []Route{
		{Method: "GET", Path: Prefix + "/me/mail/search", Auth: AuthPerson,
			Summary:     "Search the mails the person sent or received (full text, filters, ranked, highlighted)",
			Description: "Full-text search over the mails the person sent or received: words, Chinese characters, phrases, prefixes and filters in q (docs/API.md \"Search\"); relevance ranks every match (subject and sender first), newest lists every match newest first; hits carry plain-text highlight spans; next_cursor belongs to its query and order. 400 a bad parameter or a cursor of another search.",
			Response:    client.SearchResults{}, Status: 200, Errors: errsPerson, Query: searchQuery, Answer: answer((*Server).handleSearch)},
		{Method: "GET", Path: Prefix + "/mail/search", Auth: AuthAgent,
			Summary:     "Search the mails the agent sent or received (full text, filters, ranked, highlighted)",
			Description: "The search of /me/mail/search over the agent's own mail; with a turn token, only its turn's session and the sessions delegated from it. 400 a bad parameter or a cursor of another search.",
			Response:    client.SearchResults{}, Status: 200, Errors: errsAgent, Query: searchQuery, Answer: answer((*Server).handleSearch)},
		{Method: "GET", Path: Prefix + "/me/export", Auth: AuthPerson,
			Summary:     "A page of the mails to archive, oldest first, with their sessions (agentmail export)",
			Description: "The mails the person sent or received (all=true: every mail, admins only) after the mail id cursor, in id order, with permission requests' decisions and the sessions' participants and aliases. 400 a bad cursor or limit, 403 all=true without the admin role.",
			Query: []OpenAPIParam{{Name: "cursor", Description: "the next_cursor of the previous page or run: mails after this id"},
				{Name: "limit", Type: "integer", Default: gateway.ExportDefaultLimit, Description: "at most this many mails (1..1000)"},
				{Name: "all", Type: "boolean", Default: false, Description: "every mail (admins only)"}},
			Response: client.ExportPage{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleExport)},
		{Method: "GET", Path: Prefix + "/me/export/sessions", Auth: AuthPerson,
			Summary:     "The sessions renamed or otherwise changed since the last export (agentmail export)",
			Description: "The sessions the person takes part in (all=true: every session, admins only) whose alias or subject changed, or one of whose mails was acknowledged, after changed_after (the changes_as_of of the previous run), in the order they changed, with participants, aliases, former aliases and dates, so that an incremental export rewrites them. 400 a bad changed_after, cursor or limit, 403 all=true without the admin role.",
			Query: []OpenAPIParam{{Name: "changed_after", Required: true, Description: "an RFC 3339 time: the changes_as_of of the previous run's answers"},
				{Name: "cursor", Description: "the next_cursor of the previous page"},
				{Name: "limit", Type: "integer", Default: gateway.ExportDefaultLimit, Description: "at most this many sessions (1..1000)"},
				{Name: "all", Type: "boolean", Default: false, Description: "every session (admins only)"}},
			Response: client.ExportSessionPage{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleExportSessions)},
	}
}

// handleExportSessions serves GET /me/export/sessions?changed_after=&cursor=&limit=&all=
// (gateway.ExportSessions).
func (s *Server) handleExportSessions(w http.ResponseWriter, r *http.Request) (*client.ExportSessionPage, error) {
	limit, all, err := exportPaging(r)
	if err != nil {
		return nil, err
	}
	after, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("changed_after"))
	if err != nil {
		return nil, gateway.Invalid("changed_after", "changed_after must be an RFC 3339 time",
			"pass the changes_as_of of the previous export's answers, e.g. 2026-12-01T10:00:00Z")
	}
	return s.svc.ExportSessions(r.Context(), PrincipalOf(r), all, after, r.URL.Query().Get("cursor"), limit)
}

// exportPaging reads the limit= and all= parameters of the export routes.
func exportPaging(r *http.Request) (int, bool, error) {
	limit, err := queryInt(r, "limit", gateway.ExportDefaultLimit, 1, gateway.ExportMaxLimit)
	if err != nil {
		return 0, false, err
	}
	all := r.URL.Query().Get("all")
	if all != "" && all != "true" && all != "false" {
		return 0, false, gateway.Invalid("all", "all must be true or false", "send all=true or leave it out")
	}
	return limit, all == "true", nil
}

// handleExport serves GET /me/export?cursor=&limit=&all= (gateway.Export).
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) (*client.ExportPage, error) {
	limit, all, err := exportPaging(r)
	if err != nil {
		return nil, err
	}
	return s.svc.Export(r.Context(), PrincipalOf(r), all, r.URL.Query().Get("cursor"), limit)
}

// handleSearch serves GET /me/mail/search and /mail/search
// ?q=&sort=&limit=&cursor= (gateway.Search); limit defaults to 20, at most
// 100.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) (*client.SearchResults, error) {
	limit, err := queryInt(r, "limit", gateway.SearchDefaultLimit, 1, gateway.SearchMaxLimit)
	if err != nil {
		return nil, err
	}
	v := r.URL.Query()
	return s.svc.Search(r.Context(), PrincipalOf(r), gateway.SearchRequest{Q: v.Get("q"), Sort: v.Get("sort"), Limit: limit, Cursor: v.Get("cursor")})
}
