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

// Head tokens: the subject's and the sender name's tokens a second time,
// marked so that no text token equals one, in their own SQLite column
// (head: headMarker before each token, headSep between subject and sender)
// or as PostgreSQL lexemes "h:token" at the positions of the text tokens.
// A relevance search asks for them (Compile's tiers), and a word rare in
// subjects has a short list of its own instead of the word's whole list
// filtered by column.
const (
	headMarker = "\ue000" // private use: a token character to FTS5, never one to Words
	headSep    = "\ue001"
	headLexeme = "h:"
)

// FTSColumns answers the pre-tokenized columns of the SQLite FTS5 row:
// subject, body, sender, head and facets, each its tokens joined by spaces.
func (d Doc) FTSColumns() (subject, body, sender, head, facets string) {
	sw, fw := indexedWords(d.Subject), indexedWords(d.Sender)
	h := make([]string, 0, len(sw)+len(fw)+1)
	for _, w := range sw {
		h = append(h, headMarker+w)
	}
	h = append(h, headSep)
	for _, w := range fw {
		h = append(h, headMarker+w)
	}
	return strings.Join(sw, " "), strings.Join(indexedWords(d.Body), " "),
		strings.Join(fw, " "), strings.Join(h, " "), strings.Join(d.facets(), " ")
}

// maxPosition is PostgreSQL's largest tsvector position.
const maxPosition = 16383

// TSVector answers the PostgreSQL tsvector literal of the document: each
// text token with its positions (subject, sender and body in one sequence,
// a gap between them so that no phrase spans two), the head lexemes
// "h:token" of subject and sender at the same positions, and the facets
// as lexemes "kind:hex" without positions; no text token can equal either
// (text tokens have no ':'), and no facet kind is "h".
func (d Doc) TSVector() string {
	pos := map[string][]int{}
	at := func(w string, n int) {
		p := pos[w]
		if len(p) == 0 || p[len(p)-1] != n {
			if len(p) < 256 { // PostgreSQL keeps at most 256 positions per lexeme
				pos[w] = append(p, n)
			}
		}
	}
	n := 0
	for i, field := range []string{d.Subject, d.Sender, d.Body} {
		for _, w := range indexedWords(field) {
			n++
			if n > maxPosition {
				n = maxPosition
			}
			at(w, n)
			if i < 2 {
				at(headLexeme+w, n)
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

// lexemeEscaper doubles a tsvector lexeme's backslashes and quotes; one
// shared Replacer, as building one per lexeme cost more than the escaping.
var lexemeEscaper = strings.NewReplacer(`\`, `\\`, `'`, `''`)

func quoteLexeme(s string) string {
	if !strings.ContainsAny(s, `\'`) {
		return "'" + s + "'"
	}
	return "'" + lexemeEscaper.Replace(s) + "'"
}

// Tier is a match expression in a database's own language: FTS is the
// SQLite FTS5 MATCH expression, TSQuery the PostgreSQL tsquery literal.
// Score is the relevance its hits carry (higher is better).
type Tier struct {
	FTS, TSQuery string
	Score        float64
}

// Match is a query restricted to the mails of one viewer, as its tiers,
// best first: disjoint, and together exactly the mails the query matches.
type Match struct {
	Tiers []Tier
}

// Relevance tiers (Compile with ranked): every term in the subject or the
// sender's name, some of them there, none of them there.
const (
	ScoreAllInHead  = 3.0
	ScoreSomeInHead = 2.0
	ScoreBodyOnly   = 1.0
)

// Compile answers the match of q over the mails viewer sent or received;
// sessionIDs are the ids the session: filters named (resolved by the
// caller; an alias that names nothing is passed as written and matches
// nothing). Unranked, or without terms, the match is one tier of score 0;
// ranked, it is the tiers ScoreAllInHead, ScoreSomeInHead (only with two
// terms or more) and ScoreBodyOnly, each answered newest first by the
// index's own lists, so a mail whose subject has the words ranks above
// every mail that has them only in its body, however old it is. The first
// tier asks for the viewer, the filters and the head tokens only: a mail
// with every term in its subject or sender's name has them in its text,
// so the same mails come back without reading the terms' text lists.
func Compile(q Query, viewer string, sessionIDs []string, ranked bool) Match {
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
	// The viewer and the filters alone: the tier of every term in the head
	// needs no more (a head token is a subject or sender token, so the
	// terms' text match follows), and reading the terms' long text lists
	// there too would only cost.
	facetsFTS, facetsPG := len(fts), len(pg)
	var headFTS, headPG []string
	for _, t := range q.Terms {
		f, p := t.compile("{subject body sender}", "", "")
		fts, pg = append(fts, f), append(pg, p)
		f, p = t.compile("head", headMarker, headLexeme)
		headFTS, headPG = append(headFTS, f), append(headPG, p)
	}
	base := Tier{FTS: strings.Join(fts, " AND "), TSQuery: strings.Join(pg, " & ")}
	filters := Tier{FTS: strings.Join(fts[:facetsFTS], " AND "), TSQuery: strings.Join(pg[:facetsPG], " & ")}
	if len(q.Exclude) > 0 {
		var nf, np []string
		for _, t := range q.Exclude {
			f, p := t.compile("{subject body sender}", "", "")
			nf, np = append(nf, f), append(np, p)
		}
		exclude := func(t Tier) Tier {
			return Tier{FTS: "(" + t.FTS + ") NOT (" + strings.Join(nf, " OR ") + ")",
				TSQuery: t.TSQuery + " & !(" + strings.Join(np, " | ") + ")"}
		}
		base, filters = exclude(base), exclude(filters)
	}
	if !ranked || len(q.Terms) == 0 {
		return Match{Tiers: []Tier{base}}
	}
	all := Tier{FTS: "(" + strings.Join(headFTS, " AND ") + ")", TSQuery: "(" + strings.Join(headPG, " & ") + ")"}
	some := Tier{FTS: "(" + strings.Join(headFTS, " OR ") + ")", TSQuery: "(" + strings.Join(headPG, " | ") + ")"}
	tiers := []Tier{{FTS: "(" + filters.FTS + ") AND " + all.FTS, TSQuery: filters.TSQuery + " & " + all.TSQuery, Score: ScoreAllInHead}}
	if len(q.Terms) > 1 {
		tiers = append(tiers, Tier{FTS: "((" + base.FTS + ") AND " + some.FTS + ") NOT " + all.FTS,
			TSQuery: base.TSQuery + " & " + some.TSQuery + " & !" + all.TSQuery, Score: ScoreSomeInHead})
	}
	tiers = append(tiers, Tier{FTS: "(" + base.FTS + ") NOT " + some.FTS,
		TSQuery: base.TSQuery + " & !" + some.TSQuery, Score: ScoreBodyOnly})
	return Match{Tiers: tiers}
}

// compile answers the term as an FTS5 phrase on columns and as a tsquery,
// each token with marker (FTS5) or lexeme prefix (tsquery) before it.
func (t Term) compile(columns, marker, lexeme string) (fts, pg string) {
	toks := make([]string, len(t.Tokens))
	parts := make([]string, len(t.Tokens))
	for i, tok := range t.Tokens {
		toks[i] = marker + tok
		parts[i] = quoteLexeme(lexeme + tok)
	}
	phrase := `"` + strings.Join(toks, " ") + `"`
	if t.Prefix {
		phrase += "*"
		parts[len(parts)-1] += ":*"
	}
	p := strings.Join(parts, " <-> ")
	if len(parts) > 1 {
		p = "(" + p + ")"
	}
	return columns + " : " + phrase, p
}
