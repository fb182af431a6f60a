package gateway

import (
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// TestDefaultSessionResolution walks a sequence of sends and checks, step
// by step, which session an address without a session part lands in (seed
// 000 section 0): for an agent, the most recent session whose agent is that
// agent at that path and that the sender takes part in; for a person, the
// most recent session whose agent is the sending agent with the person in
// it, or between two people the most recent people-only session; a reply
// stays in the replied mail's session; otherwise a new session.
func TestDefaultSessionResolution(t *testing.T) {
	e := newServiceEnv(t)
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "bot2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	bot2 := &Principal{Kind: PrincipalAgent, Name: "bot2", AuthKind: AuthAgentKey}
	who := map[string]*Principal{"alice": e.alice, "bob": e.bob, "carol": e.carol, "bot": e.bot, "bot2": bot2}

	// Sessions are named by the step that opened them; replyTo names the
	// step whose mail is answered; want is the step whose session the mail
	// must land in ("" = a new session).
	steps := []struct {
		name    string
		from    string
		to      string
		cc      string
		replyTo string
		want    string
	}{
		{name: "bot2-w1", from: "alice", to: "bot2@/w1.new", cc: "bot@/w1", want: ""},
		// bot only takes part (cc) in bot2's session: not bot's default.
		{name: "bot-first", from: "alice", to: "bot@/w1", want: ""},
		{name: "bot-again", from: "alice", to: "bot@/w1", want: "bot-first"},
		{name: "bot-w1-new", from: "alice", to: "bot@/w1.new", want: ""},
		// The most recently active one wins.
		{name: "bot-latest", from: "alice", to: "bot@/w1/", want: "bot-w1-new"},
		// Another path is another default session.
		{name: "bot-w2", from: "alice", to: "bot@/w2", want: ""},
		// bob takes part in none of bot's sessions at /w1.
		{name: "bob-to-bot", from: "bob", to: "bot@/w1", want: ""},
		// An agent sender: the recipient agent's session that bot takes part in.
		{name: "bot-to-bot2", from: "bot", to: "bot2@/w1", want: "bot2-w1"},
		// Agent to person: the most recent session whose agent is the sender
		// with the person in it (bot2's session is more recent but is not bot's).
		{name: "bot-to-alice", from: "bot", to: "alice", want: "bot-w2"},
		{name: "bot2-to-alice", from: "bot2", to: "alice", want: "bot2-w1"},
		// carol takes part in no session of bot.
		{name: "bot-to-carol", from: "bot", to: "carol", want: ""},
		// Person to person: sessions with an agent are never the default.
		{name: "alice-to-bob", from: "alice", to: "bob", cc: "", want: ""},
		{name: "alice-to-bob-again", from: "alice", to: "bob", want: "alice-to-bob"},
		{name: "bob-to-alice", from: "bob", to: "alice", want: "alice-to-bob"},
		{name: "alice-to-carol", from: "alice", to: "carol", want: ""},
		// A reply without a session part stays in the replied mail's session,
		// even when another session would be the default.
		{name: "reply-old", from: "bot", to: "alice", replyTo: "bot-first", want: "bot-first"},
		{name: "reply-person", from: "bob", to: "alice", replyTo: "alice-to-bob", want: "alice-to-bob"},
	}
	sessions := map[string]string{}
	mails := map[string]string{}
	for _, st := range steps {
		e.clock.Advance(time.Second)
		req := client.SendMailRequest{To: st.to, Cc: st.cc, Subject: "step " + st.name, Body: "b"}
		if st.replyTo != "" {
			req.ReplyTo = mails[st.replyTo]
		}
		r, err := e.svc.Send(e.ctx, who[st.from], req)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		mails[st.name] = r.MailID
		sessions[st.name] = r.SessionID
		if st.want == "" {
			if !r.NewSession {
				t.Errorf("%s: %s -> %s landed in an existing session, want a new one", st.name, st.from, st.to)
			}
			for name, id := range sessions {
				if name != st.name && id == r.SessionID {
					t.Errorf("%s: landed in the session of %s, want a new one", st.name, name)
				}
			}
			continue
		}
		if r.NewSession || r.SessionID != sessions[st.want] {
			t.Errorf("%s: %s -> %s landed in %s (new %v), want the session of %s", st.name, st.from, st.to,
				r.SessionID, r.NewSession, st.want)
		}
		// The step's own name now means the session it used.
		sessions[st.name] = r.SessionID
	}
	// An agent's new session with a person belongs to that agent.
	row, err := e.svc.Read().GetSession(e.ctx, sessions["bot-to-carol"])
	if err != nil || row.AgentName != "bot" {
		t.Fatalf("session opened by bot for carol = %+v, %v", row, err)
	}
}

// TestResolvePreviewsTheDefaultSession checks that GET /address/resolve
// follows the same default-session rule as sending.
func TestResolvePreviewsTheDefaultSession(t *testing.T) {
	e := newServiceEnv(t)
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "bot2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot2@/w1.new", Cc: "bot@/w1, bob", Subject: "s", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"bot@/w1", "bob"} {
		res, err := e.svc.Resolve(e.ctx, e.alice, raw)
		if err != nil {
			t.Fatal(err)
		}
		if res.Exists {
			t.Errorf("resolve %s: exists with session %s, want no default session yet", raw, res.SessionID)
		}
	}
}
