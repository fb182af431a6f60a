package httpapi_test

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestOnlyTheSessionsAgentSyncsAndBindsIt checks that an agent taking part
// in another agent's session only as a cc recipient can neither rename it
// (POST /sessions/{id}/sync) nor bind its platform session (PUT
// /sessions/{id}/platform-session): both are 404 session_not_found and
// change nothing; the session's own agent can do both.
func TestOnlyTheSessionsAgentSyncsAndBindsIt(t *testing.T) {
	e := newEnv(t)
	owner := e.agent("pi")
	cc := e.agent("dsh")
	r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "pi@/w.new", Cc: "dsh@/w", Subject: "the task", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// dsh takes part and can read the session...
	if _, err := cc.GetSession(e.ctx(), r.SessionID); err != nil {
		t.Fatalf("cc participant reading the session: %v", err)
	}
	// ...but cannot name or bind it.
	_, err = cc.SyncSession(e.ctx(), r.SessionID, client.SyncSessionRequest{Alias: "hijacked", Title: "Hijacked"})
	wantStatus(t, err, 404, "session_not_found")
	_, err = cc.BindPlatformSession(e.ctx(), r.SessionID, client.BindPlatformSessionRequest{PlatformSessionID: "ses_other"})
	wantStatus(t, err, 404, "session_not_found")
	s, err := owner.GetSession(e.ctx(), r.SessionID)
	if err != nil || s.Alias != r.SessionAlias || s.Subject != "the task" || s.PlatformSessionID != "" {
		t.Fatalf("session after the cc agent's attempts = %+v, %v", s, err)
	}
	// The session's agent can.
	if s, err := owner.SyncSession(e.ctx(), r.SessionID, client.SyncSessionRequest{Alias: "witty-planet", Title: "Witty"}); err != nil || s.Alias != "witty-planet" {
		t.Fatalf("owner sync = %+v, %v", s, err)
	}
	if s, err := owner.BindPlatformSession(e.ctx(), r.SessionID, client.BindPlatformSessionRequest{PlatformSessionID: "ses_1"}); err != nil || s.PlatformSessionID != "ses_1" {
		t.Fatalf("owner bind = %+v, %v", s, err)
	}
}
