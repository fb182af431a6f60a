package bridge_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The delegation contract (issue 15), over two real platforms at once on one gateway, each
// with its own bridge and scripted model: a person asks the delegating agent D to have the
// delegate E compute T; D's model calls send_mail to E@<dir2>.new from inside its turn;
// E's turn runs its shell (a permission request in the delegated session, which the
// origin's person decides and a stranger cannot see) and answers D with send_mail; D's
// answer turn continues D's first platform conversation in D's own directory, and its
// final words reach the person in the thread they started. E's own final words go
// nowhere. One case per pair of platforms; restart stops D's bridge between its two turns
// (the mapping lives on the gateway).

const (
	delegAsked      = "Asked the other agent."
	delegateAnswer  = "PI-ANSWER-T"
	delegateFinal   = "DELEGATE-FINAL-WORDS"
	delegatorFinal  = "FINAL-T " + delegateAnswer
	delegatedSubj   = "sub T"
	delegateSubject = "[answer] T"
)

type delegationCase struct {
	delegator, delegate platformCase
	restart             bool
}

func caseOf(p platforms.Platform) platformCase {
	for _, c := range platformCases {
		if c.platform == p {
			return c
		}
	}
	panic("no platform case for " + string(p))
}

var delegationCases = []delegationCase{
	{delegator: caseOf(platforms.Claude), delegate: caseOf(platforms.Pi)},
	{delegator: caseOf(platforms.Pi), delegate: caseOf(platforms.Claude), restart: true},
}

// sendMailTool is the name under which c's model calls AgentMail's send_mail.
func sendMailTool(c platformCase) string {
	return strings.Replace(c.readInbox, "read_inbox", "send_mail", 1)
}

// replyInPrompt finds the reply address and mail id the bridge's prompt for an agent's
// mail names ("call send_mail to ADDR with reply_to ID.").
var replyInPrompt = regexp.MustCompile(`send_mail to (\S+) with reply_to (\S+?)\.`)

func TestDelegationContract(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	for _, dc := range delegationCases {
		name := string(dc.delegator.platform) + "-to-" + string(dc.delegate.platform)
		if dc.restart {
			name += "-restart"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dc.run(t)
		})
	}
}

func (dc delegationCase) run(t *testing.T) {
	d, e := dc.delegator, dc.delegate
	platforms.Require(t, d.platform)
	platforms.Require(t, e.platform)
	ctx := context.Background()
	g := mailrig.StartGateway(t)
	dir1, dir2 := mailrig.Workspace(t, "asking"), mailrig.Workspace(t, "answering")
	shell := func(c platformCase, command string) scriptedmodel.Reply {
		return scriptedmodel.Reply{Text: "Running it.", ToolCalls: []scriptedmodel.ToolCall{{Name: c.shell, Input: c.shellInput(command)}}}
	}
	dr := mailrig.Join(g, d.platform, d.agent,
		scriptedmodel.Rule{Name: "delegate", UserContains: "[deleg]", Reply: scriptedmodel.Call(sendMailTool(d),
			map[string]any{"to": e.agent + "@" + dir2 + ".new", "subject": delegatedSubj, "body": "Please compute T."})},
		scriptedmodel.Rule{Name: "asked", ToolResultFor: sendMailTool(d), Match: mailrig.UserHas("[deleg]"), Reply: scriptedmodel.Text(delegAsked)},
		scriptedmodel.Rule{Name: "read the answer", UserContains: delegateSubject, Reply: scriptedmodel.Call(d.readInbox, map[string]any{})},
		scriptedmodel.Rule{Name: "final", ToolResultFor: d.readInbox, ToolResultContains: delegateAnswer, Reply: scriptedmodel.Text(delegatorFinal)},
	)
	er := mailrig.Join(g, e.platform, e.agent,
		scriptedmodel.Rule{Name: "work", UserContains: delegatedSubj, Reply: shell(e, "touch delegated.txt")},
		scriptedmodel.Rule{Name: "answer", ToolResultFor: e.shell, Match: mailrig.UserHas(delegatedSubj),
			Respond: func(q *scriptedmodel.Request) scriptedmodel.Reply {
				m := replyInPrompt.FindStringSubmatch(q.UserText)
				if m == nil {
					return scriptedmodel.Text("no reply address in the prompt")
				}
				return scriptedmodel.Call(sendMailTool(e), map[string]any{"to": m[1], "reply_to": m[2],
					"subject": delegateSubject, "body": "T is " + delegateAnswer})
			}},
		scriptedmodel.Rule{Name: "done", ToolResultFor: sendMailTool(e), Match: mailrig.UserHas(delegatedSubj), Reply: scriptedmodel.Text(delegateFinal)},
	)
	d.configure(t, dr)
	e.configure(t, er)
	g.Dump = func() string { return "=== delegator\n" + dr.Dump() + "\n=== delegate\n" + er.Dump() }
	dBridge := dr.StartBridge()
	er.StartBridge()

	// The person writes to D; D delegates and says so.
	deleg := g.Send(d.agent+"@"+dir1+".new", "[deleg] compute T", "Ask "+e.agent+" to compute T.")
	asked := g.WaitMail("D's first answer", dr.ReplyFrom(deleg.MailID, client.MailTypeNormal))
	if asked.Body != delegAsked || asked.SessionID != deleg.SessionID {
		t.Fatalf("D's first answer = %q in %s, want %q in %s", asked.Body, asked.SessionID, delegAsked, deleg.SessionID)
	}
	origin := g.Session(deleg.SessionID)
	firstPlatform := origin.PlatformSessionID
	if dc.restart {
		dBridge.Stop()
	}

	// E asks for its shell in the delegated session: the origin's person decides it.
	ask := g.WaitMail("E's permission request", func(m client.Mail) bool {
		return m.FromName == e.agent && m.MailType == client.MailTypePermissionRequest
	})
	sub := g.Session(ask.SessionID)
	if sub.OriginSessionID != deleg.SessionID || sub.AgentName != e.agent || sub.Workspace != dir2 {
		t.Fatalf("the delegated session = %+v; want origin %s, agent %s at %s", sub, deleg.SessionID, e.agent, dir2)
	}
	stranger := strangerClient(t, g)
	if _, err := stranger.MeSession(ctx, sub.SessionID); !isStatus(err, 404) {
		t.Errorf("a stranger reading the delegated session: %v, want 404", err)
	}
	if _, err := stranger.Decide(ctx, ask.MailID, client.DecideRequest{Decision: "approve"}); !isStatus(err, 404) {
		t.Errorf("a stranger deciding in the delegated session: %v, want 404", err)
	}
	if _, err := g.Admin.Decide(ctx, ask.MailID, client.DecideRequest{Decision: "approve"}); err != nil {
		t.Fatalf("the origin's person deciding: %v\n%s", err, g.Dump())
	}
	waitFile(g, filepath.Join(dir2, "delegated.txt"))

	// Exactly one mail from E reaches D, in the delegated session, to D's own directory.
	var fromE []client.Mail
	g.WaitFor("E's answer to D", func() bool {
		fromE = delegatedMails(t, g, sub.SessionID, func(m client.Mail) bool { return m.FromName == e.agent && m.MailType == client.MailTypeNormal })
		return len(fromE) > 0
	})
	answer := fromE[0]
	if want := d.agent + "@" + dir1 + "." + sub.Alias; len(answer.Recipients) == 0 || answer.Recipients[0].Address != want {
		t.Errorf("E's answer went to %+v, want %s (D's own directory)", answer.Recipients, want)
	}
	if dc.restart {
		dBridge = dr.StartBridge()
	}

	// D's answer turn continues its first conversation and the person hears the result.
	final := g.WaitMail("D's final answer to the person", func(m client.Mail) bool {
		return m.FromName == d.agent && m.ParentMailID == answer.MailID
	})
	if final.Body != delegatorFinal || final.SessionID != deleg.SessionID || final.Relay != client.RelaySummary {
		t.Errorf("D's final answer = relay %q body %q in %s, want a relay of %q in the person's session %s",
			final.Relay, final.Body, final.SessionID, delegatorFinal, deleg.SessionID)
	}
	turns := dr.TurnsFor(answer.MailID)
	if len(turns) != 1 {
		t.Fatalf("E's answer opened %d turns of D's model, want 1\n%s", len(turns), g.Dump())
	}
	history := conversationText(turns[0])
	if !strings.Contains(history, "mail_id "+deleg.MailID) || !strings.Contains(history, delegAsked) {
		t.Errorf("D's answer turn did not continue its first conversation; the model saw:\n%s", history)
	}
	if !strings.Contains(turns[0].UserText, dir1) {
		t.Errorf("D's answer turn does not name its own directory %s:\n%s", dir1, turns[0].UserText)
	}
	if got := g.Session(deleg.SessionID).PlatformSessionID; got != firstPlatform || got == "" {
		t.Errorf("the origin's platform session after the answer = %q, want the first turn's %q", got, firstPlatform)
	}
	if bad := d.platformSession(dr, firstPlatform, dir1); bad != "" {
		t.Errorf("D's platform session %q: %s", firstPlatform, bad)
	}
	if strings.Contains(dBridge.Log.String(), "fallback") {
		t.Errorf("D's bridge used a fallback directory\n%s", dBridge.Log)
	}

	// E's own final words go nowhere; nothing was delivered twice; rounds as docs/API.md says.
	if n := len(delegatedMails(t, g, sub.SessionID, func(m client.Mail) bool { return strings.Contains(m.Body, delegateFinal) })); n != 0 ||
		len(g.Matching(func(m client.Mail) bool { return strings.Contains(m.Body, delegateFinal) })) != 0 {
		t.Errorf("E's own final words were mailed")
	}
	if n := len(delegatedMails(t, g, sub.SessionID, func(m client.Mail) bool { return m.FromName == e.agent && m.MailType == client.MailTypeNormal })); n != 1 {
		t.Errorf("%d mails from E in the delegated session, want exactly 1", n)
	}
	if n := len(dr.TurnsFor(deleg.MailID)); n != 1 {
		t.Errorf("the person's mail ran %d turns of D, want 1", n)
	}
	if n := len(erTurnsOfSession(er)); n != 1 {
		t.Errorf("the delegated mail ran %d turns of E, want 1", n)
	}
	if n := len(g.Matching(func(m client.Mail) bool { return m.FromName == d.agent && m.ParentMailID == answer.MailID })); n != 1 {
		t.Errorf("%d delegation relays for E's answer, want 1", n)
	}
	// D's delegating mail and E's answer each use a round of the delegated session;
	// the relays use none, and the person's own mail none.
	if o, s := g.Session(deleg.SessionID).UsedRounds, g.Session(sub.SessionID).UsedRounds; o != 0 || s != 2 {
		t.Errorf("used rounds: origin %d, delegated %d; want 0 and 2", o, s)
	}
}

// erTurnsOfSession lists E's opening requests for the delegated subject (one mail: one
// turn).
func erTurnsOfSession(er *mailrig.Rig) []scriptedmodel.Request {
	var out []scriptedmodel.Request
	for _, q := range er.Model.ModelRequests() {
		if !q.Title && len(q.LastToolResults) == 0 && strings.Contains(q.UserText, delegatedSubj) {
			out = append(out, q)
		}
	}
	return out
}

// delegatedMails lists the delegated session's mails as the origin's person reads them.
func delegatedMails(t *testing.T, g *mailrig.Gateway, sessionID string, pred func(client.Mail) bool) []client.Mail {
	t.Helper()
	l, err := g.Admin.MeSessionMails(context.Background(), sessionID)
	if err != nil {
		t.Fatalf("the origin's person reading the delegated session's mails: %v", err)
	}
	var out []client.Mail
	for _, m := range l.Mails {
		if pred(m) {
			out = append(out, m)
		}
	}
	return out
}

// strangerClient is a person who takes part in nothing, signed in.
func strangerClient(t *testing.T, g *mailrig.Gateway) *client.Client {
	t.Helper()
	ctx := context.Background()
	if _, err := g.Admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "stranger", Password: "stranger-password-1"}); err != nil {
		t.Fatal(err)
	}
	c := client.New(g.URL, client.WithCookieJar())
	if _, err := c.Login(ctx, client.LoginRequest{Username: "stranger", Password: "stranger-password-1"}); err != nil {
		t.Fatal(err)
	}
	return c
}

func isStatus(err error, status int) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Status == status
}
