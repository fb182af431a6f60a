package search

import (
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
)

// Doc is what the index holds of one mail: its text and its facets.
type Doc struct {
	Subject, Body, Sender string
	// From is the sender's name, To the names of its recipients (to and
	// cc, observers included), SessionID its session.
	From          string
	To            []string
	SessionID     string
	HasAttachment bool
}

// Facet kinds: a facet is a token of the facets column (SQLite) or a
// lexeme no text token can be (PostgreSQL).
const (
	facetParty   = "p" // the sender or a recipient: the viewer's scope
	facetFrom    = "f"
	facetTo      = "t"
	facetSession = "s"
	facetAttach  = "a"
)

// facet answers the facet token of kind and value: the kind and the hex of
// the lower-cased value, letters and digits only, so that it survives any
// tokenizer unchanged.
func facet(kind, value string) string {
	return kind + hex.EncodeToString([]byte(strings.ToLower(value)))
}

// PartyFacet is the facet every mail name sent or received carries.
func PartyFacet(name string) string { return facet(facetParty, name) }

func (d Doc) facets() []string {
	out := []string{facet(facetParty, d.From), facet(facetFrom, d.From), facet(facetSession, d.SessionID)}
	for _, n := range d.To {
		out = append(out, facet(facetParty, n), facet(facetTo, n))
	}
	if d.HasAttachment {
		out = append(out, facetAttach)
	}
	return out
}

// Bounds of what is indexed of one field: its first MaxIndexedWords
// tokens, and no more than MaxIndexedBytes of them (a body may be 1 MiB;
// PostgreSQL refuses a tsvector over 1 MB).
const (
	MaxIndexedWords = 16000
	MaxIndexedBytes = 256 << 10
)

// indexedWords answers the tokens of a field the index holds.
func indexedWords(text string) []string {
	w := Words(text)
	if len(w) > MaxIndexedWords {
		w = w[:MaxIndexedWords]
	}
	n := 0
	for i, t := range w {
		if n += len(t) + 1; n > MaxIndexedBytes {
			return w[:i]
		}
	}
	return w
}

// FTSColumns answers the pre-tokenized columns of the SQLite FTS5 row:
// subject, body, sender and facets, each its tokens joined by spaces.
func (d Doc) FTSColumns() (subject, body, sender, facets string) {
	return strings.Join(indexedWords(d.Subject), " "), strings.Join(indexedWords(d.Body), " "),
		strings.Join(indexedWords(d.Sender), " "), strings.Join(d.facets(), " ")
}

// maxPosition is PostgreSQL's largest tsvector position.
const maxPosition = 16383

// TSVector answers the PostgreSQL tsvector literal of the document: each
// text token with its positions (subject, sender and body in one sequence,
// a gap between them so that no phrase spans two), and the facets as
// lexemes "kind:hex" without positions, which no text token can equal
// (text tokens have no ':').
func (d Doc) TSVector() string {
	pos := map[string][]int{}
	n := 0
	for _, field := range []string{d.Subject, d.Sender, d.Body} {
		for _, w := range indexedWords(field) {
			n++
			if n > maxPosition {
				n = maxPosition
			}
			p := pos[w]
			if len(p) == 0 || p[len(p)-1] != n {
				if len(p) < 256 { // PostgreSQL keeps at most 256 positions per lexeme
					pos[w] = append(p, n)
				}
			}
		}
		n++
	}
	lexemes := make([]string, 0, len(pos))
	for w := range pos {
		lexemes = append(lexemes, w)
	}
	sort.Strings(lexemes)
	var b strings.Builder
	for _, w := range lexemes {
		b.WriteString(quoteLexeme(w))
		b.WriteByte(':')
		for i, p := range pos[w] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
		b.WriteByte(' ')
	}
	for _, f := range d.facets() {
		b.WriteString(quoteLexeme(pgFacet(f)))
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// pgFacet turns a facet token into its PostgreSQL lexeme.
func pgFacet(f string) string { return f[:1] + ":" + f[1:] }

func quoteLexeme(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// Match is a query in a database's own language, restricted to the mails
// of one viewer.
type Match struct {
	// FTS is the SQLite FTS5 MATCH expression, TSQuery the PostgreSQL
	// tsquery literal.
	FTS, TSQuery string
}

// Compile answers the match expressions of q over the mails viewer sent or
// received; sessionIDs are the ids the session: filters named (resolved by
// the caller; an alias that names nothing is passed as written and matches
// nothing).
func Compile(q Query, viewer string, sessionIDs []string) Match {
	var fts, pg []string
	add := func(f string) {
		fts = append(fts, `facets : "`+f+`"`)
		pg = append(pg, quoteLexeme(pgFacet(f)))
	}
	anyOf := func(kind string, values []string) {
		if len(values) == 0 {
			return
		}
		var a, b []string
		for _, v := range values {
			f := facet(kind, v)
			a = append(a, `"`+f+`"`)
			b = append(b, quoteLexeme(pgFacet(f)))
		}
		fts = append(fts, "facets : ("+strings.Join(a, " OR ")+")")
		pg = append(pg, "("+strings.Join(b, " | ")+")")
	}
	add(facet(facetParty, viewer))
	anyOf(facetFrom, q.From)
	anyOf(facetTo, q.To)
	anyOf(facetSession, sessionIDs)
	if q.HasAttachment {
		add(facetAttach)
	}
	for _, t := range q.Terms {
		phrase := `"` + strings.Join(t.Tokens, " ") + `"`
		if t.Prefix {
			phrase += "*"
		}
		fts = append(fts, "{subject body sender} : "+phrase)
		parts := make([]string, len(t.Tokens))
		for i, tok := range t.Tokens {
			parts[i] = quoteLexeme(tok)
		}
		if t.Prefix {
			parts[len(parts)-1] += ":*"
		}
		p := strings.Join(parts, " <-> ")
		if len(parts) > 1 {
			p = "(" + p + ")"
		}
		pg = append(pg, p)
	}
	return Match{FTS: strings.Join(fts, " AND "), TSQuery: strings.Join(pg, " & ")}
}
