package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// nextNewMail waits for the next event of a stream and answers it as a
// new_mail event (failing on any other type).
func nextNewMail(t *testing.T, s *client.Stream) client.NewMailEvent {
	t.Helper()
	ev := nextEvent(t, s)
	var nm client.NewMailEvent
	if ev.Type != client.EventNewMail || json.Unmarshal(ev.Data, &nm) != nil {
		t.Fatalf("event %s %s, want new_mail", ev.Type, ev.Data)
	}
	return nm
}

// Every open stream of a person gets a new_mail event with role "from" for
// each mail that person sends or forwards, so other tabs show it live; an
// agent's stream never gets one for its own mail.
func TestSendersStreamsGetTheirSentMail(t *testing.T) {
	e := newEnv(t)
	claude := e.agent("claude")
	ann := e.person("ann")
	e.person("bob")
	tab1, err := ann.Stream(e.ctx(), client.StreamOptions{People: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tab1.Close()
	tab2, err := ann.Stream(e.ctx(), client.StreamOptions{People: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tab2.Close()
	agentStream, err := claude.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer agentStream.Close()

	sent, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Cc: "bob", Subject: "build it", Body: "please"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range []*client.Stream{tab1, tab2} {
		nm := nextNewMail(t, tab)
		if nm.MailID != sent.MailID || nm.Role != "from" || nm.FromName != "ann" || nm.SessionAlias != sent.SessionAlias ||
			nm.SelfAddress != "ann@."+sent.SessionAlias || nm.ReplyAddress != "claude@/srv."+sent.SessionAlias || nm.ToWorkspace != "" {
			t.Fatalf("sender's event %+v", nm)
		}
	}
	if nm := nextNewMail(t, agentStream); nm.MailID != sent.MailID || nm.Role != "to" || nm.ToWorkspace != "/srv" {
		t.Fatalf("agent's event %+v", nm)
	}

	// The agent's reply reaches ann as "to"; the agent gets nothing for it.
	reply, err := claude.SendMail(e.ctx(), client.SendMailRequest{To: "ann", ReplyTo: sent.MailID, Body: "done"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range []*client.Stream{tab1, tab2} {
		if nm := nextNewMail(t, tab); nm.MailID != reply.MailID || nm.Role != "to" {
			t.Fatalf("reply event %+v", nm)
		}
	}
	// A forward is a sent mail too.
	fwd, err := ann.MeForward(e.ctx(), reply.MailID, client.ForwardRequest{To: "bob", Body: "fyi"})
	if err != nil {
		t.Fatal(err)
	}
	if nm := nextNewMail(t, tab1); nm.MailID != fwd.MailID || nm.Role != "from" {
		t.Fatalf("forward event %+v", nm)
	}
	next, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv", Subject: "more", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if nm := nextNewMail(t, agentStream); nm.MailID != next.MailID || nm.Role != "to" {
		t.Fatalf("the agent's next event is %+v, want ann's next mail (nothing for its own reply)", nm)
	}
	// A person writing to themselves gets one event, as recipient.
	self, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "ann", Subject: "note to self", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if nm := nextNewMail(t, tab2); nm.MailID != fwd.MailID {
		t.Fatalf("tab2: %+v", nm)
	}
	if nm := nextNewMail(t, tab2); nm.MailID != next.MailID || nm.Role != "from" {
		t.Fatalf("tab2: %+v", nm)
	}
	if nm := nextNewMail(t, tab2); nm.MailID != self.MailID || nm.Role != "to" {
		t.Fatalf("note to self: %+v", nm)
	}
	if n := countEvents(t, e, "ann", self.MailID); n != 1 {
		t.Fatalf("%d events for the note to self", n)
	}
}

func countEvents(t *testing.T, e *env, recipient, mailID string) int {
	t.Helper()
	rows, err := e.st.Read().RecipientEvents(e.ctx(), recipient, 0, 1<<62, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		var nm client.NewMailEvent
		if r.Type == client.EventNewMail && json.Unmarshal(r.Data, &nm) == nil && nm.MailID == mailID {
			n++
		}
	}
	return n
}
