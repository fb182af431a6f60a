package pi

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/bridge"
)

// fakePiEnv switches the test binary into the role of a scripted pi (RPC mode only).
const fakePiEnv = "AGENTMAIL_TEST_FAKE_PI"

// fakePi is a pi in RPC mode reduced to what reproduces the end-of-run race of 9.11: a
// prompt that arrives while a run is ending is queued and never started. It answers
// get_state and prompt: a prompt on an idle session runs at once (its message_end carries
// "answer to <prompt>"), except that a prompt containing "hold" keeps its run open until
// the next prompt arrives; that next prompt is accepted into the queue, and the run then
// ends without taking it. It stores its session file like pi, so --session resumes.
func fakePi() {
	sid := "fake-session"
	for i, a := range os.Args {
		if a == "--session" && i+1 < len(os.Args) {
			sid = os.Args[i+1]
		}
	}
	cwd, _ := os.Getwd()
	dir := filepath.Join(os.Getenv("PI_CODING_AGENT_DIR"), "sessions", "--"+strings.ReplaceAll(strings.TrimPrefix(cwd, "/"), "/", "-")+"--")
	_ = os.MkdirAll(dir, 0o755)
	header, _ := json.Marshal(map[string]any{"type": "session", "version": 3, "id": sid, "cwd": cwd})
	_ = os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_"+sid+".jsonl"), append(header, '\n'), 0o644)

	out := json.NewEncoder(os.Stdout)
	streaming, pending := false, 0
	answer := func(text string) {
		out.Encode(map[string]any{"type": "message_start", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}})
		out.Encode(map[string]any{"type": "message_update", "assistantMessageEvent": map[string]any{"type": "text_delta"}})
		out.Encode(map[string]any{"type": "message_end", "message": map[string]any{"role": "assistant", "stopReason": "stop",
			"responseId": "resp-" + text, "content": []any{map[string]any{"type": "text", "text": "answer to " + text}}}})
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var cmd struct {
			ID      string `json:"id"`
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &cmd) != nil {
			continue
		}
		switch cmd.Type {
		case "get_state":
			out.Encode(map[string]any{"id": cmd.ID, "type": "response", "command": "get_state", "success": true,
				"data": map[string]any{"sessionId": sid, "isStreaming": streaming, "pendingMessageCount": pending}})
		case "prompt":
			out.Encode(map[string]any{"id": cmd.ID, "type": "response", "command": "prompt", "success": true})
			if streaming {
				pending++ // queued in the instant the run ends: nobody will start it
				out.Encode(map[string]any{"type": "agent_end", "messages": []any{}})
				streaming = false
				continue
			}
			out.Encode(map[string]any{"type": "agent_start"})
			answer(cmd.Message)
			if strings.Contains(cmd.Message, "hold") {
				streaming = true
				continue
			}
			out.Encode(map[string]any{"type": "agent_end", "messages": []any{}})
		default:
			out.Encode(map[string]any{"id": cmd.ID, "type": "response", "command": cmd.Type, "success": true})
		}
	}
}

func TestAPromptStuckInPisQueueIsSentAgainToAFreshProcess(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	agentDir := t.TempDir()
	var mu sync.Mutex
	var logs []string
	a := New(Options{Environ: []string{"PATH=" + os.Getenv("PATH"), fakePiEnv + "=1", "PI_CODING_AGENT_DIR=" + agentDir, "HOME=" + t.TempDir()}})
	if err := a.Start(context.Background(), bridge.Env{Bin: self, Log: func(msg string, args ...any) {
		mu.Lock()
		logs = append(logs, msg)
		mu.Unlock()
	}}); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	type out struct {
		res bridge.TurnResult
		err error
	}
	started := make(chan string, 1)
	first := make(chan out, 1)
	go func() {
		res, err := a.RunTurn(ctx, bridge.TurnRequest{Cwd: dir, Prompt: "first hold", OnStart: func(_ int, id string) { started <- id }})
		first <- out{res, err}
	}()
	sid := <-started
	res2, err := a.RunTurn(ctx, bridge.TurnRequest{Cwd: dir, Prompt: "second", PlatformSessionID: sid})
	if err != nil {
		t.Fatalf("second turn: %v", err)
	}
	f := <-first
	if f.err != nil || f.res.Text != "answer to first hold" || f.res.MessageID != "resp-first hold" {
		t.Fatalf("first turn %+v, %v", f.res, f.err)
	}
	if res2.Failed || res2.Text != "answer to second" || res2.PlatformSessionID != sid {
		t.Fatalf("second turn %+v: the stuck prompt was not run", res2)
	}
	if res2.Facts.PID == f.res.Facts.PID {
		t.Fatalf("the second turn ran in the stuck process %d, want a fresh one", res2.Facts.PID)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(logs, "\n"), "(9.11)") {
		t.Fatalf("the recovery was not logged: %v", logs)
	}
}
