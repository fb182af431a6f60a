package search

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTokenizeFoldsLatinAndSplitsHan(t *testing.T) {
	got := Words("Café ＤＥＰＬＯＹ naïve, 部署到生产环境 v2.1 ok")
	want := []string{"cafe", "deploy", "naive", "部", "署", "到", "生", "产", "环", "境", "v2", "1", "ok"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, tok := range Tokenize("x 部署 y") {
		if tok.Text == "部" && "x 部署 y"[tok.Start:tok.End] != "部" {
			t.Fatalf("span of 部: %+v", tok)
		}
	}
}

func TestParseQueryLanguage(t *testing.T) {
	q, err := Parse(`deploy "build cache" 部署 conf* from:Ann to:claude session:fix-login has:attachment is:unread after:2026-11-01 before:2026-12-01 http://x`)
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, term := range q.Terms {
		s := strings.Join(term.Tokens, "+")
		if term.Prefix {
			s += "*"
		}
		terms = append(terms, s)
	}
	if want := []string{"deploy", "build+cache", "部+署", "conf*", "http+x"}; !reflect.DeepEqual(terms, want) {
		t.Fatalf("terms %q, want %q", terms, want)
	}
	if !reflect.DeepEqual(q.From, []string{"ann"}) || !reflect.DeepEqual(q.To, []string{"claude"}) ||
		!reflect.DeepEqual(q.Sessions, []string{"fix-login"}) || !q.HasAttachment || !q.Unread ||
		!q.After.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) || !q.Before.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("filters: %+v", q)
	}
	for _, bad := range []string{"is:read", "has:link", "before:yesterday", "a*", strings.Repeat("w ", MaxTerms+1),
		"from:", "deploy from:", `from:""`, "to: x", "-deploy", `-"build cache"`, "deploy -from:ann"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := Parse("deploy from:"); err == nil || !strings.Contains(err.(*Error).Fix, "from:ann") {
		t.Errorf("from: empty: %v", err)
	}
}

// -word and -"phrase" exclude; a - inside a word does not.
func TestParseExcludes(t *testing.T) {
	q, err := Parse(`deploy -staging -"build cache" -conf* e-mail`)
	if err != nil {
		t.Fatal(err)
	}
	var terms, excl []string
	for _, term := range q.Terms {
		terms = append(terms, strings.Join(term.Tokens, "+"))
	}
	for _, term := range q.Exclude {
		s := strings.Join(term.Tokens, "+")
		if term.Prefix {
			s += "*"
		}
		excl = append(excl, s)
	}
	if !reflect.DeepEqual(terms, []string{"deploy", "e+mail"}) || !reflect.DeepEqual(excl, []string{"staging", "build+cache", "conf*"}) {
		t.Fatalf("terms %q excluded %q", terms, excl)
	}
	m := Compile(q, "ann", nil, CompileOptions{})
	if len(m.Tiers) != 1 || !strings.Contains(m.Tiers[0].FTS, `NOT ({subject body sender} : "staging" OR {subject body sender} : "build cache" OR {subject body sender} : "conf"*)`) ||
		!strings.HasSuffix(m.Tiers[0].TSQuery, ` & !('staging' | ('build' <-> 'cache') | 'conf':*)`) {
		t.Fatalf("match %+v", m)
	}
}

func TestCompileRestrictsToViewer(t *testing.T) {
	q, _ := Parse(`"部署" deplo* from:ann`)
	m := Compile(q, "Claude", nil, CompileOptions{}).Tiers[0]
	if !strings.HasPrefix(m.FTS, `facets : "`+PartyFacet("claude")+`"`) || !strings.Contains(m.FTS, `{subject body sender} : "部 署"`) ||
		!strings.Contains(m.FTS, `"deplo"*`) {
		t.Fatalf("fts %s", m.FTS)
	}
	if want := `'p:636c61756465' & ('f:616e6e') & ('部' <-> '署') & 'deplo':*`; m.TSQuery != want {
		t.Fatalf("tsquery %s, want %s", m.TSQuery, want)
	}
	// Ranked: all terms in the head (the viewer and filters with the head
	// condition alone: the text match follows from it), some of them, none;
	// the last two the whole match and their head condition.
	tiers := Compile(q, "Claude", nil, CompileOptions{Ranked: true}).Tiers
	if len(tiers) != 3 || tiers[0].Score != ScoreAllInHead || tiers[2].Score != ScoreBodyOnly ||
		tiers[0].TSQuery != `'p:636c61756465' & ('f:616e6e') & (('h:部' <-> 'h:署') & 'h:deplo':*)` ||
		tiers[0].FTS != `(facets : "`+PartyFacet("claude")+`" AND facets : ("`+facet(facetFrom, "ann")+`")) AND (head : "`+headMarker+`部 `+headMarker+`署" AND head : "`+headMarker+`deplo"*)` ||
		tiers[1].TSQuery != m.TSQuery+` & (('h:部' <-> 'h:署') | 'h:deplo':*) & !(('h:部' <-> 'h:署') & 'h:deplo':*)` ||
		tiers[2].FTS != "("+m.FTS+`) NOT (head : "`+headMarker+`部 `+headMarker+`署" OR head : "`+headMarker+`deplo"*)` {
		t.Fatalf("tiers %+v", tiers)
	}
	if one, _ := Parse("deploy"); len(Compile(one, "x", nil, CompileOptions{Ranked: true}).Tiers) != 2 {
		t.Fatal("one term has two tiers")
	}
	d := Doc{Subject: "it's", Body: "a b a", Sender: "Ann", From: "ann", To: []string{"claude"}, SessionID: "s1", HasAttachment: true}
	if got := d.TSVector(); got != `'a':6,8 'ann':4 'b':7 'h:ann':4 'h:it':1 'h:s':2 'it':1 's':2 'p:616e6e' 'f:616e6e' 's:7331' 'p:636c61756465' 't:636c61756465' 'a:'` {
		t.Fatalf("tsvector %s", got)
	}
	if _, _, _, head, _ := d.FTSColumns(); head != headMarker+"it "+headMarker+"s "+headSep+" "+headMarker+"ann" {
		t.Fatalf("head %q", head)
	}
}

func TestHighlightMarksMatchesAsPlainSpans(t *testing.T) {
	q, _ := Parse(`部署 deploy*`)
	got := Highlight(q, `<b>请部署</b> Deployed!`)
	want := []Span{{Text: "<b>请"}, {Text: "部署", Match: true}, {Text: "</b> "}, {Text: "Deployed", Match: true}, {Text: "!"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	sn := Snippet(q, strings.Repeat("x ", 100)+"deploy now", 20)
	if sn[0].Text != "…" || !sn[2].Match || sn[2].Text != "deploy" {
		t.Fatalf("snippet %+v", sn)
	}
}

// A body of 1 MiB of distinct words still makes a tsvector PostgreSQL takes
// (under 1 MB) and is cut at MaxIndexedWords.
func TestIndexBoundsLargeBodies(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString("w")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a'+i%26)) + string(rune('a'+(i/26)%26)) + string(rune('a'+(i/676)%26)) + " ")
	}
	d := Doc{Body: b.String(), From: "a"}
	if n := len(d.TSVector()); n >= 1<<20 {
		t.Fatalf("tsvector of %d bytes", n)
	}
	_, body, _, _, _ := d.FTSColumns()
	if n := len(strings.Fields(body)); n != MaxIndexedWords {
		t.Fatalf("%d words indexed", n)
	}
}

// Adjacent Chinese characters of one field are also their pair, in the
// text and the head, at the first one's position; a word token or a
// character beside a non-Chinese token pairs with nothing.
func TestTSVectorIndexesCharacterPairs(t *testing.T) {
	d := Doc{Subject: "数据库", Body: "x 部署v2 据", Sender: "ann", From: "ann"}
	got := d.TSVector()
	for _, want := range []string{`'数据':1 `, `'据库':2 `, `'h:数据':1 `, `'h:据库':2 `, `'部署':8 `, `'据':2,11 `} {
		if !strings.Contains(got+" ", want) {
			t.Errorf("tsvector lacks %s: %s", want, got)
		}
	}
	for _, no := range []string{`'库ann'`, `'署v2'`, `'库x'`, `'h:库部'`, `'v2据'`} {
		if strings.Contains(got, no) {
			t.Errorf("tsvector has %s: %s", no, got)
		}
	}
}

// With pairs, a two-character word is one lexeme, a longer one the
// conjunction of its pairs where it must hold (the tier then verifies) and
// their phrase where it must not; without pairs nothing changes.
func TestCompileAsksForPairs(t *testing.T) {
	q, _ := Parse(`数据库 部署v2 -"服务器"`)
	m := Compile(q, "ann", nil, CompileOptions{Pairs: true}).Tiers[0]
	if want := `'p:616e6e' & ('数据' & '据库') & ('部署' <2> 'v2') & !(('服务' <-> '务器'))`; m.TSQuery != want || !m.Verify {
		t.Fatalf("tsquery %s (verify %v), want %s", m.TSQuery, m.Verify, want)
	}
	if plain := Compile(q, "ann", nil, CompileOptions{}).Tiers[0]; plain.Verify ||
		plain.TSQuery != `'p:616e6e' & ('数' <-> '据' <-> '库') & ('部' <-> '署' <-> 'v2') & !(('服' <-> '务' <-> '器'))` {
		t.Fatalf("without pairs: %+v", plain)
	}
	if two, _ := Parse("部署"); Compile(two, "ann", nil, CompileOptions{Pairs: true}).Tiers[0].TSQuery != `'p:616e6e' & '部署'` ||
		Compile(two, "ann", nil, CompileOptions{Pairs: true}).Tiers[0].Verify {
		t.Fatal("部署 is not the one lexeme")
	}
	q, _ = Parse("数据库 deploy")
	tiers := Compile(q, "ann", nil, CompileOptions{Ranked: true, Pairs: true}).Tiers
	if len(tiers) != 3 || tiers[0].TSQuery != `'p:616e6e' & (('h:数据' & 'h:据库') & 'h:deploy')` ||
		!strings.HasSuffix(tiers[1].TSQuery, ` & (('h:数据' & 'h:据库') | 'h:deploy') & !(('h:数据' <-> 'h:据库') & 'h:deploy')`) ||
		!strings.HasSuffix(tiers[2].TSQuery, ` & !(('h:数据' <-> 'h:据库') | 'h:deploy')`) {
		t.Fatalf("tiers %+v", tiers)
	}
	m2 := Compile(q, "ann", nil, CompileOptions{Ranked: true, Pairs: true})
	for _, c := range []struct {
		tier                  int
		subject, body, sender string
		holds                 bool
	}{
		{0, "数据库 deploy", "", "ann", true},
		{0, "数据，库 Deploy!", "", "ann", true}, // tokens, not characters: punctuation between them is no gap
		{0, "数据 据库 deploy", "数据库", "ann", false},
		{0, "数据库", "deploy", "ann", false},
		{1, "deploy", "请看数据库", "ann", true},
		{1, "deploy", "数据和据库", "ann", false},
		{1, "数据库", "", "deploy", true}, // the sender's name is head text
		{2, "x", "数据库 deploy", "ann", true},
		{2, "x", "数据库", "ann", false},
		{2, "数据", "库 deploy", "ann", false}, // no phrase across fields
	} {
		if got := m2.Holds(c.tier, c.subject, c.body, c.sender); got != c.holds {
			t.Errorf("tier %d %q / %q / %q: holds %v", c.tier, c.subject, c.body, c.sender, got)
		}
	}
}
