package httpapi_test

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// An agent's path must be absolute and present (except with an alias or in
// a reply); a person has no path. Each refusal is a 400 naming the field,
// nothing is stored, and the address preview answers the same.
func TestAddressPathRules(t *testing.T) {
	e := newEnv(t)
	e.agent("claude")
	ann := e.person("ann")
	cases := []struct {
		req        client.SendMailRequest
		code       string
		field      string
		suggestion string
	}{
		{client.SendMailRequest{To: "claude@tmp/proj.new"}, "relative_path", "to", "use an absolute path, e.g. claude@/tmp/proj"},
		{client.SendMailRequest{To: "claude@~/proj"}, "relative_path", "to", "use an absolute path"},
		{client.SendMailRequest{To: "claude@.new"}, "missing_path", "to", "claude@/path/to/workspace.new"},
		{client.SendMailRequest{To: "claude@"}, "missing_path", "to", "claude@/path/to/workspace"},
		{client.SendMailRequest{To: "claude"}, "missing_path", "to", "claude@/path/to/workspace"},
		{client.SendMailRequest{To: "ann@/tmp"}, "person_path", "to", "people are addressed as ann or ann@.alias"},
		{client.SendMailRequest{To: "ann@/tmp.new"}, "person_path", "to", "people are addressed as ann or ann@.alias"},
		{client.SendMailRequest{To: "claude@/srv.new", Cc: "ann@/home/ann"}, "person_path", "cc", "people are addressed as ann"},
		{client.SendMailRequest{To: "ann", Cc: "claude@srv"}, "relative_path", "cc", "claude@/tmp/proj"},
	}
	for _, c := range cases {
		c.req.Subject, c.req.Body = "s", "b"
		_, err := e.admin.MeSend(e.ctx(), c.req)
		ae := wantStatus(t, err, 400, c.code)
		if ae.Body.Field != c.field || !strings.Contains(ae.Body.Suggestion, c.suggestion) {
			t.Errorf("%+v: %+v", c.req, ae.Body)
		}
	}
	if n := e.count("mails"); n != 0 {
		t.Fatalf("%d mails stored", n)
	}
	if n := e.count("mail_sessions"); n != 0 {
		t.Fatalf("%d sessions stored", n)
	}
	_, err := e.admin.Resolve(e.ctx(), "claude@tmp/proj")
	if ae := wantStatus(t, err, 400, "relative_path"); ae.Body.Field != "address" {
		t.Fatalf("resolve: %+v", ae.Body)
	}
	_, err = e.admin.Resolve(e.ctx(), "ann@/tmp")
	wantStatus(t, err, 400, "person_path")

	// Allowed: absolute paths, a bare person name, an alias without a path,
	// and a reply that names the agent without a path.
	first, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv/app.new", Subject: "work", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@." + first.SessionAlias, Subject: "more", Body: "x"}); err != nil {
		t.Fatalf("alias without a path: %v", err)
	}
	if _, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude", ReplyTo: first.MailID, Body: "x"}); err != nil {
		t.Fatalf("reply to a bare agent name: %v", err)
	}
	if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "ann", Subject: "hello", Body: "x"}); err != nil {
		t.Fatalf("bare person name: %v", err)
	}
}

// round_budget sets the budget of the session a mail opens; with a mail
// that lands in an existing session it is a 400 naming round_budget, and
// nothing is stored.
func TestRoundBudgetForAnExistingSessionIs400(t *testing.T) {
	e := newEnv(t)
	e.agent("claude")
	ann := e.person("ann")
	first, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Subject: "work", Body: "x", RoundBudget: client.Int(3)})
	if err != nil || first.BudgetMax != 3 {
		t.Fatalf("first send: %+v, %v", first, err)
	}
	before := e.count("mails")
	for _, req := range []client.SendMailRequest{
		{To: "claude@/srv", Subject: "default session", Body: "x", RoundBudget: client.Int(9)},
		{To: "claude@." + first.SessionAlias, Subject: "alias", Body: "x", RoundBudget: client.Int(9)},
		{To: "claude", ReplyTo: first.MailID, Body: "reply", RoundBudget: client.Int(0)},
	} {
		_, err := ann.MeSend(e.ctx(), req)
		ae := wantStatus(t, err, 400, "round_budget_existing_session")
		if ae.Body.Field != "round_budget" || !strings.Contains(ae.Body.Suggestion, "budget of the existing conversation") ||
			!strings.Contains(ae.Body.Error, first.SessionID) {
			t.Errorf("%+v: %+v", req, ae.Body)
		}
	}
	if n := e.count("mails"); n != before {
		t.Fatalf("%d mails stored by refused sends", n-before)
	}
	s, err := ann.MeSession(e.ctx(), first.SessionID)
	if err != nil || s.BudgetMax != 3 {
		t.Fatalf("session budget changed: %+v, %v", s, err)
	}
	// Without round_budget the mail goes in; with .new a budget applies.
	if _, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv", Subject: "more", Body: "x"}); err != nil {
		t.Fatal(err)
	}
	second, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Subject: "other", Body: "x", RoundBudget: client.Int(0)})
	if err != nil || second.BudgetMax != 0 || !second.NewSession {
		t.Fatalf(".new with a budget: %+v, %v", second, err)
	}
}
