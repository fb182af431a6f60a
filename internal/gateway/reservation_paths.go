package gateway

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentmail/agentmail/client"
)

// Paths of reservations (issue 21 item 1). A reservation names a path or a
// glob relative to a workspace; the gateway compares them as absolute
// patterns (workspace joined with the path), so reservations taken in a
// repository and in a directory inside it meet. Globs follow doublestar:
// * and ? within one path segment, [..] classes, {a,b} alternatives, **
// across segments. A pattern also covers everything below a directory it
// matches ("src" covers "src/main.go").

// cleanWorkspace answers ws as an absolute, cleaned path, or a 400 naming
// field.
func cleanWorkspace(ws, field string) (string, error) {
	ws = strings.TrimSpace(ws)
	switch {
	case ws == "":
		return "", Invalid(field, "workspace is required", "send the absolute directory the paths are relative to")
	case !utf8.ValidString(ws) || strings.ContainsRune(ws, 0) || len(ws) > 4096:
		return "", Invalid(field, "workspace must be UTF-8 text of at most 4096 bytes without NUL", "")
	case !path.IsAbs(ws):
		return "", Invalid(field, fmt.Sprintf("workspace %q is not an absolute path", ws), "send the absolute directory, e.g. /home/me/project")
	}
	return path.Clean(ws), nil
}

// cleanReservationPath answers p as a clean pattern relative to ws: an
// absolute p inside ws is made relative, "." (the whole workspace) becomes
// "**". Errors are 400s naming field: empty, longer than
// client.MaxReservationPathBytes, outside the workspace, or not a valid
// glob.
func cleanReservationPath(ws, p, field string) (string, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return "", Invalid(field, "a path is empty", "give paths relative to the workspace, e.g. src/main.go or docs/**")
	case len(p) > client.MaxReservationPathBytes || !utf8.ValidString(p) || strings.ContainsRune(p, 0):
		return "", Invalid(field, fmt.Sprintf("a path must be UTF-8 text of at most %d bytes without NUL", client.MaxReservationPathBytes), "")
	}
	if path.IsAbs(p) {
		c := path.Clean(p)
		switch {
		case c == ws:
			p = "."
		case strings.HasPrefix(c, strings.TrimSuffix(ws, "/")+"/"):
			p = strings.TrimPrefix(c, strings.TrimSuffix(ws, "/")+"/")
		default:
			return "", Invalid(field, fmt.Sprintf("%q is outside the workspace %s", p, ws), "give paths relative to the workspace")
		}
	}
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", Invalid(field, fmt.Sprintf("%q leaves the workspace", p), "give paths inside the workspace")
	}
	if p == "." {
		p = "**"
	}
	if !doublestar.ValidatePattern(p) {
		return "", Invalid(field, fmt.Sprintf("%q is not a valid glob", p), "use *, ?, [abc], {a,b} and ** (close every bracket and brace)")
	}
	return p, nil
}

// hiddenRune reports the runes a reservation's workspace, paths and reason
// may not hold, because printed on a terminal or a page they act instead
// of showing: control characters (ESC starts a terminal escape sequence,
// BEL, CR and newline rewrite the line), the line and paragraph
// separators, and the format characters (Unicode Cf: the bidirectional
// overrides, isolates and marks that reorder text, zero-width ones that
// hide it).
func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// refuseHiddenRunes is the 400 naming field when v holds a hiddenRune.
func refuseHiddenRunes(field, v string) error {
	if i := strings.IndexFunc(v, hiddenRune); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		return Invalid(field, fmt.Sprintf("%s holds the invisible or control character U+%04X (a terminal escape, a line break or a direction override)", field, r),
			"send plain text on one line: letters, digits, punctuation and spaces")
	}
	return nil
}

// absPattern is a reservation's pattern as an absolute pattern.
func absPattern(ws, p string) string {
	if p == "**" {
		return strings.TrimSuffix(ws, "/") + "/**"
	}
	return path.Join(ws, p)
}

// patternCovers reports whether the absolute pattern covers the absolute
// file path p: it matches p or a directory above p.
func patternCovers(pattern, p string) bool {
	for q := p; ; q = path.Dir(q) {
		if ok, err := doublestar.Match(pattern, q); err == nil && ok {
			return true
		}
		if q == "/" || q == "." {
			return false
		}
	}
}

// patternsOverlap reports whether two absolute patterns may cover a common
// path. It compares segment by segment: ** meets anything; two literal
// segments must be equal; a literal and a glob segment must match; two
// glob segments must agree on their literal beginning and end. When one
// pattern runs out first it names a directory holding what the other
// covers. It errs on the side of overlap: an advisory lease rather warns
// once too often than not at all.
func patternsOverlap(a, b string) bool {
	sa, sb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(sa) && i < len(sb); i++ {
		x, y := sa[i], sb[i]
		if x == "**" || y == "**" {
			return true
		}
		if !segmentsMeet(x, y) {
			return false
		}
	}
	return true
}

const globMeta = `*?[{\`

func segmentsMeet(x, y string) bool {
	gx, gy := strings.ContainsAny(x, globMeta), strings.ContainsAny(y, globMeta)
	switch {
	case !gx && !gy:
		return x == y
	case !gx:
		ok, err := doublestar.Match(y, x)
		return err != nil || ok
	case !gy:
		ok, err := doublestar.Match(x, y)
		return err != nil || ok
	}
	px, py := literalHead(x), literalHead(y)
	sx, sy := literalTail(x), literalTail(y)
	return (strings.HasPrefix(px, py) || strings.HasPrefix(py, px)) &&
		(strings.HasSuffix(sx, sy) || strings.HasSuffix(sy, sx))
}

// literalHead is a glob segment up to its first meta character.
func literalHead(s string) string {
	if i := strings.IndexAny(s, globMeta); i >= 0 {
		return s[:i]
	}
	return s
}

// literalTail is a glob segment after its last meta character (a closing
// bracket or brace counts as meta).
func literalTail(s string) string {
	if i := strings.LastIndexAny(s, globMeta+"]}"); i >= 0 {
		return s[i+1:]
	}
	return s
}
