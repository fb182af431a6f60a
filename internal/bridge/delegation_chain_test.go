package bridge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// A chain of two delegations over real platforms, each agent with its own bridge and
// scripted model: a person asks A, A delegates to B, B delegates to C. C answers B
// with send_mail; B's answer turn relays into the session A opened, to A; A's turn of
// that relay relays into the person's session. Each level relays into its own origin,
// so the result climbs back to the person; C's and B's own first-turn words go nowhere.

const (
	chainAskedB  = "Asked B."
	chainAskedC  = "Asked C."
	chainAnswer  = "ANSWER-V"
	chainMiddle  = "MIDDLE-FINAL " + chainAnswer
	chainTop     = "TOP-FINAL " + chainAnswer
	chainCFinal  = "C-FINAL-WORDS"
	chainSubjB   = "sub U"
	chainSubjC   = "sub V"
	chainAnswerC = "[answer] V"
)

func TestDelegationChainRelaysEachLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	a, b, c := caseOf(platforms.Claude), caseOf(platforms.Pi), caseOf(platforms.Claude)
	c.agent = "claude2"
	for _, p := range []platformCase{a, b, c} {
		platforms.Require(t, p.platform)
	}
	g := mailrig.StartGateway(t)
	dirA, dirB, dirC := mailrig.Workspace(t, "top"), mailrig.Workspace(t, "middle"), mailrig.Workspace(t, "bottom")
	ar := mailrig.Join(g, a.platform, a.agent,
		scriptedmodel.Rule{Name: "delegate", UserContains: "[chain]", Reply: scriptedmodel.Call(sendMailTool(a),
			map[string]any{"to": b.agent + "@" + dirB + ".new", "subject": chainSubjB, "body": "Please compute U."})},
		scriptedmodel.Rule{Name: "asked", ToolResultFor: sendMailTool(a), Match: mailrig.UserHas("[chain]"), Reply: scriptedmodel.Text(chainAskedB)},
		scriptedmodel.Rule{Name: "read the relay", UserContains: "Re: " + chainSubjB, Reply: scriptedmodel.Call(a.readInbox, map[string]any{})},
		scriptedmodel.Rule{Name: "final", ToolResultFor: a.readInbox, ToolResultContains: chainMiddle, Reply: scriptedmodel.Text(chainTop)},
	)
	br := mailrig.Join(g, b.platform, b.agent,
		scriptedmodel.Rule{Name: "read the answer", UserContains: chainAnswerC, Reply: scriptedmodel.Call(b.readInbox, map[string]any{})},
		scriptedmodel.Rule{Name: "middle final", ToolResultFor: b.readInbox, ToolResultContains: chainAnswer, Reply: scriptedmodel.Text(chainMiddle)},
		scriptedmodel.Rule{Name: "delegate further", UserContains: chainSubjB, Reply: scriptedmodel.Call(sendMailTool(b),
			map[string]any{"to": c.agent + "@" + dirC + ".new", "subject": chainSubjC, "body": "Please compute V."})},
		scriptedmodel.Rule{Name: "asked", ToolResultFor: sendMailTool(b), Match: mailrig.UserHas(chainSubjB), Reply: scriptedmodel.Text(chainAskedC)},
	)
	cr := mailrig.Join(g, c.platform, c.agent,
		scriptedmodel.Rule{Name: "answer", UserContains: chainSubjC,
			Respond: func(q *scriptedmodel.Request) scriptedmodel.Reply {
				m := replyInPrompt.FindStringSubmatch(q.UserText)
				if m == nil {
					return scriptedmodel.Text("no reply address in the prompt")
				}
				return scriptedmodel.Call(sendMailTool(c), map[string]any{"to": m[1], "reply_to": m[2],
					"subject": chainAnswerC, "body": "V is " + chainAnswer})
			}},
		scriptedmodel.Rule{Name: "done", ToolResultFor: sendMailTool(c), Reply: scriptedmodel.Text(chainCFinal)},
	)
	a.configure(t, ar)
	b.configure(t, br)
	c.configure(t, cr)
	g.Dump = func() string { return "=== A\n" + ar.Dump() + "\n=== B\n" + br.Dump() + "\n=== C\n" + cr.Dump() }
	aBridge := ar.StartBridge()
	bBridge := br.StartBridge()
	cr.StartBridge()

	ask := g.Send(a.agent+"@"+dirA+".new", "[chain] compute V", "Have it computed.")
	asked := g.WaitMail("A's first answer", ar.ReplyFrom(ask.MailID, client.MailTypeNormal))
	if asked.Body != chainAskedB || asked.SessionID != ask.SessionID {
		t.Fatalf("A's first answer = %q in %s, want %q in %s", asked.Body, asked.SessionID, chainAskedB, ask.SessionID)
	}
	// The final answer reaches the person in the thread they started.
	top := g.WaitMail("A's final answer to the person", func(m client.Mail) bool {
		return m.FromName == a.agent && m.SessionID == ask.SessionID && strings.Contains(m.Body, "TOP-FINAL")
	})
	if top.Body != chainTop || top.Relay != client.RelaySummary {
		t.Errorf("A's final answer = relay %q body %q, want a relay of %q", top.Relay, top.Body, chainTop)
	}
	// It answers B's relay, which answers C's mail, each in the session one level down.
	middle := mailOfSession(t, g, sessionOfSubject(t, br, chainSubjB), top.ParentMailID)
	if middle.FromName != b.agent || middle.Body != chainMiddle || middle.Relay != client.RelaySummary {
		t.Fatalf("A's final answer answers %+v; want B's relay %q\n%s", middle, chainMiddle, g.Dump())
	}
	s1 := g.Session(middle.SessionID)
	if s1.OriginSessionID != ask.SessionID || s1.AgentName != b.agent {
		t.Fatalf("B's relay is in %+v; want the session A delegated to B", s1)
	}
	if len(middle.Recipients) != 1 || middle.Recipients[0].Name != a.agent || middle.Recipients[0].Workspace != dirA {
		t.Errorf("B's relay went to %+v, want A alone at %s", middle.Recipients, dirA)
	}
	fromC := mailOfSession(t, g, sessionOfSubject(t, br, chainAnswerC), middle.ParentMailID)
	s2 := g.Session(fromC.SessionID)
	if fromC.FromName != c.agent || s2.OriginSessionID != s1.SessionID {
		t.Fatalf("B's relay answers %+v in %+v; want C's mail in the session B delegated", fromC, s2)
	}
	if n := len(delegatedMails(t, g, s2.SessionID, func(m client.Mail) bool { return m.FromName == c.agent })); n != 1 {
		t.Errorf("%d mails from C, want exactly 1", n)
	}
	// Own first-turn words and C's final words go nowhere; one relay per level.
	all := append(delegatedMails(t, g, s1.SessionID, func(client.Mail) bool { return true }),
		delegatedMails(t, g, s2.SessionID, func(client.Mail) bool { return true })...)
	all = append(all, g.Matching(func(client.Mail) bool { return true })...)
	count := func(pred func(client.Mail) bool) int {
		n := 0
		for _, m := range all {
			if pred(m) {
				n++
			}
		}
		return n
	}
	for _, words := range []string{chainAskedC, chainCFinal} {
		if n := count(func(m client.Mail) bool { return strings.Contains(m.Body, words) }); n != 0 {
			t.Errorf("%q was mailed %d times; an agent's turn for an agent's mail relays nothing", words, n)
		}
	}
	if n := count(func(m client.Mail) bool { return m.FromName == b.agent && m.Relay == client.RelaySummary }); n != 1 {
		t.Errorf("%d relays from B, want 1", n)
	}
	if n := count(func(m client.Mail) bool { return m.FromName == a.agent && m.ParentMailID == middle.MailID }); n != 1 {
		t.Errorf("%d relays from A for B's relay, want 1", n)
	}
	// Each answer turn continued its own first conversation.
	if turns := ar.TurnsFor(middle.MailID); len(turns) != 1 || !strings.Contains(conversationText(turns[0]), chainAskedB) {
		t.Errorf("A's turn for B's relay: %d turns, or it did not continue A's first conversation", len(turns))
	}
	if turns := br.TurnsFor(fromC.MailID); len(turns) != 1 || !strings.Contains(conversationText(turns[0]), chainAskedC) {
		t.Errorf("B's turn for C's answer: %d turns, or it did not continue B's first conversation", len(turns))
	}
	for _, l := range []string{aBridge.Log.String(), bBridge.Log.String()} {
		if strings.Contains(l, "fallback") {
			t.Errorf("a delegating bridge used a fallback directory\n%s", l)
		}
	}
	// Rounds: the origin is charged nothing; each delegated session its delegating mail and answer.
	if o, m := g.Session(ask.SessionID).UsedRounds, g.Session(s1.SessionID).UsedRounds; o != 0 || m != 1 {
		t.Errorf("used rounds: origin %d, first delegated %d; want 0 and 1 (A's delegating mail; relays are free)", o, m)
	}
	if s2 = g.Session(s2.SessionID); s2.UsedRounds != 2 {
		t.Errorf("the second delegated session used %d rounds; want 2 (B's delegating mail and C's answer)", s2.UsedRounds)
	}
}

// sessionOfSubject is the session of the mail with subject that r's agent received.
func sessionOfSubject(t *testing.T, r *mailrig.Rig, subject string) string {
	t.Helper()
	no := false
	l, err := r.AgentClient.Inbox(context.Background(), client.InboxQuery{Status: "all", Limit: 50, MarkRead: &no})
	if err != nil {
		t.Fatalf("%s's inbox: %v", r.Agent, err)
	}
	for _, m := range l.Mails {
		if m.Subject == subject {
			return m.SessionID
		}
	}
	t.Fatalf("%s received no mail %q\n%s", r.Agent, subject, r.Dump())
	return ""
}

// mailOfSession reads mail id of a delegated session as the origin's person.
func mailOfSession(t *testing.T, g *mailrig.Gateway, sessionID, id string) client.Mail {
	t.Helper()
	ms := delegatedMails(t, g, sessionID, func(m client.Mail) bool { return m.MailID == id })
	if len(ms) != 1 {
		t.Fatalf("no mail %s in session %s\n%s", id, sessionID, g.Dump())
	}
	return ms[0]
}
