package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	if err := checkLoginRequest(r); err != nil { // logincsrf.go
		return err
	}
	var req client.LoginRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	cookie, resp, err := s.svc.Login(r.Context(), req, gateway.RemoteHost(r.RemoteAddr)) // throttled per username and address
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: cookie, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.opt.SecureCookies || r.TLS != nil,
		MaxAge: int(s.svc.Config.CookieTTL.Seconds())})
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalOf(r)
	if p.AuthKind == gateway.AuthCookie {
		if err := s.svc.Logout(r.Context(), p.CookieID); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, MaxAge: -1,
		SameSite: http.SameSiteLaxMode, Secure: s.opt.SecureCookies || r.TLS != nil})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalOf(r)
	me := client.Me{Username: p.Name, Role: p.Role, AuthKind: p.AuthKind}
	if p.AuthKind == gateway.AuthCookie {
		me.CSRFToken = p.CSRFToken
	}
	writeJSON(w, http.StatusOK, me)
	return nil
}

func (s *Server) handleCreateUserKey(w http.ResponseWriter, r *http.Request) error {
	var req client.CreateUserKeyRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	k, err := s.svc.CreateUserKey(r.Context(), PrincipalOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, k)
	return nil
}

func (s *Server) handleListUserKeys(w http.ResponseWriter, r *http.Request) error {
	l, err := s.svc.ListKeys(r.Context(), gateway.KeyUser, PrincipalOf(r).Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleDeleteUserKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RevokeKey(r.Context(), gateway.KeyUser, PrincipalOf(r).Name, chi.URLParam(r, "key_id")); err != nil {
		return err
	}
	s.keyed.revoke(chi.URLParam(r, "key_id")) // its open event streams end now
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleCreateAgentKey(w http.ResponseWriter, r *http.Request) error {
	var req client.CreateAgentKeyRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	k, err := s.svc.CreateAgentKeyAs(r.Context(), PrincipalOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, k)
	return nil
}

func (s *Server) handleListAgentKeys(w http.ResponseWriter, r *http.Request) error {
	l, err := s.svc.ListKeys(r.Context(), gateway.KeyAgent, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleDeleteAgentKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RevokeKey(r.Context(), gateway.KeyAgent, "", chi.URLParam(r, "key_id")); err != nil {
		return err
	}
	s.keyed.revoke(chi.URLParam(r, "key_id")) // its open event streams end now
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleAdminListUserKeys(w http.ResponseWriter, r *http.Request) error {
	l, err := s.svc.ListKeys(r.Context(), gateway.KeyUser, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleAdminDeleteUserKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.RevokeKey(r.Context(), gateway.KeyUser, "", chi.URLParam(r, "key_id")); err != nil {
		return err
	}
	s.keyed.revoke(chi.URLParam(r, "key_id")) // its open event streams end now
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleListUsers(w http.ResponseWriter, r *http.Request) error {
	l, err := s.svc.ListUsers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleCreateUser(w http.ResponseWriter, r *http.Request) error {
	var req client.CreateUserRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := s.svc.CheckLastingCredentialIssuer(r.Context(), PrincipalOf(r)); err != nil {
		return err
	}
	u, err := s.svc.CreateUser(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, u)
	return nil
}

func (s *Server) handleUpdateUser(w http.ResponseWriter, r *http.Request) error {
	var req client.UpdateUserRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Password != nil || req.Role != nil {
		if err := s.svc.CheckLastingCredentialIssuer(r.Context(), PrincipalOf(r)); err != nil {
			return err
		}
	}
	u, err := s.svc.UpdateUser(r.Context(), PrincipalOf(r), chi.URLParam(r, "username"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}
