package platforms

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// runPlatform runs bin with args in dir under env and returns stdout; it fails the test
// on a non-zero exit, printing stderr and the model requests.
func runPlatform(t *testing.T, s *scriptedmodel.Server, env *Env, dir, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = strings.NewReader("")
	err := cmd.Run()
	if err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s\nrequests:\n%s", filepath.Base(bin), args, err, stdout.String(), stderr.String(), describe(s))
	}
	return stdout.String()
}

// describe lists the logged requests, one a line, for failure messages.
func describe(s *scriptedmodel.Server) string {
	var b strings.Builder
	for _, r := range s.Requests() {
		b.WriteString(string(r.Protocol) + " " + r.Method + " " + r.Path + " model=" + r.Model + " rule=" + r.Rule + " user=" + strings.ReplaceAll(r.UserText, "\n", " ") + "\n")
	}
	return b.String()
}

// claudeResult returns the result event of a stream-json transcript.
func claudeResult(t *testing.T, out string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["type"] == "result" {
			return ev
		}
	}
	t.Fatalf("no result event in:\n%s", out)
	return nil
}

func TestClaudeCodeAnswersWithScriptedText(t *testing.T) {
	bin := Require(t, Claude)
	s := scriptedmodel.NewTest(t, scriptedmodel.Rule{UserContains: "hi", Reply: scriptedmodel.Text("hello from the fake")})
	env := NewEnv(t)
	env.UseClaude(s.URL)
	out := runPlatform(t, s, env, t.TempDir(), bin, "-p", "hi", "--output-format", "stream-json", "--verbose")
	res := claudeResult(t, out)
	if res["result"] != "hello from the fake" || res["is_error"] != false {
		t.Fatalf("result event %v\nrequests:\n%s", res, describe(s))
	}
	for _, r := range s.Requests() {
		if r.Path != "/v1/messages" || r.Query != "beta=true" || !r.Stream {
			t.Errorf("unexpected request %s %s?%s stream=%v", r.Method, r.Path, r.Query, r.Stream)
		}
	}
}

func TestClaudeCodeRunsScriptedBashLoop(t *testing.T) {
	bin := Require(t, Claude)
	s := scriptedmodel.NewTest(t,
		scriptedmodel.Rule{ToolResultFor: "Bash", Reply: scriptedmodel.Text("done after tool")},
		scriptedmodel.Rule{UserContains: "make x", Reply: scriptedmodel.Call("Bash", map[string]any{"command": "touch x", "description": "make x"})},
	)
	env := NewEnv(t)
	env.UseClaude(s.URL)
	dir := t.TempDir()
	out := runPlatform(t, s, env, dir, bin, "-p", "please make x", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash(touch:*)")
	if res := claudeResult(t, out); res["result"] != "done after tool" {
		t.Fatalf("result %v\n%s", res, describe(s))
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Fatalf("x was not created: %v\n%s", err, out)
	}
}

func TestOpenCodeAnswersWithScriptedText(t *testing.T) {
	bin := Require(t, OpenCode)
	s := scriptedmodel.NewTest(t, scriptedmodel.Rule{UserContains: "hi", Reply: scriptedmodel.Text("hello from the fake")})
	env := NewEnv(t)
	env.UseOpenCode(s.OpenAIBaseURL())
	out := runPlatform(t, s, env, t.TempDir(), bin, "run", "hi")
	if !strings.Contains(out, "hello from the fake") {
		t.Fatalf("stdout %q\n%s", out, describe(s))
	}
	reqs := s.ModelRequests()
	titles := 0
	for _, r := range reqs {
		if r.Title {
			titles++
			if len(r.Tools) != 0 {
				t.Errorf("title request offered tools %v", r.Tools)
			}
		}
	}
	if titles != 1 {
		t.Errorf("saw %d title requests, want 1\n%s", titles, describe(s))
	}
}

func TestOpenCodeRunsScriptedBashLoop(t *testing.T) {
	bin := Require(t, OpenCode)
	s := scriptedmodel.NewTest(t,
		scriptedmodel.Rule{ToolResultFor: "bash", Reply: scriptedmodel.Text("done after tool")},
		scriptedmodel.Rule{UserContains: "make x", Reply: scriptedmodel.Call("bash", map[string]any{"command": "touch x", "description": "make x"})},
	)
	env := NewEnv(t)
	env.UseOpenCode(s.OpenAIBaseURL())
	dir := t.TempDir()
	out := runPlatform(t, s, env, dir, bin, "run", "please make x")
	if !strings.Contains(out, "done after tool") {
		t.Fatalf("stdout %q\n%s", out, describe(s))
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Fatalf("x was not created: %v", err)
	}
}

func TestPiAnswersWithScriptedText(t *testing.T) {
	bin := Require(t, Pi)
	s := scriptedmodel.NewTest(t, scriptedmodel.Rule{UserContains: "hi", Reply: scriptedmodel.Text("hello from the fake")})
	env := NewEnv(t)
	if _, err := env.UsePi(s.OpenAIBaseURL()); err != nil {
		t.Fatal(err)
	}
	out := runPlatform(t, s, env, t.TempDir(), bin, "-p", "hi")
	if strings.TrimSpace(out) != "hello from the fake" {
		t.Fatalf("stdout %q\n%s", out, describe(s))
	}
}

func TestPiRunsScriptedBashLoop(t *testing.T) {
	bin := Require(t, Pi)
	s := scriptedmodel.NewTest(t,
		scriptedmodel.Rule{ToolResultFor: "bash", Reply: scriptedmodel.Text("done after tool")},
		scriptedmodel.Rule{UserContains: "make x", Reply: scriptedmodel.Call("bash", map[string]any{"command": "touch x"})},
	)
	env := NewEnv(t)
	if _, err := env.UsePi(s.OpenAIBaseURL()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := runPlatform(t, s, env, dir, bin, "-p", "please make x")
	if !strings.Contains(out, "done after tool") {
		t.Fatalf("stdout %q\n%s", out, describe(s))
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Fatalf("x was not created: %v", err)
	}
}
