package httpapi

import (
	"net/http"
	"strings"

	"github.com/agentmail/agentmail/internal/gateway"
)

// wrap builds the http.Handler of one route: authentication for its Auth
// level, the CSRF check on cookie-authenticated writes (except on routes
// with Auth "none", such as POST /auth/login), the text check of path and
// query parameters (checkURLText), the handler, and the error funnel. A
// HEAD of an event stream answers the stream's headers after the checks
// and opens no stream.
func (s *Server) wrap(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r, rt.Auth)
		if err == nil {
			err = authorize(p, rt.Auth)
		}
		if err == nil && p != nil {
			err = allowTurnToken(p, rt) // turntokens.go
		}
		// Routes that need no credentials act for nobody, so a cookie sent
		// along needs no CSRF token: signing in again while holding a valid
		// cookie works (POST /auth/login).
		if err == nil && p != nil && rt.Auth != AuthNone && isWrite(r.Method) {
			err = gateway.CheckCSRF(p, r.Header.Get("X-CSRF-Token"))
		}
		if err == nil && strings.HasPrefix(rt.Path, Prefix) {
			err = checkURLText(r) // utf8check.go: NUL or non-UTF-8 in a parameter is a 400
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if p != nil {
			r = withPrincipal(r, p)
		}
		if r.Method == http.MethodHead && rt.Produces == "text/event-stream" {
			// HEAD of an event stream: the headers a GET would get, and no
			// stream held open for a client that reads no body.
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache, no-store")
			w.WriteHeader(http.StatusOK)
			return
		}
		if err := s.serve(rt, w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// serve runs the route's handler. An Answer's value is written here, with
// the route's Status: the one place the success status of those routes is
// written.
func (s *Server) serve(rt Route, w http.ResponseWriter, r *http.Request) error {
	if rt.Answer == nil {
		return rt.Handler(s, w, r)
	}
	v, err := rt.Answer(s, w, r)
	if err != nil {
		return err
	}
	if v == nil {
		w.WriteHeader(rt.Status)
		return nil
	}
	writeJSON(w, rt.Status, v)
	return nil
}

func isWrite(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch || method == http.MethodDelete
}

// authenticate reads `Authorization: Bearer <key>` or, failing that, the
// session cookie. A bearer key wins over a cookie. For routes with Auth
// "none" bad or missing credentials are ignored (login must work with a
// stale cookie).
func (s *Server) authenticate(r *http.Request, level string) (*gateway.Principal, error) {
	var p *gateway.Principal
	var err error
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(h, " ")
		switch {
		case strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) == "":
			// Issue 18: usually an unset variable, as in "Bearer $KEY".
			err = gateway.Unauthorized("empty_bearer_token", "the Authorization header says Bearer but carries no key "+
				"(is the variable holding it empty?): send `Authorization: Bearer <key>`")
		case !strings.EqualFold(scheme, "Bearer"):
			err = gateway.Unauthorized("invalid_authorization", "the Authorization header must be `Bearer <key>`")
		default:
			p, err = s.svc.AuthKey(r.Context(), strings.TrimSpace(token))
		}
	} else if c, cerr := r.Cookie(CookieName); cerr == nil && c.Value != "" {
		p, err = s.svc.AuthCookie(r.Context(), c.Value)
	}
	if level == AuthNone {
		if err != nil {
			return nil, nil
		}
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, gateway.Unauthorized("missing_key", "sign in (POST /api/v1/auth/login) or send Authorization: Bearer <key>")
	}
	return p, nil
}

// authorize enforces the key boundaries: agent keys never reach a person's
// mailbox, user keys and cookies never act as an agent (issue 2 item 2).
func authorize(p *gateway.Principal, level string) error {
	switch level {
	case AuthNone, AuthAny:
		return nil
	case AuthPerson:
		if !p.IsPerson() {
			return gateway.Forbidden("person_only", "this endpoint belongs to a person's mailbox; an agent key cannot use it",
				"use the agent endpoints (/api/v1/mail/..., /api/v1/events/stream)")
		}
	case AuthAdmin:
		if !p.IsAdmin() {
			return gateway.Forbidden("admin_only", "this endpoint needs an admin", "ask an admin")
		}
	case AuthAgent:
		if !p.IsAgent() {
			return gateway.Forbidden("agent_only", "this endpoint needs an agent key; a person's cookie or user key cannot act as an agent",
				"ask an admin to register an agent key (POST /api/v1/admin/agent-keys)")
		}
	}
	return nil
}
