package opencode

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/adaptertest"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The test binary doubles as a tiny AgentMail MCP server: started as `<test binary>
// mcp-serve` it offers one tool, whoami, answering with the environment it was given.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == adaptertest.WhoamiArg {
		adaptertest.ServeWhoami()
		return
	}
	os.Exit(m.Run())
}

// Models the fake provider offers: fake-model works, the others are made to fail by the
// tests that use them.
var testModels = []string{"fake-model", "broken-model", "flaky-model"}

// setup starts the fake model with rules and an adapter whose opencode server runs
// against it in an isolated home.
func setup(t *testing.T, rules ...scriptedmodel.Rule) (*Adapter, *scriptedmodel.Server) {
	t.Helper()
	bin := platforms.Require(t, platforms.OpenCode)
	s := scriptedmodel.NewTest(t, rules...)
	env := platforms.NewEnv(t)
	env.UseOpenCode(s.OpenAIBaseURL(), testModels...)
	a := New(Options{Environ: env.Environ()})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := a.Start(ctx, bridge.Env{
		AgentName:  "coder",
		GatewayURL: "http://127.0.0.1:1",
		MCPCommand: adaptertest.WhoamiCommand(t),
		Bin:        bin,
		Log: func(msg string, args ...any) {
			t.Logf("%s adapter: %s %v", time.Now().Format("15:04:05.000"), msg, args)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, s
}

// script is the fake model's script for every subtest of TestAgainstRealOpenCode; each
// subtest uses its own words.
func script() []scriptedmodel.Rule {
	return []scriptedmodel.Rule{
		scriptedmodel.FailModel("broken-model", 400, "broken-model does not exist"),
		scriptedmodel.FailModel("flaky-model", 503, "flaky-model is overloaded"),
		{ToolResultFor: "agentmail_whoami", Reply: scriptedmodel.Text("tool answered")},
		{ToolResultFor: "bash", Reply: scriptedmodel.Text("bash finished")},
		{UserContains: "who am i", Reply: scriptedmodel.Call("agentmail_whoami", map[string]any{})},
		{UserContains: "make the file", Reply: scriptedmodel.Reply{Text: "I will create it.", ToolCalls: []scriptedmodel.ToolCall{
			{ID: "call_touch", Name: "bash", Input: map[string]any{"command": "touch made.txt", "description": "create the file"}}}}},
		{UserContains: "status please", Reply: scriptedmodel.Reply{Thinking: "private reasoning", Text: "all is well"}},
		{UserContains: "second question", Reply: scriptedmodel.Text("second answer")},
		{UserContains: "first question", Reply: scriptedmodel.Text("first answer")},
		{UserContains: "do the work", Model: "fake-model", Reply: scriptedmodel.Text("work done")},
		{UserContains: "name me", Reply: scriptedmodel.Text("named")},
		{UserContains: "after the stop", Reply: scriptedmodel.Text("still here")},
	}
}

// TestAgainstRealOpenCode runs every behaviour against one real `opencode serve` (starting
// one costs seconds) and the scripted model.
func TestAgainstRealOpenCode(t *testing.T) {
	a, s := setup(t, script()...)

	t.Run("a turn creates a session in the mail's directory and answers with text only", func(t *testing.T) {
		dir := t.TempDir()
		var startedPID int
		var startedSession string
		var v adaptertest.Verdicts
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{
			Cwd: dir, Prompt: "status please", Model: adaptertest.FakeModel("fake-model"),
			OnStart:   func(pid int, id string) { startedPID, startedSession = pid, id },
			OnVerdict: v.On,
		})
		if res.Failed || res.Text != "all is well" {
			t.Fatalf("result %+v (reasoning must not be in the text)", res)
		}
		if !strings.HasPrefix(res.PlatformSessionID, "ses_") || startedSession != res.PlatformSessionID {
			t.Fatalf("session %q, OnStart got %q", res.PlatformSessionID, startedSession)
		}
		if !strings.HasPrefix(res.MessageID, "msg_") || res.Slug == "" {
			t.Fatalf("message id %q slug %q", res.MessageID, res.Slug)
		}
		if got := v.List(); len(got) != 1 || got[0] != nil {
			t.Fatalf("verdicts %v, want one nil", got)
		}
		if startedPID <= 0 || res.Facts.PID != startedPID || res.Facts.BytesRead == 0 || res.Facts.StopReason != "stop" || res.Facts.EndedAt.Before(res.Facts.StartedAt) {
			t.Fatalf("facts %+v (OnStart pid %d)", res.Facts, startedPID)
		}
		// C-2 / B-3.1: the session belongs to the mail's directory, and the model was told so.
		sessions, err := a.ListSessionsDetailed(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ls := range sessions {
			if ls.PlatformID == res.PlatformSessionID {
				found = true
				if ls.Workspace != dir || ls.Slug != res.Slug || ls.ParentID != "" || ls.UpdatedAt == nil {
					t.Fatalf("listed %+v, want workspace %s slug %s", ls, dir, res.Slug)
				}
			}
		}
		if !found {
			t.Fatalf("session %s not listed in %+v", res.PlatformSessionID, sessions)
		}
		r := adaptertest.LastRequestFor(t, s, "status please")
		if r.Model != "fake-model" || !strings.Contains(r.System, dir) {
			t.Fatalf("the turn's model request used %q or was not told the directory %s", r.Model, dir)
		}
		for _, tool := range r.Tools {
			if tool == "question" {
				t.Fatalf("the question tool was offered in a mail-driven turn: %v", r.Tools)
			}
		}
		// B-3.2: no placeholder title was set; opencode's own title request named the session.
		if res.Title != scriptedmodel.DefaultTitle {
			t.Errorf("title %q, want the generated %q", res.Title, scriptedmodel.DefaultTitle)
		}
	})

	t.Run("a follow-up lands in the same session and an idle session takes a new prompt", func(t *testing.T) {
		dir := t.TempDir()
		first := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "first question"})
		// The session is idle now (9.11): the next prompt must start a new turn, not vanish.
		second := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "second question", PlatformSessionID: first.PlatformSessionID})
		if first.Text != "first answer" || second.Text != "second answer" {
			t.Fatalf("texts %q %q", first.Text, second.Text)
		}
		if second.PlatformSessionID != first.PlatformSessionID || second.MessageID == first.MessageID || second.Slug != first.Slug {
			t.Fatalf("first %+v second %+v", first, second)
		}
		history := ""
		for _, m := range adaptertest.LastRequestFor(t, s, "second question").Messages {
			history += m.Role + ":" + m.Text + "\n"
		}
		if !strings.Contains(history, "first question") || !strings.Contains(history, "first answer") {
			t.Fatalf("the follow-up did not carry the first turn's history:\n%s", history)
		}
	})

	t.Run("an unknown session is ErrSessionNotFound", func(t *testing.T) {
		_, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "hi", PlatformSessionID: "ses_0000000000000000000000000"})
		if !errors.Is(err, bridge.ErrSessionNotFound) {
			t.Fatalf("err %v, want ErrSessionNotFound", err)
		}
	})

	t.Run("a guarded tool allowed by the person runs", func(t *testing.T) {
		_, ask := adaptertest.AllowedToolRuns(t, a, "please make the file")
		if !strings.HasPrefix(ask.PlatformID, "per_") {
			t.Fatalf("ask %+v, want opencode's per_ permission id", ask)
		}
	})

	t.Run("a guarded tool denied by the person does not run", func(t *testing.T) {
		if tr := adaptertest.DeniedToolDoesNotRun(t, a, s, "now make the file"); !strings.Contains(tr.Content, "not in this folder") {
			t.Fatalf("the model did not get the person's note: %+v", tr)
		}
	})

	t.Run("a broken first model fails its verdict and the second model works", func(t *testing.T) {
		dir := t.TempDir()
		var v1 adaptertest.Verdicts
		res1, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: dir, Prompt: "please do the work", Model: adaptertest.FakeModel("broken-model"), OnVerdict: v1.On})
		if err != nil {
			t.Fatalf("a model failure must be TurnResult.Failed, got error %v", err)
		}
		if got := v1.List(); len(got) != 1 || got[0] == nil || !strings.Contains(got[0].Error(), "broken-model does not exist") {
			t.Fatalf("verdicts %v, want one error naming the failure", got)
		}
		if !res1.Failed || !strings.Contains(res1.FailureReason, "400") || res1.Text != "" {
			t.Fatalf("first result %+v", res1)
		}
		// D-3.5: the core retries in a fresh session with the next model.
		var v2 adaptertest.Verdicts
		res2 := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "please do the work", Model: adaptertest.FakeModel("fake-model"), OnVerdict: v2.On})
		if res2.Failed || res2.Text != "work done" || res2.PlatformSessionID == res1.PlatformSessionID {
			t.Fatalf("second result %+v", res2)
		}
		if got := v2.List(); len(got) != 1 || got[0] != nil {
			t.Fatalf("second verdicts %v", got)
		}
	})

	t.Run("a model that opencode retries is a failure and its session is aborted", func(t *testing.T) {
		var v adaptertest.Verdicts
		res, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "hello", Model: adaptertest.FakeModel("flaky-model"), OnVerdict: v.On})
		if err != nil {
			t.Fatalf("RunTurn: %v", err)
		}
		if got := v.List(); len(got) != 1 || got[0] == nil || !strings.Contains(got[0].Error(), "retrying") {
			t.Fatalf("verdicts %v, want one error about the retry", got)
		}
		if !res.Failed || !strings.Contains(res.FailureReason, "overloaded") {
			t.Fatalf("result %+v", res)
		}
		var st map[string]any
		if err := a.api.do(context.Background(), "GET", "/session/status", dirQuery(a.knownDir(res.PlatformSessionID)), nil, &st); err != nil {
			t.Fatal(err)
		}
		if _, busy := st[res.PlatformSessionID]; busy {
			t.Fatalf("the session still works after the failed attempt: %v", st)
		}
	})

	t.Run("the AgentMail tools get each turn's environment", func(t *testing.T) {
		dir := t.TempDir()
		asked := false
		perm := func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
			asked = true
			return bridge.PermissionAnswer{}
		}
		for _, sess := range []string{"sess-42", "sess-43"} {
			res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "who am i, " + sess, Permission: perm,
				ToolEnv: map[string]string{bridge.TurnTokenEnv: "amt_turn", "AGENTMAIL_SESSION_ID": sess, "AGENTMAIL_MAIL_ID": "mail-" + sess}})
			if res.Text != "tool answered" {
				t.Fatalf("result %+v", res)
			}
			tr := adaptertest.LastRequestFor(t, s, "who am i, "+sess).LastToolResults
			want := "session=" + sess + " mail=mail-" + sess + " gateway=http://127.0.0.1:1 key= token=amt_turn platform=opencode cwd=" + dir
			if len(tr) != 1 || !strings.Contains(tr[0].Content, want) {
				t.Fatalf("tool result %+v, want %q", tr, want)
			}
		}
		if asked {
			t.Fatal("an AgentMail tool triggered a permission question")
		}
	})

	t.Run("models, sessions and rename", func(t *testing.T) {
		models, err := a.ListModels(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, m := range models {
			got[m.Provider+"/"+m.Model] = true
		}
		for _, m := range testModels {
			if !got[platforms.FakeProvider+"/"+m] {
				t.Fatalf("models %+v lack %s", models, m)
			}
		}
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "name me"})
		if err := a.RenameSession(context.Background(), res.PlatformSessionID, "fix-the-leak-2"); err != nil {
			t.Fatal(err)
		}
		if err := a.RenameSession(context.Background(), res.PlatformSessionID, " "); err == nil {
			t.Fatal("an empty name was accepted")
		}
		sessions, err := a.ListSessions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ps := range sessions {
			if ps.PlatformID == res.PlatformSessionID {
				if ps.Title != "fix-the-leak-2" || ps.Slug != res.Slug {
					t.Fatalf("after rename %+v", ps)
				}
				return
			}
		}
		t.Fatalf("session %s not listed", res.PlatformSessionID)
	})

	t.Run("a canceled turn aborts the session and fails closed", func(t *testing.T) {
		adaptertest.CancelWhileAsking(t, a, "then make the file")
	})

	t.Run("a second adapter attaches to the running server and leaves it running", func(t *testing.T) {
		environ := append(append([]string(nil), a.opts.Environ...), EnvURL+"="+a.api.base, EnvPassword+"=wrong")
		bad := New(Options{Environ: environ, StartTimeout: 5 * time.Second})
		if err := bad.Start(context.Background(), bridge.Env{Log: func(string, ...any) {}}); err == nil || !strings.Contains(err.Error(), "password") {
			t.Fatalf("attaching with a wrong password: %v, want an error about the password", err)
		}
		environ = append(environ, EnvPassword+"="+a.api.password)
		b := New(Options{Environ: environ})
		if err := b.Start(context.Background(), bridge.Env{Log: func(string, ...any) {}}); err != nil {
			t.Fatal(err)
		}
		res := adaptertest.RunTurn(t, b, bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "status please, attached"})
		if res.Text != "all is well" || res.Facts.PID != 0 {
			t.Fatalf("attached turn %+v (no pid: the server is not ours)", res)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(a.serverPID(), 0); err != nil {
			t.Fatalf("closing the attached adapter stopped the server: %v", err)
		}
	})

	t.Run("Close stops the server", func(t *testing.T) {
		pid := a.serverPID()
		if pid <= 0 {
			t.Fatal("no server pid")
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("opencode server %d still exists after Close: %v", pid, err)
		}
		if _, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "hi"}); err == nil {
			t.Fatal("RunTurn after Close did not fail")
		}
	})
}

func TestAServerThatDiesDuringATurnFailsTheTurnAndTheNextOne(t *testing.T) {
	a, _ := setup(t, scriptedmodel.Rule{UserContains: "make the file", Reply: scriptedmodel.Call("bash", map[string]any{"command": "touch made.txt", "description": "x"})})
	pid := a.serverPID()
	res, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "please make the file",
		Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // the server dies while a person is asked
			<-ctx.Done()
			return bridge.PermissionAnswer{}
		}})
	if err != nil || !res.Failed || !strings.Contains(res.FailureReason, "exited") || res.Facts.StopReason != "exited" {
		t.Fatalf("result %+v, %v; want a failed turn naming the exit", res, err)
	}
	if _, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "hi"}); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("a turn after the server died: %v, want an error naming the exit", err)
	}
}
