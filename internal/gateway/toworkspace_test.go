package gateway

import (
	"encoding/json"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestToWorkspaceIsThePathWrittenForThatRecipient checks W-4: the
// new_mail event's to_workspace (and self_address) of each recipient, to
// and cc alike, is the path of that recipient's own address in this mail,
// not the path it first joined the session at; an address without a path
// (a reply by bare name) falls back to the participant's path.
func TestToWorkspaceIsThePathWrittenForThatRecipient(t *testing.T) {
	e := newServiceEnv(t)
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "bot2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	first, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/w1.new", Cc: "bot2@/w1", Subject: "paths", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	alias := first.SessionAlias
	r, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/w5." + alias, Cc: "bot2@/w9/sub/." + alias, Subject: "moved", Body: "b"})
	if err != nil || r.SessionID != first.SessionID {
		t.Fatalf("second mail = %+v, %v", r, err)
	}
	event := func(name, mailID string) client.NewMailEvent {
		t.Helper()
		for _, row := range e.events(name, client.EventNewMail) {
			var ev client.NewMailEvent
			if err := json.Unmarshal(row.Data, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.MailID == mailID {
				return ev
			}
		}
		t.Fatalf("no new_mail event of %s for %s", mailID, name)
		return client.NewMailEvent{}
	}
	if ev := event("bot", r.MailID); ev.Role != "to" || ev.ToWorkspace != "/w5" || ev.SelfAddress != "bot@/w5."+alias {
		t.Errorf("to event = %+v, want to_workspace /w5", ev)
	}
	if ev := event("bot2", r.MailID); ev.Role != "cc" || ev.ToWorkspace != "/w9/sub" || ev.SelfAddress != "bot2@/w9/sub."+alias {
		t.Errorf("cc event = %+v, want to_workspace /w9/sub", ev)
	}
	// The mail as read keeps the same per-recipient path.
	m, err := e.svc.GetMail(e.ctx, e.bot, r.MailID)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range m.Recipients {
		if rc.Name == "bot2" && (rc.Address != "bot2@/w9/sub."+alias || rc.Workspace != "/w9/sub") {
			t.Errorf("stored cc recipient = %+v", rc)
		}
	}
	// A reply from bot2 to bot by bare name has no path: bot's path in the
	// session is used.
	reply, err := e.svc.Send(e.ctx, &Principal{Kind: PrincipalAgent, Name: "bot2", AuthKind: AuthAgentKey},
		client.SendMailRequest{To: "bot", ReplyTo: r.MailID, Body: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := event("bot", reply.MailID); ev.ToWorkspace != "/w1" {
		t.Errorf("reply by bare name: to_workspace %q, want the participant's /w1", ev.ToWorkspace)
	}
}
