package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
)

func (s *Server) handleListSessions(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit", 50, 1, maxPageLimit)
	if err != nil {
		return err
	}
	l, next, err := s.svc.ListSessions(r.Context(), PrincipalOf(r), limit, r.URL.Query().Get("cursor"))
	if err != nil {
		return err
	}
	l.NextCursor = next
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleGetSession(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.GetSession(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleUpdateSession(w http.ResponseWriter, r *http.Request) error {
	var req client.UpdateSessionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	v, err := s.svc.UpdateSession(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleSessionMails(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit", 50, 1, maxPageLimit)
	if err != nil {
		return err
	}
	l, err := s.svc.SessionMails(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), limit, r.URL.Query().Get("cursor"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleSyncSession(w http.ResponseWriter, r *http.Request) error {
	var req client.SyncSessionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	v, err := s.svc.SyncSession(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleBindPlatformSession(w http.ResponseWriter, r *http.Request) error {
	var req client.BindPlatformSessionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	v, err := s.svc.BindPlatformSession(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleSessionRuns(w http.ResponseWriter, r *http.Request) error {
	l, err := s.svc.SessionRuns(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handlePutRun(w http.ResponseWriter, r *http.Request) error {
	var req client.Run
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	run, err := s.svc.PutRun(r.Context(), PrincipalOf(r), chi.URLParam(r, "run_id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}
