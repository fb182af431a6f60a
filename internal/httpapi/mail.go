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
		{Method: "GET", Path: p + "/admin/mail/{id}", Auth: AuthAdmin, Summary: "Explicit admin read of any mail", Description: "An admin reads any mail by id; the read is logged. It does not mark the mail read. 404 an unknown mail.", Response: client.Mail{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleAdminGetMail)},
		{Method: "POST", Path: p + "/me/mail/send", Auth: AuthPerson, Summary: "Send a mail as the person (round_budget for a new session); a reply conflicting with a permission request's decision is 409", Description: "Sends to one address (name@path.session, docs/API.md); a new session starts with round_budget when given. 400 a bad address or field, 404 an address that resolves to no agent or session, 409 a reply that decides a permission request differently than already decided (or after it expired), 413 a body over the limit.", Request: client.SendMailRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 413, 500}, Answer: answer((*Server).handleSend)},
		{Method: "GET", Path: p + "/me/mail/inbox", Auth: AuthPerson, Summary: "The person's inbox, newest first (default status=all, limit=50, no marking)", Description: "Mails addressed to the person, newest first, paged with next_cursor; mark_read=true marks exactly the listed mails read, with a user key only: with the session cookie it is 400 mark_read_needs_post (a GET must not change state for a browser; mark with POST /me/mail/read). A HEAD never marks. 400 a bad parameter or cursor.", Response: client.MailList{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleMeInbox),
			Query: []OpenAPIParam{
				{Name: "status", Enum: []string{"all", "unread", "read"}, Default: "all"}, queryLimit(personInboxLimit), queryCursor,
				{Name: "mark_read", Type: "boolean", Default: false, Description: "mark exactly the listed mails read"},
				queryImportance, querySort, // acks.go
			}},
		{Method: "GET", Path: p + "/me/mail/sent", Auth: AuthPerson, Summary: "Mails the person sent, newest first", Description: "Paged with next_cursor. 400 a bad parameter or cursor.", Response: client.MailList{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleSent),
			Query: []OpenAPIParam{queryLimit(personInboxLimit), queryCursor}},
		{Method: "POST", Path: p + "/me/mail/read", Auth: AuthPerson, Summary: "Mark mails read or unread", Description: "Marks the listed mails of the caller read, or unread. 400 a bad field.", Request: client.MarkReadRequest{}, Response: client.MarkReadResponse{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleMarkRead)},
		{Method: "GET", Path: p + "/me/mail/{id}", Auth: AuthPerson, Summary: "One mail the person sent or received", Description: "The full mail with body and attachments; reading it here does not mark it read. 404 an unknown mail or one the person neither sent nor received (the same answer).", Response: client.Mail{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleGetMail)},
		{Method: "POST", Path: p + "/me/mail/{id}/forward", Auth: AuthPerson, Summary: "Forward a mail as a new thread", Description: "Sends the mail's content to another address as the first mail of a new session. 400 a bad address, 404 an unknown mail or address.", Request: client.ForwardRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleForward)},
		{Method: "GET", Path: p + "/me/mail/{id}/tree", Auth: AuthPerson, Summary: "Conversation tree around a mail, paged both ways", Description: "The mail's place in its session's reply tree with up to before and after neighbours. 400 a bad parameter, 404 an unknown mail.", Response: client.Tree{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleTree),
			Query: []OpenAPIParam{
				{Name: "before", Type: "integer", Default: 20, Description: "nodes before the mail"},
				{Name: "after", Type: "integer", Default: 20, Description: "nodes after the mail"}, queryCursor,
			}},
		{Method: "GET", Path: p + "/me/counts", Auth: AuthPerson, Summary: "Unread mails and pending permission requests", Description: "The numbers behind the page's badges.", Response: client.Counts{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleCounts)},
		{Method: "GET", Path: p + "/mail/inbox", Auth: AuthAgent, Summary: "The agent's inbox (T-1: default unread, 5, marks the listed mails read)", Description: "Mails addressed to the agent, newest first, paged with next_cursor. By default lists unread mails and marks exactly those listed read (T-1); mark_read=false only looks, and a HEAD never marks. 400 a bad parameter or cursor.", Response: client.MailList{}, Status: 200, Errors: errsAgent, Answer: answer((*Server).handleAgentInbox),
			Query: []OpenAPIParam{
				{Name: "status", Enum: []string{"unread", "read", "all"}, Default: "unread"}, queryLimit(agentInboxLimit), queryCursor,
				{Name: "mark_read", Type: "boolean", Default: true, Description: "T-1: marks exactly the listed mails read; never with status=all"},
				queryImportance, querySort, // acks.go
			}},
		{Method: "POST", Path: p + "/mail/read", Auth: AuthAgent, Summary: "Mark mails read or unread", Description: "Marks the listed mails of the caller read, or unread. 400 a bad field.", Request: client.MarkReadRequest{}, Response: client.MarkReadResponse{}, Status: 200, Errors: errsAgent, Answer: answer((*Server).handleMarkRead)},
		{Method: "POST", Path: p + "/mail/send", Auth: AuthAgent, Summary: "Send a mail (W-5)", Description: "Sends to one address (name@path.session, docs/API.md); a reply uses a round of the session's budget. 400 a bad address or field, 403 the round budget is used up, 404 an address that resolves to nothing (alias_not_found: never retry as .new), 409 the received mail's answer slot is already used (relay_already_answered), 413 a body over the limit, 429 sending too fast (Retry-After).", Request: client.SendMailRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 413, 429, 500}, Answer: answer((*Server).handleSend)},
		{Method: "GET", Path: p + "/mail/{id}", Auth: AuthAgent, Summary: "One mail the agent sent or received", Description: "The full mail; reading it here does not mark it read. 404 an unknown mail or one the agent neither sent nor received.", Response: client.Mail{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleGetMail)},
		{Method: "GET", Path: p + "/mail/{id}/thread", Auth: AuthAgent, Summary: "The mail's session, oldest first", Description: "Every mail of the mail's session the agent may see, oldest first. 404 an unknown mail.", Response: client.MailList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleThread)},
		{Method: "POST", Path: p + "/mail/{id}/forward", Auth: AuthAgent, Summary: "Forward a mail as a new thread (T-5)", Description: "Sends the mail's content to another address as the first mail of a new session. 400 a bad address, 404 an unknown mail or address, 429 sending too fast.", Request: client.ForwardRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 429, 500}, Answer: answer((*Server).handleForward)},
	}
}

// Inbox defaults: agents get unread, 5, marking (T-1); people all, 50, no
// marking.
const (
	agentInboxLimit  = 5
	personInboxLimit = 50
	maxPageLimit     = 500
)

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) (*client.SendMailResponse, error) {
	var req client.SendMailRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.Send(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleForward(w http.ResponseWriter, r *http.Request) (*client.SendMailResponse, error) {
	var req client.ForwardRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.Forward(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
}

func (s *Server) inbox(w http.ResponseWriter, r *http.Request, status string, limit int, mark bool) (*client.MailList, error) {
	q := r.URL.Query()
	iq := gateway.InboxQuery{Status: status, Cursor: q.Get("cursor"), Importance: q.Get("importance"), Sort: q.Get("sort")}
	if v := q.Get("status"); v != "" {
		iq.Status = v
	}
	var err error
	if iq.Limit, err = queryInt(r, "limit", limit, 1, maxPageLimit); err != nil {
		return nil, err
	}
	if iq.MarkRead, err = queryBool(r, "mark_read", mark); err != nil {
		return nil, err
	}
	if err := checkInboxMarking(r, &iq); err != nil {
		return nil, err
	}
	return s.svc.Inbox(r.Context(), PrincipalOf(r), iq)
}

// checkInboxMarking keeps a listing from changing state where it must not:
// a HEAD never marks (its answer carries no mails, so none was seen), and a
// cookie-authenticated GET is 400 mark_read_needs_post when it asks to mark
// (mark_read=true), since a page of another site can make a browser send a
// GET with the SameSite=Lax cookie and no CSRF token; the page marks with
// POST /me/mail/read. A key (user, agent, turn token) marks as before: no
// other site can send it.
// suggestMarkWithPost is the suggestion of a 400 mark_read_needs_post
// (people read their own words for it, personwords.go).
const suggestMarkWithPost = `list with mark_read=false, then mark the mails with POST /api/v1/me/mail/read {"mail_ids": [...]} and the X-CSRF-Token header`

func checkInboxMarking(r *http.Request, iq *gateway.InboxQuery) error {
	if r.Method == http.MethodHead {
		iq.MarkRead = false
	}
	if iq.MarkRead && PrincipalOf(r).AuthKind == gateway.AuthCookie {
		return gateway.InvalidCode("mark_read_needs_post", "mark_read",
			"a signed-in browser cannot mark mail read while listing it (mark_read=true on a GET)",
			suggestMarkWithPost)
	}
	return nil
}

func (s *Server) handleAgentInbox(w http.ResponseWriter, r *http.Request) (*client.MailList, error) {
	return s.inbox(w, r, "unread", agentInboxLimit, true)
}

func (s *Server) handleMeInbox(w http.ResponseWriter, r *http.Request) (*client.MailList, error) {
	return s.inbox(w, r, "all", personInboxLimit, false)
}

func (s *Server) handleMarkRead(w http.ResponseWriter, r *http.Request) (*client.MarkReadResponse, error) {
	var req client.MarkReadRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.MarkRead(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleGetMail(w http.ResponseWriter, r *http.Request) (*client.Mail, error) {
	return s.svc.GetMail(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
}

func (s *Server) handleAdminGetMail(w http.ResponseWriter, r *http.Request) (*client.Mail, error) {
	return s.svc.AdminGetMail(r.Context(), chi.URLParam(r, "id"))
}

func (s *Server) handleThread(w http.ResponseWriter, r *http.Request) (*client.MailList, error) {
	return s.svc.Thread(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
}

func (s *Server) handleSent(w http.ResponseWriter, r *http.Request) (*client.MailList, error) {
	limit, err := queryInt(r, "limit", personInboxLimit, 1, maxPageLimit)
	if err != nil {
		return nil, err
	}
	return s.svc.Sent(r.Context(), PrincipalOf(r), limit, r.URL.Query().Get("cursor"))
}

func (s *Server) handleTree(w http.ResponseWriter, r *http.Request) (*client.Tree, error) {
	var tq gateway.TreeQuery
	var err error
	if tq.Before, err = queryInt(r, "before", 20, 0, 1000); err != nil {
		return nil, err
	}
	if tq.After, err = queryInt(r, "after", 20, 0, 1000); err != nil {
		return nil, err
	}
	tq.Cursor = r.URL.Query().Get("cursor")
	return s.svc.Tree(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), tq)
}

func (s *Server) handleCounts(w http.ResponseWriter, r *http.Request) (*client.Counts, error) {
	return s.svc.Counts(r.Context(), PrincipalOf(r))
}
