package gateway

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// The mail that records a decision says in words what the gateway
// understood and why (trust boundary, point 10): the gateway's decision
// mail for an API decision, and the person's own reply, which becomes the
// decision mail, ends with the gateway's reading.
func TestDecisionMailSaysWhatWasUnderstoodAndWhy(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	cases := []struct {
		reply, key string
		approved   bool
		want       []string
	}{
		{"yes, no need to ask again\nthanks", "words-1", false,
			[]string{`— agentmail: "yes, no need to ask again" was understood as a denial: the first line starts with "yes" but also says "no"`}},
		{"approve? NO!", "words-2", false, []string{`"approve? NO!" was understood as a denial`, `also says "no"`}},
		{"同意?不", "words-3", false, []string{`also says "不"`}},
		{"sure", "words-4", false, []string{`the first word "sure" is not an approval word`, "to approve, start the first line with"}},
		{"同意，谢谢", "words-5", true, []string{`"同意，谢谢" was understood as an approval: the first line starts with "同意"`}},
	}
	for _, c := range cases {
		p := e.request(s.SessionID, c.key)
		r, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot", ReplyTo: p.MailID, Body: c.reply})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID)
		if got.Status == PermissionStatusPending || got.Approved != c.approved || got.DecisionMailID != r.MailID {
			t.Fatalf("reply %q: %+v", c.reply, got)
		}
		m, err := e.svc.GetMail(e.ctx, e.bot, r.MailID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(m.Body, c.reply) {
			t.Errorf("reply %q: the person's text is not kept first: %q", c.reply, m.Body)
		}
		for _, w := range c.want {
			if !strings.Contains(m.Body, w) {
				t.Errorf("reply %q: decision mail %q lacks %q", c.reply, m.Body, w)
			}
		}
	}

	// An API decision: the gateway's own decision mail says it too.
	p := e.request(s.SessionID, "words-api")
	got, err := e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "approve - NOT", Note: "looks risky"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Approved {
		t.Fatalf("\"approve - NOT\" approved: %+v", got)
	}
	m, err := e.svc.GetMail(e.ctx, e.bot, got.DecisionMailID)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Denied.", `The answer "approve - NOT" was understood as a denial: the first line starts with "approve" but also says "not"`, "looks risky"} {
		if !strings.Contains(m.Body, w) {
			t.Errorf("API decision mail %q lacks %q", m.Body, w)
		}
	}
}

// A button's or command's plain "approve" is not read back to the agent as
// "The answer "approve" was …" (issue 18: decision mails read "Approved.
// (approve)"): the verdict says it.
func TestPlainDecisionMailIsTheVerdictAlone(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "plain-1")
	got, err := e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "approve"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.svc.GetMail(e.ctx, e.bot, got.DecisionMailID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Body != "Approved.\n" {
		t.Fatalf("decision mail body = %q, want %q", m.Body, "Approved.\n")
	}
	// Deciding is reading: the decider's copy of the request is read.
	req, err := e.svc.GetMail(e.ctx, e.alice, p.MailID)
	if err != nil {
		t.Fatal(err)
	}
	if !req.Read {
		t.Error("the decided request is still unread for the person who decided it")
	}
}
