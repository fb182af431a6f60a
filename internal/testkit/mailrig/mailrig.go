// Package mailrig runs AgentMail as separate processes for mail-level tests. A Gateway is
// `agentmail serve` with the admin person signed in and their mailbox at hand. A Rig adds
// one agent platform: the scripted model of internal/testkit/scriptedmodel, the platform
// pinned by scripts/install-platforms.sh, and `agentmail bridge --platform NAME` from the
// same build as the gateway. Only the model is scripted; everything else is the real
// binary talking HTTP.
//
// The platform contract test (internal/bridge/contract_test.go) drives every platform
// through a Rig; the bridge core's end-to-end tests use a Gateway.
package mailrig

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// Wait is the deadline of every condition a Rig waits on: a platform needs seconds to
// start, more on a busy machine.
const Wait = 3 * time.Minute

// AdminPassword is the password of the gateway's admin person "admin".
const AdminPassword = "mailrig-admin-password"

// Gateway is one started `agentmail serve` (SQLite in a temporary data directory, debug
// log) and the admin person signed in to it with a cookie.
type Gateway struct {
	T     *testing.T
	Proc  *gatewayproc.Gateway
	URL   string
	Admin *client.Client
	// DataDir is the gateway's data directory (`--data-dir`, AGENTMAIL_DATA_DIR of
	// `agentmail serve`), a fresh temporary one made before the gateway starts.
	DataDir string
	// Wait bounds WaitFor and the helpers built on it; mailrig.Wait unless set.
	Wait time.Duration
	// Dump is the diagnostic text a failed wait prints; the gateway's log tail unless set.
	Dump func() string
}

// StartGateway starts the gateway on a free loopback port and signs the admin in.
func StartGateway(t *testing.T) *Gateway {
	t.Helper()
	dataDir := t.TempDir()
	p := gatewayproc.Serve(t, gatewayproc.Options{
		Args: []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir,
			"--admin-user", "admin", "--admin-password", AdminPassword, "--log-level", "debug"},
		Env: []string{"AGENTMAIL_ADDR=", "DATABASE_URL="},
	})
	g := &Gateway{T: t, Proc: p, URL: p.URL, DataDir: dataDir, Wait: Wait}
	g.Dump = func() string { return "--- gateway log (tail):\n" + p.Log.Tail(6000) + "\n" }
	g.Admin = client.New(g.URL, client.WithCookieJar())
	if _, err := g.Admin.Login(context.Background(), client.LoginRequest{Username: "admin", Password: AdminPassword}); err != nil {
		t.Fatalf("mailrig: admin login: %v\n%s", err, p.Log)
	}
	return g
}

// WaitFor polls cond until it holds or g.Wait passes; on timeout the test fails with
// g.Dump().
func (g *Gateway) WaitFor(what string, cond func() bool) {
	g.T.Helper()
	deadline := time.Now().Add(g.Wait)
	for !cond() {
		if time.Now().After(deadline) {
			g.T.Fatalf("timed out after %v waiting for %s\n%s", g.Wait, what, g.Dump())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AgentKey registers a client-generated agent key for agent (seed 9.9) and returns it.
func (g *Gateway) AgentKey(agent string) string {
	g.T.Helper()
	key := "amk_mailrig_" + agent + "_" + fmt.Sprint(time.Now().UnixNano())
	if _, err := g.Admin.CreateAgentKey(context.Background(), client.CreateAgentKeyRequest{AgentName: agent, KeyToken: key,
		Lifecycle: client.LifecyclePermanent}); err != nil {
		g.T.Fatalf("mailrig: registering the agent key of %s: %v\n%s", agent, err, g.Proc.Log)
	}
	return key
}

// IssueAgentKey issues a gateway-generated agent key the way the README's first command
// does and returns it: the admin makes a user key, then sends exactly the request of the
// README's curl line (a JSON body with agent_name and lifecycle, the user key as Bearer
// token, curl's default content type for -d, no cookie and no CSRF token). Anything but
// 201 with a key_token fails the test.
func (g *Gateway) IssueAgentKey(agent string) string {
	g.T.Helper()
	uk, err := g.Admin.CreateUserKey(context.Background(), client.CreateUserKeyRequest{Label: "issue agent keys", Lifecycle: client.LifecyclePermanent})
	if err != nil || uk.KeyToken == "" {
		g.T.Fatalf("mailrig: admin user key: %+v, %v", uk, err)
	}
	body := fmt.Sprintf(`{"agent_name":%q,"lifecycle":"permanent"}`, agent)
	req, err := http.NewRequest(http.MethodPost, g.URL+"/api/v1/admin/agent-keys", strings.NewReader(body))
	if err != nil {
		g.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+uk.KeyToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // what curl -d sends
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.T.Fatalf("POST /api/v1/admin/agent-keys: %v", err)
	}
	defer resp.Body.Close()
	var created client.CreatedKey
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusCreated || created.KeyToken == "" {
		g.T.Fatalf("POST /api/v1/admin/agent-keys with a user key = %d %+v (%v), want 201 with a generated key_token", resp.StatusCode, created, err)
	}
	return created.KeyToken
}

// Send writes a mail from the admin person.
func (g *Gateway) Send(to, subject, body string) *client.SendMailResponse {
	g.T.Helper()
	resp, err := g.Admin.MeSend(context.Background(), client.SendMailRequest{To: to, Subject: subject, Body: body})
	if err != nil {
		g.T.Fatalf("sending %q to %s: %v\n%s", subject, to, err, g.Proc.Log)
	}
	return resp
}

// SendRequest writes the mail req from the admin person (importance,
// acknowledgement and the rest as given).
func (g *Gateway) SendRequest(req client.SendMailRequest) *client.SendMailResponse {
	g.T.Helper()
	resp, err := g.Admin.MeSend(context.Background(), req)
	if err != nil {
		g.T.Fatalf("sending %q to %s: %v\n%s", req.Subject, req.To, err, g.Proc.Log)
	}
	return resp
}

// Mails lists the admin's whole mailbox, newest first, without marking read.
func (g *Gateway) Mails() []client.Mail {
	g.T.Helper()
	no := false
	l, err := g.Admin.MeInbox(context.Background(), client.InboxQuery{Status: "all", Limit: 100, MarkRead: &no})
	if err != nil {
		g.T.Fatalf("admin inbox: %v", err)
	}
	return l.Mails
}

// Matching returns the admin's mails for which pred holds, newest first.
func (g *Gateway) Matching(pred func(client.Mail) bool) []client.Mail {
	var out []client.Mail
	for _, m := range g.Mails() {
		if pred(m) {
			out = append(out, m)
		}
	}
	return out
}

// WaitMail waits until the admin's mailbox holds a mail for which pred holds and returns
// the newest such mail.
func (g *Gateway) WaitMail(what string, pred func(client.Mail) bool) client.Mail {
	g.T.Helper()
	var found client.Mail
	g.WaitFor(what, func() bool {
		ms := g.Matching(pred)
		if len(ms) == 0 {
			return false
		}
		found = ms[0]
		return true
	})
	return found
}

// Session reads a session as the admin sees it.
func (g *Gateway) Session(id string) *client.Session {
	g.T.Helper()
	s, err := g.Admin.MeSession(context.Background(), id)
	if err != nil {
		g.T.Fatalf("session %s: %v", id, err)
	}
	return s
}

// Runs lists the runs of a session (the run cards of seed 004).
func (g *Gateway) Runs(sessionID string) []client.Run {
	g.T.Helper()
	l, err := g.Admin.MeSessionRuns(context.Background(), sessionID)
	if err != nil {
		g.T.Fatalf("runs of session %s: %v", sessionID, err)
	}
	return l.Runs
}

// WaitRun waits until the session holds a run for the mail in state and returns it.
func (g *Gateway) WaitRun(sessionID, mailID, state string) client.Run {
	g.T.Helper()
	var found client.Run
	g.WaitFor("a "+state+" run of mail "+mailID, func() bool {
		for _, run := range g.Runs(sessionID) {
			if run.MailID == mailID && run.State == state {
				found = run
				return true
			}
		}
		return false
	})
	return found
}

// Rig is one gateway, the scripted model, an agent with a key, and the isolated
// environment the agent's bridge and platform run in.
type Rig struct {
	*Gateway
	Platform platforms.Platform
	Agent    string
	AgentKey string
	// AgentClient is the agent's own view, for checks the person cannot make.
	AgentClient *client.Client
	Model       *scriptedmodel.Server
	// Env is the environment of every bridge process: the isolated one of
	// internal/testkit/platforms plus the AGENTMAIL_* settings. Tests add the platform's
	// provider configuration to it.
	Env *platforms.Env
	// BridgeArgs are the arguments that choose the bridge's adapter; "--platform" and the
	// rig's platform unless UseACP changed them.
	BridgeArgs []string

	bridges []*Bridge
}

// UseACP makes the rig's bridges drive the platform through the ACP adapter:
// `agentmail bridge --platform acp --acp-command <command line>`.
func (r *Rig) UseACP(commandLine string) {
	r.BridgeArgs = []string{"--platform", "acp", "--acp-command", commandLine}
}

// New starts the gateway and the scripted model and issues the agent's key the README's
// way (IssueAgentKey). It skips (or under CI=true fails) when the platform is not
// installed.
func New(t *testing.T, platform platforms.Platform, agent string, rules ...scriptedmodel.Rule) *Rig {
	t.Helper()
	platforms.Require(t, platform)
	r := Join(StartGateway(t), platform, agent, rules...)
	r.Gateway.Dump = r.Dump
	return r
}

// Join adds an agent on platform to the running gateway g: its own scripted model, its
// key issued the README's way and its own isolated environment, so that several rigs on
// one gateway are agents of different platforms mailing each other. g.Dump stays as it
// is (a test of several rigs joins their Dump texts). It skips as New does.
func Join(g *Gateway, platform platforms.Platform, agent string, rules ...scriptedmodel.Rule) *Rig {
	t := g.T
	t.Helper()
	platformBin := platforms.Require(t, platform)
	r := &Rig{Platform: platform, Agent: agent, Gateway: g, BridgeArgs: []string{"--platform", string(platform)}}
	r.Model = scriptedmodel.NewTest(t, rules...)
	r.AgentKey = r.IssueAgentKey(agent)
	r.AgentClient = client.New(r.URL, client.WithToken(r.AgentKey))
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
	return r
}

// Bridge is one running `agentmail bridge --platform NAME` (or the ACP adapter, UseACP).
type Bridge struct {
	*gatewayproc.Proc
	t *testing.T
}

// StartBridge starts the bridge in its own process group with the rig's environment
// (nothing of the test's own environment but PATH, locale and TMPDIR) and waits until it
// is connected. When the test ends a bridge still running is stopped as Stop does.
func (r *Rig) StartBridge() *Bridge {
	r.T.Helper()
	b := &Bridge{t: r.T, Proc: gatewayproc.Start(r.T, gatewayproc.Options{
		Args: append(append([]string{"bridge"}, r.BridgeArgs...), "--log-level", "debug"),
		Env:  r.Env.Environ(), Clean: true, Dir: r.Env.Home, Group: true,
		StopWait: Wait, CheckExit: true,
	})}
	r.bridges = append(r.bridges, b)
	r.WaitFor("the bridge to connect", func() bool {
		if !b.Running() {
			r.T.Fatalf("mailrig: agentmail bridge exited at start: %v\n%s", b.Err(), b.Log)
		}
		return strings.Contains(b.Log.String(), "connected to "+r.URL+" as "+r.Agent)
	})
	return b
}

// Stop sends SIGTERM, waits for the bridge to exit (it stops its platform), and fails the
// test when it does not exit with status 0 within Wait. Safe to call twice.
func (b *Bridge) Stop() {
	b.t.Helper()
	if err := b.Proc.Stop(Wait); err != nil {
		b.t.Errorf("agentmail bridge after SIGTERM: %v\n%s", err, b.Log)
	}
}

// Dump is the diagnostic text of a failure: every bridge's log, the model's requests and
// the gateway's log tail.
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
	fmt.Fprintf(&b, "--- gateway log (tail):\n%s\n", r.Proc.Log.Tail(6000))
	return b.String()
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
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
	for _, q := range r.RequestsFor(mailID) {
		if len(q.LastToolResults) == 0 {
			out = append(out, q)
		}
	}
	return out
}

// RequestsFor returns every model request of the turns for a mail (the opening requests
// and their tool-result follow-ups; no title request).
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
