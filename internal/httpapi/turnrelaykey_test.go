package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// A relay key the agent used in another session must not let a turn
// token learn that session: replaying it with the token answered the
// stored relay as a duplicate, with that mail's id and its session's id,
// alias and budget. Outside the token's session it is refused as a key
// already used (409 relay_key_used, as for a permission request's key),
// naming nothing of the other session; inside, the replay still answers
// the stored mail.
func TestTurnTokenRelayKeyReplayNamesNoOtherSession(t *testing.T) {
	f := newTurnFixture(t)
	ctx := f.e.ctx()
	summary := func(c *client.Client, replyTo, key string) (*client.SendMailResponse, error) {
		return c.SendMail(ctx, client.SendMailRequest{To: "carol", ReplyTo: replyTo, Relay: client.RelaySummary, RelayKey: key, Body: "done"})
	}
	inB, err := summary(f.agent, f.b.MailID, "turn:platform-b:answer")
	if err != nil {
		t.Fatal(err)
	}
	res, err := summary(f.tt, f.a.MailID, "turn:platform-b:answer")
	if err == nil {
		t.Fatalf("the turn token of session a replayed b's relay key and got %+v (b's mail %s, session %s)", res, inB.MailID, f.b.SessionID)
	}
	ae := wantStatus(t, err, http.StatusConflict, "relay_key_used")
	if ae.Body.Error == "" || ae.Body.Suggestion == "" {
		t.Errorf("the 409 should say what happened and what to do: %+v", ae.Body)
	}

	inA, err := summary(f.tt, f.a.MailID, "turn:platform-a:answer")
	if err != nil {
		t.Fatal(err)
	}
	again, err := summary(f.tt, f.a.MailID, "turn:platform-a:answer")
	if err != nil || again.Status != "duplicate_relay" || again.MailID != inA.MailID || again.SessionID != f.a.SessionID {
		t.Fatalf("the replay in the token's own session = %+v, %v; want the stored relay %s", again, err, inA.MailID)
	}
}
