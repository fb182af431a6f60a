package httpapi

import (
	"net/http"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// passwordRoutes is the change of a person's own password.
func passwordRoutes() []Route {
	return []Route{{Method: "POST", Path: Prefix + "/me/password", Auth: AuthPerson,
		Summary: "Change the person's own password; other cookie sessions end, this one stays", Description: "Needs the current password. 400 a missing or wrong current password (wrong_password) or a too short new password, 429 too many wrong attempts (Retry-After).",
		Request: client.ChangePasswordRequest{}, Status: 204, Errors: []int{400, 401, 403, 429, 500},
		Answer: noBody((*Server).handleChangePassword)}}
}

// handleChangePassword serves POST /me/password (gateway.ChangePassword).
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request) error {
	var req client.ChangePasswordRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	p := PrincipalOf(r)
	if err := s.svc.ChangePassword(r.Context(), p, req, gateway.RemoteHost(r.RemoteAddr)); err != nil {
		return err
	}
	s.keyed.revokeCookies(p.Name, p.CookieID) // the other sign-ins ended, and their open event streams with them
	return nil
}
