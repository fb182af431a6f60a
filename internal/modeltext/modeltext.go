// Package modeltext renders text written by others (subjects, names, bodies,
// notes) into the text a model reads, so that what a sender wrote can never
// take the shape of the tool's or the bridge's own framing: a header value
// stays on its one line, and a body line that looks like a mail separator or
// a header line is marked as body text. Pure; no dependencies of the project.
package modeltext

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// BodyEscape is the character put before a body line that looks like the
// framing of the mail listing (see FrameBody).
const BodyEscape = `\`

// lineBreaking reports runes a reader may take as the end of a line, or
// that hide or reorder text: C0 and C1 control characters, the Unicode line
// and paragraph separators and the bidirectional overrides and isolates.
func lineBreaking(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// escapeRune writes r as a visible escape: \n, \r, \t, or \uXXXX.
func escapeRune(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// OneLine renders a header value (a subject, a name, a file name, a note)
// on a single line: every control character, line or paragraph separator
// and bidirectional override is shown escaped (a newline as the two
// characters \n), so the value cannot start a line of its own. Text without
// such characters is answered unchanged.
func OneLine(s string) string {
	if strings.IndexFunc(s, lineBreaking) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if lineBreaking(r) {
			escapeRune(&b, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// headerNames are the names of the header lines the mail tools print
// (lower case), and those of ordinary mail headers a model could take for
// them.
var headerNames = map[string]bool{
	"mail_id": true, "mail id": true, "from": true, "to": true, "cc": true, "bcc": true, "date": true,
	"session": true, "in reply to": true, "in-reply-to": true, "reply-to": true, "reply to": true,
	"type": true, "permission": true, "subject": true, "attachments": true, "importance": true,
	"sender": true, "decided by": true, "decision": true, "status": true,
}

// positionLine is the "[2/3]" line that opens a mail of a listing.
var positionLine = regexp.MustCompile(`^\[\s*\d+\s*/\s*\d+\s*\]`)

// looksLikeFraming reports a body line (leading blanks and escapes removed)
// that a reader could take for a line of the listing's own framing: a
// separator (box-drawing characters, "---", "==="), a "[n/m]" position
// line, a "[body ...]" note, an attachment line, or a header line ("From:",
// "Subject:", "mail_id:" ... and "Acknowledg...").
func looksLikeFraming(core string) bool {
	if core == "" {
		return false
	}
	first := []rune(core)[0]
	switch {
	case first >= '\u2500' && first <= '\u257f': // box drawing: the separator
		return true
	case strings.HasPrefix(core, "---"), strings.HasPrefix(core, "==="), strings.HasPrefix(core, "___"):
		return true
	case positionLine.MatchString(core):
		return true
	case strings.HasPrefix(strings.ToLower(core), "[body"):
		return true
	case strings.Contains(strings.ToLower(core), "attachment_id"):
		return true
	}
	i := strings.IndexByte(core, ':')
	if i <= 0 || i > 40 {
		return false
	}
	name := strings.ToLower(strings.TrimSpace(core[:i]))
	if j := strings.Index(name, " ("); j > 0 { // "Attachments (2):"
		name = name[:j]
	}
	return headerNames[name] || strings.HasPrefix(name, "acknowledg")
}

// FrameBody renders a mail body for a listing in which a separator line and
// header lines frame each mail. Line ends "\r\n" become "\n"; every other
// control character (tab kept) is shown escaped as OneLine does, so a line
// ends only where a newline was. A line that looks like the framing
// (looksLikeFraming, after leading blanks and backslashes) gets one
// BodyEscape in front: a sender cannot make a body line read as the start
// of another mail or as a header of one, and the marking is unambiguous
// (a line that already starts with backslashes before such text gets one
// more). It answers the framed body and how many lines were marked.
func FrameBody(body string) (string, int) {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	lines := strings.Split(body, "\n")
	marked := 0
	for i, line := range lines {
		if strings.IndexFunc(line, func(r rune) bool { return r != '\t' && lineBreaking(r) }) >= 0 {
			var b strings.Builder
			for _, r := range line {
				if r != '\t' && lineBreaking(r) {
					escapeRune(&b, r)
					continue
				}
				b.WriteRune(r)
			}
			line = b.String()
		}
		if looksLikeFraming(strings.TrimLeft(line, " \t"+BodyEscape)) {
			line = BodyEscape + line
			marked++
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n"), marked
}
