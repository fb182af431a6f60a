package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// accountRoutes are sign-in, the person's own user keys, and the admin's
// accounts and keys (issue 8 item 1).
func accountRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "POST", Path: p + "/auth/login", Auth: AuthNone, Summary: "Sign in; sets the HttpOnly session cookie", Description: "Checks username and password and sets the session cookie; the answer carries the csrf_token to send as X-CSRF-Token on cookie-authenticated writes. 401 wrong username or password (the same answer for both), 415 a body that is not JSON, 429 too many failed attempts (Retry-After).", Request: client.LoginRequest{}, Response: client.LoginResponse{}, Status: 200, Errors: []int{400, 401, 403, 415, 429, 500}, Answer: answer((*Server).handleLogin)},
		{Method: "POST", Path: p + "/auth/logout", Auth: AuthPerson, Summary: "Sign out; clears the session cookie", Description: "Ends the cookie session of the request (a user key stays valid) and clears the cookie.", Status: 204, Errors: errsPerson, Answer: noBody((*Server).handleLogout)},
		{Method: "GET", Path: p + "/me", Auth: AuthPerson, Summary: "The signed-in person", Description: "Username, role, language and email settings of the caller.", Response: client.Me{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleMe)},
		{Method: "POST", Path: p + "/me/keys", Auth: AuthPerson, Summary: "Create a user key (token shown once)", Description: "Creates a user key acting as the caller; the token is in this answer only and is stored as a hash. 400 a name, label (over 200 characters) or lifetime out of bounds; 409 too_many_keys when the person already holds 200 working keys (revoke some first).", Request: client.CreateUserKeyRequest{}, Response: client.CreatedKey{}, Status: 201, Errors: []int{400, 401, 403, 409, 500}, Answer: answer((*Server).handleCreateUserKey)},
		{Method: "GET", Path: p + "/me/keys", Auth: AuthPerson, Summary: "List the person's user keys", Description: "The caller's user keys without their tokens, newest first.", Response: client.KeyList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleListUserKeys)},
		{Method: "DELETE", Path: p + "/me/keys/{key_id}", Auth: AuthPerson, Summary: "Revoke one of the person's user keys", Description: "Revokes the key at once; open event streams opened with it end. 404 an unknown key or one of another person (the same answer).", Status: 204, Errors: errsRead, Answer: noBody((*Server).handleDeleteUserKey)},
		{Method: "POST", Path: p + "/admin/agent-keys", Auth: AuthAdmin, Summary: "Register a client-generated agent key (key_token) or issue one", Description: "With key_token, registers a key the agent's machine generated (the gateway stores only its hash); without, issues a new one shown once. 400 a bad agent name or lifetime, 409 the key or the agent name is taken.", Request: client.CreateAgentKeyRequest{}, Response: client.CreatedKey{}, Status: 201, Errors: []int{400, 401, 403, 409, 500}, Answer: answer((*Server).handleCreateAgentKey)},
		{Method: "GET", Path: p + "/admin/agent-keys", Auth: AuthAdmin, Summary: "List agent keys", Description: "Every agent key without tokens: agent, lifecycle, expiry, last use.", Response: client.KeyList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleListAgentKeys)},
		{Method: "DELETE", Path: p + "/admin/agent-keys/{key_id}", Auth: AuthAdmin, Summary: "Revoke an agent key", Description: "Revokes the key at once; its event streams end. 404 an unknown key.", Status: 204, Errors: errsRead, Answer: noBody((*Server).handleDeleteAgentKey)},
		{Method: "GET", Path: p + "/admin/user-keys", Auth: AuthAdmin, Summary: "List every person's user keys", Description: "The user keys of every person without tokens.", Response: client.KeyList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleAdminListUserKeys)},
		{Method: "DELETE", Path: p + "/admin/user-keys/{key_id}", Auth: AuthAdmin, Summary: "Revoke any user key", Description: "Revokes any person's user key at once. 404 an unknown key.", Status: 204, Errors: errsRead, Answer: noBody((*Server).handleAdminDeleteUserKey)},
		{Method: "GET", Path: p + "/admin/users", Auth: AuthAdmin, Summary: "List people", Description: "Every person with role, state and email settings.", Response: client.UserList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleListUsers)},
		{Method: "POST", Path: p + "/admin/users", Auth: AuthAdmin, Summary: "Create a person", Description: "Creates a person with a password; role defaults to user. 400 a bad username, a reserved name or a weak password, 409 the name (or one that looks the same) is taken.", Request: client.CreateUserRequest{}, Response: client.User{}, Status: 201, Errors: []int{400, 401, 403, 409, 500}, Answer: answer((*Server).handleCreateUser)},
		{Method: "PATCH", Path: p + "/admin/users/{username}", Auth: AuthAdmin, Summary: "Disable, reset password or change role", Description: "Changes only the fields sent. 400 a bad field, 404 an unknown person.", Request: client.UpdateUserRequest{}, Response: client.User{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleUpdateUser)},
	}
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) (*client.LoginResponse, error) {
	if err := checkLoginRequest(r); err != nil { // logincsrf.go
		return nil, err
	}
	var req client.LoginRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	from := gateway.SignInFrom{Remote: gateway.RemoteHost(r.RemoteAddr)}
	if c, err := r.Cookie(DeviceCookieName); err == nil {
		from.Device = c.Value
	}
	in, err := s.svc.Login(r.Context(), req, from) // throttled per username (or known device) and address
	if err != nil {
		return nil, err
	}
	secure := s.opt.SecureCookies || r.TLS != nil
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: in.Cookie, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: secure,
		MaxAge: int(s.svc.Config.CookieTTL.Seconds())})
	if in.Device != "" {
		// Sent only back to the sign-in itself; it proves nothing but that
		// this browser signed in to this account before.
		http.SetCookie(w, &http.Cookie{Name: DeviceCookieName, Value: in.Device, Path: loginPath, HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: secure, MaxAge: int(gateway.DeviceCookieTTL.Seconds())})
	}
	return in.Response, nil
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalOf(r)
	if p.AuthKind == gateway.AuthCookie {
		if err := s.svc.Logout(r.Context(), p.CookieID); err != nil {
			return err
		}
		s.keyed.revoke(cookieStreamKey(p.CookieID)) // its open event streams end now
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, MaxAge: -1,
		SameSite: http.SameSiteLaxMode, Secure: s.opt.SecureCookies || r.TLS != nil})
	return nil
}

func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) (client.Me, error) {
	return s.me(r) // email.go: with the email fields
}

func (s *Server) handleCreateUserKey(w http.ResponseWriter, r *http.Request) (*client.CreatedKey, error) {
	var req client.CreateUserKeyRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.CreateUserKey(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleListUserKeys(w http.ResponseWriter, r *http.Request) (*client.KeyList, error) {
	return s.svc.ListKeys(r.Context(), gateway.KeyUser, PrincipalOf(r).Name)
}

func (s *Server) handleDeleteUserKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RevokeKey(r.Context(), gateway.KeyUser, PrincipalOf(r).Name, chi.URLParam(r, "key_id")); err != nil {
		return err
	}
	s.keyed.revoke(chi.URLParam(r, "key_id")) // its open event streams end now
	return nil
}

func (s *Server) handleCreateAgentKey(w http.ResponseWriter, r *http.Request) (*client.CreatedKey, error) {
	var req client.CreateAgentKeyRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.CreateAgentKeyAs(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleListAgentKeys(w http.ResponseWriter, r *http.Request) (*client.KeyList, error) {
	return s.svc.ListKeys(r.Context(), gateway.KeyAgent, "")
}

func (s *Server) handleDeleteAgentKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RevokeKey(r.Context(), gateway.KeyAgent, "", chi.URLParam(r, "key_id")); err != nil {
		return err
	}
	s.keyed.revoke(chi.URLParam(r, "key_id")) // its open event streams end now
	return nil
}

func (s *Server) handleAdminListUserKeys(w http.ResponseWriter, r *http.Request) (*client.KeyList, error) {
	return s.svc.ListKeys(r.Context(), gateway.KeyUser, "")
}

func (s *Server) handleAdminDeleteUserKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RevokeKey(r.Context(), gateway.KeyUser, "", chi.URLParam(r, "key_id")); err != nil {
		return err
	}
	s.keyed.revoke(chi.URLParam(r, "key_id")) // its open event streams end now
	return nil
}

func (s *Server) handleListUsers(w http.ResponseWriter, r *http.Request) (*client.UserList, error) {
	return s.svc.ListUsers(r.Context())
}

func (s *Server) handleCreateUser(w http.ResponseWriter, r *http.Request) (*client.User, error) {
	var req client.CreateUserRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	if err := s.svc.CheckLastingCredentialIssuer(r.Context(), PrincipalOf(r)); err != nil {
		return nil, err
	}
	return s.svc.CreateUser(r.Context(), req)
}

func (s *Server) handleUpdateUser(w http.ResponseWriter, r *http.Request) (*client.User, error) {
	var req client.UpdateUserRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	if req.Password != nil || req.Role != nil {
		if err := s.svc.CheckLastingCredentialIssuer(r.Context(), PrincipalOf(r)); err != nil {
			return nil, err
		}
	}
	u, err := s.svc.UpdateUser(r.Context(), PrincipalOf(r), chi.URLParam(r, "username"), req)
	if err != nil {
		return nil, err
	}
	switch { // the sign-ins the change ended take their open event streams with them
	case u.Disabled:
		s.keyed.revokeOwner(u.Username)
	case req.Password != nil:
		s.keyed.revokeCookies(u.Username, "")
	}
	return u, nil
}
