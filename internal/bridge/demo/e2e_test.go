package demo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
)

func TestMain(m *testing.M) { os.Exit(gatewayproc.Main(m)) }

// demoRig is a started gateway and a started `agentmail bridge --platform demo`
// connected to it as agent "demo".
type demoRig struct {
	*mailrig.Gateway
	bridge *gatewayproc.Proc
}

func startDemo(t *testing.T) *demoRig {
	t.Helper()
	g := mailrig.StartGateway(t)
	key := g.IssueAgentKey("demo")
	env := platforms.NewEnv(t)
	env.Set("AGENTMAIL_GATEWAY_URL", g.URL)
	env.Set("AGENTMAIL_AGENT_KEY", key)
	env.Set("AGENTMAIL_PERMISSION_MODE", "workspace")
	br := gatewayproc.Start(t, gatewayproc.Options{
		Args: []string{"bridge", "--platform", "demo", "--log-level", "debug"},
		Env:  env.Environ(), Clean: true, Dir: env.Home, Group: true,
		StopWait: mailrig.Wait, CheckExit: true,
	})
	r := &demoRig{Gateway: g, bridge: br}
	g.Dump = func() string {
		return "--- bridge log:\n" + br.Log.String() + "\n--- gateway log (tail):\n" + g.Proc.Log.Tail(6000) + "\n"
	}
	g.WaitFor("the demo bridge to connect", func() bool {
		if !br.Running() {
			t.Fatalf("agentmail bridge --platform demo exited at start: %v\n%s", br.Err(), br.Log)
		}
		return strings.Contains(br.Log.String(), "connected to "+g.URL+" as demo")
	})
	return r
}

// waitMail polls c's mailbox (a person's) until a mail for which pred holds
// arrives, and answers it.
func (r *demoRig) waitMail(c *client.Client, what string, pred func(client.Mail) bool) client.Mail {
	r.T.Helper()
	var found client.Mail
	no := false
	r.WaitFor(what, func() bool {
		l, err := c.MeInbox(context.Background(), client.InboxQuery{Status: "all", Limit: 100, MarkRead: &no})
		if err != nil {
			r.T.Fatalf("inbox: %v", err)
		}
		for _, m := range l.Mails {
			if pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

func answerTo(mailID string) func(client.Mail) bool {
	return func(m client.Mail) bool {
		return m.ParentMailID == mailID && m.FromName == "demo" && m.MailType == client.MailTypeNormal && m.Relay == client.RelaySummary
	}
}

func permissionIn(sessionID string) func(client.Mail) bool {
	return func(m client.Mail) bool {
		return m.SessionID == sessionID && m.FromName == "demo" && m.MailType == "permission_request"
	}
}

func wantAll(t *testing.T, what, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%s lacks %q:\n%s", what, p, text)
		}
	}
}

// A newcomer without any model account (issue 18): the demo platform answers an
// English person in English and a Chinese person in Chinese, with what it received,
// its directory and its entries, and how to connect a real platform; its run is a real
// run of the bridge core.
func TestDemoAnswersInThePersonsLanguage(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	r := startDemo(t)
	ctx := context.Background()
	dir := mailrig.Workspace(t, "proj")
	for _, p := range []string{"README.md", "main.go"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}

	sent := r.Send("demo@"+dir+".new", "Say hello", "Hello demo,\nthis is my first mail.\n\nBye")
	got := r.waitMail(r.Admin, "the demo's answer", answerTo(sent.MailID))
	wantAll(t, "the English answer", got.Body,
		"the AgentMail demo agent", "no model", "`Say hello`", "Hello demo,", "this is my first mail.",
		"`"+dir+"`", "`README.md`", "`main.go`", "`src/`", "write hello.txt: Hello, world",
		"agentmail bridge --platform claude", `"Connect Claude Code"`)
	if got.Subject != "Re: Say hello" {
		t.Errorf("answer subject = %q, want Re: Say hello", got.Subject)
	}
	run := r.WaitRun(sent.SessionID, sent.MailID, client.RunFinished)
	if run.Error != "" || run.ToolCalls == 0 || run.LastTool != "read_mail" {
		t.Errorf("the demo's run = %+v, want finished without error, its read_mail call counted", run)
	}

	// A Chinese person.
	if _, err := r.Admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "li", Password: "li-password-1"}); err != nil {
		t.Fatal(err)
	}
	li := client.New(r.URL, client.WithCookieJar())
	if _, err := li.Login(ctx, client.LoginRequest{Username: "li", Password: "li-password-1"}); err != nil {
		t.Fatal(err)
	}
	zh := "zh"
	if _, err := li.UpdateMe(ctx, client.UpdateMeRequest{Language: &zh}); err != nil {
		t.Fatal(err)
	}
	sent, err := li.MeSend(ctx, client.SendMailRequest{To: "demo@" + dir + ".new", Subject: "你好", Body: "第一封邮件"})
	if err != nil {
		t.Fatal(err)
	}
	got = r.waitMail(li, "the demo's answer to li", answerTo(sent.MailID))
	wantAll(t, "the Chinese answer", got.Body,
		"AgentMail 的演示智能体", "没有模型", "`你好`", "第一封邮件", "**我的工作目录：**`"+dir+"`", "`README.md`", "连接真正的智能体", "README")
	if strings.Contains(got.Body, "Hello! This is") || strings.Contains(got.Body, "Where I work") {
		t.Errorf("the Chinese person's answer holds English sentences:\n%s", got.Body)
	}
}

// A write line asks a person first, through the gateway's permission request, and
// writes only after approval; a denial writes nothing; a path that leaves the directory
// is refused without asking anyone; a stop while the request waits ends the run, proven
// quiet, with nothing written.
func TestDemoWritesOnlyWhatAPersonApproved(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	r := startDemo(t)
	ctx := context.Background()
	outside := mailrig.Workspace(t, "outside")
	dir := mailrig.Workspace(t, "work")
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	// Approved: the file exists with the content.
	sent := r.Send("demo@"+dir+".new", "Make a file", "Please:\nwrite hello.txt: Hello from the demo")
	perm := r.waitMail(r.Admin, "the permission request", permissionIn(sent.SessionID))
	target := filepath.Join(dir, "hello.txt")
	if perm.Permission == nil || perm.Permission.Tool != "Write" || perm.Permission.ToolSummary != "Write: "+target {
		t.Fatalf("permission request = %+v, want tool Write and summary %q", perm.Permission, "Write: "+target)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists before anyone approved (stat: %v)", target, err)
	}
	if _, err := r.Admin.Decide(ctx, perm.MailID, client.DecideRequest{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	got := r.waitMail(r.Admin, "the answer after approval", answerTo(sent.MailID))
	if b, err := os.ReadFile(target); err != nil || string(b) != "Hello from the demo\n" {
		t.Fatalf("%s after approval = %q, %v; want the line's text and a newline", target, b, err)
	}
	wantAll(t, "the answer after approval", got.Body, "`"+target+"`: written (20 bytes), with your permission.", "`hello.txt`")

	// Denied: no file.
	sent = r.Send("demo@"+dir+".new", "Another file", "write nope.txt: never")
	perm = r.waitMail(r.Admin, "the second permission request", permissionIn(sent.SessionID))
	if _, err := r.Admin.Decide(ctx, perm.MailID, client.DecideRequest{Decision: "deny"}); err != nil {
		t.Fatal(err)
	}
	got = r.waitMail(r.Admin, "the answer after the denial", answerTo(sent.MailID))
	wantAll(t, "the answer after the denial", got.Body, "nope.txt")
	if !strings.Contains(got.Body, "not written: you denied it.") {
		t.Errorf("the answer after the denial does not say it wrote nothing:\n%s", got.Body)
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("nope.txt exists after a denial (stat: %v)", err)
	}

	// Escapes: refused, nobody asked, nothing written anywhere.
	abs := filepath.Join(outside, "abs.txt")
	sent = r.Send("demo@"+dir+".new", "Escape", "write ../escape.txt: a\nwrite "+abs+": b\nwrite link/x.txt: c\nwrite .ssh/authorized_keys: d")
	got = r.waitMail(r.Admin, "the answer to the escapes", answerTo(sent.MailID))
	wantAll(t, "the answer to the escapes", got.Body,
		"`../escape.txt`: refused and not asked for: the path leaves the working directory",
		"refused and not asked for: the path is absolute",
		"`link/x.txt`: refused and not asked for: a symbolic link is on the path",
		"`.ssh/authorized_keys`: refused and not asked for: only the first 3 write lines of a mail are acted on")
	dot := r.Send("demo@"+dir+".new", "Keys", "write .ssh/authorized_keys: d")
	got = r.waitMail(r.Admin, "the answer to a dot name", answerTo(dot.MailID))
	wantAll(t, "the answer to a dot name", got.Body, "`.ssh/authorized_keys`: refused and not asked for: names starting with a dot")
	// An existing file (the one approved above) is never replaced, nor asked for.
	again := r.Send("demo@"+dir+".new", "Again", "write hello.txt: something else")
	got = r.waitMail(r.Admin, "the answer to an existing name", answerTo(again.MailID))
	wantAll(t, "the answer to an existing name", got.Body, "refused and not asked for: a file of that name exists")
	if b, err := os.ReadFile(target); err != nil || string(b) != "Hello from the demo\n" {
		t.Errorf("%s after a write to an existing name = %q, %v; want it unchanged", target, b, err)
	}
	for _, p := range []string{filepath.Join(filepath.Dir(dir), "escape.txt"), abs, filepath.Join(outside, "x.txt"), filepath.Join(dir, ".ssh")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a refused write (stat: %v)", p, err)
		}
	}
	for _, sid := range []string{sent.SessionID, dot.SessionID, again.SessionID} {
		for _, m := range r.Matching(permissionIn(sid)) {
			t.Errorf("a refused path was asked for: %s", m.Subject)
		}
	}

	// Stopped while the request waits: the run ends stopped and quiet, nothing written.
	sent = r.Send("demo@"+dir+".new", "Slow", "write slow.txt: later")
	r.waitMail(r.Admin, "the slow permission request", permissionIn(sent.SessionID))
	run := r.WaitRun(sent.SessionID, sent.MailID, client.RunRunning)
	if _, err := r.Admin.MeStopRun(ctx, run.RunID); err != nil {
		t.Fatal(err)
	}
	var ended client.Run
	r.WaitFor("the stopped run to end", func() bool {
		for _, x := range r.Runs(sent.SessionID) {
			if x.RunID == run.RunID && x.State == client.RunFinished {
				ended = x
				return true
			}
		}
		return false
	})
	if ended.StopReason != "stopped" || ended.Quiescence != client.QuiescenceProven {
		t.Errorf("stopped run = %+v, want stop_reason stopped, quiescence proven", ended)
	}
	if _, err := os.Stat(filepath.Join(dir, "slow.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("slow.txt exists after the stop (stat: %v)", err)
	}
	for _, m := range r.Matching(answerTo(sent.MailID)) {
		if strings.Contains(m.Body, "demo agent") { // the stop notice is the only relay
			t.Errorf("the stopped turn was answered: %q", m.Body)
		}
	}
}
