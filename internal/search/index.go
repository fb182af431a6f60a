package search

import (
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
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

// isPairToken reports whether tok is a token that pairs with its neighbour
// (a single Han, Hiragana or Katakana character).
func isPairToken(tok string) bool {
	r, size := utf8.DecodeRuneInString(tok)
	return size == len(tok) && r != utf8.RuneError && isCJK(r)
}

// TSVector answers the PostgreSQL tsvector literal of the document: each
// text token with its positions (subject, sender and body in one sequence,
// a gap between them so that no phrase spans two), the head lexemes
// "h:token" of subject and sender at the same positions, and the facets
// as lexemes "kind:hex" without positions; no text token can equal either
// (text tokens have no ':'), and no facet kind is "h".
//
// Character pairs (migration 0049): two adjacent tokens of one field that
// are both single Chinese or Japanese characters are also the lexeme of the
// two characters at the first one's position ("数据" beside "数" and "据",
// "h:数据" in the head), so that a Chinese word is one or a few GIN
// lookups instead of a phrase checked row by row. No word token holds such
// a character, so a pair equals no other token.
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
		prev, prevAt := "", 0 // the previous token when it pairs, and its position
		for _, w := range indexedWords(field) {
			n++
			if n > maxPosition {
				n = maxPosition
			}
			at(w, n)
			if i < 2 {
				at(headLexeme+w, n)
			}
			if !isPairToken(w) {
				prev = ""
				continue
			}
			if prev != "" {
				at(prev+w, prevAt)
				if i < 2 {
					at(headLexeme+prev+w, prevAt)
				}
			}
			prev, prevAt = w, n
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
	// Verify is set when TSQuery finds a superset of the tier's mails: a
	// Chinese or Japanese phrase of three characters or more is asked as
	// the conjunction of its character pairs, which the GIN index answers
	// without reading a row, and a mail with the pairs apart (数据 … 据库
	// for 数据库) is among its hits. Each hit is then checked with
	// Match.Holds before it is shown. FTS is exact either way.
	Verify bool
	head   int // what Holds checks: headAny, headAll or headSome
}

// What a tier asks of the head (subject and sender's name) besides every
// term in the text.
const (
	headAny  = iota // nothing
	headAll         // every term in the head
	headSome        // some term in the head
)

// Match is a query restricted to the mails of one viewer, as its tiers,
// best first: disjoint, and together exactly the mails the query matches.
type Match struct {
	Tiers []Tier
	terms []Term
}

// Relevance tiers (Compile with ranked): every term in the subject or the
// sender's name, some of them there, none of them there.
const (
	ScoreAllInHead  = 3.0
	ScoreSomeInHead = 2.0
	ScoreBodyOnly   = 1.0
)

// CompileOptions are the choices of Compile.
type CompileOptions struct {
	// Ranked asks for the relevance tiers; without it the match is one
	// tier of score 0, newest first.
	Ranked bool
	// Pairs writes the tsquery with the character pairs of Doc.TSVector;
	// only when every index row has them (store.Store.SearchPairs: the
	// rows written before migration 0049 are being indexed again). Without
	// it a Chinese word is the phrase of its characters.
	Pairs bool
}

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
//
// With opt.Pairs a term's Chinese characters are asked as their pairs:
// 部署 is the one lexeme '部署'; 数据库 is '数据' & '据库' where the term
// must hold (the tiers are then marked Verify) and the exact phrase
// '数据' <-> '据库' where it must not (excluded terms, the "not every term
// in the head" of a tier), so a tier never loses a mail it should hold.
func Compile(q Query, viewer string, sessionIDs []string, opt CompileOptions) Match {
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
	var headFTS, headPG, headExact []string
	verify := false
	for _, t := range q.Terms {
		f, exact, loose := t.compile("{subject body sender}", "", "", opt.Pairs)
		fts, pg = append(fts, f), append(pg, loose)
		verify = verify || loose != exact
		f, exact, loose = t.compile("head", headMarker, headLexeme, opt.Pairs)
		headFTS, headPG, headExact = append(headFTS, f), append(headPG, loose), append(headExact, exact)
	}
	base := Tier{FTS: strings.Join(fts, " AND "), TSQuery: strings.Join(pg, " & ")}
	filters := Tier{FTS: strings.Join(fts[:facetsFTS], " AND "), TSQuery: strings.Join(pg[:facetsPG], " & ")}
	if len(q.Exclude) > 0 {
		var nf, np []string
		for _, t := range q.Exclude {
			f, exact, _ := t.compile("{subject body sender}", "", "", opt.Pairs)
			nf, np = append(nf, f), append(np, exact)
		}
		exclude := func(t Tier) Tier {
			return Tier{FTS: "(" + t.FTS + ") NOT (" + strings.Join(nf, " OR ") + ")",
				TSQuery: t.TSQuery + " & !(" + strings.Join(np, " | ") + ")"}
		}
		base, filters = exclude(base), exclude(filters)
	}
	m := Match{terms: q.Terms}
	if !opt.Ranked || len(q.Terms) == 0 {
		base.Verify = verify
		m.Tiers = []Tier{base}
		return m
	}
	allFTS, someFTS := "("+strings.Join(headFTS, " AND ")+")", "("+strings.Join(headFTS, " OR ")+")"
	all, notAll := "("+strings.Join(headPG, " & ")+")", "!("+strings.Join(headExact, " & ")+")"
	some, notSome := "("+strings.Join(headPG, " | ")+")", "!("+strings.Join(headExact, " | ")+")"
	m.Tiers = []Tier{{FTS: "(" + filters.FTS + ") AND " + allFTS, TSQuery: filters.TSQuery + " & " + all,
		Score: ScoreAllInHead, Verify: verify, head: headAll}}
	if len(q.Terms) > 1 {
		m.Tiers = append(m.Tiers, Tier{FTS: "((" + base.FTS + ") AND " + someFTS + ") NOT " + allFTS,
			TSQuery: base.TSQuery + " & " + some + " & " + notAll, Score: ScoreSomeInHead, Verify: verify, head: headSome})
	}
	m.Tiers = append(m.Tiers, Tier{FTS: "(" + base.FTS + ") NOT " + someFTS,
		TSQuery: base.TSQuery + " & " + notSome, Score: ScoreBodyOnly, Verify: verify})
	return m
}

// compile answers the term as an FTS5 phrase on columns and as a tsquery,
// each token with marker (FTS5) or lexeme prefix (tsquery) before it. The
// tsquery is exact (the phrase of the term's tokens; with pairs, adjacent
// Chinese characters as their pair lexemes, the distances kept) and loose:
// for a term that is three or more such characters alone, the conjunction
// of its pairs, which every mail with the phrase matches and a few without
// it; otherwise loose is exact.
func (t Term) compile(columns, marker, lexeme string, pairs bool) (fts, exact, loose string) {
	toks := make([]string, len(t.Tokens))
	for i, tok := range t.Tokens {
		toks[i] = marker + tok
	}
	phrase := `"` + strings.Join(toks, " ") + `"`
	if t.Prefix {
		phrase += "*"
	}
	type item struct {
		lexeme string
		at     int // token index in the term
	}
	var items []item
	onlyPairs := true
	for i := 0; i < len(t.Tokens); i++ {
		tok, last := t.Tokens[i], i == len(t.Tokens)-1
		if pairs && !last && isPairToken(tok) && isPairToken(t.Tokens[i+1]) {
			items = append(items, item{quoteLexeme(lexeme + tok + t.Tokens[i+1]), i})
			if i+2 == len(t.Tokens) || !isPairToken(t.Tokens[i+2]) {
				i++ // the second character is in this pair and begins none
			}
			continue
		}
		onlyPairs = false
		l := quoteLexeme(lexeme + tok)
		if last && t.Prefix {
			l += ":*"
		}
		items = append(items, item{l, i})
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			if d := it.at - items[i-1].at; d == 1 {
				b.WriteString(" <-> ")
			} else {
				b.WriteString(" <" + strconv.Itoa(d) + "> ")
			}
		}
		b.WriteString(it.lexeme)
	}
	exact = b.String()
	if len(items) > 1 {
		exact = "(" + exact + ")"
	}
	loose = exact
	if onlyPairs && len(items) > 1 {
		lex := make([]string, len(items))
		for i, it := range items {
			lex[i] = it.lexeme
		}
		loose = "(" + strings.Join(lex, " & ") + ")"
	}
	return columns + " : " + phrase, exact, loose
}

// Holds reports whether a mail with subject, body and sender name (the
// sender's name as indexed) holds what tier i asks of its terms: each term
// in the text (subject, sender or body; a phrase within one of them), and
// in the head (subject or sender) as the tier says. It checks a hit of a
// Verify tier; what the tier excludes the index has answered exactly. The
// whole text is read, so a mail the index matched on its indexed part
// (the first MaxIndexedWords tokens of a field) always holds.
func (m Match) Holds(i int, subject, body, sender string) bool {
	fields := []*textField{{text: subject}, {text: sender}, {text: body}}
	head := m.Tiers[i].head
	inHead := 0
	for _, t := range m.terms {
		h := fields[0].has(t) || fields[1].has(t)
		if h {
			inHead++
		} else if head == headAll || !fields[2].has(t) {
			return false
		}
	}
	return head != headSome || inHead > 0
}

// textField is one text field of a mail being checked, tokenized when a term
// needs it.
type textField struct {
	text string
	toks []Token
	done bool
}

// has reports whether the term's tokens are adjacent tokens of the field
// (the last a prefix when Term.Prefix).
func (f *textField) has(t Term) bool {
	if len(t.Tokens) == 0 {
		return true
	}
	if !t.Prefix && plainHan(t.Tokens) && strings.Contains(f.text, strings.Join(t.Tokens, "")) {
		return true // the characters themselves, each a token the text has as written
	}
	if !f.done {
		f.toks, f.done = Tokenize(f.text), true
	}
	for i := range f.toks {
		if t.matchAt(f.toks, i) {
			return true
		}
	}
	return false
}

// plainHan reports whether every token is a CJK Unified Ideograph, which
// folding leaves as it is: the text's own characters are then its tokens.
func plainHan(toks []string) bool {
	for _, tok := range toks {
		r, size := utf8.DecodeRuneInString(tok)
		if size != len(tok) || r < 0x4e00 || r > 0x9fff {
			return false
		}
	}
	return true
}
