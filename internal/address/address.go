// Package address parses and formats three-part addresses `name@path.session`
// (seed 000 section 0, seed 001 "three-part addressing").
//
// The parser is pure: it knows nothing of which names exist. The gateway
// decides whether a name is a person or an agent and whether an alias exists.
package address

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SessionKind is the tri-state session part of an address.
type SessionKind int

const (
	// SessionDefault (no session part): the most recently active session of
	// that recipient in that path that the sender takes part in; none yet →
	// a new one.
	SessionDefault SessionKind = iota
	// SessionNew (`.new`): always a new session.
	SessionNew
	// SessionAlias (`.alias`): an existing session with that alias; an
	// unknown alias is a 404 and nothing is ever created.
	SessionAlias
)

// String names the kind as the API does: "default", "new" or "alias".
func (k SessionKind) String() string {
	switch k {
	case SessionNew:
		return "new"
	case SessionAlias:
		return "alias"
	default:
		return "default"
	}
}

// NewKeyword is the session part that forces a new session.
const NewKeyword = "new"

// MaxLength bounds a whole address in bytes; longer input is refused.
const MaxLength = 1024

// Address is one parsed `name@path.session`.
//
// Bare reports an address without `@` (a bare name, which addresses a
// person). Path is "" for a bare name and for `name@.new`. Alias is set only
// when Session is SessionAlias.
type Address struct {
	Name    string
	Path    string
	Session SessionKind
	Alias   string
	Bare    bool
}

// Errors returned by Parse; they wrap ErrInvalid so callers can test with
// errors.Is.
var ErrInvalid = errors.New("invalid address")

// Parse reads `name`, `name@path`, `name@path.new` or `name@path.alias`.
//
// The session part is what follows the LAST `.` after the `@`, so a path may
// contain `/` and `.`: `dsh@/home/a.b/proj.refactor` is path `/home/a.b/proj`,
// alias `refactor`. Because an alias never contains `/` (W-7.1), a last
// segment that contains `/` belongs to the path: `dsh@/home/a.b/proj` is path
// `/home/a.b/proj` with the default session. A trailing `.` (empty session
// part) is an error, as are an empty name, whitespace and control characters.
//
// Names are case-insensitive: the name part comes back in lower case
// (`Claude@/srv` is claude's address), the path and the session part as
// written.
func Parse(s string) (Address, error) {
	var a Address
	s = strings.TrimSpace(s)
	if s == "" {
		return a, fmt.Errorf("%w: empty address; write name@path.session or a bare person name", ErrInvalid)
	}
	if len(s) > MaxLength {
		return a, fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxLength)
	}
	if !utf8.ValidString(s) {
		return a, fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return a, fmt.Errorf("%w: %q contains whitespace or a control character", ErrInvalid, s)
		}
	}
	at := strings.IndexByte(s, '@')
	if at < 0 {
		name := strings.ToLower(s)
		if err := ValidName(name); err != nil {
			return a, err
		}
		a.Name, a.Bare = name, true
		return a, nil
	}
	a.Name = strings.ToLower(s[:at])
	if err := ValidName(a.Name); err != nil {
		return a, err
	}
	rest := s[at+1:]
	if strings.IndexByte(rest, '@') >= 0 {
		return a, fmt.Errorf("%w: %q has more than one @", ErrInvalid, s)
	}
	dot := strings.LastIndexByte(rest, '.')
	if dot < 0 || strings.IndexByte(rest[dot+1:], '/') >= 0 {
		a.Path = rest
		return a, nil
	}
	sess := rest[dot+1:]
	a.Path = rest[:dot]
	switch {
	case sess == "":
		return a, fmt.Errorf("%w: %q ends with '.'; drop it for the default session or add .new or .alias", ErrInvalid, s)
	case sess == NewKeyword:
		a.Session = SessionNew
	default:
		a.Session, a.Alias = SessionAlias, sess
	}
	return a, nil
}

// ValidName checks a person or agent name: 1..64 characters, letters, digits,
// '-' and '_' only (people and agents share one name space).
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name before '@'", ErrInvalid)
	}
	if utf8.RuneCountInString(name) > 64 {
		return fmt.Errorf("%w: name %q is longer than 64 characters", ErrInvalid, name)
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			return fmt.Errorf("%w: name %q may only hold letters, digits, '-' and '_'", ErrInvalid, name)
		}
	}
	return nil
}

// String formats the address back; Parse(a.String()) gives a again for every
// address Parse returned.
func (a Address) String() string {
	if a.Bare {
		return a.Name
	}
	switch a.Session {
	case SessionNew:
		return a.Name + "@" + a.Path + "." + NewKeyword
	case SessionAlias:
		return a.Name + "@" + a.Path + "." + a.Alias
	default:
		return a.Name + "@" + a.Path
	}
}

// Format builds the address of a participant in a session:
// `name@workspace.alias` (a person's workspace is "", giving `name@.alias`).
func Format(name, workspace, alias string) string {
	if alias == "" {
		return name + "@" + workspace
	}
	return name + "@" + workspace + "." + alias
}

// SplitList splits a cc list at commas, semicolons, whitespace and the
// full-width comma '，' (and '；', '、'), dropping empty items (W-5).
func SplitList(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == '，' || r == '；' || r == '、' || unicode.IsSpace(r)
	})
	return f
}

// SanitizeAlias applies W-7.1 to a proposed alias: it removes the address
// separators '.', '@' and '/', turns whitespace runs into '-', trims '-' at
// both ends and cuts to 64 characters. Chinese and other letters stay (W-7.3).
// The answer may be "" when nothing usable is left.
func SanitizeAlias(s string) string {
	var b strings.Builder
	lastDash := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == '.' || r == '@' || r == '/' || r == '\\':
			continue
		case unicode.IsSpace(r) || r == '_' || r == '-':
			if !lastDash && b.Len() > 0 {
				b.WriteRune('-')
				lastDash = true
			}
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
			lastDash = false
		default:
			// punctuation such as ':' ',' '?' would only make the alias
			// harder to type; drop it.
			continue
		}
	}
	out := strings.Trim(b.String(), "-")
	if utf8.RuneCountInString(out) > 64 {
		out = strings.Trim(string([]rune(out)[:64]), "-")
	}
	if out == NewKeyword {
		// ".new" is the keyword for a new session, never an alias.
		out = ""
	}
	return out
}

// placeholderTitles are names platforms give a session before they know what
// it is about (W-7.2, N-4, D-5). Compared case-insensitively after trimming;
// entries ending in '*' match as a prefix.
var placeholderTitles = []string{
	"new session*", "new chat*", "new conversation*", "untitled*", "session",
	"新会话*", "新对话*", "新建会话*", "处理邮件*", "未命名*",
}

// IsPlaceholder reports whether a title or alias is a placeholder that must
// never be written back as a session name (W-7.2): for example
// "New session", "New session - 2026-09-02T11:41", "新会话", "处理邮件",
// or an empty string.
func IsPlaceholder(s string) bool {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return true
	}
	t = strings.ReplaceAll(t, "-", " ")
	for _, p := range placeholderTitles {
		if strings.HasSuffix(p, "*") {
			if strings.HasPrefix(t, strings.TrimSuffix(p, "*")) {
				return true
			}
		} else if t == p {
			return true
		}
	}
	return false
}
