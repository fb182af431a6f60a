package acp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/adaptertest"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The test binary doubles as a tiny AgentMail MCP server (adaptertest.ServeWhoami).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == adaptertest.WhoamiArg {
		adaptertest.ServeWhoami()
		return
	}
	os.Exit(m.Run())
}

var testModels = []string{"fake-model", "broken-model"}

func script() []scriptedmodel.Rule {
	return []scriptedmodel.Rule{
		scriptedmodel.FailModel("broken-model", 400, "broken-model does not exist"),
		{ToolResultFor: "agentmail_whoami", Reply: scriptedmodel.Text("tool answered")},
		{ToolResultFor: "bash", Reply: scriptedmodel.Text("bash finished")},
		{UserContains: "second question who am i", Reply: scriptedmodel.Call("agentmail_whoami", map[string]any{})},
		{UserContains: "who am i", Reply: scriptedmodel.Call("agentmail_whoami", map[string]any{})},
		{UserContains: "make the file", Reply: scriptedmodel.Reply{Text: "I will create it.", ToolCalls: []scriptedmodel.ToolCall{
			{ID: "call_touch", Name: "bash", Input: map[string]any{"command": "touch made.txt", "description": "make the file"}}}}},
		{UserContains: "status please", Reply: scriptedmodel.Reply{Thinking: "private reasoning", Text: "all is well"}},
		{UserContains: "second question", Reply: scriptedmodel.Text("second answer")},
		{UserContains: "first question", Reply: scriptedmodel.Text("first answer")},
		{UserContains: "do the work", Reply: scriptedmodel.Text("work done")},
	}
}

// setup starts the scripted model and an adapter driving `opencode acp` against it in an
// isolated home, with opencode's own configuration asking before bash and edits (as an
// operator configures it), one process per turn.
func setup(t *testing.T) (*Adapter, *scriptedmodel.Server) {
	t.Helper()
	return setupMode(t, ProcessPerTurn)
}

// setupMode is setup in process mode mode.
func setupMode(t *testing.T, mode ProcessMode) (*Adapter, *scriptedmodel.Server) {
	t.Helper()
	bin := platforms.Require(t, platforms.OpenCode)
	s := scriptedmodel.NewTest(t, script()...)
	env := platforms.NewEnv(t)
	env.UseOpenCodeACP(s.OpenAIBaseURL(), testModels...)
	env.Set("AGENTMAIL_AGENT_KEY", "ak_from_environment")
	a := New(Options{Command: []string{bin, "acp"}, Environ: env.Environ(), Process: mode})
	var logMu sync.Mutex
	if err := a.Start(context.Background(), bridge.Env{AgentName: "coder", GatewayURL: "http://127.0.0.1:1",
		MCPCommand: adaptertest.WhoamiCommand(t),
		Log: func(msg string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			t.Log(append([]any{msg}, args...)...)
		}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, s
}

func TestOpenCodeACP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real agent")
	}
	a, s := setup(t)

	t.Run("tools get the turn's environment, never the key", func(t *testing.T) {
		dir := t.TempDir()
		var v adaptertest.Verdicts
		var started []string
		begin := time.Now()
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "who am i", OnVerdict: v.On,
			ToolEnv: map[string]string{"AGENTMAIL_SESSION_ID": "s-1", "AGENTMAIL_MAIL_ID": "m-1", bridge.TurnTokenEnv: "tt-1"},
			OnStart: func(pid int, sid string) {
				started = append(started, sid)
				t.Logf("process start, initialize and session/new took %v", time.Since(begin).Round(time.Millisecond))
			}})
		if res.Failed || res.Text != "tool answered" || res.PlatformSessionID == "" {
			t.Fatalf("result %+v", res)
		}
		if len(started) != 1 || started[0] != res.PlatformSessionID || res.Facts.PID <= 0 || res.Facts.BytesRead == 0 {
			t.Fatalf("OnStart %v, facts %+v", started, res.Facts)
		}
		if vs := v.List(); len(vs) != 1 || vs[0] != nil {
			t.Fatalf("verdicts %v", vs)
		}
		tr := adaptertest.LastRequestFor(t, s, "who am i").LastToolResults
		if len(tr) != 1 || !strings.Contains(tr[0].Content, "session=s-1 mail=m-1") || !strings.Contains(tr[0].Content, "token=tt-1") ||
			strings.Contains(tr[0].Content, "ak_from_environment") || !strings.Contains(tr[0].Content, "platform=acp") || !strings.Contains(tr[0].Content, "cwd="+dir) {
			t.Fatalf("the tool saw %+v", tr)
		}
	})

	t.Run("reasoning stays out of the reply", func(t *testing.T) {
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "status please"})
		if res.Text != "all is well" {
			t.Fatalf("reply %q, want the text without the reasoning", res.Text)
		}
	})

	t.Run("a follow-up loads the session with its history", func(t *testing.T) {
		dir := t.TempDir()
		first := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "first question"})
		begin := time.Now()
		second := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "second question", PlatformSessionID: first.PlatformSessionID,
			OnStart: func(int, string) {
				t.Logf("process start, initialize and session/load took %v", time.Since(begin).Round(time.Millisecond))
			}})
		if second.Text != "second answer" || second.PlatformSessionID != first.PlatformSessionID {
			t.Fatalf("second %+v, first %+v", second, first)
		}
		if h := adaptertest.History(adaptertest.LastRequestFor(t, s, "second question")); !strings.Contains(h, "first answer") {
			t.Fatalf("the follow-up lost the conversation:\n%s", h)
		}
		// The session is mirrored by session/list with its directory (C-10).
		listed, err := a.ListSessions(context.Background())
		found := false
		for _, ps := range listed {
			found = found || (ps.PlatformID == first.PlatformSessionID && ps.Workspace == dir)
		}
		if err != nil || !found {
			t.Fatalf("ListSessions = %+v, %v; want %s in %s", listed, err, first.PlatformSessionID, dir)
		}
		_, err = a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: dir, Prompt: "second question", PlatformSessionID: "ses_doesnotexist"})
		if !errors.Is(err, bridge.ErrSessionNotFound) {
			t.Fatalf("unknown session: err %v, want ErrSessionNotFound", err)
		}
	})

	t.Run("a guarded tool asks, with the ACP relay key, and runs once allowed", func(t *testing.T) {
		dir := t.TempDir()
		var asks []bridge.PermissionAsk
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "make the file", Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
			asks = append(asks, ask)
			return bridge.PermissionAnswer{Allow: true}
		}})
		if len(asks) != 1 || asks[0].ToolName != "bash" || asks[0].PlatformID != res.PlatformSessionID+":"+asks[0].ToolUseID ||
			!strings.Contains(asks[0].Summary, "touch made.txt") {
			t.Fatalf("asks %+v (session %s)", asks, res.PlatformSessionID)
		}
		if _, err := os.Stat(filepath.Join(dir, "made.txt")); err != nil {
			t.Fatalf("the allowed command did not run: %v", err)
		}
		if res.Failed || res.Text != "bash finished" {
			t.Fatalf("result %+v", res)
		}
	})

	t.Run("a refused tool does not run", func(t *testing.T) {
		dir := t.TempDir()
		asked := 0
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "make the file", Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
			asked++
			return bridge.PermissionAnswer{Allow: false, Message: "not in this folder"}
		}})
		if asked != 1 || res.Failed {
			t.Fatalf("asked %d, result %+v", asked, res)
		}
		if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
			t.Fatalf("the refused command ran (stat err %v)", err)
		}
	})

	t.Run("the attempt's model is chosen and a model error fails the turn", func(t *testing.T) {
		var v adaptertest.Verdicts
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "do the work", Model: adaptertest.FakeModel("broken-model"), OnVerdict: v.On})
		if !res.Failed || !strings.Contains(res.FailureReason, "broken-model does not exist") {
			t.Fatalf("result %+v", res)
		}
		if vs := v.List(); len(vs) != 1 || vs[0] == nil {
			t.Fatalf("verdicts %v, want one error", vs)
		}
		res = adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "do the work", Model: adaptertest.FakeModel("fake-model")})
		if res.Failed || res.Text != "work done" {
			t.Fatalf("result %+v", res)
		}
		last := adaptertest.LastRequestFor(t, s, "do the work")
		if last.Model != "fake-model" {
			t.Fatalf("model %q", last.Model)
		}
		ms, err := a.ListModels(context.Background())
		if err != nil || len(ms) < 2 {
			t.Fatalf("models %+v, %v", ms, err)
		}
	})
}

// Process mode session: one agent process per mail session, kept between its turns; the
// tool server, whose environment is fixed at session/new, acts with each turn's token
// through the token file, which is empty between turns; another mail session gets a
// process of its own; a stopped turn leaves its process ready for the next turn; Close
// stops every process and removes the token files.
func TestSessionProcessMode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real agent")
	}
	a, s := setupMode(t, ProcessPerSession)
	if !a.Capabilities().PersistentProcess {
		t.Fatal("process mode session must declare PersistentProcess")
	}
	dir := t.TempDir()
	turn := func(mailSession, sid, prompt, token string) bridge.TurnResult {
		t.Helper()
		begin := time.Now()
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{MailSessionID: mailSession, Cwd: dir, Prompt: prompt, PlatformSessionID: sid,
			ToolEnv: map[string]string{"AGENTMAIL_SESSION_ID": mailSession, "AGENTMAIL_MAIL_ID": "m-" + token, bridge.TurnTokenEnv: token}})
		t.Logf("turn %q (%s) took %v", prompt, token, time.Since(begin).Round(time.Millisecond))
		return res
	}
	tokenSeen := func(prompt string) string {
		t.Helper()
		tr := adaptertest.LastRequestFor(t, s, prompt).LastToolResults
		if len(tr) != 1 {
			t.Fatalf("tool results of %q: %+v", prompt, tr)
		}
		_, after, _ := strings.Cut(tr[0].Content, "token=")
		tok, _, _ := strings.Cut(after, " ")
		return tok
	}

	first := turn("s-1", "", "who am i", "tt-1")
	if first.Text != "tool answered" || first.Facts.PID <= 0 || first.Facts.ProcessExited == nil || first.Facts.ExitCode != nil {
		t.Fatalf("first turn %+v", first)
	}
	if got := tokenSeen("who am i"); got != "tt-1" {
		t.Fatalf("the first turn's tool saw token %q, want tt-1", got)
	}
	a.mu.Lock()
	k := a.kept["mail:s-1"]
	a.mu.Unlock()
	if k == nil {
		t.Fatal("no process kept for mail session s-1")
	}
	if b, err := os.ReadFile(k.tokenFile); err != nil || len(b) != 0 {
		t.Fatalf("token file between turns = %q, %v; want empty", b, err)
	}
	if st, err := os.Stat(filepath.Dir(k.tokenFile)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("token folder %v, %v; want mode 0700", st, err)
	}

	second := turn("s-1", first.PlatformSessionID, "second question who am i", "tt-2")
	if second.Facts.PID != first.Facts.PID || second.PlatformSessionID != first.PlatformSessionID {
		t.Fatalf("the follow-up ran in pid %d session %s, want the kept pid %d session %s", second.Facts.PID, second.PlatformSessionID, first.Facts.PID, first.PlatformSessionID)
	}
	if got := tokenSeen("second question who am i"); got != "tt-2" {
		t.Fatalf("the follow-up's tool saw token %q, want the turn's tt-2", got)
	}
	if h := adaptertest.History(adaptertest.LastRequestFor(t, s, "second question who am i")); !strings.Contains(h, "tool answered") {
		t.Fatalf("the follow-up lost the conversation:\n%s", h)
	}

	other := turn("s-2", "", "status please", "tt-3")
	if other.Facts.PID == first.Facts.PID {
		t.Fatalf("mail session s-2 ran in s-1's process %d", first.Facts.PID)
	}

	// A turn stopped while it waits for a person keeps its process for the next one.
	ctx, cancel := context.WithCancel(context.Background())
	asked := make(chan struct{})
	var stopped bridge.TurnResult
	var stopErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		stopped, stopErr = a.RunTurn(ctx, bridge.TurnRequest{MailSessionID: "s-1", Cwd: dir, Prompt: "make the file", PlatformSessionID: first.PlatformSessionID,
			ToolEnv: map[string]string{bridge.TurnTokenEnv: "tt-4"},
			Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
				close(asked)
				<-ctx.Done()
				return bridge.PermissionAnswer{}
			}})
	}()
	<-asked
	begin := time.Now()
	cancel()
	<-done
	t.Logf("the stopped turn returned %v after the cancel", time.Since(begin).Round(time.Millisecond))
	if !errors.Is(stopErr, context.Canceled) || stopped.Facts.PID != first.Facts.PID {
		t.Fatalf("stopped turn: %+v, %v", stopped, stopErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("the refused command ran (stat err %v)", err)
	}
	after := turn("s-1", first.PlatformSessionID, "do the work", "tt-5")
	if after.Text != "work done" || after.Facts.PID != first.Facts.PID {
		t.Fatalf("the turn after the stop: %+v", after)
	}

	exited := after.Facts.ProcessExited
	tokenDir := filepath.Dir(k.tokenFile)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	default:
		t.Fatal("Close left the kept process running")
	}
	if _, err := os.Stat(tokenDir); !os.IsNotExist(err) {
		t.Fatalf("the token folder is still there after Close (stat err %v)", err)
	}
}

// Permission requests are answered by kind, never allow_always; AgentMail's own tools
// are allowed without asking, a shell call whose title looks like one is not.
func TestPermissionAnswers(t *testing.T) {
	opts := []sdk.PermissionOption{
		{Kind: sdk.PermissionOptionKindAllowAlways, OptionId: "always"},
		{Kind: sdk.PermissionOptionKindAllowOnce, OptionId: "once"},
		{Kind: sdk.PermissionOptionKindRejectOnce, OptionId: "no"},
	}
	str := func(s string) *string { return &s }
	execute := sdk.ToolKindExecute
	other := sdk.ToolKindOther
	for _, c := range []struct {
		name  string
		tc    sdk.ToolCallUpdate
		allow *bool
		want  sdk.PermissionOptionId
		asked bool
	}{
		{"claude's MCP tool", sdk.ToolCallUpdate{ToolCallId: "t1", Title: str("mcp__agentmail__read_inbox"), Kind: &other}, nil, "once", false},
		{"qwen's MCP tool", sdk.ToolCallUpdate{ToolCallId: "t2", Title: str("Read inbox"), Meta: map[string]any{"toolName": "mcp__agentmail__read_inbox"}}, nil, "once", false},
		{"gemini's MCP tool", sdk.ToolCallUpdate{ToolCallId: "t3", Title: str("read_inbox (agentmail MCP Server)")}, nil, "once", false},
		{"codex's MCP tool", sdk.ToolCallUpdate{ToolCallId: "t4", Title: str("Approve MCP tool call"), RawInput: map[string]any{"server_name": "agentmail"}}, nil, "once", false},
		{"a shell command named like a tool", sdk.ToolCallUpdate{ToolCallId: "t5", Title: str("mcp__agentmail__read_inbox"), Kind: &execute}, boolp(false), "no", true},
		{"an approved shell command", sdk.ToolCallUpdate{ToolCallId: "t6", Title: str("bash"), Kind: &execute, RawInput: map[string]any{"command": "ls"}}, boolp(true), "once", true},
		{"a denied shell command", sdk.ToolCallUpdate{ToolCallId: "t7", Title: str("bash"), Kind: &execute}, boolp(false), "no", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := false
			req := &bridge.TurnRequest{Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
				asked = true
				if ask.PlatformID != "sess-1:"+string(c.tc.ToolCallId) {
					t.Errorf("relay key %q", ask.PlatformID)
				}
				return bridge.PermissionAnswer{Allow: c.allow != nil && *c.allow}
			}}
			h := &clientHooks{ctx: context.Background(), req: req}
			resp, err := h.RequestPermission(context.Background(), sdk.RequestPermissionRequest{SessionId: "sess-1", ToolCall: c.tc, Options: opts})
			if err != nil || resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionId != c.want || asked != c.asked {
				t.Fatalf("answer %+v, %v, asked %v; want %s, asked %v", resp.Outcome, err, asked, c.want, c.asked)
			}
		})
	}
	// Without a reject_once option a refusal is reject_always, never an allow.
	h := &clientHooks{}
	resp, _ := h.RequestPermission(context.Background(), sdk.RequestPermissionRequest{SessionId: "s", ToolCall: sdk.ToolCallUpdate{ToolCallId: "x", Title: str("bash")},
		Options: []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowOnce, OptionId: "once"}, {Kind: sdk.PermissionOptionKindRejectAlways, OptionId: "never"}}})
	if resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionId != "never" {
		t.Fatalf("answer without forwarding %+v", resp.Outcome)
	}
}

func boolp(b bool) *bool { return &b }

// The tool a permission question is about, from what each agent says.
func TestToolName(t *testing.T) {
	str := func(s string) *string { return &s }
	execute := sdk.ToolKindExecute
	for _, c := range []struct {
		tc        sdk.ToolCallUpdate
		announced announcement
		want      string
	}{
		{sdk.ToolCallUpdate{ToolCallId: "call_touch", Title: str("touch made.txt"), Kind: &execute}, announcement{title: "bash"}, "bash"},          // opencode
		{sdk.ToolCallUpdate{ToolCallId: "toolu_1", Title: str("Terminal"), Kind: &execute}, announcement{meta: "Bash", title: "Terminal"}, "Bash"}, // Claude Agent
		{sdk.ToolCallUpdate{ToolCallId: "x", Meta: map[string]any{"toolName": "run_shell_command"}, Title: str("touch a")}, announcement{}, "run_shell_command"},
		{sdk.ToolCallUpdate{ToolCallId: "run_shell_command__run_shell_command_1796192059903_0", Title: str("touch a"), Kind: &execute}, announcement{}, "run_shell_command"}, // Gemini
		{sdk.ToolCallUpdate{ToolCallId: "run_shell_command-1700000000", Title: str("touch a")}, announcement{}, "run_shell_command"},
		{sdk.ToolCallUpdate{ToolCallId: "call_9", Title: str("touch a"), Kind: &execute}, announcement{}, "execute"},
	} {
		if got := toolName(c.tc, c.announced); got != c.want {
			t.Errorf("toolName(%s) = %q, want %q", c.tc.ToolCallId, got, c.want)
		}
	}
}
