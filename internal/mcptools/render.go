package mcptools

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/modeltext"
)

// The rendering in this file is the one text form of mail for every
// platform (T-1: one shared implementation): the same mail looks the same
// to a model on Claude Code, opencode or pi.

// InboxBodyLimit is how many characters of each body read_inbox shows; the
// rest is one read_mail away.
const InboxBodyLimit = 8000

// FormatTime renders a time for the model: local time of the tool server
// with its offset, so "now" and the mail dates can be compared.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05 -07:00")
}

// FormatSize renders a byte count: "512 B", "12.3 KB", "4.0 MB".
func FormatSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

// cutChars returns the first limit characters of s and how many were cut.
func cutChars(s string, limit int) (string, int) {
	if limit <= 0 {
		return s, 0
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i], len([]rune(s[i:]))
		}
		n++
	}
	return s, 0
}

// recipientList joins the addresses of the recipients with the given role.
func recipientList(m client.Mail, role string) string {
	var out []string
	for _, r := range m.Recipients {
		if r.Role != role {
			continue
		}
		a := r.Address
		if a == "" {
			a = r.Name
		}
		out = append(out, modeltext.OneLine(a))
	}
	return strings.Join(out, ", ")
}

// RenderMail renders one mail: its id (to reply to), sender, To, Cc (T-1.2:
// always shown when there are any, so a reply does not leave people out),
// date, session, subject, attachments with their attachment_id (T-1.1) and
// the body, cut after bodyLimit characters (0: no limit) with a note.
// What the sender wrote cannot forge the framing (T-1, trust boundary):
// header values stay on their line (modeltext.OneLine) and a body line that
// looks like a separator or a header gets a leading backslash
// (modeltext.FrameBody), with a note saying how many.
func RenderMail(m client.Mail, bodyLimit int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mail_id: %s\n", m.MailID)
	from := m.FromAddress
	if from == "" {
		from = m.FromName
	}
	kind := m.FromKind
	if kind == "" {
		kind = "?"
	}
	fmt.Fprintf(&b, "From: %s (%s)\n", modeltext.OneLine(from), modeltext.OneLine(kind))
	if to := recipientList(m, "to"); to != "" {
		fmt.Fprintf(&b, "To: %s\n", to)
	}
	if cc := recipientList(m, "cc"); cc != "" {
		fmt.Fprintf(&b, "Cc: %s\n", cc)
	}
	fmt.Fprintf(&b, "Date: %s\n", FormatTime(m.CreatedAt))
	if m.SessionAlias != "" {
		fmt.Fprintf(&b, "Session: %s (session_id %s)\n", modeltext.OneLine(m.SessionAlias), modeltext.OneLine(m.SessionID))
	} else if m.SessionID != "" {
		fmt.Fprintf(&b, "Session: session_id %s\n", modeltext.OneLine(m.SessionID))
	}
	if m.ParentMailID != "" {
		fmt.Fprintf(&b, "In reply to: %s\n", modeltext.OneLine(m.ParentMailID))
	}
	if m.MailType != "" && m.MailType != client.MailTypeNormal {
		fmt.Fprintf(&b, "Type: %s\n", modeltext.OneLine(m.MailType))
	}
	if p := m.Permission; p != nil {
		state := p.Status
		if p.Decision != "" {
			state += fmt.Sprintf(", decision %q by %s", p.Decision, p.DecidedBy)
		}
		fmt.Fprintf(&b, "Permission: %s\n", modeltext.OneLine(state))
	}
	b.WriteString(renderCoordination(m)) // tools_acks.go
	fmt.Fprintf(&b, "Subject: %s\n", modeltext.OneLine(m.Subject))
	if len(m.Attachments) > 0 {
		fmt.Fprintf(&b, "Attachments (%d):\n", len(m.Attachments))
		for _, a := range m.Attachments {
			fmt.Fprintf(&b, "  - %s (%s) attachment_id: %s\n", modeltext.OneLine(a.Filename), FormatSize(a.Size), a.AttachmentID)
		}
	}
	b.WriteString("\n")
	body, cut := cutChars(m.Body, bodyLimit)
	body, marked := modeltext.FrameBody(body)
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteString("\n")
	}
	if marked > 0 {
		fmt.Fprintf(&b, "[body note: %d %s of this body looked like the lines of this listing (a separator or a header) and %s an added %s in front]\n",
			marked, plural(marked, "line", "lines"), plural(marked, "has", "have"), modeltext.BodyEscape)
	}
	if cut > 0 {
		fmt.Fprintf(&b, "[body cut: %d more characters; read_mail with mail_id %s shows all]\n", cut, m.MailID)
	}
	return b.String()
}

const mailSeparator = "────────────────────────────────────────\n"

// RenderInbox renders a read_inbox answer: a header saying how many mails
// are listed, which were marked read (T-1.3: exactly the listed ones, none
// for status=all), the inbox's unread count, then each mail with
// RenderMail.
func RenderInbox(list *client.MailList, status string, limit int) string {
	var b strings.Builder
	n := len(list.Mails)
	if n == 0 {
		switch status {
		case "unread":
			b.WriteString("No unread mail.\n")
		case "read":
			b.WriteString("No read mail.\n")
		default:
			b.WriteString("The inbox is empty.\n")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%d %s (status=%s, limit=%d).", n, plural(n, "mail", "mails"), status, limit)
	switch status {
	case "all":
		b.WriteString(" Nothing was marked read (status=all never marks).")
	case "unread":
		fmt.Fprintf(&b, " Marked read: exactly the %d listed.", n)
	}
	fmt.Fprintf(&b, " Unread in the inbox: %d.", list.Unread)
	if n >= limit && list.NextCursor != "" {
		b.WriteString(" More mails exist: call read_inbox again.")
	}
	b.WriteString("\nTo answer a mail, call send_mail with reply_to set to its mail_id; keep everyone in To and Cc who should see the answer.\n")
	for i, m := range list.Mails {
		b.WriteString(mailSeparator)
		fmt.Fprintf(&b, "[%d/%d]\n", i+1, n)
		b.WriteString(RenderMail(m, InboxBodyLimit))
	}
	return b.String()
}

// RenderThread renders the mails of a thread, oldest first.
func RenderThread(list *client.MailList) string {
	var b strings.Builder
	n := len(list.Mails)
	if n == 0 {
		return "The thread has no mail you can see.\n"
	}
	m0 := list.Mails[0]
	name := m0.SessionAlias
	if name == "" {
		name = m0.SessionID
	}
	fmt.Fprintf(&b, "Thread %s: %d %s, oldest first.\n", name, n, plural(n, "mail", "mails"))
	for i, m := range list.Mails {
		b.WriteString(mailSeparator)
		fmt.Fprintf(&b, "[%d/%d]\n", i+1, n)
		b.WriteString(RenderMail(m, InboxBodyLimit))
	}
	return b.String()
}

// RenderSent renders the answer of send_mail or forward_mail: the new
// mail's id, its session and the round budget left.
func RenderSent(verb string, r *client.SendMailResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: mail_id %s", verb, r.MailID)
	if r.SessionAlias != "" {
		fmt.Fprintf(&b, " in session %s (session_id %s", r.SessionAlias, r.SessionID)
	} else {
		fmt.Fprintf(&b, " in session_id %s (", r.SessionID)
	}
	if r.NewSession {
		b.WriteString(", new session")
	}
	b.WriteString(").")
	if r.BudgetMax == 0 {
		b.WriteString(" Round budget: unlimited.")
	} else {
		fmt.Fprintf(&b, " Round budget: %d of %d left.", r.BudgetRemaining, r.BudgetMax)
	}
	b.WriteString("\n")
	return b.String()
}

// RenderSuggestions renders address suggestions, one per line.
func RenderSuggestions(q string, l *client.SuggestionList) string {
	if len(l.Suggestions) == 0 {
		return fmt.Sprintf("No address matches %q.\n", q)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Addresses matching %q:\n", q)
	for _, s := range l.Suggestions {
		fmt.Fprintf(&b, "- %s (%s", s.Address, s.Kind)
		if s.Title != "" {
			fmt.Fprintf(&b, ", %q", s.Title)
		}
		if s.LastActive != nil {
			fmt.Fprintf(&b, ", last active %s", FormatTime(*s.LastActive))
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// RenderContacts renders the contact list, one per line.
func RenderContacts(l *client.ContactList) string {
	if len(l.Contacts) == 0 {
		return "No contacts.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s:\n", len(l.Contacts), plural(len(l.Contacts), "contact", "contacts"))
	for _, c := range l.Contacts {
		fmt.Fprintf(&b, "- %s (%s", c.Name, c.Kind)
		if c.Platform != "" {
			fmt.Fprintf(&b, ", %s", modeltext.OneLine(c.Platform))
		}
		if c.Status != "" {
			fmt.Fprintf(&b, ", %s", modeltext.OneLine(c.Status))
		}
		if c.LastSeen != nil {
			fmt.Fprintf(&b, ", last seen %s", FormatTime(*c.LastSeen))
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// RenderParticipants renders the members of a session.
func RenderParticipants(l *client.ParticipantList) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s has %d %s:\n", l.SessionID, len(l.Participants), plural(len(l.Participants), "participant", "participants"))
	for _, p := range l.Participants {
		fmt.Fprintf(&b, "- %s (%s) %s\n", p.Name, p.Kind, p.Address)
	}
	return b.String()
}

// RenderSchedule renders one schedule on one line (plus its body).
func RenderSchedule(s client.Schedule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- schedule_id %s: %q at %s, reminder %d min before (%s)", s.ScheduleID, s.Title, FormatTime(s.EventTime), s.RemindBeforeMinutes, FormatTime(s.RemindAt))
	rcpt := strings.Join(s.Recipients, ", ")
	if rcpt == "" {
		rcpt = s.Owner
	}
	fmt.Fprintf(&b, ", to: %s", rcpt)
	if s.SentAt != nil {
		fmt.Fprintf(&b, ", reminder sent %s", FormatTime(*s.SentAt))
	} else {
		b.WriteString(", reminder pending")
	}
	b.WriteString("\n")
	if s.Body != "" {
		body, cut := cutChars(s.Body, 500)
		fmt.Fprintf(&b, "  %s", strings.ReplaceAll(body, "\n", "\n  "))
		if cut > 0 {
			fmt.Fprintf(&b, " [... %d more characters]", cut)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// RenderSchedules renders list_schedules: every schedule, the count against
// the limit, and the gateway's hint when near the limit (seed 001: warn at
// 75 % so the model cleans up before hitting the wall).
func RenderSchedules(l *client.ScheduleList) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", l.Count, plural(l.Count, "schedule", "schedules"))
	if l.Limit > 0 {
		fmt.Fprintf(&b, " (limit %d)", l.Limit)
	}
	fmt.Fprintf(&b, ". Now: %s.\n", FormatTime(time.Now()))
	for _, s := range l.Schedules {
		b.WriteString(RenderSchedule(s))
	}
	if l.Hint != "" {
		fmt.Fprintf(&b, "Note: %s\n", l.Hint)
	}
	return b.String()
}

// agentUnauthorized is the suggestion of a 401 for the model: the key
// itself was refused, which only an admin can change.
const agentUnauthorized = "the gateway refused this tool server's key (unknown, revoked or expired); retrying will not help. " +
	"Only an admin can register a new key: say in your answer that the AgentMail tools are not available, and go on without them."

// RenderAPIError renders a gateway error for the model (W-9): status,
// code, message, the field at fault and the gateway's suggestion, so the
// model can change course instead of retrying blindly.
func RenderAPIError(e *client.APIError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Error: the gateway answered %d", e.Status)
	if e.Body.Code != "" {
		fmt.Fprintf(&b, " %s", e.Body.Code)
	}
	fmt.Fprintf(&b, ": %s\n", e.Body.Error)
	if e.Body.Field != "" {
		fmt.Fprintf(&b, "Field: %s\n", e.Body.Field)
	}
	switch {
	case e.Status == 401:
		// The gateway's suggestion speaks to people ("sign in again"); an
		// agent cannot sign in, so it gets what it can do (issue 19 item 3).
		b.WriteString("Suggestion: " + agentUnauthorized + "\n")
	case e.Body.Suggestion != "":
		fmt.Fprintf(&b, "Suggestion: %s\n", e.Body.Suggestion)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "Retry after: %s\n", e.RetryAfter)
	}
	if e.Body.Code == "alias_not_found" {
		b.WriteString("Do not retry with .new: that would start an empty session instead of the one meant.\n")
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
