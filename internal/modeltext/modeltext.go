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

	"golang.org/x/text/unicode/norm"
)

// BodyEscape is the character put before a body line that looks like the
// framing of the mail listing (see FrameBody).
const BodyEscape = `\`

// lineBreaking reports runes a reader may take as the end of a line, or
// that hide or reorder text: C0 and C1 control characters, the Unicode line
// and paragraph separators and the bidirectional overrides, isolates and
// marks (U+200E, U+200F, U+061C).
func lineBreaking(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
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

// invisibleLead reports runes a reader does not see, or sees only as blank
// space, at the start of a line: white space (U+00A0, U+3000 ...), format
// characters (Cf: U+200B, U+FEFF, U+2060, U+00AD ...), the other default
// ignorable code points and variation selectors, combining marks with
// nothing to combine with, and the blank-looking U+2800 and Hangul fillers.
// A line such runes open reads as the line that follows them.
func invisibleLead(r rune) bool {
	switch {
	case unicode.IsSpace(r), unicode.Is(unicode.Cf, r),
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r),
		unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r):
		return true
	case r == '\u2800', r == '\u115f', r == '\u1160', r == '\u3164', r == '\uffa0':
		return true
	}
	return false
}

// colonLookalikes are the characters that read as a colon but that NFKC
// does not fold to one.
var colonLookalikes = strings.NewReplacer("\u2236", ":", "\ua789", ":", "\u02d0", ":", "\u02f8", ":", "\u05c3", ":", "\u0589", ":", "\u1361", ":", "\u205a", ":")

// readAs answers what a reader takes a body line for: without the leading
// blanks, escapes and invisible runes (invisibleLead), without the invisible
// runes inside it (format characters, default ignorables), folded by NFKC
// (fullwidth "Ｆｒｏｍ：" reads "From:", U+00A0 a space) and with colon
// lookalikes read as colons. Only the test for framing uses it; the line
// shown is never changed.
func readAs(line string) string {
	core := strings.TrimLeftFunc(line, func(r rune) bool { return invisibleLead(r) || r == '\\' })
	core = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r) {
			return -1
		}
		return r
	}, core)
	core = colonLookalikes.Replace(norm.NFKC.String(core))
	return strings.TrimLeftFunc(core, func(r rune) bool { return invisibleLead(r) || r == '\\' })
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
	case first >= '\u2500' && first <= '\u259f': // box drawing, block elements: the separator
		return true
	case dashRun(core):
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

// dashRun reports a line opening with three dashes of any kind (hyphen,
// en and em dash, minus sign, horizontal bar ...), which reads as a
// separator.
func dashRun(core string) bool {
	n := 0
	for _, r := range core {
		if !unicode.Is(unicode.Pd, r) && r != '\u2212' && r != '\u2015' && r != '\u23af' {
			break
		}
		if n++; n == 3 {
			return true
		}
	}
	return false
}

// FrameBody renders a mail body for a listing in which a separator line and
// header lines frame each mail. Line ends "\r\n" become "\n"; every other
// control character (tab kept) is shown escaped as OneLine does, so a line
// ends only where a newline was. A line that looks like the framing
// (looksLikeFraming of what a reader takes it for, readAs: after leading
// blanks, backslashes and invisible runes, folded by NFKC so "Ｆｒｏｍ："
// and "From：" count as "From:") gets one
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
		if looksLikeFraming(readAs(line)) {
			line = BodyEscape + line
			marked++
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n"), marked
}

// CodeSpan answers s as a Markdown code span that s cannot close: fenced by
// more backticks than s holds in a row (padded with a space when s starts
// or ends with one), so nothing in s is read as Markdown.
func CodeSpan(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// CodeBlock answers s as a fenced Markdown code block with the info string
// lang, fenced by more backticks than s holds in a row (at least three), so
// s cannot close it. It ends with the closing fence, without a newline.
func CodeBlock(lang, s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + lang + "\n" + s + "\n" + fence
}

// longestRun answers the length of the longest run of c in s.
func longestRun(s string, c rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
