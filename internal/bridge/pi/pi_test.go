package pi

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
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
// With AGENTMAIL_TEST_FAKE_PI=1 it is a scripted pi instead (stuck_test.go).
func TestMain(m *testing.M) {
	if os.Getenv(fakePiEnv) == "1" {
		fakePi()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == adaptertest.WhoamiArg {
		adaptertest.ServeWhoami()
		return
	}
	os.Exit(m.Run())
}

// testModels are the fake provider's models: fake-model works, broken-model fails.
var testModels = []string{"fake-model", "broken-model"}

// script is the fake model's script for every subtest; each subtest uses its own words.
func script() []scriptedmodel.Rule {
	return []scriptedmodel.Rule{
		scriptedmodel.FailModel("broken-model", 400, "broken-model does not exist"),
		{ToolResultFor: "whoami", Reply: scriptedmodel.Text("tool answered")},
		{ToolResultFor: "bash", Reply: scriptedmodel.Text("bash finished")},
		{UserContains: "who am i", Reply: scriptedmodel.Call("whoami", map[string]any{})},
		{UserContains: "make the file", Reply: scriptedmodel.Reply{Text: "I will create it.", ToolCalls: []scriptedmodel.ToolCall{
			{ID: "call_touch", Name: "bash", Input: map[string]any{"command": "touch made.txt"}}}}},
		{UserContains: "status please", Reply: scriptedmodel.Reply{Thinking: "private reasoning", Text: "all is well", MessageID: "chatcmpl-status"}},
		{UserContains: "second question", Reply: scriptedmodel.Text("second answer")},
		{UserContains: "first question", Reply: scriptedmodel.Text("first answer")},
		{UserContains: "queued question", Reply: scriptedmodel.Text("queued answer")},
		{UserContains: "after the restart", Reply: scriptedmodel.Text("resumed answer")},
		{UserContains: "do the work", Model: "fake-model", Reply: scriptedmodel.Text("work done")},
		{UserContains: "name me", Reply: scriptedmodel.Text("named")},
		{UserContains: "after the stop", Reply: scriptedmodel.Text("still here")},
	}
}

type fixture struct {
	a        *Adapter
	s        *scriptedmodel.Server
	env      *platforms.Env
	agentDir string
}

// setup starts the fake model and an adapter whose pi processes run against it in an
// isolated home.
func setup(t *testing.T) *fixture {
	t.Helper()
	bin := platforms.Require(t, platforms.Pi)
	s := scriptedmodel.NewTest(t, script()...)
	env := platforms.NewEnv(t)
	agentDir, err := env.UsePi(s.OpenAIBaseURL(), testModels...)
	if err != nil {
		t.Fatal(err)
	}
	// A key in the bridge's environment must not reach pi's shell.
	env.Set("AGENTMAIL_AGENT_KEY", "ak_from_environment")
	a := New(Options{Environ: env.Environ()})
	err = a.Start(context.Background(), bridge.Env{
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
	return &fixture{a: a, s: s, env: env, agentDir: agentDir}
}

// TestAgainstRealPi runs every behaviour against the real pi and the scripted model.
func TestAgainstRealPi(t *testing.T) {
	f := setup(t)
	a, s := f.a, f.s

	t.Run("a turn creates a session in the mail's directory and answers with text only", func(t *testing.T) {
		dir := t.TempDir()
		var startedPID int
		var startedSession string
		var v adaptertest.Verdicts
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{
			Cwd: dir, Prompt: "status please",
			OnStart:   func(pid int, id string) { startedPID, startedSession = pid, id },
			OnVerdict: v.On,
		})
		if res.Failed || res.Text != "all is well" || res.MessageID != "chatcmpl-status" {
			t.Fatalf("result %+v (text blocks only; the completion id is the message id)", res)
		}
		if res.PlatformSessionID == "" || startedSession != res.PlatformSessionID || startedPID <= 0 || res.Facts.PID != startedPID {
			t.Fatalf("session %q pid %d, OnStart got %q %d", res.PlatformSessionID, res.Facts.PID, startedSession, startedPID)
		}
		if res.Slug != "" || res.Title != "" {
			t.Fatalf("pi names no session, got slug %q title %q", res.Slug, res.Title)
		}
		if got := v.List(); len(got) != 1 || got[0] != nil {
			t.Fatalf("verdicts %v, want one nil", got)
		}
		if res.Facts.BytesRead == 0 || res.Facts.StopReason != "stop" || res.Facts.UnparsedLines != 0 {
			t.Fatalf("facts %+v", res.Facts)
		}
		// C-2 / B-3.1: pi stored the session under the mail's directory.
		sf, ok := a.findSession(res.PlatformSessionID)
		if !ok || sf.Cwd != dir || !strings.HasPrefix(sf.Path, filepath.Join(f.agentDir, "sessions")) {
			t.Fatalf("session file %+v (found %v), want cwd %s", sf, ok, dir)
		}
		if r := adaptertest.LastRequestFor(t, s, "status please"); !strings.Contains(r.System, dir) {
			t.Fatalf("the model was not told the directory %s", dir)
		}
	})

	t.Run("a follow-up lands in the same session and an idle session takes a new prompt", func(t *testing.T) {
		dir := t.TempDir()
		first := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "first question"})
		// The session is idle now (9.11): the next prompt must start a new run, not vanish.
		second := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "second question", PlatformSessionID: first.PlatformSessionID})
		if first.Text != "first answer" || second.Text != "second answer" {
			t.Fatalf("texts %q %q", first.Text, second.Text)
		}
		if second.PlatformSessionID != first.PlatformSessionID || second.MessageID == first.MessageID || second.Facts.PID != first.Facts.PID {
			t.Fatalf("first %+v second %+v (the same process serves the session)", first, second)
		}
		if h := adaptertest.History(adaptertest.LastRequestFor(t, s, "second question")); !strings.Contains(h, "first question") || !strings.Contains(h, "first answer") {
			t.Fatalf("the follow-up did not carry the first turn's history:\n%s", h)
		}
		// The process goes away (idle timeout, bridge restart): the session is resumed in its
		// own directory with --session.
		p := a.liveProc(first.PlatformSessionID)
		if p == nil {
			t.Fatal("no live process for the session")
		}
		a.forget(first.PlatformSessionID, p)
		p.stop()
		third := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "after the restart", PlatformSessionID: first.PlatformSessionID})
		if third.Text != "resumed answer" || third.PlatformSessionID != first.PlatformSessionID || third.Facts.PID == first.Facts.PID {
			t.Fatalf("resumed turn %+v", third)
		}
		if h := adaptertest.History(adaptertest.LastRequestFor(t, s, "after the restart")); !strings.Contains(h, "second answer") {
			t.Fatalf("the resumed session lost its history:\n%s", h)
		}
	})

	t.Run("a busy session queues the next prompt after the running work", func(t *testing.T) {
		dir := t.TempDir()
		asked := make(chan struct{})
		release := make(chan struct{})
		sessionOf := make(chan string, 1)
		type out struct {
			res bridge.TurnResult
			err error
		}
		firstDone := make(chan out, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			var once sync.Once
			res, err := a.RunTurn(ctx, bridge.TurnRequest{Cwd: dir, Prompt: "please make the file",
				OnStart: func(_ int, id string) { sessionOf <- id },
				Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
					once.Do(func() { close(asked) })
					<-release
					return bridge.PermissionAnswer{Allow: true}
				}})
			firstDone <- out{res, err}
		}()
		sid := <-sessionOf
		<-asked // the first turn waits for a person: the session is busy
		secondStarted := make(chan struct{})
		secondDone := make(chan out, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			res, err := a.RunTurn(ctx, bridge.TurnRequest{Cwd: dir, Prompt: "queued question", PlatformSessionID: sid,
				OnStart: func(int, string) { close(secondStarted) }})
			secondDone <- out{res, err}
		}()
		<-secondStarted // pi accepted the queued prompt
		close(release)
		first, second := <-firstDone, <-secondDone
		if first.err != nil || second.err != nil {
			t.Fatalf("errors %v / %v", first.err, second.err)
		}
		if first.res.Text != "bash finished" || second.res.Text != "queued answer" {
			t.Fatalf("texts %q / %q", first.res.Text, second.res.Text)
		}
		if second.res.PlatformSessionID != sid || first.res.MessageID == second.res.MessageID {
			t.Fatalf("first %+v second %+v", first.res, second.res)
		}
		if _, err := os.Stat(filepath.Join(dir, "made.txt")); err != nil {
			t.Fatalf("the allowed command did not run: %v", err)
		}
		if h := adaptertest.History(adaptertest.LastRequestFor(t, s, "queued question")); !strings.Contains(h, "bash finished") {
			t.Fatalf("the queued prompt did not run after the first turn:\n%s", h)
		}
	})

	t.Run("an unknown session is ErrSessionNotFound", func(t *testing.T) {
		_, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "hi", PlatformSessionID: "01a00000-0000-7000-8000-000000000000"})
		if !errors.Is(err, bridge.ErrSessionNotFound) {
			t.Fatalf("err %v, want ErrSessionNotFound", err)
		}
	})

	t.Run("a guarded tool allowed by the person runs", func(t *testing.T) {
		res, ask := adaptertest.AllowedToolRuns(t, a, "now make the file")
		if ask.PlatformID != res.PlatformSessionID+":bash:call_touch" {
			t.Fatalf("ask %+v, want the id <session>:bash:call_touch", ask)
		}
	})

	t.Run("a guarded tool denied by the person does not run", func(t *testing.T) {
		if tr := adaptertest.DeniedToolDoesNotRun(t, a, s, "then make the file"); tr.Content != "not in this folder" {
			t.Fatalf("the model did not get the person's note: %+v", tr)
		}
	})

	t.Run("without a PermissionFunc a guarded tool is refused", func(t *testing.T) {
		dir := t.TempDir()
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "just make the file"})
		if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
			t.Fatalf("a guarded command ran with nobody to ask (stat err %v)", err)
		}
		if tr := adaptertest.LastRequestFor(t, s, "just make the file").LastToolResults; len(tr) != 1 || !strings.Contains(tr[0].Content, "fail closed") {
			t.Fatalf("tool result %+v", tr)
		}
		if res.Text != "bash finished" {
			t.Fatalf("result %+v", res)
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
		if !res1.Failed || !strings.Contains(res1.FailureReason, "400") || res1.Text != "" || res1.Facts.StopReason != "error" {
			t.Fatalf("first result %+v", res1)
		}
		var v2 adaptertest.Verdicts
		res2 := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "please do the work", Model: adaptertest.FakeModel("fake-model"), OnVerdict: v2.On})
		if res2.Failed || res2.Text != "work done" || res2.PlatformSessionID == res1.PlatformSessionID {
			t.Fatalf("second result %+v", res2)
		}
		if got := v2.List(); len(got) != 1 || got[0] != nil {
			t.Fatalf("second verdicts %v", got)
		}
		// The same session can switch model between turns (a new process, not set_model).
		res3 := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "please do the work", PlatformSessionID: res1.PlatformSessionID, Model: adaptertest.FakeModel("fake-model")})
		if res3.Failed || res3.Text != "work done" || res3.PlatformSessionID != res1.PlatformSessionID {
			t.Fatalf("third result %+v", res3)
		}
		// The user's default model is untouched.
		b, err := os.ReadFile(filepath.Join(f.agentDir, "settings.json"))
		if err != nil {
			t.Fatal(err)
		}
		var settings map[string]any
		if err := json.Unmarshal(b, &settings); err != nil || settings["defaultModel"] != "fake-model" {
			t.Fatalf("settings.json changed: %s", b)
		}
	})

	t.Run("the AgentMail tools get each turn's environment and no key reaches the shell", func(t *testing.T) {
		dir := t.TempDir()
		asked := false
		perm := func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
			asked = true
			return bridge.PermissionAnswer{}
		}
		sid := ""
		for _, mail := range []string{"mail-1", "mail-2"} {
			res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "who am i, " + mail, Permission: perm, PlatformSessionID: sid,
				ToolEnv: map[string]string{bridge.TurnTokenEnv: "amt_turn", "AGENTMAIL_SESSION_ID": "sess-42", "AGENTMAIL_MAIL_ID": mail}})
			sid = res.PlatformSessionID
			if res.Text != "tool answered" {
				t.Fatalf("result %+v", res)
			}
			tr := adaptertest.LastRequestFor(t, s, "who am i, "+mail).LastToolResults
			want := "session=sess-42 mail=" + mail + " gateway=http://127.0.0.1:1 key= token=amt_turn platform=pi cwd=" + dir
			if len(tr) != 1 || !strings.Contains(tr[0].Content, want) {
				t.Fatalf("tool result %+v, want %q", tr, want)
			}
		}
		if asked {
			t.Fatal("an AgentMail tool triggered a permission question")
		}
		p := a.liveProc(sid)
		if p == nil {
			t.Fatal("no live process")
		}
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid()) + "/environ")
		if err != nil {
			t.Skipf("cannot read the process environment: %v", err)
		}
		if strings.Contains(string(environ), "ak_from_environment") || strings.Contains(string(environ), "ak_test") {
			t.Fatal("the agent key is in pi's environment, where the model's shell sees it")
		}
	})

	t.Run("only the bridge's extension is loaded (9.12)", func(t *testing.T) {
		dir := t.TempDir()
		marker := filepath.Join(t.TempDir(), "loaded")
		evil := `export default function (pi: any) {
  require("node:fs").writeFileSync(` + jsString(marker) + `, "loaded");
  pi.registerTool({ name: "evil_tool", label: "evil", description: "x", parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "x" }], details: {} }; } });
}
`
		for _, d := range []string{filepath.Join(f.agentDir, "extensions"), filepath.Join(dir, ".pi", "extensions")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "evil.ts"), []byte(evil), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		defer os.RemoveAll(filepath.Join(f.agentDir, "extensions"))
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "status please, isolated"})
		if res.Text != "all is well" {
			t.Fatalf("result %+v", res)
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Fatalf("a global or project extension was loaded (stat err %v)", err)
		}
		tools := append([]string(nil), adaptertest.LastRequestFor(t, s, "status please, isolated").Tools...)
		sort.Strings(tools)
		if strings.Join(tools, ",") != "bash,edit,read,whoami,write" {
			t.Fatalf("tools offered %v, want pi's own plus the AgentMail tools only", tools)
		}
	})

	t.Run("models, sessions of every directory and rename", func(t *testing.T) {
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
		dirA, dirB := t.TempDir(), t.TempDir()
		resA := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dirA, Prompt: "name me"})
		resB := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dirB, Prompt: "name me"})
		if err := a.RenameSession(context.Background(), resA.PlatformSessionID, "fix-the-leak"); err != nil {
			t.Fatal(err)
		}
		// A session without a live process is renamed through a resumed one.
		if p := a.liveProc(resB.PlatformSessionID); p != nil {
			a.forget(resB.PlatformSessionID, p)
			p.stop()
		}
		if err := a.RenameSession(context.Background(), resB.PlatformSessionID, "fix-the-leak-2"); err != nil {
			t.Fatal(err)
		}
		if err := a.RenameSession(context.Background(), resA.PlatformSessionID, ""); err == nil {
			t.Fatal("an empty name was accepted")
		}
		sessions, err := a.ListSessions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][2]string{resA.PlatformSessionID: {dirA, "fix-the-leak"}, resB.PlatformSessionID: {dirB, "fix-the-leak-2"}}
		for _, ps := range sessions {
			if w, ok := want[ps.PlatformID]; ok {
				if ps.Workspace != w[0] || ps.Title != w[1] || ps.UpdatedAt == nil {
					t.Fatalf("listed %+v, want %v", ps, w)
				}
				delete(want, ps.PlatformID)
			}
		}
		if len(want) > 0 {
			t.Fatalf("sessions %v not listed in %+v", want, sessions)
		}
	})

	t.Run("a canceled turn stops the run and fails closed", func(t *testing.T) {
		adaptertest.CancelWhileAsking(t, a, "finally make the file")
	})

	t.Run("a pi process that dies during a turn fails the turn, and the session resumes", func(t *testing.T) {
		dir := t.TempDir()
		first := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "status please, before the crash"})
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "make the file, then crash", PlatformSessionID: first.PlatformSessionID,
			Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
				_ = syscall.Kill(-first.Facts.PID, syscall.SIGKILL)
				return bridge.PermissionAnswer{Allow: true}
			}})
		if !res.Failed || res.Facts.StopReason != "exited" || !strings.Contains(res.FailureReason, "pi exited") || res.Facts.ExitCode == nil {
			t.Fatalf("result %+v", res)
		}
		if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
			t.Fatalf("the command ran in a dead process (stat err %v)", err)
		}
		next := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "after the stop", PlatformSessionID: first.PlatformSessionID})
		if next.Text != "still here" || next.Facts.PID == first.Facts.PID {
			t.Fatalf("next turn %+v", next)
		}
	})

	t.Run("Close stops every process", func(t *testing.T) {
		res := adaptertest.RunTurn(t, a, bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "status please, last"})
		pid := res.Facts.PID
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("pi process %d still exists after Close: %v", pid, err)
		}
		if _, err := a.RunTurn(context.Background(), bridge.TurnRequest{Cwd: t.TempDir(), Prompt: "hi"}); err == nil {
			t.Fatal("RunTurn after Close did not fail")
		}
	})
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
