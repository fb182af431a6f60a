package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
	"github.com/agentmail/agentmail/internal/testkit"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
)

// Coordination between agents over the started binary (issue 21 items
// 1-3): two agents' `agentmail mcp` servers contending for the paths of one
// git repository, a holder that goes offline and loses its reservation
// after the gateway's offline limit (shortened to 2 s), the pre-commit
// guard in that repository refusing and then allowing a commit, and
// acknowledgements and importance from the people's CLI to an agent's
// tools and back.

// coOfflineTTL is the gateway's offline limit in these tests.
const coOfflineTTL = 2 * time.Second

// coEnv is the started gateway, the admin and carol, and a git repository.
type coEnv struct {
	t     *testing.T
	ctx   context.Context
	bin   string
	g     *gatewayproc.Gateway
	admin *client.Client
	carol *client.Client
	repo  string
	home  string // HOME of the processes started here (no key file unless written)
}

func coSetup(t *testing.T) *coEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := gatewayproc.Binary(t)
	g := startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t), "AGENTMAIL_RESERVATION_OFFLINE_TTL="+coOfflineTTL.String())
	e := &coEnv{t: t, ctx: ctxT(t), bin: bin, g: g, repo: t.TempDir(), home: t.TempDir()}
	e.admin = client.New(g.URL, client.WithHTTPClient(CheckedHTTPClient(t)), client.WithCookieJar())
	if _, err := e.admin.Login(e.ctx, client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatalf("admin login: %v\n%s", err, g.Log)
	}
	x := &peopleAndAgents{t: t, ctx: e.ctx, g: g, admin: e.admin}
	e.carol = x.person("carol")
	e.git("init", "-q", "-b", "main")
	return e
}

// agent creates an agent key for name and registers the agent with the
// repository as its workspace.
func (e *coEnv) agent(name string) (*client.Client, string) {
	e.t.Helper()
	key, err := e.admin.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: name, Lifecycle: client.LifecyclePermanent})
	if err != nil {
		e.t.Fatal(err)
	}
	c := client.New(e.g.URL, client.WithHTTPClient(CheckedHTTPClient(e.t)), client.WithToken(key.KeyToken))
	if _, err := c.Register(e.ctx, client.RegisterRequest{Name: name, Platform: "e2e", Workspaces: []client.Workspace{{Name: "repo", Path: e.repo}}}); err != nil {
		e.t.Fatal(err)
	}
	return c, key.KeyToken
}

// run runs a program in dir with only the given environment (plus PATH)
// and answers its combined output and exit status.
func (e *coEnv) run(dir string, env []string, prog string, args ...string) (string, int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.invalid", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.invalid"}, env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	e.t.Fatalf("%s %q: %v\n%s", prog, args, err, out)
	return "", -1
}

func (e *coEnv) git(args ...string) string {
	e.t.Helper()
	out, code := e.run(e.repo, nil, "git", args...)
	if code != 0 {
		e.t.Fatalf("git %q: exit %d\n%s", args, code, out)
	}
	return out
}

// commit stages content in file and tries to commit it with env; it
// answers git's output and exit status.
func (e *coEnv) commit(file, content string, env ...string) (string, int) {
	e.t.Helper()
	p := filepath.Join(e.repo, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.git("add", file)
	return e.run(e.repo, env, "git", "commit", "-q", "-m", "change "+file)
}

// coMCP is one agent's `agentmail mcp` spoken to with the MCP SDK.
type coMCP struct {
	t  *testing.T
	cs *mcp.ClientSession
}

func (e *coEnv) mcp(name, key string) *coMCP {
	e.t.Helper()
	cmd := exec.Command(e.bin, "mcp")
	cmd.Dir = e.repo
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "AGENTMAIL_GATEWAY_URL=" + e.g.URL,
		"AGENTMAIL_AGENT_KEY=" + key, "AGENTMAIL_AGENT_NAME=" + name, "AGENTMAIL_WORKSPACE=" + e.repo, "AGENTMAIL_SANDBOX=off"}
	cmd.Stderr = &testkit.Log{}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(e.ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.t.Fatalf("starting agentmail mcp for %s: %v", name, err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return &coMCP{t: e.t, cs: cs}
}

// call calls a tool and answers its text and whether it was a tool error.
func (m *coMCP) call(name string, args map[string]any) (string, bool) {
	m.t.Helper()
	res, err := m.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		m.t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func (m *coMCP) mustCall(name string, args map[string]any, want ...string) string {
	m.t.Helper()
	text, isErr := m.call(name, args)
	if isErr {
		m.t.Fatalf("%s failed: %s", name, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			m.t.Fatalf("%s answered without %q:\n%s", name, w, text)
		}
	}
	return text
}

func wantContains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func TestCoordinationReservationsMCPAndGuard(t *testing.T) {
	e := coSetup(t)
	alpha, alphaKey := e.agent("alpha")
	_, betaKey := e.agent("beta")
	ma, mb := e.mcp("alpha", alphaKey), e.mcp("beta", betaKey)
	stream, err := alpha.Stream(e.ctx, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	// Two agents' tool servers contend for src/: the second is refused,
	// told who holds it, why and until when; a shared path is granted to both.
	ma.mustCall("reserve_paths", map[string]any{"paths": []string{"src/**"}, "reason": "refactor the parser"}, "Reserved in "+e.repo, "src/**")
	text := mb.mustCall("reserve_paths", map[string]any{"paths": []string{"src/main.go"}, "reason": "fix a typo"},
		"REFUSED", "held by alpha", `reason: "refactor the parser"`, "Not reserved: src/main.go", "write to alpha")
	if strings.Contains(text, "Reserved in") {
		t.Fatalf("beta was granted a path alpha holds:\n%s", text)
	}
	ma.mustCall("reserve_paths", map[string]any{"paths": "notes/*.md", "exclusive": false, "reason": "reading"}, "Reserved")
	mb.mustCall("reserve_paths", map[string]any{"paths": []string{"notes/todo.md"}, "exclusive": false}, "Reserved", "granted anyway (both shared)")
	mb.mustCall("list_reservations", map[string]any{}, "src/** — exclusive, held by alpha", "notes/todo.md — shared, held by beta")
	if text, isErr := mb.call("reserve_paths", map[string]any{"paths": []string{"x"}, "ttl_minutes": 2000}); !isErr || !strings.Contains(text, "1440") {
		t.Fatalf("a TTL beyond the bound: %v %s", isErr, text)
	}

	// The pre-commit guard, in the real repository: beta (in a turn of its
	// own, through the turn token) may not commit alpha's src/main.go.
	out, code := e.run(e.repo, nil, e.bin, "guard", "install")
	if code != 0 {
		t.Fatalf("guard install: exit %d\n%s", code, out)
	}
	out, code = e.commit("README.md", "first\n") // no identity: allowed with a warning
	if code != 0 || !strings.Contains(out, "WARNING") {
		t.Fatalf("a commit without any AgentMail key: exit %d\n%s", code, out)
	}
	sent, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "beta@" + e.repo + ".new", Subject: "typo", Body: "fix it"})
	if err != nil {
		t.Fatal(err)
	}
	betaC := client.New(e.g.URL, client.WithToken(betaKey))
	tok, err := betaC.CreateTurnToken(e.ctx, sent.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	turnEnv := []string{"AGENTMAIL_GATEWAY_URL=" + e.g.URL, "AGENTMAIL_TURN_TOKEN=" + tok.Token}
	out, code = e.commit("src/main.go", "package main\n", turnEnv...)
	if code == 0 {
		t.Fatalf("the guard let beta commit alpha's reserved file:\n%s", out)
	}
	wantContains(t, "the refusal", out, "commit refused", "src/main.go", "held by alpha", "src/**", `"refactor the parser"`, "until", "git commit --no-verify", "AGENTMAIL_GUARD=off")
	// alpha itself may commit it (its own reservation), with its key file.
	keyFile := filepath.Join(t.TempDir(), "agent.key")
	if err := os.WriteFile(keyFile, []byte(alphaKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = e.run(e.repo, []string{"AGENTMAIL_GATEWAY_URL=" + e.g.URL, "AGENTMAIL_AGENT_KEY_FILE=" + keyFile}, "git", "commit", "-q", "-m", "alpha's change")
	if code != 0 {
		t.Fatalf("alpha could not commit its own reserved file:\n%s", out)
	}
	// alpha releases; beta's commit then goes through.
	ma.mustCall("release_reservations", map[string]any{"paths": []string{"src/**"}}, "Released", "src/**")
	if out, code := e.commit("src/main.go", "package main // fixed\n", turnEnv...); code != 0 {
		t.Fatalf("after the release beta's commit was refused:\n%s", out)
	}
	// A gateway that cannot be reached lets the commit through, visibly.
	out, code = e.commit("src/other.go", "package main\n", "AGENTMAIL_GATEWAY_URL=http://127.0.0.1:1", "AGENTMAIL_TURN_TOKEN="+tok.Token)
	if code != 0 {
		t.Fatalf("an unreachable gateway refused the commit:\n%s", out)
	}
	wantContains(t, "the unreachable gateway's warning", out, "WARNING", "UNCHECKED")

	// alpha takes src/** again and then falls silent: after the offline
	// limit its reservation ends, it is told why, and beta gets the path.
	ma.mustCall("reserve_paths", map[string]any{"paths": []string{"src/**"}, "reason": "second pass"}, "Reserved")
	deadline := time.Now().Add(30 * time.Second)
	for {
		text, isErr := mb.call("reserve_paths", map[string]any{"paths": []string{"src/main.go"}, "reason": "my turn"})
		if isErr {
			t.Fatalf("reserve_paths: %s", text)
		}
		if strings.Contains(text, "Reserved in") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alpha's reservation outlived the offline limit of %s:\n%s", coOfflineTTL, text)
		}
		time.Sleep(100 * time.Millisecond) // polling interval of a condition with a deadline
	}
	waitEvent(t, stream, client.EventReservationChanged, func(b []byte) bool {
		var ev client.ReservationEvent
		return json.Unmarshal(b, &ev) == nil && ev.Change == client.ReservationHolderOffline && ev.Workspace == e.repo &&
			len(ev.Reservations) > 0 && ev.Reservations[0].Holder == "alpha"
	})
	// carol takes part in a session in the repository: she sees beta's
	// reservation and may end it.
	list, err := e.carol.MeReservations(e.ctx, e.repo)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, r := range list.Reservations {
		if r.Holder == "beta" && r.Path == "src/main.go" {
			id = r.ReservationID
		}
	}
	if id == "" {
		t.Fatalf("carol does not see beta's reservation: %+v", list.Reservations)
	}
	if err := e.carol.MeReleaseReservation(e.ctx, id); err != nil {
		t.Fatal(err)
	}
}

func TestCoordinationAcknowledgementsAndImportance(t *testing.T) {
	e := coSetup(t)
	_, alphaKey := e.agent("alpha")
	ma := e.mcp("alpha", alphaKey)
	key, err := e.carol.CreateUserKey(e.ctx, client.CreateUserKeyRequest{Label: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	cliEnv := []string{"AGENTMAIL_GATEWAY_URL=" + e.g.URL, "AGENTMAIL_USER_KEY=" + key.KeyToken, "AGENTMAIL_CONFIG=" + filepath.Join(e.home, "cli.json")}
	cli := func(args ...string) string {
		t.Helper()
		out, code := e.run(e.repo, cliEnv, e.bin, args...)
		if code != 0 {
			t.Fatalf("agentmail %q: exit %d\n%s", args, code, out)
		}
		return out
	}

	// carol sends an urgent mail asking for an acknowledgement, and a low one.
	out := cli("send", "--to", "alpha@"+e.repo+".new", "--subject", "freeze deploys", "--body", "until Monday", "--importance", "urgent", "--ack", "--json")
	var sent client.SendMailResponse
	if err := json.Unmarshal([]byte(out), &sent); err != nil {
		t.Fatalf("send --json: %v\n%s", err, out)
	}
	cli("send", "--to", "alpha@"+e.repo, "--subject", "someday", "--body", "no hurry", "--importance", "low")

	// The agent's tools show the importance and the request; reading does
	// not acknowledge.
	ma.mustCall("read_inbox", map[string]any{"status": "all", "sort": "importance"}, "Importance: URGENT", "Acknowledgement requested", "acknowledge_mail with mail_id "+sent.MailID)
	text := ma.mustCall("read_inbox", map[string]any{"status": "all", "importance": "low"}, "someday")
	if strings.Contains(text, "freeze deploys") {
		t.Fatalf("the importance filter let an urgent mail through:\n%s", text)
	}
	ma.mustCall("list_unacknowledged", map[string]any{}, "carol asks you to acknowledge", sent.MailID)
	wantContains(t, "agentmail acks", cli("acks"), sent.MailID, "alpha")
	ma.mustCall("acknowledge_mail", map[string]any{"mail_id": sent.MailID}, "Acknowledged mail "+sent.MailID)
	ma.mustCall("acknowledge_mail", map[string]any{"mail_id": sent.MailID}, "already acknowledged")
	wantContains(t, "agentmail acks after the acknowledgement", cli("acks"), "Nothing is waiting")
	wantContains(t, "agentmail show", cli("show", sent.MailID), "Importance: URGENT", "acknowledged by alpha; waiting for nobody")

	// The agent asks carol for an acknowledgement with a short deadline;
	// she sees it overdue and acknowledges with the CLI.
	ma.mustCall("send_mail", map[string]any{"to": "carol", "reply_to": sent.MailID, "body": "frozen; confirm the date", "ack_required": true, "ack_within_minutes": 1, "importance": "high"}, "Sent")
	inbox, err := e.carol.MeInbox(e.ctx, client.InboxQuery{Importance: "high"})
	if err != nil || len(inbox.Mails) != 1 || !inbox.Mails[0].AckRequired {
		t.Fatalf("carol's high-importance inbox = %+v, %v", inbox, err)
	}
	reply := inbox.Mails[0].MailID
	wantContains(t, "agentmail inbox", cli("inbox", "--all", "--sort", "importance"), "!", "Re: freeze deploys")
	cli("ack", reply)
	ma.mustCall("list_unacknowledged", map[string]any{"role": "sender"}, "Nothing is waiting")
	// A mail that asks for nothing cannot be acknowledged: 409, exit 4.
	if out, code := e.run(e.repo, cliEnv, e.bin, "ack", inbox.Mails[0].ParentMailID); code != 4 {
		t.Fatalf("ack of carol's own sent mail: exit %d\n%s", code, out)
	}
}

// mcpWith starts `agentmail mcp` in the repository with env (plus PATH,
// HOME and the gateway's address): a turn's tool server when env holds
// AGENTMAIL_TURN_TOKEN.
func (e *coEnv) mcpWith(env ...string) *coMCP {
	e.t.Helper()
	cmd := exec.Command(e.bin, "mcp")
	cmd.Dir = e.repo
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "AGENTMAIL_GATEWAY_URL=" + e.g.URL,
		"AGENTMAIL_WORKSPACE=" + e.repo, "AGENTMAIL_SANDBOX=off"}, env...)
	cmd.Stderr = &testkit.Log{}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(e.ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.t.Fatalf("starting agentmail mcp: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return &coMCP{t: e.t, cs: cs}
}

// The details of issue 21 items 1 and 2 over the started binary: a
// reservation taken in a turn names its session to the holder and to the
// people of that session, never to another agent that runs into it (its
// conflict and its listing name the holder, reason and expiry only); the
// pre-commit guard knows a person by the user key and refuses her a path
// the agent holds; and ack_required never widens who may write to whom: a
// person outside a
// session is refused with it exactly as without it, by the API and the
// CLI, and nothing reaches the session.
func TestCoordinationConflictsNameNoForeignSessionAndAckNeverWidens(t *testing.T) {
	e := coSetup(t)
	alpha, _ := e.agent("alpha")
	_, betaKey := e.agent("beta")
	opened, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "alpha@" + e.repo + ".new", Subject: "private refactor", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := alpha.CreateTurnToken(e.ctx, opened.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	inTurn := e.mcpWith("AGENTMAIL_TURN_TOKEN="+tok.Token, "AGENTMAIL_SESSION_ID="+opened.SessionID)
	inTurn.mustCall("reserve_paths", map[string]any{"paths": []string{"src/**"}, "reason": "refactor the parser"}, "Reserved")
	inTurn.mustCall("list_reservations", map[string]any{}, "src/** — exclusive, held by alpha", "session "+opened.SessionAlias)

	mb := e.mcp("beta", betaKey)
	refused := mb.mustCall("reserve_paths", map[string]any{"paths": []string{"src/main.go"}, "reason": "fix a typo"},
		"REFUSED", "held by alpha", `reason: "refactor the parser"`, "until")
	listed := mb.mustCall("list_reservations", map[string]any{}, "src/** — exclusive, held by alpha")
	for what, text := range map[string]string{"beta's conflict": refused, "beta's listing": listed} {
		if strings.Contains(text, opened.SessionAlias) || strings.Contains(text, opened.SessionID) {
			t.Errorf("%s names carol's session with alpha:\n%s", what, text)
		}
	}
	// carol takes part in the session: her view names it.
	list, err := e.carol.MeReservations(e.ctx, e.repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Reservations) != 1 || list.Reservations[0].SessionAlias != opened.SessionAlias {
		t.Errorf("carol's view of the reservation: %+v", list.Reservations)
	}
	// The guard knows carol by her user key (no agent identity around):
	// alpha's path is refused to her too, and the refusal names no session.
	carolEnv := e.userCLIEnv(e.carol, "carol.json")
	if out, code := e.run(e.repo, nil, e.bin, "guard", "install"); code != 0 {
		t.Fatalf("guard install: exit %d\n%s", code, out)
	}
	out, code := e.commit("src/parser.go", "package parser\n", carolEnv...)
	if code == 0 {
		t.Fatalf("the guard let carol commit a path alpha holds:\n%s", out)
	}
	wantContains(t, "the refusal of carol's commit", out, "commit refused", "held by alpha", `"refactor the parser"`)
	e.git("rm", "-q", "--cached", "src/parser.go")
	if _, code := e.commit("docs/notes.md", "notes\n", carolEnv...); code != 0 {
		t.Errorf("the guard refused carol a path nobody holds")
	}
	// carol's CLI lists the reservation and ends it; then her commit goes through.
	out, code = e.run(e.repo, carolEnv, e.bin, "reservations", e.repo)
	if code != 0 {
		t.Fatalf("agentmail reservations: exit %d\n%s", code, out)
	}
	wantContains(t, "agentmail reservations", out, list.Reservations[0].ReservationID, "src/**", "alpha", "exclusive", "refactor the parser")
	out, code = e.run(e.repo, carolEnv, e.bin, "reservations", "release", list.Reservations[0].ReservationID)
	if code != 0 {
		t.Fatalf("agentmail reservations release: exit %d\n%s", code, out)
	}
	inTurn.mustCall("list_reservations", map[string]any{}, ": none.")
	e.git("add", "src/parser.go")
	if out, code := e.run(e.repo, carolEnv, "git", "commit", "-q", "-m", "carol's parser"); code != 0 {
		t.Errorf("carol's commit after the release: exit %d\n%s", code, out)
	}

	// dave takes part in nothing: asking for an acknowledgement opens no
	// door that a plain send does not.
	dave := (&peopleAndAgents{t: t, ctx: e.ctx, g: e.g, admin: e.admin}).person("dave")
	to := "alpha@" + e.repo + "." + opened.SessionAlias
	_, plainErr := dave.MeSend(e.ctx, client.SendMailRequest{To: to, Subject: "x", Body: "y"})
	_, ackErr := dave.MeSend(e.ctx, client.SendMailRequest{To: to, Subject: "x", Body: "y", AckRequired: true, Importance: "urgent"})
	plain := wantStatus(t, plainErr, 404, "alias_not_found")
	withAck := wantStatus(t, ackErr, 404, "alias_not_found")
	if plain.Message() != withAck.Message() {
		t.Errorf("the refusal differs with ack_required: %q vs %q", plain.Message(), withAck.Message())
	}
	daveEnv := e.userCLIEnv(dave, "dave.json")
	if out, code = e.run(e.repo, daveEnv, e.bin, "send", "--to", to, "--subject", "x", "--body", "y", "--ack"); code == 0 {
		t.Errorf("dave's agentmail send --ack into carol's session succeeded:\n%s", out)
	}
	mails, err := e.carol.MeSessionMails(e.ctx, opened.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mails.Mails {
		if m.FromName == "dave" {
			t.Errorf("dave's mail reached carol's session: %+v", m)
		}
	}
}
