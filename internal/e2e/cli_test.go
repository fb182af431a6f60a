package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
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
)

// The end-to-end test of the command-line client (issue 8 "Done when"): the
// real binary's people commands against a started gateway, with the agent
// side played through the Go client.

// cliResult is one finished CLI run.
type cliResult struct {
	stdout, stderr string
	code           int
}

// cliEnv is the environment of CLI runs: a private config file and home,
// none of the caller's AGENTMAIL_* variables.
func cliEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTMAIL_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
}

// runCLI runs `agentmail args...` with stdin and waits (generously) for it.
func runCLI(t *testing.T, home, stdin string, args ...string) cliResult {
	t.Helper()
	return runCLIEnv(t, home, nil, stdin, args...)
}

// runCLIEnv is runCLI with the variables extra ("NAME=value") added.
func runCLIEnv(t *testing.T, home string, extra []string, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gatewayproc.Binary(t), args...)
	cmd.Env = append(cliEnv(home), extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("agentmail %q: %v", args, err)
	}
	return res
}

// mustCLI runs the CLI and fails unless it exits 0.
func mustCLI(t *testing.T, home, stdin string, args ...string) cliResult {
	t.Helper()
	r := runCLI(t, home, stdin, args...)
	if r.code != 0 {
		t.Fatalf("agentmail %q: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// lineWatcher collects the lines of a reader and lets a test wait for one.
type lineWatcher struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{}
}

func watchLines(r io.Reader) *lineWatcher {
	w := &lineWatcher{more: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
			select {
			case w.more <- struct{}{}:
			default:
			}
		}
	}()
	return w
}

// waitLine waits (generously) for a line containing substr.
func (w *lineWatcher) waitLine(t *testing.T, substr string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		for _, l := range w.lines {
			if strings.Contains(l, substr) {
				w.mu.Unlock()
				return l
			}
		}
		got := strings.Join(w.lines, "\n")
		w.mu.Unlock()
		select {
		case <-w.more:
		case <-deadline:
			t.Fatalf("no line with %q within 30 s; got:\n%s", substr, got)
		}
	}
}

func TestCLIAgainstGateway(t *testing.T) {
	gw := startGateway(t, t.TempDir())
	ctx := ctxT(t)
	httpc := CheckedHTTPClient(t)
	home := t.TempDir()
	ws := t.TempDir()

	// The admin creates the person ann and the agent claude's key.
	admin := client.New(gw.URL, client.WithHTTPClient(httpc))
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("admin login: %v\n%s", err, gw.Log.String())
	}
	if _, err := admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "ann", Password: "ann-password-1", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	key, err := admin.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "claude", Lifecycle: client.LifecyclePermanent})
	if err != nil || key.KeyToken == "" {
		t.Fatalf("agent key: %+v, %v", key, err)
	}
	agent := client.New(gw.URL, client.WithHTTPClient(httpc), client.WithToken(key.KeyToken))
	if _, err := agent.Register(ctx, client.RegisterRequest{Name: "claude", Platform: "e2e", Workspaces: []client.Workspace{{Name: "app", Path: ws}}}); err != nil {
		t.Fatal(err)
	}

	// Not logged in yet: exit 5.
	if r := runCLI(t, home, "", "inbox"); r.code != 5 || !strings.Contains(r.stderr, "agentmail login") {
		t.Fatalf("inbox before login: exit %d, stderr %q", r.code, r.stderr)
	}
	// A wrong password: exit 5 with the gateway's message, nothing stored.
	if r := runCLI(t, home, "wrong\n", "login", "--url", gw.URL, "--username", "ann", "--password-stdin"); r.code != 5 {
		t.Fatalf("login with a wrong password: exit %d, stderr %q", r.code, r.stderr)
	}

	// login: a user key labelled cli@<hostname>, stored with mode 0600.
	r := mustCLI(t, home, "ann-password-1\n", "login", "--url", gw.URL, "--username", "ann", "--password-stdin")
	if !strings.Contains(r.stdout, "Logged in to "+gw.URL+" as ann") {
		t.Errorf("login output %q", r.stdout)
	}
	cfgPath := filepath.Join(home, ".config", "agentmail", "cli.json")
	st, err := os.Stat(cfgPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config %s: %v, mode %v; want mode 0600", cfgPath, err, st.Mode().Perm())
	}
	var cfg struct{ URL, Token, KeyID string }
	raw, _ := os.ReadFile(cfgPath)
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg.Token == "" {
		t.Fatalf("config %s: %v", raw, err)
	}
	host, _ := os.Hostname()
	ann := client.New(gw.URL, client.WithHTTPClient(httpc), client.WithToken(cfg.Token))
	keys, err := ann.ListUserKeys(ctx)
	if err != nil || len(keys.Keys) != 1 || keys.Keys[0].Label != "cli@"+host || !keys.Keys[0].Active {
		t.Fatalf("ann's keys after login: %+v, %v", keys, err)
	}
	if r := mustCLI(t, home, "", "keys", "list"); !strings.Contains(r.stdout, "cli@"+host) {
		t.Errorf("keys list %q", r.stdout)
	}

	// send with the attachment from stdin.
	logText := "step 1 ok\nstep 2 FAILED: exit 2\n"
	r = mustCLI(t, home, logText, "send", "--to", "claude@"+ws+".new", "--subject", "Build report", "--body", "The build log is attached.",
		"--attach", "-", "--stdin-name", "build.log", "--budget", "4", "--json")
	var sent struct {
		client.SendMailResponse
		Attachments []client.Attachment `json:"attachments"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sent); err != nil || sent.MailID == "" || !sent.NewSession || sent.BudgetMax != 4 || len(sent.Attachments) != 1 {
		t.Fatalf("send --json output %q: %v", r.stdout, err)
	}

	// The agent's inbox shows it, with the attachment byte for byte.
	inbox, err := agent.Inbox(ctx, client.InboxQuery{Status: "all"})
	if err != nil || len(inbox.Mails) != 1 {
		t.Fatalf("agent inbox: %+v, %v", inbox, err)
	}
	m := inbox.Mails[0]
	if m.MailID != sent.MailID || m.Subject != "Build report" || m.Body != "The build log is attached." || m.FromName != "ann" || len(m.Attachments) != 1 || m.Attachments[0].Filename != "build.log" {
		t.Fatalf("the agent got %+v", m)
	}
	rc, meta, err := agent.DownloadAttachment(ctx, m.Attachments[0].AttachmentID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != logText || meta.Filename != "build.log" {
		t.Fatalf("attachment %q (%+v), want %q", got, meta, logText)
	}

	// The agent answers; ann sees it in inbox, show and tree.
	reply, err := agent.SendMail(ctx, client.SendMailRequest{To: "ann", ReplyTo: sent.MailID, Subject: "Re: Build report", Body: "Step 2 fails on a missing env var."})
	if err != nil {
		t.Fatal(err)
	}
	if r := mustCLI(t, home, "", "inbox"); !strings.Contains(r.stdout, reply.MailID) || !strings.Contains(r.stdout, "Re: Build report") {
		t.Errorf("inbox %q", r.stdout)
	}
	if r := mustCLI(t, home, "", "show", reply.MailID); !strings.Contains(r.stdout, "Step 2 fails on a missing env var.") || !strings.Contains(r.stdout, "From:     claude") {
		t.Errorf("show %q", r.stdout)
	}
	if r := mustCLI(t, home, "", "inbox"); strings.Contains(r.stdout, reply.MailID) {
		t.Errorf("the shown mail is still unread: %q", r.stdout)
	}
	// --json prints the API's own shapes.
	r = mustCLI(t, home, "", "inbox", "--all", "--json")
	CheckResponse(t, "GET", "/api/v1/me/mail/inbox", 200, []byte(r.stdout))
	if r := mustCLI(t, home, "", "tree", reply.MailID); !strings.Contains(r.stdout, "> ") || !strings.Contains(r.stdout, sent.MailID) {
		t.Errorf("tree %q", r.stdout)
	}
	if r := runCLI(t, home, "", "show", "no-such-mail"); r.code != 3 {
		t.Errorf("show of an unknown id: exit %d, want 3 (%s)", r.code, r.stderr)
	}

	// Permission requests: one approved, one denied, a second decision is a conflict.
	ask := func(relayKey, question string) *client.Permission {
		t.Helper()
		// The agent's words differ from the call: what a person decides
		// on is the call itself (issue 18 point 8).
		p, err := agent.RequestPermission(ctx, client.PermissionRequest{Question: "May I tidy up?", SessionID: sent.SessionID, RelayKey: relayKey,
			Tool: "Bash", ToolInput: map[string]any{"command": question}})
		if err != nil {
			t.Fatalf("permission request: %v", err)
		}
		return p
	}
	p1 := ask("perm-1", "rm -rf build")
	if r := mustCLI(t, home, "", "approve", p1.MailID, "--note", "go ahead"); !strings.Contains(r.stdout, "Approved "+p1.MailID+": Bash: rm -rf build\n") {
		t.Errorf("approve output %q", r.stdout)
	}
	if got, err := agent.GetPermission(ctx, p1.MailID); err != nil || got.Status != "approved" || !got.Approved || got.DecidedBy != "ann" || got.Note != "go ahead" {
		t.Fatalf("after approve: %+v, %v", got, err)
	}
	p2 := ask("perm-2", "git push --force")
	if r := mustCLI(t, home, "", "deny", p2.MailID, "--note", "never force-push"); !strings.Contains(r.stdout, "Denied "+p2.MailID+": Bash: git push --force\n") {
		t.Errorf("deny output %q", r.stdout)
	}
	if got, err := agent.GetPermission(ctx, p2.MailID); err != nil || got.Status != "denied" || got.Approved {
		t.Fatalf("after deny: %+v, %v", got, err)
	}
	if r := runCLI(t, home, "", "approve", p2.MailID); r.code != 4 {
		t.Errorf("approving a denied request: exit %d, want 4 (stderr %q)", r.code, r.stderr)
	}

	// watch prints a mail that arrives while it runs.
	ctxW, cancelW := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancelW()
	watch := exec.CommandContext(ctxW, gatewayproc.Binary(t), "watch")
	watch.Env = cliEnv(home)
	stdout, _ := watch.StdoutPipe()
	stderr, _ := watch.StderrPipe()
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	outLines, errLines := watchLines(stdout), watchLines(stderr)
	errLines.waitLine(t, "Watching "+gw.URL)
	arrived, err := agent.SendMail(ctx, client.SendMailRequest{To: "ann", ReplyTo: sent.MailID, Subject: "Tests green again", Body: "Fixed."})
	if err != nil {
		t.Fatal(err)
	}
	line := outLines.waitLine(t, "Tests green again")
	if !strings.Contains(line, "new mail "+arrived.MailID+" from claude") {
		t.Errorf("watch line %q", line)
	}
	p3 := ask("perm-3", "make deploy")
	// What it allows leads the line (the request's subject or its tool
	// summary, whichever event comes first), not the agent's words.
	if line := outLines.waitLine(t, "permission request "+p3.MailID); !strings.Contains(line, ": Bash: make deploy") {
		t.Errorf("watch does not say what the request allows: %q", line)
	}
	_ = watch.Process.Signal(syscall.SIGINT)
	// The line is read before Wait: Wait closes the pipes once the process
	// has exited, and a line not yet read from them is lost.
	errLines.waitLine(t, "resume with: agentmail watch --last-event-id")
	if err := watch.Wait(); err != nil {
		t.Errorf("watch after SIGINT: %v", err)
	}

	// logout revokes the key and removes the file.
	mustCLI(t, home, "", "logout")
	if _, err := os.Stat(cfgPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("config after logout: %v", err)
	}
	if _, err := ann.ListUserKeys(ctx); client.StatusOf(err) != 401 {
		t.Errorf("the revoked key still works: %v", err)
	}
}
