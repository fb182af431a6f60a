package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Bounds of an export page.
const (
	ExportDefaultLimit = 200
	ExportMaxLimit     = 1000
)

// Export answers a page of the mails the person may export (issue 21 item
// 5; GET /api/v1/me/export, read by `agentmail export`): the mails the
// person sent or received, or with all (admins only) every mail, in id
// order after the mail id after, at most limit, with the sessions they
// belong to. Mails are what GetMail shows (a permission request with its
// current decision); sessions carry participants, alias, former aliases
// and dates.
//
// Errors: 403 export_all_admin_only for all without the admin role; 400
// naming cursor for an after that is not a mail id.
func (s *Service) Export(ctx context.Context, p *Principal, all bool, after string, limit int) (*client.ExportPage, error) {
	if all && !p.IsAdmin() {
		return nil, Forbidden("export_all_admin_only", "only an admin may export every mail",
			"export without --all to write the mail you sent or received")
	}
	if err := checkMailCursor(after); err != nil {
		return nil, err
	}
	viewer := p.Name
	if all {
		viewer = ""
	}
	q := s.Read()
	asOf := s.changesAsOf()
	rows, err := q.ExportMails(ctx, viewer, after, limit)
	if err != nil {
		return nil, err
	}
	out := &client.ExportPage{Mails: []client.Mail{}, Sessions: []client.Session{}, ChangesAsOf: asOf}
	if len(rows) == 0 {
		return out, nil
	}
	if out.Mails, err = s.mailViewsFor(ctx, q, viewer, rows); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.SessionID] {
			continue
		}
		seen[r.SessionID] = true
		row, err := q.GetSession(ctx, r.SessionID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		v, err := s.exportSessionView(ctx, q, row)
		if err != nil {
			return nil, err
		}
		out.Sessions = append(out.Sessions, *v)
	}
	if len(rows) == limit {
		out.NextCursor = rows[len(rows)-1].MailID
	}
	return out, nil
}

// exportSessionView is a session as an export shows it: participants,
// alias, former aliases, subject, dates.
func (s *Service) exportSessionView(ctx context.Context, q *store.Q, row store.SessionRow) (*client.Session, error) {
	v, err := s.sessionView(ctx, q, row, "")
	if err != nil {
		return nil, err
	}
	if v.FormerAliases, err = formerAliases(ctx, q, row.SessionID); err != nil {
		return nil, err
	}
	return v, nil
}

// exportChangesMargin is how far before the answer ChangesAsOf lies: a
// change whose transaction took its time before the listing read but
// committed after it is answered by the next run instead of being missed.
const exportChangesMargin = time.Minute

// changesAsOf is the ChangesAsOf of an export answer read now.
func (s *Service) changesAsOf() time.Time { return s.Now().Add(-exportChangesMargin) }

// ExportSessions answers a page of the sessions changed after
// changedAfter (GET /api/v1/me/export/sessions, read by `agentmail export`
// so that an incremental run rewrites the sessions renamed since the last
// one, issue 21 item 5): those the person takes part in, or with all
// (admins only) every session, whose alias or subject changed or one of
// whose mails was acknowledged after changedAfter (store.ChangedSessions,
// migration 0051), in the order they changed, at most limit, each as
// Export shows sessions. cursor is the NextCursor of the previous page.
//
// Errors: 403 export_all_admin_only for all without the admin role; 400
// naming cursor for a cursor this listing did not give.
func (s *Service) ExportSessions(ctx context.Context, p *Principal, all bool, changedAfter time.Time, cursor string, limit int) (*client.ExportSessionPage, error) {
	if all && !p.IsAdmin() {
		return nil, Forbidden("export_all_admin_only", "only an admin may export every mail",
			"export without --all to write the mail you sent or received")
	}
	var cursorAt int64
	var cursorID string
	if cursor != "" {
		at, id, ok := strings.Cut(cursor, ":")
		n, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil || !isID(id) {
			return nil, Invalid("cursor", fmt.Sprintf("cursor %q is not one this endpoint gave", cursor),
				"pass next_cursor back unchanged, or leave cursor out for the first page")
		}
		cursorAt, cursorID = n, id
	}
	viewer := p.Name
	if all {
		viewer = ""
	}
	q := s.Read()
	out := &client.ExportSessionPage{Sessions: []client.Session{}, ChangesAsOf: s.changesAsOf()}
	rows, changed, err := q.ChangedSessions(ctx, viewer, store.Millis(changedAfter), cursorAt, cursorID, limit)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		v, err := s.exportSessionView(ctx, q, row)
		if err != nil {
			return nil, err
		}
		out.Sessions = append(out.Sessions, *v)
	}
	if len(rows) == limit {
		out.NextCursor = strconv.FormatInt(changed[len(changed)-1], 10) + ":" + rows[len(rows)-1].SessionID
	}
	return out, nil
}

// AdminAttachmentForDownload answers any attachment for an admin's export
// of everything (GET /api/v1/admin/attachments/{id}); 404 an unknown one.
func (s *Service) AdminAttachmentForDownload(ctx context.Context, id string) (*client.Attachment, error) {
	a, err := s.Read().GetAttachment(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, attachmentNotFound()
	}
	if err != nil {
		return nil, err
	}
	v := attachmentView(a)
	return &v, nil
}
