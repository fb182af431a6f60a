package gateway

import (
	"strings"
	"unicode"
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
// one space, and the line is cut to MaxToolSummaryRunes with "…". "" when
// there is neither a tool nor an input.
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
	return cutRunes(oneLine(s), MaxToolSummaryRunes)
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
