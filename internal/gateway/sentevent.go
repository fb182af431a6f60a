package gateway

import (
	"context"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// RoleFrom is the role of the new_mail event a person's own streams get
// for a mail that person sent.
const RoleFrom = "from"

// emitSentMail writes a new_mail event with role "from" to the sender of a
// mail a person sent (Send or Forward), in the sending transaction, so the
// person's other tabs and clients (GET /me/events/stream) show the sent mail
// at once. Agents get no such event: a bridge must never take its own mail
// for new work. A sender who is also a recipient already got the "to"/"cc"
// event. SelfAddress is the sender's own address in the session,
// ReplyAddress the first "to" recipient's (where a follow-up goes),
// ToWorkspace is "".
func emitSentMail(ctx context.Context, tx *Tx, m *CreatedMail) error {
	if m.Mail.FromKind != store.KindPerson {
		return nil
	}
	reply := ""
	for _, r := range m.Recipients {
		if r.Name == m.Mail.FromName {
			return nil
		}
		if reply == "" && r.Role == "to" {
			reply = r.Address
		}
	}
	ev := client.NewMailEvent{MailID: m.Mail.MailID, SessionID: m.Session.SessionID, FromName: m.Mail.FromName,
		FromKind: m.Mail.FromKind, Subject: m.Mail.Subject, MailType: m.Mail.MailType, Role: RoleFrom,
		SessionAlias: m.Session.Alias, ReplyAddress: reply, SelfAddress: m.Mail.FromAddress,
		ParentMailID: m.Mail.ParentMailID, CreatedAt: m.Mail.CreatedAt}
	_, err := tx.EmitLater(ctx, m.Mail.FromName, client.EventNewMail, ev)
	return err
}
