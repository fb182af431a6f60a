package httpapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// GET /me/mail/search finds the person's own mails, sent and received, by
// subject, body or sender name, ignoring case, newest first and paged;
// '%' and '_' match only themselves; other people's mails are never found.
func TestSearchFindsOnlyOwnMails(t *testing.T) {
	e := newEnv(t)
	claude := e.agent("claude")
	ann := e.person("ann")
	bob := e.person("bob")
	first, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Subject: "Deploy the Site", Body: "50% of the build_cache"})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := claude.SendMail(e.ctx(), client.SendMailRequest{To: "ann", ReplyTo: first.MailID, Body: "deployed; 50 percent done"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Subject: "deploy bob's thing", Body: "x"}); err != nil {
		t.Fatal(err)
	}
	ids := func(l *client.MailList) string {
		var out []string
		for _, m := range l.Mails {
			out = append(out, m.MailID)
		}
		return strings.Join(out, ",")
	}
	search := func(c *client.Client, q string) *client.MailList {
		t.Helper()
		l, err := c.MeSearch(e.ctx(), client.SearchQuery{Q: q})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return l
	}
	// Subject (any case) and body, newest first, own mails only.
	if got := ids(search(ann, "DEPLOY")); got != reply.MailID+","+first.MailID {
		t.Fatalf("DEPLOY: %s", got)
	}
	// Sender name.
	if got := ids(search(ann, "claud")); got != reply.MailID {
		t.Fatalf("claud: %s", got)
	}
	// Wildcards match themselves.
	if got := ids(search(ann, "50%")); got != first.MailID {
		t.Fatalf("50%%: %s", got)
	}
	if got := ids(search(ann, "build_cache")); got != first.MailID {
		t.Fatalf("build_cache: %s", got)
	}
	if got := ids(search(ann, "d_ploy")); got != "" {
		t.Fatalf("_ matched any character: %s", got)
	}
	if got := ids(search(ann, `\`)); got != "" {
		t.Fatalf(`\ matched: %s`, got)
	}
	// The viewer's state comes along.
	l := search(ann, "deployed")
	if len(l.Mails) != 1 || l.Mails[0].Role != "to" || l.Mails[0].Read {
		t.Fatalf("received mail state %+v", l.Mails)
	}
	// Pages continue with next_cursor.
	p1, err := ann.MeSearch(e.ctx(), client.SearchQuery{Q: "deploy", Limit: 1})
	if err != nil || ids(p1) != reply.MailID || p1.NextCursor == "" {
		t.Fatalf("page 1: %+v, %v", p1, err)
	}
	p2, err := ann.MeSearch(e.ctx(), client.SearchQuery{Q: "deploy", Limit: 1, Cursor: p1.NextCursor})
	if err != nil || ids(p2) != first.MailID {
		t.Fatalf("page 2: %+v, %v", p2, err)
	}
	// Bad input names the field.
	for q, field := range map[string]string{"": "q", "   ": "q", strings.Repeat("x", 201): "q"} {
		_, err := ann.MeSearch(e.ctx(), client.SearchQuery{Q: q})
		if ae := wantStatus(t, err, 400, ""); ae.Body.Field != field {
			t.Errorf("q=%q: %+v", q, ae.Body)
		}
	}
	_, err = ann.MeSearch(e.ctx(), client.SearchQuery{Q: "x", Cursor: "nope"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "cursor" {
		t.Errorf("cursor: %+v", ae.Body)
	}
	k, err := ann.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "t", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	status, body, _ := e.raw("GET", "/api/v1/me/mail/search?q="+url.QueryEscape("caf\xe9"), k.KeyToken, "")
	if status != 400 || !strings.Contains(body, `"invalid_utf8"`) || !strings.Contains(body, `"field":"q"`) {
		t.Errorf("invalid UTF-8 q: %d %s", status, body)
	}
	// Agents have no person's mailbox.
	_, err = claude.MeSearch(e.ctx(), client.SearchQuery{Q: "deploy"})
	wantStatus(t, err, 403, "person_only")
}
