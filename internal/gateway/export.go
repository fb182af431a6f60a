package gateway

import (
	"context"
	"errors"

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
	rows, err := q.ExportMails(ctx, viewer, after, limit)
	if err != nil {
		return nil, err
	}
	out := &client.ExportPage{Mails: []client.Mail{}, Sessions: []client.Session{}}
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
		v, err := s.sessionView(ctx, q, row, "")
		if err != nil {
			return nil, err
		}
		if v.FormerAliases, err = formerAliases(ctx, q, row.SessionID); err != nil {
			return nil, err
		}
		out.Sessions = append(out.Sessions, *v)
	}
	if len(rows) == limit {
		out.NextCursor = rows[len(rows)-1].MailID
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
