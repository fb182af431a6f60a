package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// discoveryRoutes are contacts, address suggestions, the resolve preview
// and session participants (issue 3 item 5), for people and agents alike.
func discoveryRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: p + "/contacts", Auth: AuthAny, Summary: "People and agents", Description: "Everyone the caller can write to, with kind, workspaces and online status.",
			Response: client.ContactList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleContacts)},
		{Method: "GET", Path: p + "/address/suggest", Auth: AuthAny, Summary: "Address suggestions: names, workspaces, session aliases; recent first", Description: "Completions of q as full addresses, recent first. 400 a limit out of bounds.",
			Response: client.SuggestionList{}, Status: 200, Errors: []int{400, 401, 403, 500}, Answer: answer((*Server).handleSuggest),
			Query: []OpenAPIParam{{Name: "q", Description: "what was typed so far"}, queryLimit(gateway.DefaultSuggestLimit)}},
		{Method: "GET", Path: p + "/address/resolve", Auth: AuthAny, Summary: "Where a mail to this address would go; creates nothing", Description: "Resolves an address as a send would: the agent, workspace and session (or that a new session would start). 400 a malformed address, 404 an address that resolves to nothing.",
			Response: client.Resolution{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleResolve),
			Query: []OpenAPIParam{{Name: "address", Required: true, Description: "name@path.session"}}},
		{Method: "GET", Path: p + "/sessions/{id}/participants", Auth: AuthAny, Summary: "Members of a session the caller takes part in", Description: "People and agents of the session. 404 an unknown session or one the caller does not take part in.",
			Response: client.ParticipantList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleParticipants)},
	}
}

func (s *Server) handleContacts(w http.ResponseWriter, r *http.Request) (*client.ContactList, error) {
	return s.svc.Contacts(r.Context(), PrincipalOf(r))
}

func (s *Server) handleSuggest(w http.ResponseWriter, r *http.Request) (*client.SuggestionList, error) {
	limit, err := queryInt(r, "limit", gateway.DefaultSuggestLimit, 1, gateway.MaxSuggestLimit)
	if err != nil {
		return nil, err
	}
	return s.svc.Suggest(r.Context(), PrincipalOf(r), r.URL.Query().Get("q"), limit)
}

func (s *Server) handleResolve(w http.ResponseWriter, r *http.Request) (*client.Resolution, error) {
	addr := r.URL.Query().Get("address")
	if addr == "" {
		return nil, gateway.Invalid("address", "the query parameter address is required", "GET /api/v1/address/resolve?address=name@path.session")
	}
	return s.svc.Resolve(r.Context(), PrincipalOf(r), addr)
}

func (s *Server) handleParticipants(w http.ResponseWriter, r *http.Request) (*client.ParticipantList, error) {
	return s.svc.SessionParticipants(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
}
