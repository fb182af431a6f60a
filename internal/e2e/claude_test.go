package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The "Done when" of issue 4: a real Claude Code answers mail. The gateway,
// the bridge and Claude Code (with its MCP tool server, `agentmail mcp`) are
// separate processes; only the model is scripted (internal/testkit/scriptedmodel, in this test).
//
// The script keys on a tag in each mail's subject, which the bridge's prompt
// carries (B-3.4). Tags: [alpha] reads its mail through MCP and answers;
// [beta] is the follow-up in alpha's session; [gamma] and [delta] run Bash
// (a permission question each, approved and denied); [epsilon] is written
// while the bridge is down; [zeta] runs on a broken model.

// brokenModel is the model the fake answers with HTTP 400.
const brokenModel = "broken-model"

func userHas(tag string) func(*scriptedmodel.Request) bool {
	return func(q *scriptedmodel.Request) bool { return strings.Contains(q.UserText, tag) }
}

// bashCall is a reply that runs command with Claude Code's Bash tool.
func bashCall(say, command string) scriptedmodel.Reply {
	return scriptedmodel.Reply{Text: say, ToolCalls: []scriptedmodel.ToolCall{{Name: "Bash", Input: map[string]any{"command": command, "description": "create a file"}}}}
}

const (
	alphaAnswer   = "Alpha answer: I read your mail about the parser."
	betaAnswer    = "Beta answer: continuing where we left off."
	gammaAnswer   = "Gamma answer: the command has finished."
	deltaAnswer   = "Delta answer: I was not allowed to run it."
	epsilonAnswer = "Epsilon answer: read after the restart."
)

func claudeScript() []scriptedmodel.Rule {
	return []scriptedmodel.Rule{
		scriptedmodel.FailModel(brokenModel, 400, brokenModel+" is not available on this server"),
		{Name: "alpha reads", UserContains: "[alpha]", Reply: scriptedmodel.Call("mcp__agentmail__read_inbox", map[string]any{})},
		{Name: "alpha answers", ToolResultFor: "mcp__agentmail__read_inbox", Match: userHas("[alpha]"), Reply: scriptedmodel.Text(alphaAnswer)},
		{Name: "beta", UserContains: "[beta]", Reply: scriptedmodel.Text(betaAnswer)},
		{Name: "gamma runs", UserContains: "[gamma]", Reply: bashCall("Creating the file.", "touch approved.txt")},
		{Name: "gamma answers", ToolResultFor: "Bash", Match: userHas("[gamma]"), Reply: scriptedmodel.Text(gammaAnswer)},
		{Name: "delta runs", UserContains: "[delta]", Reply: bashCall("Creating the file.", "touch denied.txt")},
		{Name: "delta answers", ToolResultFor: "Bash", Match: userHas("[delta]"), Reply: scriptedmodel.Text(deltaAnswer)},
		{Name: "epsilon", UserContains: "[epsilon]", Reply: scriptedmodel.Text(epsilonAnswer)},
	}
}

func TestClaudeCodeAnswersMail(t *testing.T) {
	start := time.Now()
	r := newClaudeRig(t, claudeScript()...)
	ctx := context.Background()
	bridge1 := r.startBridge()

	// 1-3. A person's mail to claude@<dir>.new: a turn in that directory,
	// read_inbox through MCP, the answer back as a relay summary that uses
	// no round.
	dir1 := claudeWorkspace(t, "parser")
	alpha := r.send("claude@"+dir1+".new", "[alpha] the parser", "Please look at the tokenizer bug in lexer.go.")
	rounds := r.session(alpha.SessionID).UsedRounds
	reply1 := r.waitMail("the reply to [alpha]", claudeReplyFrom(alpha.MailID, client.MailTypeNormal))
	if reply1.Relay != client.RelaySummary || reply1.Body != alphaAnswer || reply1.SessionID != alpha.SessionID {
		t.Fatalf("reply to [alpha] = relay %q body %q session %s, want a summary relay of %q in %s",
			reply1.Relay, reply1.Body, reply1.SessionID, alphaAnswer, alpha.SessionID)
	}
	s1 := r.session(alpha.SessionID)
	if s1.UsedRounds != rounds {
		t.Errorf("used_rounds went from %d to %d with the relayed reply; a relay uses no round (I-2)", rounds, s1.UsedRounds)
	}
	alphaTurns := r.turnsFor(alpha.MailID)
	if len(alphaTurns) != 1 {
		t.Fatalf("[alpha] opened %d model turns, want 1\n%s", len(alphaTurns), r.dump())
	}
	if !strings.Contains(alphaTurns[0].System, "Primary working directory: "+dir1) {
		t.Errorf("Claude Code did not run in %s: its system prompt names another directory", dir1)
	}
	if !containsString(alphaTurns[0].Tools, "mcp__agentmail__read_inbox") {
		t.Errorf("the AgentMail tools were not offered to the model: %v", alphaTurns[0].Tools)
	}
	reads := r.toolResults(alpha.MailID, "mcp__agentmail__read_inbox")
	if len(reads) != 1 || reads[0].IsError || !strings.Contains(reads[0].Content, "[alpha] the parser") ||
		!strings.Contains(reads[0].Content, "tokenizer bug in lexer.go") {
		t.Fatalf("read_inbox through MCP gave the model %+v, want the mail's subject and body", reads)
	}
	if s1.PlatformSessionID == "" {
		t.Fatalf("the gateway session holds no Claude Code session id (B-3.3)")
	}
	path, text := r.transcript(s1.PlatformSessionID)
	if path == "" || !strings.Contains(text, `"cwd":"`+dir1+`"`) {
		t.Errorf("Claude Code's transcript of %s (%q) does not record the cwd %s", s1.PlatformSessionID, path, dir1)
	}
	// The turn is a run backed by the claude process's facts (seed 004).
	run := r.waitRun(alpha.SessionID, alpha.MailID, client.RunFinished)
	if run.PID <= 0 || run.ExitCode == nil || *run.ExitCode != 0 || run.BytesRead == 0 {
		t.Errorf("run of [alpha] = %+v, want the process's pid, exit code 0 and bytes read", run)
	}
	// The relay key is the model's message id (B-5.2): replaying it is a duplicate.
	alphaReqs := r.requestsFor(alpha.MailID)
	lastID := alphaReqs[len(alphaReqs)-1].ResponseID
	if dup, err := r.agent.SendMail(ctx, client.SendMailRequest{To: "admin", Subject: "x", Body: "x", ReplyTo: alpha.MailID,
		Relay: client.RelaySummary, RelayKey: lastID}); err != nil || dup.Status != "duplicate_relay" {
		t.Errorf("replaying relay_key %q (the model's last message id) = %+v, %v; want duplicate_relay", lastID, dup, err)
	}

	// 4. A follow-up to the session alias resumes the same Claude session.
	var alias string
	r.waitFor("the session alias of [alpha]", func() bool {
		alias = r.session(alpha.SessionID).Alias
		return alias != ""
	})
	beta := r.send("claude@"+dir1+"."+alias, "[beta] and the parser again", "One more thing about the tokenizer.")
	if beta.SessionID != alpha.SessionID {
		t.Fatalf("the mail to alias %q went to session %s, want %s", alias, beta.SessionID, alpha.SessionID)
	}
	reply2 := r.waitMail("the reply to [beta]", claudeReplyFrom(beta.MailID, client.MailTypeNormal))
	if reply2.Relay != client.RelaySummary || reply2.Body != betaAnswer {
		t.Fatalf("reply to [beta] = relay %q body %q", reply2.Relay, reply2.Body)
	}
	if s := r.session(alpha.SessionID); s.PlatformSessionID != s1.PlatformSessionID {
		t.Errorf("platform session after the follow-up = %q, want the same Claude session %q", s.PlatformSessionID, s1.PlatformSessionID)
	}
	betaTurns := r.turnsFor(beta.MailID)
	if len(betaTurns) != 1 {
		t.Fatalf("[beta] opened %d model turns, want 1\n%s", len(betaTurns), r.dump())
	}
	history := ""
	for _, m := range betaTurns[0].Messages {
		history += m.Role + ": " + m.Text + "\n"
	}
	if !strings.Contains(history, "mail_id "+alpha.MailID) || !strings.Contains(history, alphaAnswer) {
		t.Errorf("the follow-up did not resume the conversation; the model saw:\n%s", history)
	}

	// 5. Bash becomes a permission mail; approval runs it, denial does not.
	dir2 := claudeWorkspace(t, "approve")
	gamma := r.send("claude@"+dir2+".new", "[gamma] make a file", "Create approved.txt, please.")
	ask := r.waitMail("the permission mail of [gamma]", func(m client.Mail) bool {
		return m.SessionID == gamma.SessionID && m.MailType == client.MailTypePermissionRequest
	})
	if ask.FromName != claudeAgent || ask.Permission == nil || ask.Permission.Tool != "Bash" ||
		!strings.Contains(ask.Permission.Context+ask.Permission.Question, "touch approved.txt") {
		t.Fatalf("permission mail = %+v (permission %+v), want Bash: touch approved.txt from %s", ask, ask.Permission, claudeAgent)
	}
	if _, err := os.Stat(filepath.Join(dir2, "approved.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("approved.txt exists before anyone approved (stat: %v)", err)
	}
	if _, err := r.admin.Decide(ctx, ask.MailID, client.DecideRequest{Decision: "approve"}); err != nil {
		t.Fatalf("approve: %v\n%s", err, r.dump())
	}
	r.waitFor("approved.txt in "+dir2, func() bool {
		_, err := os.Stat(filepath.Join(dir2, "approved.txt"))
		return err == nil
	})
	reply3 := r.waitMail("the reply to [gamma]", claudeReplyFrom(gamma.MailID, client.MailTypeNormal))
	if reply3.Body != gammaAnswer || reply3.Relay != client.RelaySummary {
		t.Errorf("reply to [gamma] = relay %q body %q", reply3.Relay, reply3.Body)
	}
	if trs := r.toolResults(gamma.MailID, "Bash"); len(trs) != 1 || trs[0].IsError {
		t.Errorf("approved Bash gave the model %+v, want one successful result", trs)
	}

	dir3 := claudeWorkspace(t, "deny")
	delta := r.send("claude@"+dir3+".new", "[delta] make a file", "Create denied.txt, please.")
	ask = r.waitMail("the permission mail of [delta]", func(m client.Mail) bool {
		return m.SessionID == delta.SessionID && m.MailType == client.MailTypePermissionRequest
	})
	if ask.Permission == nil || ask.Permission.Tool != "Bash" {
		t.Fatalf("permission mail = %+v", ask)
	}
	if _, err := r.admin.Decide(ctx, ask.MailID, client.DecideRequest{Decision: "deny", Note: "not in this folder"}); err != nil {
		t.Fatalf("deny: %v\n%s", err, r.dump())
	}
	reply4 := r.waitMail("the reply to [delta]", claudeReplyFrom(delta.MailID, client.MailTypeNormal))
	if reply4.Body != deltaAnswer {
		t.Errorf("reply to [delta] = %q", reply4.Body)
	}
	if _, err := os.Stat(filepath.Join(dir3, "denied.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("denied.txt exists although the person denied (stat: %v)", err)
	}
	if trs := r.toolResults(delta.MailID, "Bash"); len(trs) != 1 || !trs[0].IsError {
		t.Errorf("denied Bash gave the model %+v, want one refused (error) result", trs)
	}

	// 7. A mail written while the bridge is down is caught up after the
	// restart, exactly once. Every earlier turn has finished its run first,
	// so the stop interrupts nothing.
	r.waitRun(gamma.SessionID, gamma.MailID, client.RunFinished)
	r.waitRun(delta.SessionID, delta.MailID, client.RunFinished)
	bridge1.stop(t)
	dir4 := claudeWorkspace(t, "offline")
	epsilon := r.send("claude@"+dir4+".new", "[epsilon] while you were away", "Written while the bridge was down.")
	bridge2 := r.startBridge()
	r.waitMail("the reply to [epsilon]", claudeReplyFrom(epsilon.MailID, client.MailTypeNormal))
	r.waitFor("bridge 2 to finish its catch-up", func() bool { return bridge2.logCount("caught up ") >= 1 })
	if bridge2.logCount(`msg="caught up 1 mails"`) != 1 {
		t.Errorf("bridge 2 did not catch up exactly the one mail\n%s", bridge2.log)
	}
	bridge2.stop(t)

	// 6 (set up while the bridge is down): the admin allows only a model the
	// fake refuses with HTTP 400; the next bridge learns it at its first
	// heartbeat (B-2.2).
	if _, err := r.admin.AdminSetAgentModels(ctx, claudeAgent, client.AllowedModels{
		AllowedModels: []client.ModelRef{{Provider: "anthropic", Model: brokenModel}}}); err != nil {
		t.Fatalf("setting the model scope: %v\n%s", err, r.gw.Log.String())
	}
	bridge3 := r.startBridge()
	r.waitFor("bridge 3 to finish its catch-up", func() bool { return bridge3.logCount("caught up ") >= 1 })
	if bridge3.logCount(`msg="caught up 0 mails"`) != 1 {
		t.Errorf("bridge 3 caught up mails that were handled already\n%s", bridge3.log)
	}
	if n := len(r.turnsFor(epsilon.MailID)); n != 1 {
		t.Errorf("[epsilon] ran %d turns across two restarts, want exactly 1\n%s", n, r.dump())
	}
	if n := len(r.matching(claudeReplyFrom(epsilon.MailID, client.MailTypeNormal))); n != 1 {
		t.Errorf("[epsilon] got %d replies, want exactly 1", n)
	}
	if runs, err := r.admin.MeSessionRuns(ctx, epsilon.SessionID); err != nil || len(runs.Runs) != 1 || runs.Runs[0].MailID != epsilon.MailID {
		t.Errorf("runs of [epsilon]'s session = %+v, %v; want exactly one", runs, err)
	}
	for _, m := range []*client.SendMailResponse{alpha, beta, gamma, delta} {
		if n := len(r.turnsFor(m.MailID)); n != 1 {
			t.Errorf("mail %s ran %d turns after the restarts, want 1", m.MailID, n)
		}
	}

	// 6. A model that errors produces a failure mail keyed model-failure:<mail_id>.
	dir5 := claudeWorkspace(t, "broken")
	zeta := r.send("claude@"+dir5+".new", "[zeta] on a broken model", "Anything at all.")
	fail := r.waitMail("the failure mail of [zeta]", claudeReplyFrom(zeta.MailID, client.MailTypeFailureReport))
	if fail.Relay != client.RelaySummary || !strings.Contains(fail.Subject, "[zeta] on a broken model") ||
		!strings.Contains(fail.Body, "anthropic/"+brokenModel) || !strings.Contains(fail.Body, brokenModel+" is not available on this server") {
		t.Errorf("failure mail = relay %q subject %q body:\n%s\nwant a summary relay naming the route and the model's error", fail.Relay, fail.Subject, fail.Body)
	}
	if run := r.waitRun(zeta.SessionID, zeta.MailID, client.RunFailed); !strings.Contains(run.Error, brokenModel+" is not available") || run.Model != "anthropic/"+brokenModel {
		t.Errorf("run of [zeta] = %+v, want failed on anthropic/%s with the model's error", run, brokenModel)
	}
	zetaReqs := r.requestsFor(zeta.MailID)
	if len(zetaReqs) == 0 {
		t.Fatalf("[zeta] never reached the model\n%s", r.dump())
	}
	for _, q := range zetaReqs {
		if q.Model != brokenModel || q.Status != 400 {
			t.Errorf("[zeta] request to model %q answered %d, want %s answered 400", q.Model, q.Status, brokenModel)
		}
	}
	if dup, err := r.agent.SendMail(ctx, client.SendMailRequest{To: "admin", Subject: "x", Body: "x", ReplyTo: zeta.MailID,
		Relay: client.RelaySummary, RelayKey: "model-failure:" + zeta.MailID, MailType: client.MailTypeFailureReport}); err != nil || dup.Status != "duplicate_relay" {
		t.Errorf("replaying relay_key model-failure:%s = %+v, %v; want duplicate_relay (B-6.3)", zeta.MailID, dup, err)
	}
	if n := len(r.matching(func(m client.Mail) bool { return m.ParentMailID == zeta.MailID && m.FromName == claudeAgent })); n != 1 {
		t.Errorf("[zeta] got %d mails from the agent, want only the failure mail", n)
	}
	t.Logf("Claude Code end to end: %d model requests, %v", len(r.model.ModelRequests()), time.Since(start).Round(time.Second))
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
