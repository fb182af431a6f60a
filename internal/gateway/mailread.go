package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// mailViews converts stored mails to their API form with recipients,
// attachments, session aliases, importance and acknowledgements and the
// state of permission requests.
func (s *Service) mailViews(ctx context.Context, q *store.Q, rows []store.ViewedMail) ([]client.Mail, error) {
	return s.mailViewsFor(ctx, q, "", rows)
}

// mailViewsFor is mailViews for the viewer named (a recipient viewer gets
// its own acknowledgement time, acks.go).
func (s *Service) mailViewsFor(ctx context.Context, q *store.Q, viewer string, rows []store.ViewedMail) ([]client.Mail, error) {
	out := make([]client.Mail, 0, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]string, len(rows))
	var permIDs []string
	for i, r := range rows {
		ids[i] = r.MailID
		if r.MailType == client.MailTypePermissionRequest {
			permIDs = append(permIDs, r.MailID)
		}
	}
	recips, err := q.RecipientsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	atts, err := attachmentsOfMails(ctx, q, ids) // attachment.go
	if err != nil {
		return nil, err
	}
	var perms map[string]*client.Permission
	if len(permIDs) > 0 {
		if perms, err = permissionsOfMails(ctx, q, permIDs); err != nil { // permission.go
			return nil, err
		}
	}
	var sessionIDs []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.SessionID] {
			seen[r.SessionID] = true
			sessionIDs = append(sessionIDs, r.SessionID)
		}
	}
	aliases, err := q.SessionAliases(ctx, sessionIDs) // one query for the page
	if err != nil {
		return nil, err
	}
	for _, id := range sessionIDs {
		if _, ok := aliases[id]; !ok {
			return nil, fmt.Errorf("gateway: mail of unknown session %s: %w", id, store.ErrNotFound)
		}
	}
	for _, r := range rows {
		m := client.Mail{MailID: r.MailID, SessionID: r.SessionID, SessionAlias: aliases[r.SessionID],
			ParentMailID: r.ParentMailID, FromName: r.FromName, FromKind: r.FromKind, FromAddress: r.FromAddress,
			Recipients: []client.Recipient{}, Subject: r.Subject, Body: r.Body, MailType: r.MailType, Relay: r.Relay,
			Attachments: []client.Attachment{}, CreatedAt: r.CreatedAt, Read: r.Read, Role: r.Role}
		for _, rc := range recips[r.MailID] {
			m.Recipients = append(m.Recipients, client.Recipient{Name: rc.Name, Kind: rc.Kind, Role: rc.Role,
				Address: rc.Address, Workspace: rc.Workspace})
		}
		if a := atts[r.MailID]; a != nil {
			m.Attachments = a
		}
		if perms != nil {
			m.Permission = perms[r.MailID]
		}
		out = append(out, m)
	}
	return out, decorateMails(ctx, q, viewer, rows, out)
}

// GetMail answers a mail the principal sent or received; any other id is
// the same 404 as an unknown one.
func (s *Service) GetMail(ctx context.Context, p *Principal, id string) (*client.Mail, error) {
	q := s.Read()
	v, err := viewMail(ctx, q, id, p.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrMailNotFound
	}
	if err != nil {
		return nil, err
	}
	views, err := s.mailViewsFor(ctx, q, p.Name, []store.ViewedMail{v})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// AdminGetMail answers any mail (GET /admin/mail/{id}), the explicit admin
// read; Read and Role are empty.
func (s *Service) AdminGetMail(ctx context.Context, id string) (*client.Mail, error) {
	q := s.Read()
	m, err := q.GetMail(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFound("mail_not_found", "no such mail", "check the mail id")
	}
	if err != nil {
		return nil, err
	}
	views, err := s.mailViews(ctx, q, []store.ViewedMail{{MailRow: m}})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// InboxQuery selects an inbox page. Status is "unread", "read" or "all";
// MarkRead marks exactly the listed mails read, and never when Status is
// "all" (T-1.3).
type InboxQuery struct {
	Status   string
	Limit    int
	Cursor   string
	MarkRead bool
	// Importance keeps only these levels (comma-separated); Sort
	// "importance" orders the most important first (acks.go).
	Importance string
	Sort       string
}

// Inbox answers the principal's received mails, newest first, with cc and
// attachment ids (T-1.1, T-1.2) and the total unread count. The mails are
// shown as they were before marking. Under a turn token only the mails of
// the token's session are listed (and marked); the unread count is then
// that of the listed page.
func (s *Service) Inbox(ctx context.Context, p *Principal, iq InboxQuery) (*client.MailList, error) {
	switch iq.Status {
	case store.InboxUnread, store.InboxRead, store.InboxAll:
	default:
		return nil, Invalid("status", fmt.Sprintf("status %q is not one of unread, read, all", iq.Status), "")
	}
	filter, cursor, err := importanceFilter(iq.Importance, iq.Sort, iq.Cursor) // acks.go
	if err != nil {
		return nil, err
	}
	q := s.Read()
	rows, err := q.InboxFiltered(ctx, p.Name, iq.Status, filter, iq.Limit, cursor)
	if err != nil {
		return nil, err
	}
	full := len(rows) == iq.Limit && len(rows) > 0
	next := ""
	if full {
		next = importanceCursor(filter, rows[len(rows)-1])
	}
	restricted := turnRestricted(ctx, p.Name)
	if restricted {
		kept := rows[:0]
		for _, r := range rows {
			in, err := inTurnScope(ctx, q, p.Name, r.SessionID)
			if err != nil {
				return nil, err
			}
			if in {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	views, err := s.mailViewsFor(ctx, q, p.Name, rows)
	if err != nil {
		return nil, err
	}
	if iq.MarkRead && iq.Status != store.InboxAll {
		var ids []string
		for _, r := range rows {
			if !r.Read {
				ids = append(ids, r.MailID)
			}
		}
		if len(ids) > 0 {
			if err := s.Write(ctx, func(tx *Tx) error {
				_, err := tx.MarkRead(ctx, p.Name, ids, false, tx.Now)
				return err
			}); err != nil {
				return nil, err
			}
		}
	}
	out := &client.MailList{Mails: views, NextCursor: next}
	if restricted {
		for _, r := range rows {
			if !r.Read {
				out.Unread++
			}
		}
		return out, nil
	}
	if out.Unread, err = q.Unread(ctx, p.Name); err != nil {
		return nil, err
	}
	return out, nil
}

// MaxMarkRead bounds the ids of one MarkRead request.
const MaxMarkRead = 1000

// MarkRead marks the principal's copies of the mails read (or unread);
// ids of mails not addressed to the principal are ignored, and so, under a
// turn token, are ids outside the token's session.
func (s *Service) MarkRead(ctx context.Context, p *Principal, req client.MarkReadRequest) (*client.MarkReadResponse, error) {
	if len(req.MailIDs) == 0 {
		return nil, Invalid("mail_ids", "mail_ids is empty", "send the ids to mark")
	}
	if len(req.MailIDs) > MaxMarkRead {
		return nil, Invalid("mail_ids", fmt.Sprintf("at most %d ids at once", MaxMarkRead), "send them in batches")
	}
	ids := req.MailIDs
	if turnRestricted(ctx, p.Name) {
		ids = nil
		for _, id := range req.MailIDs {
			if _, err := viewMail(ctx, s.Read(), id, p.Name); err == nil {
				ids = append(ids, id)
			} else if !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
		}
		if len(ids) == 0 {
			return &client.MarkReadResponse{}, nil
		}
	}
	var n int
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		n, err = tx.MarkRead(ctx, p.Name, ids, req.Unread, tx.Now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &client.MarkReadResponse{Marked: n}, nil
}

// Thread answers the mails of the mail's session that the principal sent
// or received, oldest first (at most 500).
func (s *Service) Thread(ctx context.Context, p *Principal, id string) (*client.MailList, error) {
	q := s.Read()
	v, err := viewMail(ctx, q, id, p.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrMailNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.sessionMails(ctx, q, p, v.SessionID, 500, "")
}

// SessionMails answers a session's mails the principal sent or received,
// oldest first, newer than the cursor (a mail id) when given: a full page's
// NextCursor continues in the same order, with the newer mails.
func (s *Service) SessionMails(ctx context.Context, p *Principal, sessionID string, limit int, cursor string) (*client.MailList, error) {
	if err := checkMailCursor(cursor); err != nil {
		return nil, err
	}
	q := s.Read()
	if _, err := sessionFor(ctx, q, sessionID, p.Name); err != nil {
		return nil, err
	}
	return s.sessionMails(ctx, q, p, sessionID, limit, cursor)
}

func (s *Service) sessionMails(ctx context.Context, q *store.Q, p *Principal, sessionID string, limit int, cursor string) (*client.MailList, error) {
	list := q.SessionMails
	if p.IsPerson() {
		// One of its origin's people (delegation.go) reads every mail of a
		// delegated session.
		if all, err := originPeopleSees(ctx, q, sessionID, p.Name); err != nil {
			return nil, err
		} else if all {
			list = q.SessionMailsAll
		}
	}
	rows, err := list(ctx, sessionID, p.Name, limit, cursor)
	if err != nil {
		return nil, err
	}
	views, err := s.mailViewsFor(ctx, q, p.Name, rows)
	if err != nil {
		return nil, err
	}
	out := &client.MailList{Mails: views}
	if out.Unread, err = q.Unread(ctx, p.Name); err != nil {
		return nil, err
	}
	if len(rows) == limit && len(rows) > 0 {
		out.NextCursor = rows[len(rows)-1].MailID
	}
	return out, nil
}

// Sent answers the principal's sent mails, newest first.
func (s *Service) Sent(ctx context.Context, p *Principal, limit int, cursor string) (*client.MailList, error) {
	if err := checkMailCursor(cursor); err != nil {
		return nil, err
	}
	q := s.Read()
	rows, err := q.SentMails(ctx, p.Name, limit, cursor)
	if err != nil {
		return nil, err
	}
	views, err := s.mailViewsFor(ctx, q, p.Name, rows)
	if err != nil {
		return nil, err
	}
	out := &client.MailList{Mails: views}
	if out.Unread, err = q.Unread(ctx, p.Name); err != nil {
		return nil, err
	}
	if len(rows) == limit && len(rows) > 0 {
		out.NextCursor = rows[len(rows)-1].MailID
	}
	return out, nil
}

// Counts answers the person's unread mails and pending permission requests.
func (s *Service) Counts(ctx context.Context, p *Principal) (*client.Counts, error) {
	q := s.Read()
	n, err := q.Unread(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	out := &client.Counts{Unread: n}
	if out.PendingPermissions, err = q.CountPendingPermissionsFor(ctx, p.Name); err != nil {
		return nil, err
	}
	return out, nil
}

// checkMailCursor accepts "" or a mail id (the next_cursor of a previous
// page: a UUID in its 36-character text form); anything else is a 400
// naming cursor, instead of a page that silently starts somewhere else.
func checkMailCursor(cursor string) error {
	if cursor == "" || isID(cursor) {
		return nil
	}
	return Invalid("cursor", fmt.Sprintf("cursor %q is not one this endpoint gave", cursor),
		"pass next_cursor back unchanged, or leave cursor out for the first page")
}

// isID reports whether s is an id as store.NewID writes them.
func isID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}
