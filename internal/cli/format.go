package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/modeltext"
)

// timeText shows a time in the local zone, to the minute.
func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// maxSubjectRunes bounds a subject or file name printed in full: one line,
// control characters replaced (printable), so that a hostile mail cannot
// forge a line of the CLI's own or send escapes to the terminal.
const maxSubjectRunes = 998

// oneLine flattens s to one line of at most n runes, with "…" when cut;
// control characters become U+FFFD first (printable).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(printable(s)), " ")
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
func budgetText(l lang, remaining, max int) string {
	if max == 0 {
		return l.S("unlimited")
	}
	return l.F("%d of %d rounds left", remaining, max)
}

// mailSubject is the subject as listed, with the kind of a special mail.
func mailSubject(l lang, m client.Mail) string {
	s := oneLine(m.Subject, 70)
	switch m.MailType {
	case client.MailTypePermissionRequest:
		state := "pending"
		if m.Permission != nil && m.Permission.Status != "" {
			state = m.Permission.Status
		}
		return l.F("[permission %s] ", word(state)) + s
	case client.MailTypePermissionDecision:
		return l.S("[decision] ") + s
	case client.MailTypeFailureReport:
		return l.S("[failure] ") + s
	case client.MailTypeReminder:
		return l.S("[reminder] ") + s
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

// printMail writes a mail with its headers, the delegation chain of its
// session (nil: none), attachments, permission state and body.
func printMail(w io.Writer, l lang, m *client.Mail, chain *sessionChain) {
	from := m.FromName
	if m.FromAddress != "" && m.FromAddress != m.FromName {
		from += " <" + m.FromAddress + ">"
	}
	fmt.Fprint(w, l.F("Mail:     %s\n", m.MailID))
	fmt.Fprint(w, l.F("From:     %s\n", from))
	if to := recipientsText(m, "to"); to != "" {
		fmt.Fprint(w, l.F("To:       %s\n", to))
	}
	if cc := recipientsText(m, "cc"); cc != "" {
		fmt.Fprint(w, l.F("Cc:       %s\n", cc))
	}
	fmt.Fprint(w, l.F("Date:     %s\n", timeText(m.CreatedAt)))
	session := m.SessionAlias
	if session == "" {
		session = m.SessionID
	}
	fmt.Fprint(w, l.F("Session:  %s\n", session))
	chain.print(w, l) // delegation.go
	if m.ParentMailID != "" {
		fmt.Fprint(w, l.F("Reply to: %s\n", m.ParentMailID))
	}
	if m.MailType != "" && m.MailType != client.MailTypeNormal {
		fmt.Fprint(w, l.F("Type:     %s\n", word(m.MailType)))
	}
	printMailOptions(w, l, m) // coordination.go
	fmt.Fprint(w, l.F("Subject:  %s\n", oneLine(m.Subject, maxSubjectRunes)))
	for i, a := range m.Attachments {
		if i == 0 {
			fmt.Fprintln(w, l.S("Attachments:"))
		}
		fmt.Fprint(w, l.F("  %s  %s (%s)\n", a.AttachmentID, oneLine(a.Filename, maxSubjectRunes), sizeText(a.Size)))
	}
	if p := m.Permission; p != nil {
		fmt.Fprint(w, l.F("Permission: %s\n", word(p.Status)))
		if call := permissionCall(p); call != "" {
			fmt.Fprint(w, l.F("  will run: %s\n", call))
		} else {
			fmt.Fprintln(w, l.S("  will run: nothing named (the agent names no tool call; only its own words below say what it wants)"))
		}
		fmt.Fprintln(w, l.S("  the agent's own words (not checked by AgentMail):"))
		printAgentWords(w, p.Question)
		if strings.TrimSpace(p.Context) != "" {
			printAgentWords(w, p.Context)
		}
		if p.Status == "pending" {
			fmt.Fprint(w, l.F("  decide:   agentmail approve %s [--always] | agentmail deny %s\n", m.MailID, m.MailID))
		} else {
			fmt.Fprint(w, l.F("  decided:  %s by %s via %s", p.Decision, p.DecidedBy, word(p.DecidedVia)))
			if p.DecidedAt != nil {
				fmt.Fprint(w, l.F(" at %s", timeText(*p.DecidedAt)))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, printable(strings.TrimRight(m.Body, "\n")))
}

// permissionCall answers what a permission request will run as the gateway
// computed it from the tool's arguments (tool_summary, e.g. "Bash: rm -rf
// build/"), else the tool's name (requests stored before tool_summary), else
// "". It never uses the agent's question: an agent can describe a
// dangerous call in harmless words.
func permissionCall(p *client.Permission) string {
	call := p.ToolSummary
	if call == "" {
		call = p.Tool
	}
	return oneLine(printable(call), 200)
}

// printAgentWords writes text the agent wrote itself, every line behind
// "    | ", so that none of it can pass for a line of the CLI's own.
func printAgentWords(w io.Writer, text string) {
	for _, line := range strings.Split(strings.TrimRight(printable(text), "\n"), "\n") {
		fmt.Fprintf(w, "    | %s\n", strings.TrimRight(line, " \t\r"))
	}
}

// shownText is how the CLI prints a short string the gateway supplied (a
// reservation's path, workspace, holder, reason, an error message): on one
// line with every control character, line separator and bidirectional
// control shown as a visible escape (modeltext.OneLine), so a terminal
// escape sequence in it is never sent to the terminal raw.
func shownText(s string) string { return modeltext.OneLine(s) }

// printable replaces control characters other than newline and tab (the
// terminal escapes that could move the cursor, clear lines or recolour
// text) and the Unicode bidirectional controls (which make "txt.exe" read
// as "exe.txt") with U+FFFD, so that text from a mail cannot overwrite
// what the CLI printed above it or show other words than it holds.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) && !isBidiControl(r) {
			return r
		}
		return '\uFFFD'
	}, strings.ReplaceAll(s, "\r\n", "\n"))
}

// isBidiControl tells the Unicode bidirectional formatting characters:
// the embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069,
// and the marks U+200E, U+200F and U+061C.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}
