package search

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Query is a parsed search (the query language of docs/API.md "Search"):
// every Term must match (AND), and every filter holds.
type Query struct {
	// Terms are the words and "phrases" to find in subject, body and
	// sender name.
	Terms []Term
	// Exclude are the -words and -"phrases" a mail must not contain.
	Exclude []Term
	// From and To name senders and recipients (to or cc), lower-cased; a
	// mail matches when its sender is one of From (when given) and one of
	// To is among its recipients (when given).
	From, To []string
	// Sessions are session aliases or ids (session:), as written.
	Sessions []string
	// HasAttachment keeps mails with at least one attachment.
	HasAttachment bool
	// Unread keeps mails the viewer received and has not read.
	Unread bool
	// After keeps mails created at or after it, Before those created before
	// it (zero: no bound); a date is midnight UTC of that day.
	After, Before time.Time
}

// Term is one word or phrase: Tokens in order, adjacent; Prefix makes the
// last token match every token it begins.
type Term struct {
	Tokens []string
	Prefix bool
	// Raw is the term as written (quotes and * removed).
	Raw string
}

// Limits of a query.
const (
	// MaxTerms bounds the words and phrases of one query.
	MaxTerms = 16
	// MaxFilters bounds the from:, to: and session: filters of one query.
	MaxFilters = 8
	// MinPrefixRunes is the shortest word a * may follow.
	MinPrefixRunes = 2
)

// Error is a query that cannot be run, with what to change.
type Error struct {
	Reason, Fix string
}

func (e *Error) Error() string { return e.Reason }

// Empty reports whether q has neither a term nor a filter.
func (q Query) Empty() bool {
	return len(q.Terms) == 0 && len(q.From) == 0 && len(q.To) == 0 && len(q.Sessions) == 0 &&
		!q.HasAttachment && !q.Unread && q.After.IsZero() && q.Before.IsZero()
}

// filterKeys are the keys of the filters.
var filterKeys = map[string]bool{"from": true, "to": true, "session": true, "has": true, "is": true, "before": true, "after": true}

// Parse reads the query language: words; "quoted phrases"; word* for a
// prefix; -word and -"phrase" to exclude; from:NAME, to:NAME,
// session:ALIAS, has:attachment, is:unread, before:DATE and after:DATE
// (DATE is YYYY-MM-DD, UTC, or RFC 3339). A key this language does not
// know (http://x) is searched as text. Errors: *Error for a filter without
// a value (from:), an excluded filter (-from:ann), an unknown has:/is:
// value, a bad date, a * after fewer than MinPrefixRunes characters, a
// query that only excludes, more than MaxTerms terms or MaxFilters
// filters.
func Parse(s string) (Query, error) {
	var q Query
	for _, f := range fields(s) {
		if !f.quoted && strings.HasPrefix(f.text, "-") && len(f.text) > 1 {
			f.text, f.neg = f.text[1:], true
		}
		if !f.quoted {
			if key, val, ok := strings.Cut(f.text, ":"); ok && filterKeys[strings.ToLower(key)] {
				key = strings.ToLower(key)
				if val == "" {
					return q, &Error{Reason: fmt.Sprintf("%s: has nothing after the colon", key),
						Fix: fmt.Sprintf("write what to filter by right after the colon, e.g. %s", filterExample[key])}
				}
				if f.neg {
					return q, &Error{Reason: fmt.Sprintf("-%s: a filter cannot be excluded", key),
						Fix: "drop the - before the filter; - excludes words and phrases only"}
				}
				if err := q.filter(key, val); err != nil {
					return q, err
				}
				continue
			}
		}
		text, prefix := f.text, false
		if strings.HasSuffix(text, "*") {
			text, prefix = strings.TrimRight(text, "*"), true
		}
		toks := Words(text)
		if len(toks) == 0 {
			continue
		}
		if prefix {
			last := toks[len(toks)-1]
			if isCJK([]rune(last)[0]) {
				prefix = false // a Han character is a whole token already
			} else if len([]rune(last)) < MinPrefixRunes {
				return q, &Error{Reason: fmt.Sprintf("%q: a * needs at least %d characters before it", f.text, MinPrefixRunes),
					Fix: "write more of the word before the *"}
			}
		}
		if f.neg {
			q.Exclude = append(q.Exclude, Term{Tokens: toks, Prefix: prefix, Raw: text})
		} else {
			q.Terms = append(q.Terms, Term{Tokens: toks, Prefix: prefix, Raw: text})
		}
	}
	if n := len(q.Terms) + len(q.Exclude); n > MaxTerms {
		return q, &Error{Reason: fmt.Sprintf("the query has %d words or phrases; at most %d", n, MaxTerms),
			Fix: "search for fewer words"}
	}
	if len(q.Exclude) > 0 && q.Empty() {
		return q, &Error{Reason: "the query only excludes words",
			Fix: "add a word or a filter to look for, e.g. deploy -staging"}
	}
	if n := len(q.From) + len(q.To) + len(q.Sessions); n > MaxFilters {
		return q, &Error{Reason: fmt.Sprintf("the query has %d from:, to: and session: filters; at most %d", n, MaxFilters),
			Fix: "use fewer filters"}
	}
	return q, nil
}

// filterExample is an example of each filter, for the error of an empty one.
var filterExample = map[string]string{"from": "from:ann", "to": "to:claude", "session": "session:fix-login",
	"has": "has:attachment", "is": "is:unread", "before": "before:2026-11-30", "after": "after:2026-11-01"}

// filter applies the filter key:val (key one of filterKeys).
func (q *Query) filter(key, val string) error {
	switch key {
	case "from":
		q.From = append(q.From, strings.ToLower(val))
	case "to":
		q.To = append(q.To, strings.ToLower(val))
	case "session":
		q.Sessions = append(q.Sessions, val)
	case "has":
		if strings.ToLower(val) != "attachment" {
			return &Error{Reason: fmt.Sprintf("has:%s is not a filter", val), Fix: "write has:attachment"}
		}
		q.HasAttachment = true
	case "is":
		if strings.ToLower(val) != "unread" {
			return &Error{Reason: fmt.Sprintf("is:%s is not a filter", val), Fix: "write is:unread"}
		}
		q.Unread = true
	case "before", "after":
		t, err := parseDate(val)
		if err != nil {
			return &Error{Reason: fmt.Sprintf("%s:%s is not a date", key, val),
				Fix: "write the date as YYYY-MM-DD (UTC), e.g. " + key + ":2026-11-30"}
		}
		if key == "before" {
			q.Before = t
		} else {
			q.After = t
		}
	}
	return nil
}

func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

type field struct {
	text   string
	quoted bool
	neg    bool // a -"phrase"
}

// fields splits s at spaces outside double quotes; a quoted part is one
// field (a phrase), and an unclosed quote runs to the end. A quote inside
// a word (from:"Ann B") keeps the key with its quoted value.
func fields(s string) []field {
	var out []field
	var cur strings.Builder
	inQuote, quoted, neg := false, false, false
	flush := func() {
		if cur.Len() > 0 || quoted {
			out = append(out, field{text: cur.String(), quoted: quoted, neg: neg})
		}
		cur.Reset()
		quoted, neg = false, false
	}
	for _, r := range s {
		switch {
		case r == '"' || r == '“' || r == '”':
			if inQuote {
				inQuote = false
				// a closing quote ends the phrase unless a * follows
			} else {
				inQuote = true
				if cur.String() == "-" { // -"phrase"
					cur.Reset()
					quoted, neg = true, true
				} else if !strings.HasSuffix(cur.String(), ":") {
					flush()
					quoted = true
				}
			}
		case unicode.IsSpace(r) && !inQuote:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}
