package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
)

// permissionRoutes are the permission requests of agents, the decisions
// of people and the grants (W-6, B-8, seed 003; issue 3 item 1).
func permissionRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "POST", Path: p + "/permission/request", Auth: AuthAgent, Summary: "Ask the people of a session for permission (idempotent on relay_key)", Description: "Mails the people of the session a permission request for a tool call; the same relay_key answers the stored request. 400 a bad field, 404 an unknown session, 409 no person can decide or the relay_key was used for another request, 429 asking too fast.",
			Request: client.PermissionRequest{}, Response: client.Permission{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 429, 500}, Answer: answer((*Server).handlePermissionRequest)},
		{Method: "GET", Path: p + "/permission/{mail_id}", Auth: AuthAgent, Summary: "The state of one of the agent's permission requests", Description: "pending, approved, always or denied, with who decided. 404 an unknown request or one of another agent.",
			Response: client.Permission{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleGetPermission)},
		{Method: "GET", Path: p + "/grants", Auth: AuthAgent, Summary: "The always-allow grants that apply to the agent in one session", Description: "Filtered by session_id and tool when given. 400 a bad parameter.",
			Response: client.GrantList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleAgentGrants),
			Query: []OpenAPIParam{{Name: "session_id"}, {Name: "tool"}}},
		{Method: "GET", Path: p + "/me/permissions", Auth: AuthPerson, Summary: "Permission requests addressed to the person", Description: "Filtered by status (default pending).",
			Response: client.PermissionList{}, Status: 200, Errors: []int{400, 401, 403, 500}, Answer: answer((*Server).handleMyPermissions),
			Query: []OpenAPIParam{{Name: "status", Enum: []string{"pending", "decided", "all"}, Default: "pending"}}},
		{Method: "POST", Path: p + "/me/permission/{mail_id}/decide", Auth: AuthPerson, Summary: "Decide a permission request; the first decision wins", Description: "approve, always (also stores a grant) or deny. The same decision again answers the stored state. 400 a bad decision, 404 an unknown request, 409 already decided differently or expired.",
			Request: client.DecideRequest{}, Response: client.Permission{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 500}, Answer: answer((*Server).handleDecide)},
		{Method: "GET", Path: p + "/me/grants", Auth: AuthPerson, Summary: "The grants the person gave (admins: all)", Description: "Always-allow grants with tool, scope and session.",
			Response: client.GrantList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleMyGrants)},
		{Method: "DELETE", Path: p + "/me/grants/{grant_id}", Auth: AuthPerson, Summary: "Revoke a grant", Description: "The agent asks again next time. 404 an unknown grant or one the person may not revoke.",
			Status: 204, Errors: errsRead, Answer: noBody((*Server).handleRevokeGrant)},
	}
}

func (s *Server) handlePermissionRequest(w http.ResponseWriter, r *http.Request) (*client.Permission, error) {
	var req client.PermissionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.RequestPermission(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleGetPermission(w http.ResponseWriter, r *http.Request) (*client.Permission, error) {
	return s.svc.GetPermission(r.Context(), PrincipalOf(r), chi.URLParam(r, "mail_id"))
}

func (s *Server) handleAgentGrants(w http.ResponseWriter, r *http.Request) (*client.GrantList, error) {
	q := r.URL.Query()
	return s.svc.SessionGrants(r.Context(), PrincipalOf(r), q.Get("session_id"), q.Get("tool"))
}

func (s *Server) handleMyPermissions(w http.ResponseWriter, r *http.Request) (*client.PermissionList, error) {
	return s.svc.ListPermissions(r.Context(), PrincipalOf(r), r.URL.Query().Get("status"))
}

func (s *Server) handleDecide(w http.ResponseWriter, r *http.Request) (*client.Permission, error) {
	var req client.DecideRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.Decide(r.Context(), PrincipalOf(r), chi.URLParam(r, "mail_id"), req)
}

func (s *Server) handleMyGrants(w http.ResponseWriter, r *http.Request) (*client.GrantList, error) {
	return s.svc.PersonGrants(r.Context(), PrincipalOf(r))
}

func (s *Server) handleRevokeGrant(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RevokeGrant(r.Context(), PrincipalOf(r), chi.URLParam(r, "grant_id")); err != nil {
		return err
	}
	return nil
}
