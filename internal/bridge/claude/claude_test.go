package claude

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/adaptertest"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The test binary doubles as a tiny AgentMail MCP server: started as `<test binary>
// mcp-serve` it offers one tool, whoami, answering with the environment the tool server
// was given.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == adaptertest.WhoamiArg {
		adaptertest.ServeWhoami()
		return
	}
	os.Exit(m.Run())
}

// setup starts the fake model with rules and an adapter that runs the real claude against
// it in an isolated home.
func setup(t *testing.T, rules ...scriptedmodel.Rule) (*Adapter, *scriptedmodel.Server) {
	t.Helper()
	bin := platforms.Require(t, platforms.Claude)
	s := scriptedmodel.NewTest(t, rules...)
	env := platforms.NewEnv(t)
	env.UseClaude(s.URL)
	a := New(Options{Environ: env.Environ()})
	err := a.Start(context.Background(), bridge.Env{
		AgentName:  "coder",
		GatewayURL: "http://127.0.0.1:1",
		MCPCommand: adaptertest.WhoamiCommand(t),
		Bin:        bin,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, s
}

func TestTurnAnswersWithLastTextInCwd(t *testing.T) {
	a, s := setup(t, scriptedmodel.Rule{UserContains: "status please", Reply: scriptedmodel.Reply{Thinking: "private reasoning", Text: "all is well"}})
	dir := t.TempDir()
	var startedPID int
	var startedSession string
	var verdicts []error
	res := adaptertest.RunTurn(t, a, bridge.TurnRequest{
		Cwd:       dir,
		Prompt:    "status please",
		OnStart:   func(pid int, id string) { startedPID, startedSession = pid, id },
		OnVerdict: func(err error) { verdicts = append(verdicts, err) },
	})
	if res.Failed || res.Text != "all is well" {
		t.Fatalf("result %+v", res)
	}
	reqs := s.ModelRequests()
	if len(reqs) == 0 || res.MessageID != reqs[len(reqs)-1].ResponseID {
		t.Fatalf("MessageID %q is not the model's message id (log %+v)", res.MessageID, reqs)
	}
	// Claude Code tells the model its working directory in the system prompt.
	if !strings.Contains(reqs[0].System, "Primary working directory: "+dir) {
		t.Errorf("the model was not told the working directory %s", dir)
	}
	if res.PlatformSessionID == "" || startedSession != res.PlatformSessionID || startedPID != res.Facts.PID || res.Facts.PID <= 0 {
		t.Errorf("session %q started %q pid %d facts %+v", res.PlatformSessionID, startedSession, startedPID, res.Facts)
	}
	if len(verdicts) != 1 || verdicts[0] != nil {
		t.Errorf("verdicts %v", verdicts)
	}
	f := res.Facts
	if f.ExitCode == nil || *f.ExitCode != 0 || f.BytesRead == 0 || f.StopReason != "end_turn" || !f.EndedAt.After(f.StartedAt) || f.UnparsedLines != 0 {
		t.Errorf("facts %+v", f)
	}
}

func TestResumedTurnContinuesTheSameSession(t *testing.T) {
	a, s := setup(t,
		scriptedmodel.Rule{UserContains: "second question", Reply: scriptedmodel.Text("second answer")},
		scriptedmodel.Rule{UserContains: "first question", Reply: scriptedmodel.Text("first answer")},
	)
	dir := t.TempDir()
	first := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "first question"})
	second := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "second question", PlatformSessionID: first.PlatformSessionID})
	if first.Text != "first answer" || second.Text != "second answer" {
		t.Fatalf("texts %q %q", first.Text, second.Text)
	}
	if second.PlatformSessionID != first.PlatformSessionID {
		t.Fatalf("resumed session %q, want %q", second.PlatformSessionID, first.PlatformSessionID)
	}
	if second.MessageID == first.MessageID {
		t.Fatalf("both turns relayed message id %q", first.MessageID)
	}
	reqs := s.ModelRequests()
	last := reqs[len(reqs)-1]
	history := adaptertest.History(last)
	if !strings.Contains(history, "first question") || !strings.Contains(history, "first answer") {
		t.Fatalf("the resumed turn did not carry the first turn's history:\n%s", history)
	}
}

func TestUnknownSessionIsErrSessionNotFound(t *testing.T) {
	a, _ := setup(t)
	_, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "hi", PlatformSessionID: "0b6f2c1e-58a4-4c5e-9a0e-1234567890ab"})
	if !errors.Is(err, bridge.ErrSessionNotFound) {
		t.Fatalf("err %v, want ErrSessionNotFound", err)
	}
}

// bashLoop is the script of the permission tests: the model runs `touch x` with Bash, then
// answers with the tool result it saw.
func bashLoop() []scriptedmodel.Rule {
	return []scriptedmodel.Rule{
		{ToolResultFor: "Bash", Reply: scriptedmodel.Text("bash finished")},
		{UserContains: "make x", Reply: scriptedmodel.Reply{Text: "I will create it.", ToolCalls: []scriptedmodel.ToolCall{{ID: "toolu_touch", Name: "Bash", Input: map[string]any{"command": "touch x", "description": "create x"}}}}},
	}
}

func TestPermissionAllowRunsTheTool(t *testing.T) {
	a, s := setup(t, bashLoop()...)
	dir := t.TempDir()
	var mu sync.Mutex
	var asks []bridge.PermissionAsk
	res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "please make x", Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
		mu.Lock()
		asks = append(asks, ask)
		mu.Unlock()
		return bridge.PermissionAnswer{Allow: true}
	}})
	if len(asks) != 1 || asks[0].ToolName != "Bash" || asks[0].ToolUseID != "toolu_touch" || asks[0].PlatformID == "" || asks[0].Summary != "Bash: touch x" || asks[0].Input["command"] != "touch x" {
		t.Fatalf("asks %+v", asks)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Fatalf("allowed command did not run: %v", err)
	}
	// Only the last assistant message is relayed, not "I will create it.".
	if res.Failed || res.Text != "bash finished" {
		t.Fatalf("result %+v", res)
	}
	if tr := s.ModelRequests()[1].LastToolResults; len(tr) != 1 || tr[0].IsError {
		t.Fatalf("tool result %+v", tr)
	}
}

func TestPermissionDenyBlocksTheTool(t *testing.T) {
	a, s := setup(t, bashLoop()...)
	dir := t.TempDir()
	asked := 0
	res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "please make x", Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
		asked++
		return bridge.PermissionAnswer{Allow: false, Message: "not in this folder"}
	}})
	if asked != 1 {
		t.Fatalf("asked %d times", asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Fatalf("denied command ran (stat err %v)", err)
	}
	reqs := s.ModelRequests()
	tr := reqs[len(reqs)-1].LastToolResults
	if len(tr) != 1 || !tr[0].IsError || !strings.Contains(tr[0].Content, "not in this folder") {
		t.Fatalf("the model did not get the denial: %+v", tr)
	}
	if res.Failed || res.Text != "bash finished" {
		t.Fatalf("result %+v", res)
	}
}

func TestModelHTTP400IsAFailureWithTheReason(t *testing.T) {
	a, s := setup(t, scriptedmodel.FailModel("broken-model", 400, "broken-model is not available"))
	var verdict error
	res, err := a.RunTurn(context.Background(), bridge.TurnRequest{
		Cwd: t.TempDir(), Prompt: "hi", Model: &client.ModelRef{Provider: "anthropic", Model: "broken-model"},
		OnVerdict: func(err error) { verdict = err },
	})
	if err != nil {
		t.Fatalf("a model failure must be TurnResult.Failed, got error %v", err)
	}
	if !res.Failed || !strings.Contains(res.FailureReason, "400") || !strings.Contains(res.FailureReason, "broken-model is not available") {
		t.Fatalf("result %+v", res)
	}
	if res.Text != "" || res.MessageID != "" {
		t.Fatalf("a failed turn relays nothing, got text %q id %q", res.Text, res.MessageID)
	}
	if verdict == nil || !strings.Contains(verdict.Error(), "broken-model is not available") {
		t.Fatalf("verdict %v", verdict)
	}
	if res.Facts.ExitCode == nil || *res.Facts.ExitCode == 0 || res.Facts.StopReason != "api_error" {
		t.Fatalf("facts %+v", res.Facts)
	}
	for _, r := range s.ModelRequests() {
		if r.Model != "broken-model" {
			t.Fatalf("requested model %q, want broken-model", r.Model)
		}
	}
}

func TestMCPToolsAreOfferedWithTheTurnEnvironment(t *testing.T) {
	a, s := setup(t,
		scriptedmodel.Rule{ToolResultFor: "mcp__agentmail__whoami", Reply: scriptedmodel.Text("tool answered")},
		scriptedmodel.Rule{UserContains: "who am i", Reply: scriptedmodel.Call("mcp__agentmail__whoami", map[string]any{})},
	)
	asked := false
	res := adaptertest.RunTurn(t, a, bridge.TurnRequest{
		Cwd: t.TempDir(), Prompt: "who am i", ToolEnv: map[string]string{bridge.TurnTokenEnv: "amt_turn", "AGENTMAIL_SESSION_ID": "sess-42"},
		Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
			asked = true
			return bridge.PermissionAnswer{}
		},
	})
	reqs := s.ModelRequests()
	offered := strings.Join(reqs[0].Tools, ",")
	if !strings.Contains(offered, "mcp__agentmail__whoami") {
		t.Fatalf("MCP tool not offered directly (ENABLE_TOOL_SEARCH=false): %s", offered)
	}
	if asked {
		t.Fatal("an AgentMail tool triggered a permission question despite --allowedTools")
	}
	tr := reqs[len(reqs)-1].LastToolResults
	if len(tr) != 1 || !strings.Contains(tr[0].Content, "session=sess-42 mail=") || !strings.Contains(tr[0].Content, " gateway=http://127.0.0.1:1 key= token=amt_turn") {
		t.Fatalf("tool result %+v", tr)
	}
	if res.Text != "tool answered" {
		t.Fatalf("result %+v", res)
	}
}

func TestCanceledTurnStopsTheProcessAndFailsClosed(t *testing.T) {
	a, _ := setup(t, bashLoop()...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var answer bridge.PermissionAnswer
	done := make(chan struct{})
	res, err := a.RunTurn(ctx, bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "please make x", Permission: func(pctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
		cancel() // the bridge shuts down while a person is being asked
		<-pctx.Done()
		answer = bridge.PermissionAnswer{Allow: true}
		close(done)
		return answer
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	<-done
	if !res.Failed || res.Facts.StopReason != "canceled" || res.Facts.PID <= 0 {
		t.Fatalf("result %+v", res)
	}
	if err := syscall.Kill(res.Facts.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("claude process %d still exists after the turn: %v", res.Facts.PID, err)
	}
}

func TestArgsAndMCPConfig(t *testing.T) {
	a := New(Options{ExtraArgs: []string{"--setting-sources", "user"}})
	args := strings.Join(a.args(bridge.TurnRequest{PlatformSessionID: "s-1", Model: &client.ModelRef{Model: "opus"}, Permission: func(context.Context, bridge.PermissionAsk) bridge.PermissionAnswer { return bridge.PermissionAnswer{} }}, "/tmp/m.json"), " ")
	want := "-p --output-format stream-json --verbose --input-format stream-json --resume s-1 --model opus --mcp-config /tmp/m.json --allowedTools mcp__agentmail__* --permission-prompt-tool stdio --setting-sources user"
	if args != want {
		t.Fatalf("args\n%s\nwant\n%s", args, want)
	}
	if args := strings.Join(a.args(bridge.TurnRequest{}, ""), " "); strings.Contains(args, "--resume") || strings.Contains(args, "--permission-prompt-tool") || strings.Contains(args, "--model") {
		t.Fatalf("new session args %s", args)
	}
	cfg, err := mcpConfig(bridge.Env{GatewayURL: "http://g", MCPCommand: []string{"/bin/agentmail", "mcp"}}, map[string]string{"AGENTMAIL_MAIL_ID": "m-1", bridge.TurnTokenEnv: "amt_t"})
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(cfg, &parsed); err != nil {
		t.Fatal(err)
	}
	srv := parsed.MCPServers["agentmail"]
	if srv.Command != "/bin/agentmail" || len(srv.Args) != 1 || srv.Args[0] != "mcp" || srv.Env["AGENTMAIL_MAIL_ID"] != "m-1" || srv.Env[bridge.TurnTokenEnv] != "amt_t" || srv.Env["AGENTMAIL_AGENT_KEY"] != "" || srv.Env["AGENTMAIL_GATEWAY_URL"] != "http://g" {
		t.Fatalf("config %s", cfg)
	}
	env := strings.Join(New(Options{Environ: []string{"A=1", "AGENTMAIL_AGENT_KEY=secret", "ENABLE_TOOL_SEARCH=true", "AGENTMAIL_TURN_TOKEN=amt_x"}}).environ(), " ")
	if env != "A=1 ENABLE_TOOL_SEARCH=false" {
		t.Fatalf("environ %s", env)
	}
}

func TestSummary(t *testing.T) {
	cases := []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"Bash", map[string]any{"command": "rm -rf\n build", "description": "clean"}, "Bash: rm -rf build"},
		{"Write", map[string]any{"file_path": "/a/b.go", "content": "x"}, "Write: /a/b.go"},
		{"Odd", map[string]any{"n": 1}, `Odd: {"n":1}`},
		{"Empty", nil, "Empty"},
	}
	for _, c := range cases {
		if got := Summary(c.tool, c.input); got != c.want {
			t.Errorf("Summary(%s) = %q, want %q", c.tool, got, c.want)
		}
	}
	if got := Summary("Bash", map[string]any{"command": strings.Repeat("a", 500)}); len([]rune(got)) != 200 {
		t.Errorf("long summary has %d runes", len([]rune(got)))
	}
}

func TestWithoutPermissionFuncClaudeRefusesTheTool(t *testing.T) {
	a, s := setup(t, bashLoop()...)
	dir := t.TempDir()
	res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "please make x"})
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Fatalf("command ran without any approval (stat err %v)", err)
	}
	reqs := s.ModelRequests()
	if tr := reqs[len(reqs)-1].LastToolResults; len(tr) != 1 || !tr[0].IsError {
		t.Fatalf("tool result %+v", tr)
	}
	if res.Failed || res.Text != "bash finished" {
		t.Fatalf("result %+v", res)
	}
}

// A key set for the bridge never reaches Claude Code's own shell, and the files the
// adapter writes for the turn (--mcp-config) carry the turn's token, not the key: Bash
// prints its environment, Claude Code's environment (/proc/$PPID/environ) and the
// --mcp-config file of its parent.
func TestClaudesOwnShellSeesNoAgentKeyOnlyTheTurnToken(t *testing.T) {
	bin := platforms.Require(t, platforms.Claude)
	const secret = "ak_bridge_secret_0123456789"
	cmd := `env; echo ---; tr '\0' '\n' < /proc/$PPID/environ; echo ---; ` +
		`f=$(tr '\0' '\n' < /proc/$PPID/cmdline | grep -A1 -x -- --mcp-config | tail -1); echo "config=$f"; cat "$f"`
	s := scriptedmodel.NewTest(t,
		scriptedmodel.Rule{ToolResultFor: "Bash", Reply: scriptedmodel.Text("looked")},
		scriptedmodel.Rule{UserContains: "look around", Reply: scriptedmodel.Reply{ToolCalls: []scriptedmodel.ToolCall{{ID: "toolu_env", Name: "Bash", Input: map[string]any{"command": cmd, "description": "look"}}}}},
	)
	env := platforms.NewEnv(t)
	env.UseClaude(s.URL)
	env.Set("AGENTMAIL_AGENT_KEY", secret)
	a := New(Options{Environ: env.Environ()})
	if err := a.Start(context.Background(), bridge.Env{AgentName: "coder", GatewayURL: "http://127.0.0.1:1",
		MCPCommand: adaptertest.WhoamiCommand(t), Bin: bin}); err != nil {
		t.Fatal(err)
	}
	adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "look around",
		ToolEnv: map[string]string{bridge.TurnTokenEnv: "amt_turn_token_value", "AGENTMAIL_SESSION_ID": "sess-42"},
		Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
			return bridge.PermissionAnswer{Allow: true}
		}})
	reqs := s.ModelRequests()
	tr := reqs[len(reqs)-1].LastToolResults
	if len(tr) != 1 {
		t.Fatalf("tool results %+v", tr)
	}
	out := tr[0].Content
	if strings.Contains(out, secret) {
		t.Fatalf("the agent key reached Claude Code's shell:\n%s", out)
	}
	if !strings.Contains(out, `"AGENTMAIL_TURN_TOKEN":"amt_turn_token_value"`) || strings.Contains(out, "AGENTMAIL_AGENT_KEY") {
		t.Fatalf("want the --mcp-config file with the turn token and no key:\n%s", out)
	}
}
