package httpapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// GET /me/mail/search and /mail/search find the caller's own mails, sent
// and received, by words, Chinese characters, phrases, prefixes and
// filters; ranked and paged; highlighted as plain-text spans; other
// people's and agents' mails are never found.
func TestSearchFindsOnlyOwnMails(t *testing.T) {
	e := newEnv(t)
	claude := e.agent("claude")
	codex := e.agent("codex")
	ann := e.person("ann")
	bob := e.person("bob")
	first, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Subject: "Deploy the Site", Body: "请把网站部署到生产环境 <b>now</b>, build cache first"})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := claude.SendMail(e.ctx(), client.SendMailRequest{To: "ann", ReplyTo: first.MailID, Body: "deployed; the build cache was cold. 部署完成"})
	if err != nil {
		t.Fatal(err)
	}
	bobs, err := bob.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Subject: "deploy bob's thing 部署", Body: "secret build cache"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "codex@/srv.new", Subject: "lunch", Body: "Café at noon?"}); err != nil {
		t.Fatal(err)
	}
	ids := func(l *client.SearchResults) string {
		var out []string
		for _, h := range l.Hits {
			out = append(out, h.Mail.MailID)
		}
		return strings.Join(out, ",")
	}
	search := func(c *client.Client, q string) *client.SearchResults {
		t.Helper()
		var l *client.SearchResults
		var err error
		if c == claude || c == codex {
			l, err = c.SearchMail(e.ctx(), client.SearchQuery{Q: q})
		} else {
			l, err = c.MeSearch(e.ctx(), client.SearchQuery{Q: q})
		}
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return l
	}
	both := reply.MailID + "," + first.MailID
	for q, want := range map[string]string{
		"DEPLOY":          both,                              // a word, any case (the reply's subject is "Re: Deploy the Site")
		"deploy*":         both,                              // the reply also says "deployed": ranked first
		"部署":              reply.MailID + "," + first.MailID, // two Chinese characters inside longer text
		"生产":              first.MailID,
		"部署 deploy*":      both,
		`"build cache"`:   both,
		`"cache build"`:   "",
		"from:claude":     reply.MailID,
		"to:claude cache": first.MailID,
		"is:unread":       reply.MailID,
		"secret":          "", // bob's mail
		"bob":             "",
		"claude":          reply.MailID, // sender name
	} {
		if got := ids(search(ann, q)); got != want {
			t.Errorf("ann %q: %s, want %s", q, got, want)
		}
	}
	if got := search(ann, "CAFÉ"); len(got.Hits) != 1 || got.Hits[0].Mail.Subject != "lunch" {
		t.Errorf("CAFÉ: %+v", got)
	}
	alias := search(ann, "生产").Hits[0].Mail.SessionAlias
	if got := ids(search(ann, "session:"+alias+" cache")); got != both {
		t.Errorf("session:%s: %s", alias, got)
	}
	if got := ids(search(ann, "session:no-such-session cache")); got != "" {
		t.Errorf("unknown session: %s", got)
	}
	// Agents: their own mail only.
	if got := search(claude, "部署"); len(got.Hits) != 3 || got.Hits[0].Mail.MailID != bobs.MailID {
		t.Errorf("claude 部署 (bob's subject match first): %s", ids(got))
	}
	if got := ids(search(codex, "deploy*")); got != "" {
		t.Errorf("codex found others' mail: %s", got)
	}
	if got := ids(search(codex, "cafe")); got == "" {
		t.Errorf("codex does not find its own mail")
	}
	// Highlights are plain-text spans: the body's markup stays text.
	hit := search(ann, "生产").Hits[0]
	var marked, text string
	for _, s := range hit.Snippet {
		text += s.Text
		if s.Match {
			marked += s.Text
		}
	}
	if marked != "生产" || !strings.Contains(text, "<b>now</b>") {
		t.Errorf("snippet %+v", hit.Snippet)
	}
	if hit.Subject[0].Text != "Deploy the Site" || hit.Subject[0].Match {
		t.Errorf("subject spans %+v", hit.Subject)
	}
	// Pages continue with next_cursor, in both orders.
	for _, order := range []string{client.SearchRelevance, client.SearchNewest} {
		p1, err := ann.MeSearch(e.ctx(), client.SearchQuery{Q: "cache", Limit: 1, Sort: order})
		if err != nil || len(p1.Hits) != 1 || p1.NextCursor == "" || p1.Sort != order {
			t.Fatalf("%s page 1: %+v, %v", order, p1, err)
		}
		p2, err := ann.MeSearch(e.ctx(), client.SearchQuery{Q: "cache", Limit: 1, Sort: order, Cursor: p1.NextCursor})
		if err != nil || len(p2.Hits) != 1 || p2.NextCursor != "" || ids(p1)+","+ids(p2) != both && ids(p2)+","+ids(p1) != both {
			t.Fatalf("%s page 2: %+v, %v", order, p2, err)
		}
	}
	// Bad input names the field.
	for q, field := range map[string]string{"": "q", "   ": "q", strings.Repeat("x", 201): "q", "is:read": "q",
		"before:yesterday": "q", "a*": "q", "!!!": "q"} {
		_, err := ann.MeSearch(e.ctx(), client.SearchQuery{Q: q})
		if ae := wantStatus(t, err, 400, ""); ae.Body.Field != field {
			t.Errorf("q=%q: %+v", q, ae.Body)
		}
	}
	for _, c := range []client.SearchQuery{{Q: "x", Cursor: "nope"}, {Q: "x", Cursor: "n5"}, {Q: "x", Sort: "oldest"}} {
		_, err = ann.MeSearch(e.ctx(), c)
		if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "cursor" && ae.Body.Field != "sort" {
			t.Errorf("%+v: %+v", c, ae.Body)
		}
	}
	k, err := ann.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "t", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	status, body, _ := e.raw("GET", "/api/v1/me/mail/search?q="+url.QueryEscape("caf\xe9"), k.KeyToken, "")
	if status != 400 || !strings.Contains(body, `"invalid_utf8"`) || !strings.Contains(body, `"field":"q"`) {
		t.Errorf("invalid UTF-8 q: %d %s", status, body)
	}
	// Agents have no person's mailbox, people no agent's.
	_, err = claude.MeSearch(e.ctx(), client.SearchQuery{Q: "deploy"})
	wantStatus(t, err, 403, "person_only")
}

// A Chinese word of three characters finds exactly the mails that hold it,
// on both databases: PostgreSQL's index answers the conjunction of its
// character pairs, and a mail with the pairs apart (数据…据库) is checked
// and passed over, in every tier and across pages; excluding the word
// keeps such a mail.
func TestSearchChinesePhraseFindsOnlyTheWord(t *testing.T) {
	e := newEnv(t)
	claude := e.agent("claude")
	ann := e.person("ann")
	send := func(subject, body string) string {
		t.Helper()
		m, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Subject: subject, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return m.MailID
	}
	inBody := send("迁移", "数据库已经迁移")
	apart := send("数据，据库", "数据和据库不是一个词") // both pairs in subject and body, the word in neither
	var apartMore []string
	for i := 0; i < 3; i++ {
		apartMore = append(apartMore, send("据库", "数据 x 据库"))
	}
	inSubject := send("数据库备份", "今晚")
	bodyOfApart := send("数据，据库", "请检查数据库") // not in its subject, in its body
	ids := func(l *client.SearchResults) string {
		var out []string
		for _, h := range l.Hits {
			out = append(out, h.Mail.MailID)
		}
		return strings.Join(out, ",")
	}
	for q, want := range map[string]string{
		"数据库":            inSubject + "," + bodyOfApart + "," + inBody, // subject first, then newest first
		`"数据库"`:          inSubject + "," + bodyOfApart + "," + inBody,
		"数据库 -迁移":        inSubject + "," + bodyOfApart,
		"据库 -数据库":        strings.Join([]string{apartMore[2], apartMore[1], apartMore[0], apart}, ","),
		"数据 据库 -\"数据库\"": apart + "," + strings.Join([]string{apartMore[2], apartMore[1], apartMore[0]}, ","),
	} {
		got, err := claude.SearchMail(e.ctx(), client.SearchQuery{Q: q})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if ids(got) != want {
			t.Errorf("%q: %s, want %s", q, ids(got), want)
		}
	}
	// Page by page, one hit each, in both orders: every mail with the word
	// once, none without it.
	for _, order := range []string{client.SearchRelevance, client.SearchNewest} {
		var seen []string
		cursor := ""
		for page := 0; ; page++ {
			if page > 10 {
				t.Fatalf("%s: more than 10 pages", order)
			}
			got, err := claude.SearchMail(e.ctx(), client.SearchQuery{Q: "数据库", Limit: 1, Sort: order, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, ids(got))
			if cursor = got.NextCursor; cursor == "" {
				break
			}
		}
		want := inSubject + "," + bodyOfApart + "," + inBody
		if order == client.SearchNewest {
			want = bodyOfApart + "," + inSubject + "," + inBody
		}
		if strings.Join(seen, ",") != want {
			t.Errorf("%s pages: %q, want %s", order, seen, want)
		}
	}
}
