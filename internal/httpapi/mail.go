package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// Inbox defaults: agents get unread, 5, marking (T-1); people all, 50, no
// marking.
const (
	agentInboxLimit  = 5
	personInboxLimit = 50
	maxPageLimit     = 500
)

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) error {
	var req client.SendMailRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	resp, err := s.svc.Send(r.Context(), PrincipalOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) handleForward(w http.ResponseWriter, r *http.Request) error {
	var req client.ForwardRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	resp, err := s.svc.Forward(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) inbox(w http.ResponseWriter, r *http.Request, status string, limit int, mark bool) error {
	q := r.URL.Query()
	iq := gateway.InboxQuery{Status: status, Cursor: q.Get("cursor")}
	if v := q.Get("status"); v != "" {
		iq.Status = v
	}
	var err error
	if iq.Limit, err = queryInt(r, "limit", limit, 1, maxPageLimit); err != nil {
		return err
	}
	if iq.MarkRead, err = queryBool(r, "mark_read", mark); err != nil {
		return err
	}
	l, err := s.svc.Inbox(r.Context(), PrincipalOf(r), iq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleAgentInbox(w http.ResponseWriter, r *http.Request) error {
	return s.inbox(w, r, "unread", agentInboxLimit, true)
}

func (s *Server) handleMeInbox(w http.ResponseWriter, r *http.Request) error {
	return s.inbox(w, r, "all", personInboxLimit, false)
}

func (s *Server) handleMarkRead(w http.ResponseWriter, r *http.Request) error {
	var req client.MarkReadRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	resp, err := s.svc.MarkRead(r.Context(), PrincipalOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) handleGetMail(w http.ResponseWriter, r *http.Request) error {
	m, err := s.svc.GetMail(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

func (s *Server) handleAdminGetMail(w http.ResponseWriter, r *http.Request) error {
	m, err := s.svc.AdminGetMail(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

func (s *Server) handleThread(w http.ResponseWriter, r *http.Request) error {
	l, err := s.svc.Thread(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleSent(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit", personInboxLimit, 1, maxPageLimit)
	if err != nil {
		return err
	}
	l, err := s.svc.Sent(r.Context(), PrincipalOf(r), limit, r.URL.Query().Get("cursor"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleTree(w http.ResponseWriter, r *http.Request) error {
	var tq gateway.TreeQuery
	var err error
	if tq.Before, err = queryInt(r, "before", 20, 0, 1000); err != nil {
		return err
	}
	if tq.After, err = queryInt(r, "after", 20, 0, 1000); err != nil {
		return err
	}
	tq.Cursor = r.URL.Query().Get("cursor")
	t, err := s.svc.Tree(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), tq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) handleCounts(w http.ResponseWriter, r *http.Request) error {
	c, err := s.svc.Counts(r.Context(), PrincipalOf(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}
