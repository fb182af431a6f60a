package bridge_test

import (
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
)

// A new_mail event with role "from" (a sender's own copy, which the gateway
// gives people's streams only) never starts a turn.
func TestOwnSentMailEventNeverStartsATurn(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	dir := workdir(t, "proj")
	h := startBridge(t, gw, fake, nil)
	h.waitGW("the stream", func() bool { return len(gw.subscribe) > 0 })
	// The agent's own mail is in no inbox: only the event carries it.
	gw.mu.Lock()
	gw.publishLocked(client.EventNewMail, client.NewMailEvent{MailID: "mail_own", SessionID: "ses_x", FromName: "bot", FromKind: "agent",
		Subject: "own copy", MailType: client.MailTypeNormal, Role: "from", ToWorkspace: dir})
	gw.changed()
	gw.mu.Unlock()
	next := gw.deliverMail(mailOpts{from: "alice", subject: "real work", workspace: dir, push: true})
	h.waitTurns("the turn of the real mail", turnsDone(1))
	h.waitLog("ignoring a new_mail event of the agent's own mail", 1)
	turns := fake.Turns()
	if len(turns) != 1 || turns[0].Req.ToolEnv["AGENTMAIL_MAIL_ID"] != next {
		t.Fatalf("turns %+v, want only the one for %s", turns, next)
	}
}
