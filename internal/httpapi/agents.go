package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
)

func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) error {
	var req client.RegisterRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	a, err := s.svc.Register(r.Context(), PrincipalOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) handleHeartbeat(w http.ResponseWriter, r *http.Request) error {
	var req client.HeartbeatRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &req); err != nil {
			return err
		}
	}
	resp, err := s.svc.Heartbeat(r.Context(), PrincipalOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) handleAllowedModels(w http.ResponseWriter, r *http.Request) error {
	resp, err := s.svc.AllowedModels(r.Context(), PrincipalOf(r).Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) handleListAgents(w http.ResponseWriter, r *http.Request) error {
	l, err := s.svc.ListAgents(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleGetAgent(w http.ResponseWriter, r *http.Request) error {
	d, err := s.svc.AgentDetail(r.Context(), chi.URLParam(r, "name"), PrincipalOf(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) handleUpdateAgent(w http.ResponseWriter, r *http.Request) error {
	var req client.UpdateAgentRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	a, err := s.svc.UpdateAgent(r.Context(), chi.URLParam(r, "name"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}
