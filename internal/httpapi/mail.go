package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// mailRoutes are the mailboxes of people (/me/mail, issue 2 item 4) and
// agents (/mail, W-5, T-1), and the admin's explicit read.
func mailRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: p + "/admin/mail/{id}", Auth: AuthAdmin, Summary: "Explicit admin read of any mail", Response: client.Mail{}, Status: 200, Errors: errsRead, Handler: (*Server).handleAdminGetMail},
		{Method: "POST", Path: p + "/me/mail/send", Auth: AuthPerson, Summary: "Send a mail as the person (round_budget for a new session); a reply conflicting with a permission request's decision is 409", Request: client.SendMailRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 413, 500}, Handler: (*Server).handleSend},
		{Method: "GET", Path: p + "/me/mail/inbox", Auth: AuthPerson, Summary: "The person's inbox, newest first (default status=all, limit=50, no marking)", Response: client.MailList{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleMeInbox,
			Query: []OpenAPIParam{
				{Name: "status", Enum: []string{"all", "unread", "read"}, Default: "all"}, queryLimit(personInboxLimit), queryCursor,
				{Name: "mark_read", Type: "boolean", Default: false, Description: "mark exactly the listed mails read"},
			}},
		{Method: "GET", Path: p + "/me/mail/sent", Auth: AuthPerson, Summary: "Mails the person sent, newest first", Response: client.MailList{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleSent,
			Query: []OpenAPIParam{queryLimit(personInboxLimit), queryCursor}},
		{Method: "POST", Path: p + "/me/mail/read", Auth: AuthPerson, Summary: "Mark mails read or unread", Request: client.MarkReadRequest{}, Response: client.MarkReadResponse{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleMarkRead},
		{Method: "GET", Path: p + "/me/mail/{id}", Auth: AuthPerson, Summary: "One mail the person sent or received", Response: client.Mail{}, Status: 200, Errors: errsRead, Handler: (*Server).handleGetMail},
		{Method: "POST", Path: p + "/me/mail/{id}/forward", Auth: AuthPerson, Summary: "Forward a mail as a new thread", Request: client.ForwardRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleForward},
		{Method: "GET", Path: p + "/me/mail/{id}/tree", Auth: AuthPerson, Summary: "Conversation tree around a mail, paged both ways", Response: client.Tree{}, Status: 200, Errors: errsRead, Handler: (*Server).handleTree,
			Query: []OpenAPIParam{
				{Name: "before", Type: "integer", Default: 20, Description: "nodes before the mail"},
				{Name: "after", Type: "integer", Default: 20, Description: "nodes after the mail"}, queryCursor,
			}},
		{Method: "GET", Path: p + "/me/counts", Auth: AuthPerson, Summary: "Unread mails and pending permission requests", Response: client.Counts{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleCounts},
		{Method: "GET", Path: p + "/mail/inbox", Auth: AuthAgent, Summary: "The agent's inbox (T-1: default unread, 5, marks the listed mails read)", Response: client.MailList{}, Status: 200, Errors: errsAgent, Handler: (*Server).handleAgentInbox,
			Query: []OpenAPIParam{
				{Name: "status", Enum: []string{"unread", "read", "all"}, Default: "unread"}, queryLimit(agentInboxLimit), queryCursor,
				{Name: "mark_read", Type: "boolean", Default: true, Description: "T-1: marks exactly the listed mails read; never with status=all"},
			}},
		{Method: "POST", Path: p + "/mail/read", Auth: AuthAgent, Summary: "Mark mails read or unread", Request: client.MarkReadRequest{}, Response: client.MarkReadResponse{}, Status: 200, Errors: errsAgent, Handler: (*Server).handleMarkRead},
		{Method: "POST", Path: p + "/mail/send", Auth: AuthAgent, Summary: "Send a mail (W-5)", Request: client.SendMailRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 413, 429, 500}, Handler: (*Server).handleSend},
		{Method: "GET", Path: p + "/mail/{id}", Auth: AuthAgent, Summary: "One mail the agent sent or received", Response: client.Mail{}, Status: 200, Errors: errsRead, Handler: (*Server).handleGetMail},
		{Method: "GET", Path: p + "/mail/{id}/thread", Auth: AuthAgent, Summary: "The mail's session, oldest first", Response: client.MailList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleThread},
		{Method: "POST", Path: p + "/mail/{id}/forward", Auth: AuthAgent, Summary: "Forward a mail as a new thread (T-5)", Request: client.ForwardRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 429, 500}, Handler: (*Server).handleForward},
	}
}

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
