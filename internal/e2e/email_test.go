package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
	"github.com/agentmail/agentmail/internal/testkit/mailtest"
)

// The email channel over the started binary (issue 20 "Done when"):
// mailpit is the relay the gateway delivers to, read back through its
// API; swaks and Python's smtplib send the person's replies to the
// gateway's inbound SMTP listener.

const (
	mailDomain = "agents.test"
	mailFrom   = "AgentMail <agentmail@agents.test>"
	publicURL  = "https://agentmail.test"
)

var inboundLine = regexp.MustCompile(`agentmail email replies on (\S+)`)

// startEmailGateway starts the gateway with mailpit as its relay and an
// inbound listener on a free port, and answers it with that port.
func startEmailGateway(t *testing.T, mp *mailtest.Mailpit, dataDir string, extraEnv ...string) (*gatewayproc.Gateway, string) {
	t.Helper()
	env := append([]string{
		"AGENTMAIL_SMTP_RELAY=smtp://" + mp.SMTP + "?insecure=1",
		"AGENTMAIL_MAIL_FROM=" + mailFrom,
		"AGENTMAIL_MAIL_DOMAIN=" + mailDomain,
		"AGENTMAIL_SMTP_LISTEN=127.0.0.1:0",
		"AGENTMAIL_PUBLIC_URL=" + publicURL,
		"AGENTMAIL_MAIL_RETRY_MIN=100ms",
		"AGENTMAIL_MAIL_RETRY_MAX=400ms",
	}, extraEnv...)
	gw := startGateway(t, dataDir, env...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := inboundLine.FindStringSubmatch(gw.Log.String()); m != nil {
			return gw, m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not say where it takes replies\n%s", gw.Log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var codeSubject = regexp.MustCompile(`Your AgentMail code: (\d{6})`)

// verifyAddress sets the person's address and confirms it with the code
// that reached mailpit.
func verifyAddress(t *testing.T, ctx context.Context, mp *mailtest.Mailpit, person *client.Client, addr string) {
	t.Helper()
	me, err := person.UpdateMe(ctx, client.UpdateMeRequest{Email: &addr})
	if err != nil {
		t.Fatalf("PATCH /me email: %v", err)
	}
	if me.EmailPending != addr || me.Email != "" {
		t.Fatalf("after PATCH: email %q pending %q", me.Email, me.EmailPending)
	}
	msg := mp.Wait("code for "+addr, func(m mailtest.Message) bool { return m.ToAddr(addr) && codeSubject.MatchString(m.Subject) })
	code := codeSubject.FindStringSubmatch(msg.Subject)[1]
	if _, err := person.VerifyEmail(ctx, client.VerifyEmailRequest{Code: "000000"}); client.CodeOf(err) != "wrong_code" && code != "000000" {
		t.Fatalf("a wrong code: %v", err)
	}
	me, err = person.VerifyEmail(ctx, client.VerifyEmailRequest{Code: code})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if me.Email != addr || me.EmailVerifiedAt == nil || me.EmailPending != "" {
		t.Fatalf("after verify: %+v", me)
	}
}

// header answers one header field of a raw message ("" when absent).
func header(raw, name string) string {
	head, _, _ := strings.Cut(strings.ReplaceAll(raw, "\r\n", "\n"), "\n\n")
	head = regexp.MustCompile(`\n[ \t]+`).ReplaceAllString(head, " ")
	for _, l := range strings.Split(head, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

var replyToRe = regexp.MustCompile(`r\+[a-z2-7]{32}@` + regexp.QuoteMeta(mailDomain))

// agentFor creates an agent key and registers the agent at ws.
func agentFor(t *testing.T, ctx context.Context, url string, admin *client.Client, name, ws string) (*client.Client, string) {
	t.Helper()
	key, err := admin.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: name, Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatalf("create agent key: %v", err)
	}
	agent := client.New(url, client.WithToken(key.KeyToken))
	if _, err := agent.Register(ctx, client.RegisterRequest{Name: name, Platform: "claude", Workspaces: []client.Workspace{{Name: "ws", Path: ws}}}); err != nil {
		t.Fatalf("register: %v", err)
	}
	return agent, key.KeyToken
}

// personFor creates a person and signs them in.
func personFor(t *testing.T, ctx context.Context, url string, admin *client.Client, name string) *client.Client {
	t.Helper()
	if _, err := admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: name, Password: name + "-password-1", Role: "user"}); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	c := client.New(url)
	if _, err := c.Login(ctx, client.LoginRequest{Username: name, Password: name + "-password-1"}); err != nil {
		t.Fatalf("%s logs in: %v", name, err)
	}
	return c
}

// realTempDir is a temporary directory with symlinks resolved (the gate
// compares real paths).
func realTempDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The end-to-end test: an agent's permission request reaches the
// person's mailbox with the right headers; "approve" sent with swaks
// decides it and the gated command runs; replies from another address,
// with a bad token, or after the decision are refused or answered as
// described; an agent's answer and the person's emailed reply thread.
func TestEmailRepliesDecideAndThread(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway and mailpit; skipped with -short")
	}
	mp := mailtest.StartMailpit(t)
	dataDir := t.TempDir()
	gw, inbound := startEmailGateway(t, mp, dataDir)
	ctx := ctxT(t)
	admin := client.New(gw.URL)
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatal(err)
	}
	bob := personFor(t, ctx, gw.URL, admin, "bob")
	verifyAddress(t, ctx, mp, bob, "bob@example.com")

	// An address is unique across people.
	carol := personFor(t, ctx, gw.URL, admin, "carol")
	taken := "BOB@example.com"
	if _, err := carol.UpdateMe(ctx, client.UpdateMeRequest{Email: &taken}); client.CodeOf(err) != "email_taken" {
		t.Fatalf("carol takes bob's address: %v", err)
	}

	ws := realTempDir(t)
	_, agentKey := agentFor(t, ctx, gw.URL, admin, "claude", ws)
	sent, err := bob.MeSend(ctx, client.SendMailRequest{To: "claude@" + ws, Subject: "make a file", Body: "please create approved.txt"})
	if err != nil {
		t.Fatal(err)
	}

	// The tool server of the turn asks before running the command.
	cmd := exec.Command(gatewayproc.Binary(t), "mcp")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+realTempDir(t), "AGENTMAIL_GATEWAY_URL="+gw.URL, "AGENTMAIL_AGENT_KEY="+agentKey,
		"AGENTMAIL_AGENT_NAME=claude", "AGENTMAIL_SESSION_ID="+sent.SessionID, "AGENTMAIL_MAIL_ID="+sent.MailID,
		"AGENTMAIL_WORKSPACE="+ws, "AGENTMAIL_PERMISSION_MODE=workspace", "AGENTMAIL_PERMISSION_WAIT_MS=120000",
		"AGENTMAIL_DATA_DIR="+dataDir)
	mc := mcp.NewClient(&mcp.Implementation{Name: "email-e2e", Version: "1"}, nil)
	ms, err := mc.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start agentmail mcp: %v", err)
	}
	t.Cleanup(func() { ms.Close() })
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	ran := make(chan result, 1)
	go func() {
		res, err := ms.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo made > approved.txt"}})
		ran <- result{res, err}
	}()

	// The request reaches bob's mailbox.
	msg := mp.Wait("permission request", func(m mailtest.Message) bool {
		return m.ToAddr("bob@example.com") && strings.HasPrefix(m.Subject, "[Permission] ")
	})
	pending, err := bob.MePermissions(ctx, "pending")
	if err != nil || len(pending.Permissions) != 1 {
		t.Fatalf("pending permissions: %v %+v", err, pending)
	}
	perm := pending.Permissions[0]
	raw := mp.Raw(msg.ID)
	if got := header(raw, "From"); got != `"claude via AgentMail" <agentmail@agents.test>` {
		t.Errorf("From %q", got)
	}
	if got := header(raw, "Message-Id"); got != "<"+perm.MailID+"@"+mailDomain+">" {
		t.Errorf("Message-ID %q, want the request's mail id %s", got, perm.MailID)
	}
	if got := header(raw, "In-Reply-To"); got != "<"+sent.MailID+"@"+mailDomain+">" {
		t.Errorf("In-Reply-To %q, want bob's mail %s", got, sent.MailID)
	}
	if got := header(raw, "List-Unsubscribe"); got != "<"+publicURL+"/account>" {
		t.Errorf("List-Unsubscribe %q", got)
	}
	replyTo := replyToRe.FindString(header(raw, "Reply-To"))
	if replyTo == "" {
		t.Fatalf("Reply-To %q is not r+<token>@%s", header(raw, "Reply-To"), mailDomain)
	}
	text := plainPart(t, raw)
	lines := strings.Split(text, "\n")
	if len(lines) < 2 || lines[0] != "claude asks for permission: run_command: echo made > approved.txt" ||
		lines[1] != "Reply APPROVE, ALWAYS or DENY; a note may follow on the next lines." {
		t.Errorf("the email does not start with what is asked and how to answer:\n%s", text)
	}
	if !strings.Contains(raw, "Content-Type: text/html") || !strings.Contains(text, publicURL+"/inbox/"+sent.SessionID) {
		t.Errorf("no HTML part or no link to the conversation:\n%s", raw)
	}

	// Refused at the SMTP transaction: another address, a bad token,
	// another domain. Nothing is stored.
	out, ok := mailtest.Swaks(t, inbound, "mallory@example.com", replyTo, "--header", "Subject: Re: "+msg.Subject, "--body", "approve")
	if ok || !strings.Contains(out, "550") || !strings.Contains(out, "another address") {
		t.Errorf("a reply from another address was not refused with a reason:\n%s", out)
	}
	out, ok = mailtest.Swaks(t, inbound, "bob@example.com", "r+"+strings.Repeat("a", 32)+"@"+mailDomain, "--header", "From: bob@example.com", "--body", "approve")
	if ok || !strings.Contains(out, "550") || !strings.Contains(out, "unknown") {
		t.Errorf("a bad token was not refused:\n%s", out)
	}
	if got := mailtest.Smtplib(t, inbound, "bob@example.com", "bob@elsewhere.test", "From: bob@example.com\nSubject: hi\n\napprove\n"); !strings.HasPrefix(got, "REFUSED 550") {
		t.Errorf("a recipient outside the reply domain: %s", got)
	}
	if p, _ := bob.MePermissions(ctx, "pending"); len(p.Permissions) != 1 {
		t.Fatalf("a refused reply decided the request: %+v", p)
	}

	// bob approves from his mail client.
	out, ok = mailtest.Swaks(t, inbound, "bob@example.com", replyTo,
		"--header", "From: Bob <bob@example.com>", "--header", "Subject: Re: "+msg.Subject,
		"--header", "In-Reply-To: "+header(raw, "Message-Id"), "--header", "Message-Id: <reply-1@client.test>",
		"--body", "approve\nfine by me\n\nOn Wed, Sep 2, 2026 at 10:00 AM claude via AgentMail <"+replyTo+"> wrote:\n> claude asks for permission\n")
	if !ok {
		t.Fatalf("the approving reply was refused:\n%s\n%s", out, gw.Log.String())
	}
	select {
	case r := <-ran:
		if r.err != nil || r.res.IsError {
			t.Fatalf("run_command after the approval: %v %+v", r.err, r.res)
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("the gated command did not run within 90 s of the approval\n%s", gw.Log.String())
	}
	assertFile(t, filepath.Join(ws, "approved.txt"), "made\n")
	got, err := bob.MePermissions(ctx, "decided")
	if err != nil || len(got.Permissions) != 1 {
		t.Fatal(err, got)
	}
	d := got.Permissions[0]
	if !d.Approved || d.DecidedBy != "bob" || d.DecidedVia != "reply" || d.Note != "fine by me" {
		t.Errorf("decision %+v, want approved by bob's reply with its note", d)
	}

	// A later reply is taken, changes nothing, and is answered.
	if got := mailtest.Smtplib(t, inbound, "bob@example.com", replyTo,
		"From: bob@example.com\nSubject: Re: "+msg.Subject+"\nMessage-ID: <reply-late@client.test>\n\ndeny\n"); got != "OK" {
		t.Fatalf("a reply after the decision: %s\n%s", got, gw.Log.String())
	}
	notice := mp.Wait("notice that it was decided", func(m mailtest.Message) bool {
		return m.ToAddr("bob@example.com") && m.Subject == "Re: "+msg.Subject
	})
	if nt := plainPart(t, mp.Raw(notice.ID)); !strings.Contains(nt, "already") && !strings.Contains(nt, "after this permission request was decided") ||
		!strings.Contains(nt, "approved, by bob") {
		t.Errorf("the notice does not say what was decided:\n%s", nt)
	}
	if p, _ := bob.MePermissions(ctx, "decided"); len(p.Permissions) != 1 || !p.Permissions[0].Approved {
		t.Errorf("the late denial changed the decision: %+v", p)
	}

	// Threading: with every mail mailed, the agent's answer reaches bob,
	// his emailed reply lands under it, and the agent's next answer says
	// In-Reply-To his client's Message-ID.
	all := "all"
	if _, err := bob.UpdateMe(ctx, client.UpdateMeRequest{EmailNotify: &all}); err != nil {
		t.Fatal(err)
	}
	agent := client.New(gw.URL, client.WithToken(agentKey))
	answer, err := agent.SendMail(ctx, client.SendMailRequest{To: "bob", ReplyTo: sent.MailID, Body: "Done: **approved.txt** exists.\n\n<script>alert(1)</script>"})
	if err != nil {
		t.Fatal(err)
	}
	am := mp.Wait("the agent's answer", func(m mailtest.Message) bool { return m.MessageID == answer.MailID+"@"+mailDomain })
	araw := mp.Raw(am.ID)
	if h, err := mailtest.Part(araw, "text/html"); err != nil || strings.Contains(h, "<script") || strings.Contains(h, "alert(1)") ||
		!strings.Contains(h, "<strong>approved.txt</strong>") {
		t.Errorf("the HTML part is not the cleaned Markdown (%v):\n%s", err, h)
	}
	answerReplyTo := replyToRe.FindString(header(araw, "Reply-To"))
	if got := mailtest.Smtplib(t, inbound, "bob@example.com", answerReplyTo, "From: Bob <bob@example.com>\nSubject: Re: "+am.Subject+
		"\nMessage-ID: <reply-2@client.test>\nIn-Reply-To: <"+am.MessageID+">\nContent-Type: text/plain; charset=utf-8\n\n谢谢，请再加上测试。\n\n"+
		"2026年9月2日周三 10:05，claude via AgentMail <"+answerReplyTo+"> 写道：\n> Done\n"); got != "OK" {
		t.Fatalf("bob's emailed reply: %s\n%s", got, gw.Log.String())
	}
	var bobsReply client.Mail
	deadline := time.Now().Add(30 * time.Second)
	for {
		inbox, err := agent.Inbox(ctx, client.InboxQuery{Status: "all", Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range inbox.Mails {
			if m.FromName == "bob" && m.ParentMailID == answer.MailID {
				bobsReply = m
			}
		}
		if bobsReply.MailID != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bobsReply.MailID == "" || bobsReply.Body != "谢谢，请再加上测试。" {
		t.Fatalf("bob's emailed reply is not in the thread under the answer: %+v", bobsReply)
	}
	next, err := agent.SendMail(ctx, client.SendMailRequest{To: "bob", ReplyTo: bobsReply.MailID, Body: "Tests added."})
	if err != nil {
		t.Fatal(err)
	}
	nm := mp.Wait("the agent's next answer", func(m mailtest.Message) bool { return m.MessageID == next.MailID+"@"+mailDomain })
	nraw := mp.Raw(nm.ID)
	if got := header(nraw, "In-Reply-To"); got != "<reply-2@client.test>" {
		t.Errorf("In-Reply-To %q, want bob's client's Message-ID", got)
	}
	if refs := header(nraw, "References"); !strings.Contains(refs, "<"+answer.MailID+"@"+mailDomain+">") || !strings.Contains(refs, "<reply-2@client.test>") {
		t.Errorf("References %q lack the thread", refs)
	}

	// /readyz names the relay's state.
	resp, err := http.Get(gw.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready map[string]string
	decodeBody(t, resp, &ready)
	if ready["status"] != "ready" || ready["email_relay"] != "ok" {
		t.Errorf("/readyz %v", ready)
	}
}

// plainPart answers the decoded text/plain part of a raw message.
func plainPart(t *testing.T, raw string) string {
	t.Helper()
	text, err := mailtest.PlainText(raw)
	if err != nil {
		t.Fatalf("read the message: %v\n%s", err, raw)
	}
	return text
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Fatalf("%s: %q %v, want %q", path, b, err, want)
	}
}

// A restart with undelivered outbox entries delivers each once, and
// delivery resumes by itself when a relay that was down comes back.
func TestEmailOutboxSurvivesRestartAndRelayOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway and mailpit; skipped with -short")
	}
	mp := mailtest.StartMailpit(t)
	dataDir := t.TempDir()
	gw, _ := startEmailGateway(t, mp, dataDir)
	ctx := ctxT(t)
	admin := client.New(gw.URL)
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatal(err)
	}
	bob := personFor(t, ctx, gw.URL, admin, "bob")
	verifyAddress(t, ctx, mp, bob, "bob@example.com")
	ws := realTempDir(t)
	agent, agentKey := agentFor(t, ctx, gw.URL, admin, "claude", ws)
	sent, err := bob.MeSend(ctx, client.SendMailRequest{To: "claude@" + ws, Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(i int) string {
		p, err := agent.RequestPermission(ctx, client.PermissionRequest{SessionID: sent.SessionID, Question: fmt.Sprintf("may I run step %d?", i),
			RelayKey: fmt.Sprintf("step-%d", i), Tool: "Bash", ToolInput: map[string]any{"command": fmt.Sprintf("make step%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		return p.MailID
	}

	// The relay goes down; three requests wait in the outbox, retried.
	mp.Stop()
	var ids []string
	for i := 1; i <= 3; i++ {
		ids = append(ids, ask(i))
	}
	waitReady(t, gw, func(r map[string]string) bool { return r["email_relay"] == "failing" && r["email_pending"] == "3" })
	// The readiness answer turns "failing" at the first failed attempt; the
	// newest entry may still be in its first attempt then, so the account is
	// read until that attempt has failed too.
	var last *client.EmailDelivery
	deadline := time.Now().Add(waitLimit)
	for {
		me, err := bob.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		last = me.EmailDelivery
		if last != nil && last.State == "retrying" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if last == nil || last.State != "retrying" || !strings.Contains(last.Error, "relay") {
		t.Errorf("the account shows the last delivery as %+v, want retrying with the relay's failure", last)
	}

	// Restart with the entries undelivered, then the relay comes back.
	gw.Shutdown(t)
	mp.Start()
	gw, _ = startEmailGateway(t, mp, dataDir)
	agent = client.New(gw.URL, client.WithToken(agentKey)) // the restarted gateway listens elsewhere
	waitReady(t, gw, func(r map[string]string) bool { return r["email_relay"] == "ok" && r["email_pending"] == "0" })
	countOnce(t, mp, ids)

	// Down again while the gateway runs; it resumes by itself.
	mp.Stop()
	waitReady(t, gw, func(r map[string]string) bool { return r["email_relay"] == "failing" })
	ids = append(ids, ask(4))
	waitReady(t, gw, func(r map[string]string) bool { return r["email_pending"] == "1" })
	mp.Start()
	waitReady(t, gw, func(r map[string]string) bool { return r["email_relay"] == "ok" && r["email_pending"] == "0" })
	countOnce(t, mp, ids)
	bob2 := client.New(gw.URL)
	if _, err := bob2.Login(ctx, client.LoginRequest{Username: "bob", Password: "bob-password-1"}); err != nil {
		t.Fatal(err)
	}
	if me, err := bob2.Me(ctx); err != nil || me.EmailDelivery == nil || me.EmailDelivery.State != "sent" || me.EmailDelivery.MailID != ids[3] {
		t.Errorf("last delivery %+v %v, want the 4th request sent", me.EmailDelivery, err)
	}
}

// countOnce checks that mailpit holds exactly one message for each mail.
func countOnce(t *testing.T, mp *mailtest.Mailpit, mailIDs []string) {
	t.Helper()
	n := map[string]int{}
	for _, m := range mp.Messages() {
		n[m.MessageID]++
	}
	for _, id := range mailIDs {
		if got := n[id+"@"+mailDomain]; got != 1 {
			t.Errorf("mail %s reached the relay %d times, want once", id, got)
		}
	}
}

// waitReady polls /readyz until ok accepts its body (deadline 60 s).
func waitReady(t *testing.T, gw *gatewayproc.Gateway, ok func(map[string]string) bool) {
	t.Helper()
	url := gw.URL
	deadline := time.Now().Add(60 * time.Second)
	var last map[string]string
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			last = nil
			decodeBody(t, resp, &last)
			if ok(last) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("/readyz never reached the expected state; last %v\n%s", last, gw.Log.String())
}

func decodeBody(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("decode %s: %v", resp.Request.URL, err)
	}
}

// A relay that refuses an address for good (5xx) ends the retries at once,
// and the person's account shows the relay's answer.
func TestEmailPermanentRefusalIsGivenUpWithTheReason(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway and mailpit; skipped with -short")
	}
	mp := mailtest.StartMailpit(t, "--smtp-allowed-recipients", `^bob@example\.com$`)
	gw, _ := startEmailGateway(t, mp, t.TempDir())
	ctx := ctxT(t)
	admin := client.New(gw.URL)
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatal(err)
	}
	carol := personFor(t, ctx, gw.URL, admin, "carol")
	addr := "carol@nowhere.test"
	if _, err := carol.UpdateMe(ctx, client.UpdateMeRequest{Email: &addr}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		me, err := carol.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d := me.EmailDelivery; d != nil && d.State == "failed" {
			if d.Kind != "verify" || d.Attempts != 1 || !strings.Contains(d.Error, "refused it: 5") {
				t.Errorf("the failed delivery %+v, want the code email given up after one attempt with the relay's 5xx", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refused email was not given up within 60 s: %+v\n%s", me.EmailDelivery, gw.Log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(mp.Messages()); n != 0 {
		t.Errorf("mailpit took %d messages", n)
	}
}
