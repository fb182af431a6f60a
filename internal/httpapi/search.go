package httpapi

import (
	"net/http"

	"github.com/agentmail/agentmail/client"
)

// searchRoutes is the search of a person's own mails.
func searchRoutes() []Route {
	return []Route{{Method: "GET", Path: Prefix + "/me/mail/search", Auth: AuthPerson,
		Summary: "Search the person's own mails (subject, body, sender name), newest first", Description: "Full-text search over the mails the person sent or received (query parameter q, with limit and cursor as in the inbox). 400 a bad parameter.",
		Response: client.MailList{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleSearch)}}
}

// handleSearch serves GET /me/mail/search?q=&limit=&cursor= (gateway.Search);
// limit defaults to 50, at most maxPageLimit.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) (*client.MailList, error) {
	limit, err := queryInt(r, "limit", personInboxLimit, 1, maxPageLimit)
	if err != nil {
		return nil, err
	}
	return s.svc.Search(r.Context(), PrincipalOf(r), r.URL.Query().Get("q"), limit, r.URL.Query().Get("cursor"))
}
