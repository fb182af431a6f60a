// Package adaptertest holds what the tests of the platform adapters (internal/bridge/claude,
// opencode, pi) share when they run one real platform in the test process against the
// scripted model: a stand-in AgentMail tool server served by the test binary itself, one
// turn with a deadline, the recorded verdicts, and lookups in the model's request log.
package adaptertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WhoamiArg is the argument under which a test binary serves the whoami tool server; a
// TestMain that sees it as os.Args[1] calls ServeWhoami and returns.
const WhoamiArg = "mcp-serve"

// WhoamiCommand is the command line that starts the test binary as the whoami tool server,
// for bridge.Env.MCPCommand.
func WhoamiCommand(t testing.TB) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{self, WhoamiArg}
}

// ServeWhoami serves MCP over stdin and stdout with one tool, whoami, which answers with
// the environment the tool server was given, in one line:
// "session=… mail=… gateway=… key=… token=… platform=… cwd=…" (AGENTMAIL_SESSION_ID,
// AGENTMAIL_MAIL_ID, AGENTMAIL_GATEWAY_URL, AGENTMAIL_AGENT_KEY, AGENTMAIL_TURN_TOKEN,
// AGENTMAIL_PLATFORM and the working directory); the token is the content of
// AGENTMAIL_TURN_TOKEN_FILE at the call when that is set. It exits the process with status 1 when
// the transport fails.
func ServeWhoami() {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentmail-test", Version: "1"}, nil)
	type none struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Tells the session id and gateway of this tool server."},
		func(ctx context.Context, req *mcp.CallToolRequest, in none) (*mcp.CallToolResult, any, error) {
			wd, _ := os.Getwd()
			token := os.Getenv("AGENTMAIL_TURN_TOKEN")
			if f := os.Getenv("AGENTMAIL_TURN_TOKEN_FILE"); f != "" {
				b, _ := os.ReadFile(f)
				token = strings.TrimSpace(string(b))
			}
			text := "session=" + os.Getenv("AGENTMAIL_SESSION_ID") + " mail=" + os.Getenv("AGENTMAIL_MAIL_ID") +
				" gateway=" + os.Getenv("AGENTMAIL_GATEWAY_URL") + " key=" + os.Getenv("AGENTMAIL_AGENT_KEY") + " token=" + token +
				" platform=" + os.Getenv("AGENTMAIL_PLATFORM") + " cwd=" + wd
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

// Turner is the part of bridge.Adapter that runs a turn.
type Turner interface {
	RunTurn(ctx context.Context, req bridge.TurnRequest) (bridge.TurnResult, error)
}

// RunTurn runs one turn with a two-minute deadline and fails t when it returns an error.
func RunTurn(t testing.TB, a Turner, req bridge.TurnRequest) bridge.TurnResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := a.RunTurn(ctx, req)
	if err != nil {
		t.Fatalf("RunTurn: %v (result %+v)", err, res)
	}
	return res
}

// Verdicts records the calls of a turn's OnVerdict; the zero value is ready to use and
// safe for concurrent calls.
type Verdicts struct {
	mu  sync.Mutex
	got []error
}

// On is the OnVerdict function.
func (v *Verdicts) On(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.got = append(v.got, err)
}

// List returns the verdicts so far, oldest first.
func (v *Verdicts) List() []error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]error(nil), v.got...)
}

// FakeModel names one scripted model as opencode and pi see it (platforms.FakeProvider).
func FakeModel(name string) *client.ModelRef {
	return &client.ModelRef{Provider: platforms.FakeProvider, Model: name}
}

// LastRequestFor returns the last turn request (not a title request) whose conversation
// has a user message containing phrase; none fails t.
func LastRequestFor(t testing.TB, s *scriptedmodel.Server, phrase string) scriptedmodel.Request {
	t.Helper()
	reqs := s.ModelRequests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Title {
			continue
		}
		for _, m := range reqs[i].Messages {
			if m.Role == "user" && strings.Contains(m.Text, phrase) {
				return reqs[i]
			}
		}
	}
	t.Fatalf("no model request for %q", phrase)
	return scriptedmodel.Request{}
}

// History is a request's conversation, one "role:text" line a message.
func History(r scriptedmodel.Request) string {
	h := ""
	for _, m := range r.Messages {
		h += m.Role + ":" + m.Text + "\n"
	}
	return h
}

// CancelWhileAsking shows that a turn stopped while a person is being asked fails closed
// and leaves its session usable. prompt makes the model call a tool that would create
// made.txt in a fresh directory; the turn's context ends inside the permission question,
// and the question is answered with a refusal only after that. The turn must return an
// error wrapping context.Canceled with a failed result stopped "canceled", made.txt must
// not exist, and a next turn in the same session with the prompt "after the stop" must
// answer "still here" (as the adapter tests' scripts do).
func CancelWhileAsking(t testing.TB, a Turner, prompt string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answered := make(chan struct{})
	res, err := a.RunTurn(ctx, bridge.TurnRequest{Cwd: dir, Prompt: prompt, Permission: func(pctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
		cancel() // the bridge stops while a person is being asked
		<-pctx.Done()
		close(answered)
		return bridge.PermissionAnswer{Allow: false, Message: "the bridge stopped"}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	<-answered
	if !res.Failed || res.Facts.StopReason != "canceled" {
		t.Fatalf("result %+v", res)
	}
	// The session is left usable: a new turn in it runs.
	next := RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: "after the stop", PlatformSessionID: res.PlatformSessionID})
	if next.Text != "still here" {
		t.Fatalf("next turn %+v", next)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("the command ran although nobody allowed it (stat err %v)", err)
	}
}

// The guarded-tool helpers below expect the script of the opencode and pi adapter tests:
// prompt makes the model call the tool "bash" (call id "call_touch") with "touch
// made.txt", and a bash result makes it answer "bash finished".

// AllowedToolRuns runs a turn for prompt in a fresh directory, allowing every question.
// It checks that exactly one question came, about that call (summary "bash: touch
// made.txt"), that made.txt exists in the turn's directory, and that the result is the
// last assistant message only. It returns the result and the question for the platform's
// own checks (the shape of the question's PlatformID).
func AllowedToolRuns(t testing.TB, a Turner, prompt string) (bridge.TurnResult, bridge.PermissionAsk) {
	t.Helper()
	dir := t.TempDir()
	var mu sync.Mutex
	var asks []bridge.PermissionAsk
	res := RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: prompt, Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
		mu.Lock()
		asks = append(asks, ask)
		mu.Unlock()
		return bridge.PermissionAnswer{Allow: true}
	}})
	mu.Lock()
	defer mu.Unlock()
	if len(asks) != 1 || asks[0].ToolName != "bash" || asks[0].ToolUseID != "call_touch" ||
		asks[0].Summary != "bash: touch made.txt" || asks[0].Input["command"] != "touch made.txt" {
		t.Fatalf("asks %+v", asks)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err != nil {
		t.Fatalf("the allowed command did not run in the mail's directory: %v", err)
	}
	if res.Failed || res.Text != "bash finished" {
		t.Fatalf("result %+v (only the last assistant message is the reply)", res)
	}
	return res, asks[0]
}

// DeniedToolDoesNotRun runs a turn for prompt in a fresh directory and denies the question
// with the note "not in this folder". It checks that the person was asked once, that
// made.txt does not exist and that the turn went on to its answer. It returns the one tool
// result the model saw, for the platform's own check of how the note reaches the model.
func DeniedToolDoesNotRun(t testing.TB, a Turner, s *scriptedmodel.Server, prompt string) scriptedmodel.ToolResult {
	t.Helper()
	dir := t.TempDir()
	asked := 0
	res := RunTurn(t, a, bridge.TurnRequest{Cwd: dir, Prompt: prompt, Permission: func(ctx context.Context, ask bridge.PermissionAsk) bridge.PermissionAnswer {
		asked++
		return bridge.PermissionAnswer{Allow: false, Message: "not in this folder"}
	}})
	if asked != 1 {
		t.Fatalf("asked %d times", asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("the denied command ran (stat err %v)", err)
	}
	tr := LastRequestFor(t, s, prompt).LastToolResults
	if len(tr) != 1 {
		t.Fatalf("the model did not get one tool result: %+v", tr)
	}
	if res.Failed || res.Text != "bash finished" {
		t.Fatalf("result %+v", res)
	}
	return tr[0]
}
