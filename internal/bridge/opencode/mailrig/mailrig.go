// Package mailrig runs AgentMail as separate processes for the end-to-end tests of the
// opencode and pi adapters: the gateway (`agentmail serve`) and the bridge (`agentmail
// bridge --platform NAME`), both from one build of cmd/agentmail, with the platform
// pinned by scripts/install-platforms.sh and the scripted model of internal/testkit/scriptedmodel.
// Only the model is scripted; everything else is the real binary talking HTTP.
//
// It is shared by the tests of internal/bridge/opencode and internal/bridge/pi.
package mailrig

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// Wait is the deadline of every condition the tests wait on: a platform needs seconds
// to start, more on a busy machine.
const Wait = 3 * time.Minute

// adminPassword is the password of the gateway's admin person.
const adminPassword = "mailrig-admin-password"

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// BinaryEnv names an agentmail binary to use instead of building one (for example a
// build of the last commit while the working tree is half-changed).
const BinaryEnv = "AGENTMAIL_MAILRIG_BIN"

// Binary builds cmd/agentmail once per test process and returns its path, or returns
// the binary BinaryEnv names.
func Binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv(BinaryEnv); b != "" {
		return b
	}
	buildOnce.Do(func() {
		root, err := platforms.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		buildDir, err = os.MkdirTemp("", "agentmail-mailrig-")
		if err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(buildDir, "agentmail")
		cmd := exec.Command("go", "build", "-o", buildBin, "./cmd/agentmail")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/agentmail: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("mailrig: %v", buildErr)
	}
	return buildBin
}

// RemoveBuild deletes the built binary; call it from TestMain after m.Run.
func RemoveBuild() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Log is a goroutine-safe buffer for a process's output.
type Log struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p; it never fails.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Count counts the occurrences of substr.
func (l *Log) Count(substr string) int { return strings.Count(l.String(), substr) }

// Rig is one gateway, the admin person signed in to it, an agent key, the scripted
// model, and the isolated environment the bridge and its platform run in.
type Rig struct {
	T        *testing.T
	Platform platforms.Platform
	Agent    string
	URL      string
	Admin    *client.Client // the person "admin", signed in with a cookie
	AgentKey string
	// DataDir is the gateway's data directory (AGENTMAIL_DATA_DIR of `agentmail serve`).
	DataDir string
	Model   *scriptedmodel.Server
	// Env is the environment of every bridge process: platforms's isolated one plus
	// the AGENTMAIL_* settings. Tests add the platform's provider configuration to it.
	Env *platforms.Env

	gwLog   *Log
	bridges []*Bridge
}

var listenLine = regexp.MustCompile(`agentmail gateway on (http://\S+)`)

// New starts the gateway and the scripted model and registers an agent key for agent.
// It skips (or under CI=true fails) when the platform is not installed.
func New(t *testing.T, platform platforms.Platform, agent string, rules ...scriptedmodel.Rule) *Rig {
	t.Helper()
	platformBin := platforms.Require(t, platform)
	r := &Rig{T: t, Platform: platform, Agent: agent, gwLog: &Log{}}
	r.Model = scriptedmodel.NewTest(t, rules...)
	r.startGateway()
	ctx := context.Background()
	r.Admin = client.New(r.URL, client.WithCookieJar())
	if _, err := r.Admin.Login(ctx, client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatalf("mailrig: admin login: %v\n%s", err, r.gwLog)
	}
	r.AgentKey = "amk_mailrig_" + agent + "_" + fmt.Sprint(time.Now().UnixNano())
	if _, err := r.Admin.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: agent, KeyToken: r.AgentKey,
		Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatalf("mailrig: registering the agent key: %v\n%s", err, r.gwLog)
	}
	r.Env = platforms.NewEnv(t)
	for k, v := range map[string]string{
		"AGENTMAIL_GATEWAY_URL":     r.URL,
		"AGENTMAIL_AGENT_KEY":       r.AgentKey,
		"AGENTMAIL_AGENT_NAME":      agent,
		"AGENTMAIL_PERMISSION_MODE": "workspace",
		platforms.BinEnv(platform):  platformBin,
	} {
		r.Env.Set(k, v)
	}
	t.Cleanup(func() {
		for _, b := range r.bridges {
			b.Stop()
		}
	})
	return r
}

func (r *Rig) startGateway() {
	t := r.T
	r.DataDir = t.TempDir()
	cmd := exec.Command(Binary(t), "serve")
	cmd.Env = append(os.Environ(), "AGENTMAIL_ADDR=127.0.0.1:0", "AGENTMAIL_DATA_DIR="+r.DataDir,
		"ADMIN_USER=admin", "ADMIN_PASSWORD="+adminPassword, "DATABASE_URL=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("mailrig: starting the gateway: %v", err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(r.gwLog, line)
			if m := listenLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case r.URL = <-found:
	case err := <-exited:
		t.Fatalf("mailrig: the gateway exited at start: %v\n%s", err, r.gwLog)
	case <-time.After(60 * time.Second):
		t.Fatalf("mailrig: the gateway did not print its address\n%s", r.gwLog)
	}
	c := client.New(r.URL)
	deadline := time.Now().Add(30 * time.Second)
	for c.Ready(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("mailrig: /readyz not ready\n%s", r.gwLog)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Bridge is one running `agentmail bridge --platform NAME`.
type Bridge struct {
	t      *testing.T
	cmd    *exec.Cmd
	Log    *Log
	exited chan struct{}
	err    error
}

// StartBridge starts the bridge with the rig's environment (nothing of the test's own
// environment but PATH, locale and TMPDIR) and waits until it is connected.
func (r *Rig) StartBridge() *Bridge {
	r.T.Helper()
	b := &Bridge{t: r.T, Log: &Log{}, exited: make(chan struct{})}
	b.cmd = exec.Command(Binary(r.T), "bridge", "--platform", string(r.Platform), "--log-level", "debug")
	b.cmd.Env = r.Env.Environ()
	b.cmd.Dir = r.Env.Home
	b.cmd.Stderr = b.Log
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		r.T.Fatalf("mailrig: starting agentmail bridge: %v", err)
	}
	go func() {
		b.err = b.cmd.Wait()
		close(b.exited)
	}()
	r.bridges = append(r.bridges, b)
	r.WaitFor("the bridge to connect", func() bool {
		select {
		case <-b.exited:
			r.T.Fatalf("mailrig: agentmail bridge exited at start: %v\n%s", b.err, b.Log)
		default:
		}
		return strings.Contains(b.Log.String(), "connected to "+r.URL+" as "+r.Agent)
	})
	return b
}

// PID is the bridge's process id.
func (b *Bridge) PID() int { return b.cmd.Process.Pid }

// Stop sends SIGTERM, waits for the bridge to exit (it stops its platform), and fails
// the test when it does not stop cleanly. Safe to call twice.
func (b *Bridge) Stop() {
	select {
	case <-b.exited:
		return
	default:
	}
	pgid := b.cmd.Process.Pid
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
		if b.err != nil {
			b.t.Errorf("agentmail bridge exited with %v after SIGTERM\n%s", b.err, b.Log)
		}
	case <-time.After(Wait):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-b.exited
		b.t.Errorf("agentmail bridge did not stop on SIGTERM\n%s", b.Log)
	}
}

// WaitFor polls cond until it holds or Wait passes; on timeout the test fails with every
// process's log and the model's request log.
func (r *Rig) WaitFor(what string, cond func() bool) {
	r.T.Helper()
	deadline := time.Now().Add(Wait)
	for !cond() {
		if time.Now().After(deadline) {
			r.T.Fatalf("timed out after %v waiting for %s\n%s", Wait, what, r.Dump())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Dump is the diagnostic text of a failure.
func (r *Rig) Dump() string {
	var b strings.Builder
	for i, br := range r.bridges {
		fmt.Fprintf(&b, "--- bridge %d log:\n%s\n", i+1, br.Log)
	}
	b.WriteString("--- model requests:\n")
	for i, q := range r.Model.ModelRequests() {
		fmt.Fprintf(&b, "%2d model=%s title=%v rule=%q status=%d tools=%d last_tool_results=%d user=%q\n",
			i, q.Model, q.Title, q.Rule, q.Status, len(q.Tools), len(q.LastToolResults), clip(q.UserText, 160))
	}
	logs := r.gwLog.String()
	if len(logs) > 6000 {
		logs = "…" + logs[len(logs)-6000:]
	}
	fmt.Fprintf(&b, "--- gateway log (tail):\n%s\n", logs)
	return b.String()
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Send writes a mail from the admin person.
func (r *Rig) Send(to, subject, body string) *client.SendMailResponse {
	r.T.Helper()
	resp, err := r.Admin.MeSend(context.Background(), client.SendMailRequest{To: to, Subject: subject, Body: body})
	if err != nil {
		r.T.Fatalf("sending %q to %s: %v\n%s", subject, to, err, r.gwLog)
	}
	return resp
}

// Mails lists the admin's whole mailbox, newest first, without marking read.
func (r *Rig) Mails() []client.Mail {
	r.T.Helper()
	no := false
	l, err := r.Admin.MeInbox(context.Background(), client.InboxQuery{Status: "all", Limit: 100, MarkRead: &no})
	if err != nil {
		r.T.Fatalf("admin inbox: %v", err)
	}
	return l.Mails
}

// Matching returns the admin's mails for which pred holds.
func (r *Rig) Matching(pred func(client.Mail) bool) []client.Mail {
	var out []client.Mail
	for _, m := range r.Mails() {
		if pred(m) {
			out = append(out, m)
		}
	}
	return out
}

// WaitMail waits until the admin's mailbox holds a mail for which pred holds.
func (r *Rig) WaitMail(what string, pred func(client.Mail) bool) client.Mail {
	r.T.Helper()
	var found client.Mail
	r.WaitFor(what, func() bool {
		ms := r.Matching(pred)
		if len(ms) == 0 {
			return false
		}
		found = ms[0]
		return true
	})
	return found
}

// Session reads a session as the admin sees it.
func (r *Rig) Session(id string) *client.Session {
	r.T.Helper()
	s, err := r.Admin.MeSession(context.Background(), id)
	if err != nil {
		r.T.Fatalf("session %s: %v", id, err)
	}
	return s
}

// ReplyFrom matches the agent's mails of one type in answer to mailID.
func (r *Rig) ReplyFrom(mailID, mailType string) func(client.Mail) bool {
	return func(m client.Mail) bool {
		return m.ParentMailID == mailID && m.FromName == r.Agent && m.MailType == mailType
	}
}

// TurnsFor returns the model requests that opened a turn for a mail: a fresh user turn
// (no tool result last, not a title request) whose prompt names the mail id.
func (r *Rig) TurnsFor(mailID string) []scriptedmodel.Request {
	var out []scriptedmodel.Request
	for _, q := range r.Model.ModelRequests() {
		if !q.Title && len(q.LastToolResults) == 0 && strings.Contains(q.UserText, "mail_id "+mailID) {
			out = append(out, q)
		}
	}
	return out
}

// RequestsFor returns every model request of the turns for a mail.
func (r *Rig) RequestsFor(mailID string) []scriptedmodel.Request {
	var out []scriptedmodel.Request
	for _, q := range r.Model.ModelRequests() {
		if !q.Title && strings.Contains(q.UserText, "mail_id "+mailID) {
			out = append(out, q)
		}
	}
	return out
}

// ToolResults returns the results of tool name the model saw in a mail's turns.
func (r *Rig) ToolResults(mailID, name string) []scriptedmodel.ToolResult {
	var out []scriptedmodel.ToolResult
	for _, q := range r.RequestsFor(mailID) {
		for _, tr := range q.LastToolResults {
			if strings.EqualFold(tr.Name, name) {
				out = append(out, tr)
			}
		}
	}
	return out
}

// Workspace makes an existing absolute directory for mails to address.
func Workspace(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// UserHas matches model requests whose last user text contains tag.
func UserHas(tag string) func(*scriptedmodel.Request) bool {
	return func(q *scriptedmodel.Request) bool { return strings.Contains(q.UserText, tag) }
}
