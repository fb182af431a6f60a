package gateway

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestCcSessionPartNamesTheMailsSession checks the session part of cc
// addresses: none is fine, an alias of the mail's own session is fine, any
// other alias (a typo, or another session) is 404 alias_not_found with
// field cc, and .new is 400 with field cc; a refused mail stores nothing,
// not even the session it would have opened.
func TestCcSessionPartNamesTheMailsSession(t *testing.T) {
	e := newServiceEnv(t)
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "bot2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	s := e.session() // alice -> bot@/work/proj.new cc bob
	other, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/other.new", Subject: "other", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	var sessions int
	count := func() (int, int) {
		t.Helper()
		if err := e.svc.Read().QueryRow(e.ctx, `SELECT COUNT(*) FROM mail_sessions`).Scan(&sessions); err != nil {
			t.Fatal(err)
		}
		return e.countMails("1=1"), sessions
	}
	mails0, sessions0 := count()
	refused := []struct {
		to, cc string
		kind   Kind
		code   string
	}{
		{"bot@/work/proj.new", "bot2@/w1.typo", KindNotFound, "alias_not_found"},
		{"bot@/work/proj", "bot2@/w1.typo", KindNotFound, "alias_not_found"},
		{"bot@/work/proj." + s.SessionAlias, "bob@." + other.SessionAlias, KindNotFound, "alias_not_found"},
		{"bot@/work/proj", "bob, bot2@/w1.new", KindInvalid, "invalid_field"},
		{"bot@/work/proj", "bob@.new", KindInvalid, "invalid_field"},
	}
	for _, c := range refused {
		_, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: c.to, Cc: c.cc, Subject: "s", Body: "b"})
		wantCode(t, err, c.kind, c.code)
		if ae := AsError(err); ae.Field != "cc" || ae.Suggestion == "" {
			t.Errorf("to %s cc %s: %+v, want field cc with a suggestion", c.to, c.cc, ae)
		}
	}
	if m, n := count(); m != mails0 || n != sessions0 {
		t.Fatalf("refused mails stored %d mails and %d sessions", m-mails0, n-sessions0)
	}
	// The mail's own alias in cc is fine.
	r, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj." + s.SessionAlias,
		Cc: "bot2@/w1." + s.SessionAlias + ", bob@." + s.SessionAlias, Subject: "s", Body: "b"})
	if err != nil || r.SessionID != s.SessionID {
		t.Fatalf("cc with the mail's own alias = %+v, %v", r, err)
	}
}
