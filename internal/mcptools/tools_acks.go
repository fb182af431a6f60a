package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// registerAckTools registers the acknowledgement tools (issue 21 item 2).
func (s *Server) registerAckTools() {
	s.add("acknowledge_mail",
		"Acknowledge a mail that asks for it (ack_required): it tells the sender you have read it and will act on it. "+
			"Reading a mail does not acknowledge it.",
		object(map[string]prop{"mail_id": str("the mail to acknowledge")}, "mail_id"),
		s.acknowledgeMail)
	s.add("list_unacknowledged",
		"List the mails waiting for acknowledgement: the ones you sent with ack_required that not every recipient has acknowledged "+
			"(with who has and who has not), and the ones you have not acknowledged yet. Overdue ones (past their due time, 24 hours by default) are marked.",
		object(map[string]prop{
			"role":         enum("sender (mails you sent), recipient (mails you owe), or both (default)", "sender", "recipient", "both"),
			"overdue_only": boolean("true: only the overdue ones"),
			"limit":        bounded("how many mails at most, 1 to 200 (default 20)", 1, 200),
		}),
		s.listUnacknowledged)
}

// mailOptionProps are the importance and acknowledgement parameters of
// send_mail.
func mailOptionProps() map[string]prop {
	return map[string]prop{
		"importance":   enum("low, normal (default), high or urgent; urgent is for what must be seen at once", "low", "normal", "high", "urgent"),
		"ack_required": boolean("true: every recipient is asked to acknowledge the mail (acknowledge_mail); you see who has in list_unacknowledged"),
		"ack_within_minutes": bounded(fmt.Sprintf("with ack_required: minutes until the acknowledgement is overdue, 1 to %d (default %d)",
			client.MaxAckWithinMinutes, client.DefaultAckWithinMinutes), 1, client.MaxAckWithinMinutes),
	}
}

// withMailOptions adds the mailOptionProps to a schema's properties.
func withMailOptions(props map[string]prop) map[string]prop {
	for k, v := range mailOptionProps() {
		props[k] = v
	}
	return props
}

// mailOptions reads importance, ack_required and ack_within_minutes of a
// send_mail call into req.
func mailOptions(a args, req *client.SendMailRequest) error {
	imp, err := a.str("importance")
	if err != nil {
		return err
	}
	imp = strings.ToLower(strings.TrimSpace(imp))
	switch imp {
	case "", client.ImportanceLow, client.ImportanceNormal, client.ImportanceHigh, client.ImportanceUrgent:
	default:
		return badArg("importance must be low, normal, high or urgent, got %q", imp)
	}
	req.Importance = imp
	if req.AckRequired, err = a.boolean("ack_required", false); err != nil {
		return err
	}
	if a.has("ack_within_minutes") {
		n, err := a.integer("ack_within_minutes", 0)
		if err != nil {
			return err
		}
		if n < 1 || n > client.MaxAckWithinMinutes {
			return badArg("ack_within_minutes must be between 1 and %d, got %d", client.MaxAckWithinMinutes, n)
		}
		if !req.AckRequired {
			return badArg("ack_within_minutes only applies with ack_required true")
		}
		req.AckWithinMinutes = n
	}
	return nil
}

func (s *Server) acknowledgeMail(ctx context.Context, a args) (string, error) {
	id, err := a.required("mail_id", "the id of the mail to acknowledge (from read_inbox)")
	if err != nil {
		return "", err
	}
	r, err := s.gateway().AckMail(ctx, id)
	if err != nil {
		return "", err
	}
	if r.Already {
		return fmt.Sprintf("Mail %s was already acknowledged at %s.\n", r.MailID, FormatTime(r.AckedAt)), nil
	}
	return fmt.Sprintf("Acknowledged mail %s at %s; the sender sees it.\n", r.MailID, FormatTime(r.AckedAt)), nil
}

func (s *Server) listUnacknowledged(ctx context.Context, a args) (string, error) {
	role, err := a.str("role")
	if err != nil {
		return "", err
	}
	role = strings.ToLower(strings.TrimSpace(role))
	switch role {
	case "both":
		role = ""
	case "", "sender", "recipient":
	default:
		return "", badArg("role must be sender, recipient or both, got %q", role)
	}
	overdue, err := a.boolean("overdue_only", false)
	if err != nil {
		return "", err
	}
	limit, err := a.integer("limit", 20)
	if err != nil {
		return "", err
	}
	if limit < 1 || limit > 200 {
		return "", badArg("limit must be between 1 and 200, got %d", limit)
	}
	l, err := s.gateway().Unacknowledged(ctx, client.AckWaitingQuery{Role: role, Overdue: overdue, Limit: limit})
	if err != nil {
		return "", err
	}
	return RenderWaiting(l), nil
}

// RenderWaiting renders the waiting-for-acknowledgement view.
func RenderWaiting(l *client.AckWaitingList) string {
	if len(l.Mails) == 0 {
		return "Nothing is waiting for acknowledgement.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Waiting for acknowledgement (%d):\n", len(l.Mails))
	for _, w := range l.Mails {
		state := "due " + FormatTime(w.DueAt)
		if w.Overdue {
			state = "OVERDUE since " + FormatTime(w.DueAt)
		}
		if w.Role == "sender" {
			fmt.Fprintf(&b, "  - you sent %q (mail_id %s, session %s, %s): not yet acknowledged by %s",
				w.Subject, w.MailID, w.SessionAlias, state, strings.Join(w.Pending, ", "))
		} else {
			fmt.Fprintf(&b, "  - %s asks you to acknowledge %q (mail_id %s, session %s, %s): call acknowledge_mail",
				w.FromName, w.Subject, w.MailID, w.SessionAlias, state)
		}
		if len(w.Acked) > 0 {
			var names []string
			for _, a := range w.Acked {
				names = append(names, a.Name)
			}
			fmt.Fprintf(&b, "; acknowledged by %s", strings.Join(names, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// renderCoordination is the importance and acknowledgement lines of
// RenderMail ("" for a normal mail without ack_required).
func renderCoordination(m client.Mail) string {
	var b strings.Builder
	switch m.Importance {
	case client.ImportanceUrgent:
		b.WriteString("Importance: URGENT\n")
	case client.ImportanceHigh, client.ImportanceLow:
		fmt.Fprintf(&b, "Importance: %s\n", m.Importance)
	}
	if !m.AckRequired {
		return b.String()
	}
	due := ""
	if m.AckDueAt != nil {
		due = " by " + FormatTime(*m.AckDueAt)
	}
	switch {
	case m.Role != "" && m.AckedAt == nil:
		fmt.Fprintf(&b, "Acknowledgement requested%s: call acknowledge_mail with mail_id %s once you have read it and will act on it\n", due, m.MailID)
	case m.Role != "":
		fmt.Fprintf(&b, "Acknowledged by you at %s\n", FormatTime(*m.AckedAt))
	default:
		var done, open []string
		for _, a := range m.Acks {
			if a.AckedAt != nil {
				done = append(done, a.Name)
			} else {
				open = append(open, a.Name)
			}
		}
		fmt.Fprintf(&b, "Acknowledgement requested%s: acknowledged by %s; not yet by %s\n", due, listOrNone(done), listOrNone(open))
	}
	return b.String()
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "nobody"
	}
	return strings.Join(names, ", ")
}
