package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The harness of the Claude Code end-to-end test: real processes only. The
// gateway is `agentmail serve`, the bridge is `agentmail bridge --platform
// claude` from the same build, Claude Code is the pinned npm package, and the
// model behind it is the scripted model server (internal/testkit/scriptedmodel) running in the test.

// claudeWait is the generous deadline of every condition the Claude Code test
// waits on: a Claude Code process needs seconds to start, more under -race
// on a busy machine.
const claudeWait = 2 * time.Minute

// claudeAgent is the name of the agent the bridge serves.
const claudeAgent = "claude"

// claudeLog is a goroutine-safe buffer for a process's stderr.
type claudeLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *claudeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *claudeLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// claudeRig is everything one test drives: the gateway, the admin person
// (the one who mails the agent), the agent key, the fake model and the
// isolated environment Claude Code runs in.
type claudeRig struct {
	t        *testing.T
	gw       *gatewayproc.Gateway
	admin    *client.Client // the person "admin", signed in with a cookie
	agentKey string
	agent    *client.Client // the agent's own view, for checks the person cannot make
	model    *scriptedmodel.Server
	env      *platforms.Env
	claude   string // the pinned claude executable
	bridges  []*claudeBridge
}

// newClaudeRig starts the gateway and the fake model, and issues the agent
// key the way the README's first command does: an admin's user key as Bearer
// token on POST /api/v1/admin/agent-keys, the gateway generating the token.
func newClaudeRig(t *testing.T, rules ...scriptedmodel.Rule) *claudeRig {
	t.Helper()
	bin := platforms.Require(t, platforms.Claude)
	r := &claudeRig{t: t, claude: bin}
	r.model = scriptedmodel.NewTest(t, rules...)
	r.gw = startGateway(t, t.TempDir())
	ctx := context.Background()
	r.admin = client.New(r.gw.URL, client.WithCookieJar())
	if _, err := r.admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("admin login: %v\n%s", err, r.gw.Log.String())
	}
	uk, err := r.admin.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "issue agent keys", Lifecycle: client.LifecyclePermanent})
	if err != nil || uk.KeyToken == "" {
		t.Fatalf("admin user key: %+v, %v", uk, err)
	}
	r.agentKey = issueAgentKeyWithCurlShape(t, r.gw.URL, uk.KeyToken, claudeAgent)
	r.agent = client.New(r.gw.URL, client.WithToken(r.agentKey))

	r.env = platforms.NewEnv(t)
	r.env.UseClaude(r.model.URL)
	for k, v := range map[string]string{
		"AGENTMAIL_GATEWAY_URL":     r.gw.URL,
		"AGENTMAIL_AGENT_KEY":       r.agentKey,
		"AGENTMAIL_AGENT_NAME":      claudeAgent,
		"AGENTMAIL_CLAUDE_BIN":      bin,
		"AGENTMAIL_PERMISSION_MODE": "workspace",
	} {
		r.env.Set(k, v)
	}
	t.Cleanup(func() {
		for _, b := range r.bridges {
			b.stop(t)
		}
	})
	return r
}

// issueAgentKeyWithCurlShape sends exactly the request of the README's curl
// line: a JSON body with agent_name and lifecycle, the admin's user key as
// Bearer token, curl's default content type for -d, no cookie and no CSRF
// token. It returns the generated token.
func issueAgentKeyWithCurlShape(t *testing.T, gatewayURL, userKey, agent string) string {
	t.Helper()
	body := fmt.Sprintf(`{"agent_name":%q,"lifecycle":"permanent"}`, agent)
	req, err := http.NewRequest(http.MethodPost, gatewayURL+"/api/v1/admin/agent-keys", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+userKey)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // what curl -d sends
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /api/v1/admin/agent-keys: %v", err)
	}
	defer resp.Body.Close()
	var created client.CreatedKey
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusCreated || created.KeyToken == "" {
		t.Fatalf("POST /api/v1/admin/agent-keys with a user key = %d %+v (%v), want 201 with a generated key_token", resp.StatusCode, created, err)
	}
	return created.KeyToken
}

// claudeBridge is one running `agentmail bridge --platform claude`.
type claudeBridge struct {
	cmd    *exec.Cmd
	log    *claudeLog
	exited chan struct{}
	err    error
}

// startBridge starts the bridge process with the rig's environment (nothing
// of the test's own environment but PATH, locale and TMPDIR) and waits until
// it says it is connected.
func (r *claudeRig) startBridge() *claudeBridge {
	r.t.Helper()
	b := &claudeBridge{log: &claudeLog{}, exited: make(chan struct{})}
	b.cmd = exec.Command(gatewayproc.Binary(r.t), "bridge", "--platform", "claude", "--log-level", "debug")
	b.cmd.Env = r.env.Environ()
	b.cmd.Dir = r.env.Home
	b.cmd.Stderr = b.log
	if err := b.cmd.Start(); err != nil {
		r.t.Fatalf("starting agentmail bridge: %v", err)
	}
	go func() {
		b.err = b.cmd.Wait()
		close(b.exited)
	}()
	r.bridges = append(r.bridges, b)
	r.waitFor("the bridge to connect", func() bool {
		select {
		case <-b.exited:
			r.t.Fatalf("agentmail bridge exited at start: %v\n%s", b.err, b.log)
		default:
		}
		return strings.Contains(b.log.String(), "connected to "+r.gw.URL+" as "+claudeAgent)
	})
	return b
}

// stop sends SIGTERM and waits for a clean exit; safe to call twice.
func (b *claudeBridge) stop(t *testing.T) {
	select {
	case <-b.exited:
		return
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
		if b.err != nil {
			t.Errorf("agentmail bridge exited with %v after SIGTERM\n%s", b.err, b.log)
		}
	case <-time.After(claudeWait):
		_ = b.cmd.Process.Kill()
		<-b.exited
		t.Errorf("agentmail bridge did not stop on SIGTERM\n%s", b.log)
	}
}

// logCount counts the bridge's log lines containing substr.
func (b *claudeBridge) logCount(substr string) int {
	return strings.Count(b.log.String(), substr)
}

// waitFor polls cond until it holds or claudeWait passes; on timeout the
// test fails with every process's log and the fake model's request log.
func (r *claudeRig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(claudeWait)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %v waiting for %s\n%s", claudeWait, what, r.dump())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dump is the diagnostic text of a failure: the bridges' logs, the model's
// requests and the gateway's log tail.
func (r *claudeRig) dump() string {
	var b strings.Builder
	for i, br := range r.bridges {
		fmt.Fprintf(&b, "--- bridge %d log:\n%s\n", i+1, br.log)
	}
	b.WriteString("--- model requests:\n")
	for i, q := range r.model.ModelRequests() {
		fmt.Fprintf(&b, "%2d model=%s rule=%q status=%d tools=%d last_tool_results=%d user=%q\n",
			i, q.Model, q.Rule, q.Status, len(q.Tools), len(q.LastToolResults), claudeClip(q.UserText, 160))
	}
	logs := r.gw.Log.String()
	if len(logs) > 6000 {
		logs = "…" + logs[len(logs)-6000:]
	}
	fmt.Fprintf(&b, "--- gateway log (tail):\n%s\n", logs)
	return b.String()
}

func claudeClip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// send writes a mail from the admin person.
func (r *claudeRig) send(to, subject, body string) *client.SendMailResponse {
	r.t.Helper()
	resp, err := r.admin.MeSend(context.Background(), client.SendMailRequest{To: to, Subject: subject, Body: body})
	if err != nil {
		r.t.Fatalf("sending %q to %s: %v\n%s", subject, to, err, r.gw.Log.String())
	}
	return resp
}

// mails lists the admin's whole mailbox, newest first, without marking read.
func (r *claudeRig) mails() []client.Mail {
	r.t.Helper()
	no := false
	l, err := r.admin.MeInbox(context.Background(), client.InboxQuery{Status: "all", Limit: 100, MarkRead: &no})
	if err != nil {
		r.t.Fatalf("admin inbox: %v", err)
	}
	return l.Mails
}

// matching returns the admin's mails for which pred holds.
func (r *claudeRig) matching(pred func(client.Mail) bool) []client.Mail {
	var out []client.Mail
	for _, m := range r.mails() {
		if pred(m) {
			out = append(out, m)
		}
	}
	return out
}

// waitMail waits until the admin's mailbox holds a mail for which pred holds
// and returns it.
func (r *claudeRig) waitMail(what string, pred func(client.Mail) bool) client.Mail {
	r.t.Helper()
	var found client.Mail
	r.waitFor(what, func() bool {
		ms := r.matching(pred)
		if len(ms) == 0 {
			return false
		}
		found = ms[0]
		return true
	})
	return found
}

// session reads a session as the admin sees it.
func (r *claudeRig) session(id string) *client.Session {
	r.t.Helper()
	s, err := r.admin.MeSession(context.Background(), id)
	if err != nil {
		r.t.Fatalf("session %s: %v", id, err)
	}
	return s
}

// waitRun waits until the session holds a run for the mail in state and
// returns it (the run card of seed 004).
func (r *claudeRig) waitRun(sessionID, mailID, state string) client.Run {
	r.t.Helper()
	var found client.Run
	r.waitFor("a "+state+" run of mail "+mailID, func() bool {
		l, err := r.admin.MeSessionRuns(context.Background(), sessionID)
		if err != nil {
			r.t.Fatalf("runs of session %s: %v", sessionID, err)
		}
		for _, run := range l.Runs {
			if run.MailID == mailID && run.State == state {
				found = run
				return true
			}
		}
		return false
	})
	return found
}

// claudeReplyFrom matches the agent's mails in answer to mailID of one mail type.
func claudeReplyFrom(mailID, mailType string) func(client.Mail) bool {
	return func(m client.Mail) bool {
		return m.ParentMailID == mailID && m.FromName == claudeAgent && m.MailType == mailType
	}
}

// turnsFor returns the model requests that opened a turn for a mail: a fresh
// user turn (no tool result last) whose prompt names the mail id.
func (r *claudeRig) turnsFor(mailID string) []scriptedmodel.Request {
	var out []scriptedmodel.Request
	for _, q := range r.model.ModelRequests() {
		if len(q.LastToolResults) == 0 && strings.Contains(q.UserText, "mail_id "+mailID) {
			out = append(out, q)
		}
	}
	return out
}

// requestsFor returns every model request of the turns for a mail (the
// opening request and its tool-result follow-ups).
func (r *claudeRig) requestsFor(mailID string) []scriptedmodel.Request {
	var out []scriptedmodel.Request
	for _, q := range r.model.ModelRequests() {
		if strings.Contains(q.UserText, "mail_id "+mailID) {
			out = append(out, q)
		}
	}
	return out
}

// toolResults returns the results of tool name seen by the model in the
// requests for a mail.
func (r *claudeRig) toolResults(mailID, name string) []scriptedmodel.ToolResult {
	var out []scriptedmodel.ToolResult
	for _, q := range r.requestsFor(mailID) {
		for _, tr := range q.LastToolResults {
			if strings.EqualFold(tr.Name, name) {
				out = append(out, tr)
			}
		}
	}
	return out
}

// transcript finds Claude Code's own transcript of a platform session under
// the isolated HOME (~/.claude/projects/<folder of the cwd>/<id>.jsonl) and
// returns its path and content; "" when it does not exist.
func (r *claudeRig) transcript(platformSessionID string) (string, string) {
	matches, _ := filepath.Glob(filepath.Join(r.env.Home, ".claude", "projects", "*", platformSessionID+".jsonl"))
	if len(matches) == 0 {
		return "", ""
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		return "", ""
	}
	return matches[0], string(data)
}

// claudeWorkspace makes an existing absolute directory for mails to address.
func claudeWorkspace(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
