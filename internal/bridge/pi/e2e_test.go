package pi_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The "Done when" for pi: `agentmail serve`, `agentmail bridge --platform pi`,
// the pi processes it starts (with the bridge's extension) and the `agentmail mcp` tool
// servers the extension starts are separate real processes; only the model is
// scripted. The script keys on a tag in each mail's subject, which the bridge's prompt
// carries: [alpha] reads its mail through the AgentMail tools and answers; [beta] is the
// follow-up by alias in alpha's (idle) session; [gamma] and [delta] run bash (a
// permission mail each, approved and denied); [epsilon] is written while the bridge is
// down and runs on a broken model first.

const (
	piAgent       = "pibot"
	alphaAnswer   = "Alpha answer: I read your mail about the parser."
	betaAnswer    = "Beta answer: continuing where we left off."
	gammaAnswer   = "Gamma answer: the command has finished."
	deltaAnswer   = "Delta answer: I was not allowed to run it."
	epsilonAnswer = "Epsilon answer: read after the restart."
)

func piBash(say, command string) scriptedmodel.Reply {
	return scriptedmodel.Reply{Text: say, ToolCalls: []scriptedmodel.ToolCall{{Name: "bash", Input: map[string]any{"command": command}}}}
}

func piScript() []scriptedmodel.Rule {
	return []scriptedmodel.Rule{
		scriptedmodel.FailModel("broken-model", 400, "broken-model is not available on this server"),
		{Name: "alpha reads", UserContains: "[alpha]", Reply: scriptedmodel.Call("read_inbox", map[string]any{})},
		{Name: "alpha answers", ToolResultFor: "read_inbox", Match: mailrig.UserHas("[alpha]"), Reply: scriptedmodel.Text(alphaAnswer)},
		{Name: "beta", UserContains: "[beta]", Reply: scriptedmodel.Text(betaAnswer)},
		{Name: "gamma runs", UserContains: "[gamma]", Reply: piBash("Creating the file.", "touch approved.txt")},
		{Name: "gamma answers", ToolResultFor: "bash", Match: mailrig.UserHas("[gamma]"), Reply: scriptedmodel.Text(gammaAnswer)},
		{Name: "delta runs", UserContains: "[delta]", Reply: piBash("Creating the file.", "touch denied.txt")},
		{Name: "delta answers", ToolResultFor: "bash", Match: mailrig.UserHas("[delta]"), Reply: scriptedmodel.Text(deltaAnswer)},
		{Name: "epsilon", UserContains: "[epsilon]", Model: "fake-model", Reply: scriptedmodel.Text(epsilonAnswer)},
	}
}

// sessionName returns the name pi stored for a session (its last session_info entry),
// read from the session file; "" when there is none.
func sessionName(t *testing.T, agentDir, sessionID string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*_"+sessionID+".jsonl"))
	if len(files) != 1 {
		return ""
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return ""
	}
	name := ""
	for _, line := range strings.Split(string(data), "\n") {
		var e struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "session_info" {
			name = e.Name
		}
	}
	return name
}

// sessionCwd returns the working directory in a session file's header.
func sessionCwd(t *testing.T, agentDir, sessionID string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*_"+sessionID+".jsonl"))
	if len(files) != 1 {
		return ""
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return ""
	}
	var h struct {
		Cwd string `json:"cwd"`
	}
	first, _, _ := strings.Cut(string(data), "\n")
	_ = json.Unmarshal([]byte(first), &h)
	return h.Cwd
}

func TestE2EPiAnswersMail(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	r := mailrig.New(t, platforms.Pi, piAgent, piScript()...)
	agentDir, err := r.Env.UsePi(r.Model.OpenAIBaseURL(), "fake-model", "broken-model")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bridge1 := r.StartBridge()

	// A mail produces a session in its directory and one reply, read through the tools.
	dir1 := mailrig.Workspace(t, "parser")
	alpha := r.Send(piAgent+"@"+dir1+".new", "[alpha] the parser", "Please look at the tokenizer bug in lexer.go.")
	reply1 := r.WaitMail("the reply to [alpha]", r.ReplyFrom(alpha.MailID, client.MailTypeNormal))
	if reply1.Relay != client.RelaySummary || reply1.Body != alphaAnswer || reply1.SessionID != alpha.SessionID {
		t.Fatalf("reply to [alpha] = relay %q body %q session %s", reply1.Relay, reply1.Body, reply1.SessionID)
	}
	turns := r.TurnsFor(alpha.MailID)
	if len(turns) != 1 || !strings.Contains(turns[0].System, dir1) {
		t.Fatalf("[alpha] opened %d turns (want 1, told the directory %s)\n%s", len(turns), dir1, r.Dump())
	}
	reads := r.ToolResults(alpha.MailID, "read_inbox")
	if len(reads) != 1 || !strings.Contains(reads[0].Content, "[alpha] the parser") || !strings.Contains(reads[0].Content, "tokenizer bug") {
		t.Fatalf("read_inbox through the extension and agentmail mcp gave the model %+v", reads)
	}
	s1 := r.Session(alpha.SessionID)
	if s1.PlatformSessionID == "" || sessionCwd(t, agentDir, s1.PlatformSessionID) != dir1 {
		t.Fatalf("platform session %q is not a pi session stored for %s (B-3.1, B-3.3)", s1.PlatformSessionID, dir1)
	}
	// D-5 level 3: pi names nothing, the alias comes from the subject and is written back
	// with pi's own rename.
	var alias string
	r.WaitFor("the alias written back into pi", func() bool {
		alias = r.Session(alpha.SessionID).Alias
		return alias != "" && sessionName(t, agentDir, s1.PlatformSessionID) == alias
	})
	if !strings.Contains(alias, "parser") {
		t.Errorf("alias %q is not derived from the subject", alias)
	}

	// A follow-up by alias lands in the same (idle) pi session: a new run, not a silent
	// follow-up (9.11).
	beta := r.Send(piAgent+"@"+dir1+"."+alias, "[beta] and the parser again", "One more thing about the tokenizer.")
	if beta.SessionID != alpha.SessionID {
		t.Fatalf("the mail to alias %q went to session %s, want %s", alias, beta.SessionID, alpha.SessionID)
	}
	reply2 := r.WaitMail("the reply to [beta]", r.ReplyFrom(beta.MailID, client.MailTypeNormal))
	if reply2.Body != betaAnswer {
		t.Fatalf("reply to [beta] = %q", reply2.Body)
	}
	if s := r.Session(alpha.SessionID); s.PlatformSessionID != s1.PlatformSessionID {
		t.Errorf("platform session after the follow-up = %q, want %q", s.PlatformSessionID, s1.PlatformSessionID)
	}
	betaTurns := r.TurnsFor(beta.MailID)
	if len(betaTurns) != 1 {
		t.Fatalf("[beta] opened %d turns, want 1\n%s", len(betaTurns), r.Dump())
	}
	history := ""
	for _, m := range betaTurns[0].Messages {
		history += m.Role + ": " + m.Text + "\n"
	}
	if !strings.Contains(history, "mail_id "+alpha.MailID) || !strings.Contains(history, alphaAnswer) {
		t.Errorf("the follow-up did not continue the conversation; the model saw:\n%s", history)
	}

	// bash becomes a permission mail; approval runs it, denial does not.
	dir2 := mailrig.Workspace(t, "approve")
	gamma := r.Send(piAgent+"@"+dir2+".new", "[gamma] make a file", "Create approved.txt, please.")
	ask := r.WaitMail("the permission mail of [gamma]", func(m client.Mail) bool {
		return m.SessionID == gamma.SessionID && m.MailType == client.MailTypePermissionRequest
	})
	if ask.FromName != piAgent || ask.Permission == nil || ask.Permission.Tool != "bash" ||
		!strings.Contains(ask.Permission.Context+ask.Permission.Question, "touch approved.txt") ||
		!strings.Contains(ask.Permission.RelayKey, ":bash:") {
		t.Fatalf("permission mail = %+v (permission %+v)", ask, ask.Permission)
	}
	if _, err := os.Stat(filepath.Join(dir2, "approved.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("approved.txt exists before anyone approved (stat: %v)", err)
	}
	if _, err := r.Admin.Decide(ctx, ask.MailID, client.DecideRequest{Decision: "approve"}); err != nil {
		t.Fatalf("approve: %v\n%s", err, r.Dump())
	}
	reply3 := r.WaitMail("the reply to [gamma]", r.ReplyFrom(gamma.MailID, client.MailTypeNormal))
	if reply3.Body != gammaAnswer {
		t.Errorf("reply to [gamma] = %q", reply3.Body)
	}
	if _, err := os.Stat(filepath.Join(dir2, "approved.txt")); err != nil {
		t.Errorf("approved.txt missing after the approval: %v", err)
	}

	dir3 := mailrig.Workspace(t, "deny")
	delta := r.Send(piAgent+"@"+dir3+".new", "[delta] make a file", "Create denied.txt, please.")
	ask = r.WaitMail("the permission mail of [delta]", func(m client.Mail) bool {
		return m.SessionID == delta.SessionID && m.MailType == client.MailTypePermissionRequest
	})
	if _, err := r.Admin.Decide(ctx, ask.MailID, client.DecideRequest{Decision: "deny", Note: "not in this folder"}); err != nil {
		t.Fatalf("deny: %v\n%s", err, r.Dump())
	}
	reply4 := r.WaitMail("the reply to [delta]", r.ReplyFrom(delta.MailID, client.MailTypeNormal))
	if reply4.Body != deltaAnswer {
		t.Errorf("reply to [delta] = %q", reply4.Body)
	}
	if _, err := os.Stat(filepath.Join(dir3, "denied.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("denied.txt exists although the person denied (stat: %v)", err)
	}
	if trs := r.ToolResults(delta.MailID, "bash"); len(trs) != 1 || !strings.Contains(trs[0].Content, "not in this folder") {
		t.Errorf("denied bash gave the model %+v, want the person's note", trs)
	}

	// While the bridge is down: the admin puts a broken model first, and a mail arrives.
	bridge1.Stop()
	if _, err := r.Admin.AdminSetAgentModels(ctx, piAgent, client.AllowedModels{AllowedModels: []client.ModelRef{
		{Provider: platforms.FakeProvider, Model: "broken-model"}, {Provider: platforms.FakeProvider, Model: "fake-model"}}}); err != nil {
		t.Fatalf("setting the model scope: %v", err)
	}
	dir4 := mailrig.Workspace(t, "offline")
	epsilon := r.Send(piAgent+"@"+dir4+".new", "[epsilon] while you were away", "Written while the bridge was down.")
	bridge2 := r.StartBridge()
	reply5 := r.WaitMail("the reply to [epsilon]", r.ReplyFrom(epsilon.MailID, client.MailTypeNormal))
	if reply5.Body != epsilonAnswer {
		t.Errorf("reply to [epsilon] = %q", reply5.Body)
	}
	r.WaitFor("bridge 2 to finish its catch-up", func() bool { return bridge2.Log.Count("caught up ") >= 1 })
	if bridge2.Log.Count(`msg="caught up 1 mails"`) != 1 {
		t.Errorf("bridge 2 did not catch up exactly the one mail\n%s", bridge2.Log)
	}
	r.WaitFor("the fallback log line", func() bool {
		return bridge2.Log.Count("fakemodel/fake-model succeeded (after 1 failed: fakemodel/broken-model)") == 1
	})
	models := map[string]int{}
	for _, q := range r.TurnsFor(epsilon.MailID) {
		models[q.Model]++
	}
	if models["broken-model"] != 1 || models["fake-model"] != 1 {
		t.Errorf("[epsilon] turns by model %v, want one on each", models)
	}
	bridge2.Stop()
	bridge3 := r.StartBridge()
	r.WaitFor("bridge 3 to finish its catch-up", func() bool { return bridge3.Log.Count("caught up ") >= 1 })
	if bridge3.Log.Count(`msg="caught up 0 mails"`) != 1 {
		t.Errorf("bridge 3 caught up mails that were handled already\n%s", bridge3.Log)
	}
	if n := len(r.Matching(r.ReplyFrom(epsilon.MailID, client.MailTypeNormal))); n != 1 {
		t.Errorf("[epsilon] got %d replies, want exactly 1", n)
	}
	for _, m := range []*client.SendMailResponse{alpha, beta, gamma, delta} {
		if n := len(r.TurnsFor(m.MailID)); n != 1 {
			t.Errorf("mail %s ran %d turns after the restarts, want 1", m.MailID, n)
		}
		if n := len(r.Matching(r.ReplyFrom(m.MailID, client.MailTypeNormal))); n != 1 {
			t.Errorf("mail %s got %d replies, want 1", m.MailID, n)
		}
	}
}
