package httpapi_test

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestLastEventIDBeyondTheEndIsClamped checks that a Last-Event-ID larger
// than any id in the event log (a database restored from a backup, or a
// client's stale state) is clamped to the log's end: the next new event
// arrives instead of the stream staying silent until the ids catch up.
func TestLastEventIDBeyondTheEndIsClamped(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	s, err := a.Stream(e.ctx(), client.StreamOptions{LastEventID: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: "after the clamp", Body: "x"}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, s)
	var m client.NewMailEvent
	if err := jsonUnmarshal(ev.Data, &m); err != nil || m.Subject != "after the clamp" {
		t.Fatalf("event = %s %s (%v)", ev.Type, ev.Data, err)
	}
}
