package mcptools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
)

// startGateway runs `agentmail serve` on a free loopback port with its own
// data directory and returns its URL. The process is stopped at the end of
// the test.
func startGateway(t *testing.T, adminPassword string) (url, dataDir string) {
	t.Helper()
	dataDir = realDir(t)
	g := gatewayproc.Serve(t, gatewayproc.Options{Clean: true, Env: []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + realDir(t),
		"AGENTMAIL_ADDR=127.0.0.1:0",
		"AGENTMAIL_DATA_DIR=" + dataDir,
		"ADMIN_USER=admin",
		"ADMIN_PASSWORD=" + adminPassword,
	}})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway log:\n%s", g.Log)
		}
	})
	return g.URL, dataDir
}

// agentWorld is a started gateway (startGateway) with a signed-in admin
// and the agent "claude" registered with one workspace.
type agentWorld struct {
	t            *testing.T
	ctx          context.Context
	url, dataDir string
	ws           string // claude's workspace
	admin        *client.Client
	key          *client.CreatedKey // claude's agent key
}

// startAgentWorld starts an agentWorld whose context ends after d; with
// -short it skips the test.
func startAgentWorld(t *testing.T, d time.Duration) *agentWorld {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the gateway; skipped with -short")
	}
	const password = "admin-password-1"
	w := &agentWorld{t: t, ws: realDir(t)}
	w.url, w.dataDir = startGateway(t, password)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	w.ctx = ctx
	w.admin = client.New(w.url)
	if _, err := w.admin.Login(ctx, client.LoginRequest{Username: "admin", Password: password}); err != nil {
		t.Fatalf("login: %v", err)
	}
	key, err := w.admin.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "claude", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatalf("create agent key: %v", err)
	}
	w.key = key
	agent := client.New(w.url, client.WithToken(key.KeyToken))
	if _, err := agent.Register(ctx, client.RegisterRequest{Name: "claude", Platform: "claude", Workspaces: []client.Workspace{{Name: "ws", Path: w.ws}}}); err != nil {
		t.Fatalf("register: %v", err)
	}
	return w
}

// person creates a user and answers their signed-in client.
func (w *agentWorld) person(name string) *client.Client {
	w.t.Helper()
	if _, err := w.admin.AdminCreateUser(w.ctx, client.CreateUserRequest{Username: name, Password: name + "-password-1", Role: "user"}); err != nil {
		w.t.Fatalf("create %s: %v", name, err)
	}
	c := client.New(w.url)
	if _, err := c.Login(w.ctx, client.LoginRequest{Username: name, Password: name + "-password-1"}); err != nil {
		w.t.Fatalf("%s logs in: %v", name, err)
	}
	return c
}

// turnEnv is the environment of `agentmail mcp` serving claude's turn for
// the mail sent (tier workspace).
func (w *agentWorld) turnEnv(sent *client.SendMailResponse) map[string]string {
	return map[string]string{
		"HOME":                      realDir(w.t),
		"AGENTMAIL_GATEWAY_URL":     w.url,
		"AGENTMAIL_AGENT_KEY":       w.key.KeyToken,
		"AGENTMAIL_AGENT_NAME":      "claude",
		"AGENTMAIL_SESSION_ID":      sent.SessionID,
		"AGENTMAIL_MAIL_ID":         sent.MailID,
		"AGENTMAIL_WORKSPACE":       w.ws,
		"AGENTMAIL_PERMISSION_MODE": "workspace",
		"AGENTMAIL_DATA_DIR":        w.dataDir,
	}
}

// decideNext waits (with a generous deadline) for the next pending
// permission request of the person and decides it with word.
func decideNext(t *testing.T, person *client.Client, word string) *client.Permission {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		l, err := person.MePermissions(ctx, "pending")
		if err != nil {
			t.Fatalf("list pending permissions: %v", err)
		}
		if len(l.Permissions) > 0 {
			p, err := person.Decide(ctx, l.Permissions[0].MailID, client.DecideRequest{Decision: word})
			if err != nil {
				t.Fatalf("decide %q: %v", word, err)
			}
			return p
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no permission request reached the person within 60 s")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// End to end against the real gateway: a person writes to the agent,
// `agentmail mcp` serves that turn, and its gated calls become permission
// requests the person decides. Approved: the file appears. Denied: it does
// not. Protected: nobody is asked and the gateway's data is untouched.
func TestGateEndToEndWithTheRealGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway; skipped with -short")
	}
	const password = "admin-password-1"
	url, dataDir := startGateway(t, password)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	person := client.New(url)
	if _, err := person.Login(ctx, client.LoginRequest{Username: "admin", Password: password}); err != nil {
		t.Fatalf("login: %v", err)
	}
	key, err := person.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "claude", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatalf("create agent key: %v", err)
	}
	ws, home := realDir(t), realDir(t)
	agent := client.New(url, client.WithToken(key.KeyToken))
	if _, err := agent.Register(ctx, client.RegisterRequest{Name: "claude", Platform: "claude", Workspaces: []client.Workspace{{Name: "ws", Path: ws}}}); err != nil {
		t.Fatalf("register: %v", err)
	}
	// Until the gateway serves the permission routes there is nothing to
	// test end to end (the gate then fails closed, which the other tests
	// show).
	if _, err := agent.GetPermission(ctx, "probe"); client.CodeOf(err) == "route_not_found" {
		t.Skip("the gateway does not serve /api/v1/permission/{mail_id} yet")
	}
	sent, err := person.MeSend(ctx, client.SendMailRequest{To: "claude@" + ws, Subject: "make a file", Body: "please create approved.txt"})
	if err != nil {
		t.Fatalf("person sends: %v", err)
	}

	env := map[string]string{
		"HOME":                         home,
		"AGENTMAIL_GATEWAY_URL":        url,
		"AGENTMAIL_AGENT_KEY":          key.KeyToken,
		"AGENTMAIL_AGENT_NAME":         "claude",
		"AGENTMAIL_SESSION_ID":         sent.SessionID,
		"AGENTMAIL_MAIL_ID":            sent.MailID,
		"AGENTMAIL_WORKSPACE":          ws,
		"AGENTMAIL_PERMISSION_MODE":    "workspace",
		"AGENTMAIL_PERMISSION_WAIT_MS": "120000",
		"AGENTMAIL_DATA_DIR":           dataDir,
	}
	p := startMCP(t, env, ws, agentmailBinary(t))
	initProcess(t, p)

	// The inbox through the tool shows the person's mail.
	text, isErr := p.callTool(1, "read_inbox", map[string]any{})
	if isErr || !strings.Contains(text, "make a file") {
		t.Fatalf("read_inbox: isError %v\n%s", isErr, text)
	}

	type answer struct {
		text  string
		isErr bool
		err   error
	}
	call := func(id int, name string, args map[string]any) chan answer {
		ch := make(chan answer, 1)
		go func() {
			txt, isErr, err := p.callToolE(id, name, args)
			ch <- answer{txt, isErr, err}
		}()
		return ch
	}
	wait := func(ch chan answer) answer {
		t.Helper()
		a := <-ch
		if a.err != nil {
			t.Fatal(a.err)
		}
		return a
	}

	// Approved by the person: the command runs.
	ch := call(2, "run_command", map[string]any{"command": "echo made > approved.txt"})
	perm := decideNext(t, person, "approve")
	if !perm.Approved || perm.Tool != "run_command" || !strings.Contains(perm.Context, "approved.txt") {
		t.Errorf("decided permission %+v", perm)
	}
	a := wait(ch)
	if a.isErr {
		t.Fatalf("approved run_command failed:\n%s", a.text)
	}
	assertContent(t, filepath.Join(ws, "approved.txt"), "made\n")

	// Denied by the person: nothing is written.
	ch = call(3, "write_file", map[string]any{"path": "denied.txt", "content": "no"})
	decideNext(t, person, "deny")
	if a = wait(ch); !a.isErr || !strings.Contains(a.text, "denied") {
		t.Errorf("denied write_file: isError %v\n%s", a.isErr, a.text)
	}
	assertAbsent(t, filepath.Join(ws, "denied.txt"))

	// An unknown word is a denial too.
	ch = call(4, "run_command", map[string]any{"command": "touch maybe.txt"})
	decideNext(t, person, "maybe later")
	if a = wait(ch); !a.isErr {
		t.Errorf("a non-approval word let the command run:\n%s", a.text)
	}
	assertAbsent(t, filepath.Join(ws, "maybe.txt"))

	// The gateway's data directory is protected: refused without asking.
	before, _ := os.ReadDir(dataDir)
	text, isErr = p.callTool(5, "write_file", map[string]any{"path": filepath.Join(dataDir, "agentmail.db"), "content": "x"})
	if !isErr || !strings.Contains(text, "protected path") {
		t.Errorf("write into the data directory: isError %v\n%s", isErr, text)
	}
	after, _ := os.ReadDir(dataDir)
	if len(before) != len(after) {
		t.Errorf("data directory changed: %v -> %v", before, after)
	}
	l, err := person.MePermissions(ctx, "all")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Permissions) != 3 {
		t.Errorf("want exactly 3 permission requests (the protected write asks nobody), got %d", len(l.Permissions))
	}
}

// An "always" given by one person covers that person's own sessions with
// the agent in that workspace and nobody else's (issue 12, point 3): bob's
// grant lets claude run commands in bob's next turn without asking, while
// carol's session with the same agent in the same directory still asks
// carol, and only bob lists the grant.
func TestAlwaysGrantCoversOnlyTheGrantingPersonsSessions(t *testing.T) {
	w := startAgentWorld(t, 3*time.Minute)
	ctx, ws := w.ctx, w.ws
	bob, carol := w.person("bob"), w.person("carol")
	// turn starts the tool server of one turn in the session a person opened.
	turn := func(from *client.Client, subject string) *mcpProcess {
		sent, err := from.MeSend(ctx, client.SendMailRequest{To: "claude@" + ws + ".new", Subject: subject, Body: "work"})
		if err != nil {
			t.Fatalf("send %q: %v", subject, err)
		}
		env := w.turnEnv(sent)
		env["AGENTMAIL_PERMISSION_WAIT_MS"] = "120000"
		p := startMCP(t, env, ws, agentmailBinary(t))
		initProcess(t, p)
		return p
	}
	run := func(p *mcpProcess, id int, command string) chan string {
		ch := make(chan string, 1)
		go func() {
			text, isErr, err := p.callToolE(id, "run_command", map[string]any{"command": command})
			switch {
			case err != nil:
				ch <- "error: " + err.Error()
			case isErr:
				ch <- "refused: " + text
			default:
				ch <- "ran"
			}
		}()
		return ch
	}

	// bob answers "always" in his own session.
	mine := turn(bob, "bob's work")
	ch := run(mine, 1, "touch bob-1")
	if perm := decideNext(t, bob, "always"); !perm.Approved || !perm.Always {
		t.Fatalf("bob's decision = %+v", perm)
	}
	if got := <-ch; got != "ran" {
		t.Fatalf("bob's approved command: %s", got)
	}
	// bob's next session with claude in the same directory: no question.
	again := turn(bob, "bob's next work")
	if got := <-run(again, 1, "touch bob-2"); got != "ran" {
		t.Fatalf("bob's granted command: %s", got)
	}
	assertContent(t, filepath.Join(ws, "bob-2"), "")
	if l, _ := bob.MePermissions(ctx, "all"); len(l.Permissions) != 1 {
		t.Errorf("bob was asked %d times, want once", len(l.Permissions))
	}

	// carol's session with the same agent in the same directory asks carol.
	theirs := turn(carol, "carol's work")
	ch = run(theirs, 1, "touch carol-1")
	if perm := decideNext(t, carol, "deny"); perm.Approved || perm.Tool != "run_command" {
		t.Errorf("carol's decision = %+v", perm)
	}
	if got := <-ch; !strings.HasPrefix(got, "refused") {
		t.Errorf("carol's denied command: %s", got)
	}
	assertAbsent(t, filepath.Join(ws, "carol-1"))

	// The grant is bob's: listed by him, not by carol.
	if l, err := bob.MeGrants(ctx); err != nil || len(l.Grants) != 1 || l.Grants[0].Scope != ws || l.Grants[0].GrantedBy != "bob" {
		t.Errorf("bob's grants = %+v, %v", l, err)
	}
	if l, err := carol.MeGrants(ctx); err != nil || len(l.Grants) != 0 {
		t.Errorf("carol's grants = %+v, %v", l, err)
	}
}
