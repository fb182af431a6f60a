package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
)

// timeText shows a time in the local zone, to the minute.
func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// oneLine flattens s to one line of at most n runes, with "…" when cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// sizeText gives a byte count in B, KiB or MiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// budgetText gives "3 of 20 rounds left" or "unlimited" (max 0).
func budgetText(remaining, max int) string {
	if max == 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%d of %d rounds left", remaining, max)
}

// mailSubject is the subject as listed, with the kind of a special mail.
func mailSubject(m client.Mail) string {
	s := oneLine(m.Subject, 70)
	switch m.MailType {
	case client.MailTypePermissionRequest:
		state := "pending"
		if m.Permission != nil && m.Permission.Status != "" {
			state = m.Permission.Status
		}
		return "[permission " + state + "] " + s
	case client.MailTypePermissionDecision:
		return "[decision] " + s
	case client.MailTypeFailureReport:
		return "[failure] " + s
	case client.MailTypeReminder:
		return "[reminder] " + s
	}
	return s
}

// recipientsText lists the recipients of role ("to" or "cc") by address.
func recipientsText(m *client.Mail, role string) string {
	var out []string
	for _, r := range m.Recipients {
		if r.Role == role {
			a := r.Address
			if a == "" {
				a = r.Name
			}
			out = append(out, a)
		}
	}
	return strings.Join(out, ", ")
}

// printMail writes a mail with its headers, attachments, permission state
// and body.
func printMail(w io.Writer, m *client.Mail) {
	from := m.FromName
	if m.FromAddress != "" && m.FromAddress != m.FromName {
		from += " <" + m.FromAddress + ">"
	}
	fmt.Fprintf(w, "Mail:     %s\n", m.MailID)
	fmt.Fprintf(w, "From:     %s\n", from)
	if to := recipientsText(m, "to"); to != "" {
		fmt.Fprintf(w, "To:       %s\n", to)
	}
	if cc := recipientsText(m, "cc"); cc != "" {
		fmt.Fprintf(w, "Cc:       %s\n", cc)
	}
	fmt.Fprintf(w, "Date:     %s\n", timeText(m.CreatedAt))
	session := m.SessionAlias
	if session == "" {
		session = m.SessionID
	}
	fmt.Fprintf(w, "Session:  %s\n", session)
	if m.ParentMailID != "" {
		fmt.Fprintf(w, "Reply to: %s\n", m.ParentMailID)
	}
	if m.MailType != "" && m.MailType != client.MailTypeNormal {
		fmt.Fprintf(w, "Type:     %s\n", m.MailType)
	}
	fmt.Fprintf(w, "Subject:  %s\n", m.Subject)
	for i, a := range m.Attachments {
		if i == 0 {
			fmt.Fprintln(w, "Attachments:")
		}
		fmt.Fprintf(w, "  %s  %s (%s)\n", a.AttachmentID, a.Filename, sizeText(a.Size))
	}
	if p := m.Permission; p != nil {
		fmt.Fprintf(w, "Permission: %s\n", p.Status)
		if p.Tool != "" {
			fmt.Fprintf(w, "  tool:     %s\n", p.Tool)
		}
		fmt.Fprintf(w, "  question: %s\n", p.Question)
		if p.Context != "" {
			fmt.Fprintf(w, "  context:  %s\n", oneLine(p.Context, 200))
		}
		if p.Status == "pending" {
			fmt.Fprintf(w, "  decide:   agentmail approve %s [--always] | agentmail deny %s\n", m.MailID, m.MailID)
		} else {
			fmt.Fprintf(w, "  decided:  %s by %s via %s", p.Decision, p.DecidedBy, p.DecidedVia)
			if p.DecidedAt != nil {
				fmt.Fprintf(w, " at %s", timeText(*p.DecidedAt))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.TrimRight(m.Body, "\n"))
}
