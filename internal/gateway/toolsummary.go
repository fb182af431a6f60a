package gateway

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxToolSummaryRunes bounds client.Permission.ToolSummary.
const MaxToolSummaryRunes = 200

// summaryKeys are the tool arguments that say what a call does, in the
// order they are preferred (Claude Code's Bash command, Edit/Write
// file_path, WebFetch url, Grep pattern, opencode's filePath, ...).
var summaryKeys = []string{"command", "cmd", "file_path", "filePath", "path", "url", "pattern", "query", "description"}

// ToolSummary answers one line naming a tool call for lists that show no
// mail body (client.Permission.ToolSummary): "Bash: rm -rf build/",
// "Edit: /srv/app/main.go", "mcp_tool: {"a":1}". The argument part is the
// first of summaryKeys the input holds as a string, else the input's only
// value, else its compact JSON. Whitespace runs (newlines included) become
// one space, invisible format characters are shown as their code points
// (ShowInvisible), and the line is cut to MaxToolSummaryRunes with "…". ""
// when there is neither a tool nor an input.
func ToolSummary(tool string, input map[string]any) string {
	tool = strings.TrimSpace(tool)
	args := summaryArgs(input)
	var s string
	switch {
	case tool != "" && args != "":
		s = tool + ": " + args
	case tool != "":
		s = tool
	default:
		s = args
	}
	return cutRunes(ShowInvisible(oneLine(s)), MaxToolSummaryRunes)
}

// ShowInvisible answers s with every invisible format character (Unicode
// category Cf: the bidirectional controls such as U+202E RIGHT-TO-LEFT
// OVERRIDE and U+2066 LEFT-TO-RIGHT ISOLATE, zero-width characters, U+FEFF,
// tag characters) written as its code point, "<U+202E>". Such characters
// reorder or hide what a person reads: "ls <U+202E><U+2066> ; rm -rf ~ ;
// <U+2069><U+2066> #<U+2069>" displays as `ls # ; rm -rf ~ ;`, the rm
// seemingly commented out, while a shell runs it. What will run is shown
// this way wherever a person decides on it (the tool summary, the request
// mail); the stored input and its hash stay as the agent sent them.
func ShowInvisible(s string) string {
	if !strings.ContainsFunc(s, isInvisible) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isInvisible(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isInvisible reports whether r is a format character (category Cf).
func isInvisible(r rune) bool { return unicode.Is(unicode.Cf, r) }

// jsonShowingInvisible answers canonical JSON with every invisible format
// character (isInvisible) written as its \u escape: the same JSON value,
// readable as what it holds. Such characters occur only inside strings.
func jsonShowingInvisible(canon []byte) string {
	s := string(canon)
	if !strings.ContainsFunc(s, isInvisible) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isInvisible(r) {
			b.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}

func summaryArgs(input map[string]any) string {
	if len(input) == 0 {
		return ""
	}
	for _, k := range summaryKeys {
		if v, ok := input[k].(string); ok && strings.TrimSpace(v) != "" {
			return v
		}
	}
	if len(input) == 1 {
		for _, v := range input {
			if s, ok := v.(string); ok {
				return s
			}
		}
	}
	b, err := CanonicalJSON(input)
	if err != nil {
		return ""
	}
	return string(b)
}

// oneLine turns every whitespace run into one space and trims the ends.
func oneLine(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cutRunes cuts s to at most n runes, the last one "…" when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
