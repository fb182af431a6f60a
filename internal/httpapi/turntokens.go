package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// turnTokenIssueRoutes issue and revoke per-turn tokens (issue 12, point 9;
// gateway/turntokens.go).
func turnTokenIssueRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "POST", Path: p + "/agent/turn-tokens", Auth: AuthAgent, Summary: "Issue a per-turn token acting as the agent within one session (agent key only)", Description: "A short-lived token for one turn of the agent: it acts as the agent but sees and sends only within the session. 400 a bad lifetime, 404 an unknown session.",
			Request: client.CreateTurnTokenRequest{}, Response: client.TurnToken{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleCreateTurnToken},
		{Method: "DELETE", Path: p + "/agent/turn-tokens/{token_id}", Auth: AuthAgent, Summary: "Revoke a per-turn token (agent key only)", Description: "404 an unknown token or one of another agent.",
			Status: 204, Errors: errsRead, Handler: (*Server).handleRevokeTurnToken},
	}
}

// turnTokenRoutes are the only routes a turn token may use ("METHOD path"
// as in the route table). Each either names a session or a mail, and the
// gateway narrows what it answers to the token's session (visibility.go
// inTurnScope), or touches no session (models, uploads, contacts). Every
// other route, new ones included, answers a turn token 403
// turn_token_not_allowed: register, heartbeat, the event stream,
// forwarding, schedules, runs, alias sync, turn
// tokens themselves, and every person or admin route (a turn token is an
// agent, never a person).
var turnTokenRoutes = map[string]bool{
	"POST " + Prefix + "/mail/send":                 true,
	"GET " + Prefix + "/mail/{id}":                  true,
	"GET " + Prefix + "/mail/inbox":                 true,
	"GET " + Prefix + "/mail/search":                true,
	"POST " + Prefix + "/mail/read":                 true,
	"GET " + Prefix + "/mail/{id}/thread":           true,
	"GET " + Prefix + "/sessions/{id}":              true,
	"GET " + Prefix + "/sessions/{id}/participants": true,
	"POST " + Prefix + "/permission/request":        true,
	"GET " + Prefix + "/permission/{mail_id}":       true,
	"GET " + Prefix + "/grants":                     true,
	"POST " + Prefix + "/attachments":               true,
	"GET " + Prefix + "/attachments/{id}":           true,
	"GET " + Prefix + "/contacts":                   true,
	"GET " + Prefix + "/address/suggest":            true,
	"GET " + Prefix + "/address/resolve":            true,
	"GET " + Prefix + "/agent/models/allowed":       true,
	// Coordination (issue 21): narrowed to the token's session and its
	// workspaces by the gateway (reservations.go mayUseWorkspace, acks.go).
	"POST " + Prefix + "/reservations":         true,
	"GET " + Prefix + "/reservations":          true,
	"POST " + Prefix + "/reservations/renew":   true,
	"POST " + Prefix + "/reservations/release": true,
	"POST " + Prefix + "/reservations/check":   true,
	"POST " + Prefix + "/mail/{id}/ack":        true,
	"GET " + Prefix + "/mail/unacknowledged":   true,
	// MCP over HTTP: its tools call the routes above with the same token,
	// so they are narrowed the same way.
	"POST " + MCPPath:   true,
	"GET " + MCPPath:    true,
	"DELETE " + MCPPath: true,
}

// allowTurnToken refuses a turn token on a route outside turnTokenRoutes.
func allowTurnToken(p *gateway.Principal, rt Route) error {
	if p.IsTurnToken() && rt.Auth != AuthNone && !turnTokenRoutes[rt.Method+" "+rt.Path] {
		return gateway.ErrTurnTokenNotAllowed
	}
	return nil
}

func (s *Server) handleCreateTurnToken(w http.ResponseWriter, r *http.Request) error {
	var req client.CreateTurnTokenRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	out, err := s.svc.CreateTurnToken(r.Context(), PrincipalOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleRevokeTurnToken(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RevokeTurnToken(r.Context(), PrincipalOf(r), chi.URLParam(r, "token_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
