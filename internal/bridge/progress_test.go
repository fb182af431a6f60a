package bridge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
)

// Live progress (issue 16 point 2): while a turn runs, its run is reported with the
// tool calls so far, the last tool and a one-line summary of its input, the bytes read
// and the last activity time, and two progress reports are never less than a second
// apart however fast the platform works. The transcript on disk (point 4, seed 004 A5)
// holds the prompt, the assistant's text, each tool call with its input, a bounded tool
// result and the final text.
func TestLiveProgressIsReportedAtMostOncePerSecond(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	runsDir := t.TempDir()
	next, release := make(chan struct{}), make(chan struct{})
	burst := func(req bridge.TurnRequest, from, to int) {
		for i := from; i < to; i++ {
			req.OnActivity(bridge.TurnActivity{Kind: bridge.ActivityToolCall, Tool: "Bash",
				Input: map[string]any{"command": fmt.Sprintf("echo %d\n  && true", i)}, BytesRead: int64(100 * (i + 1))})
		}
	}
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{Text: "All 100 commands ran.", Hold: release, Do: func(ctx context.Context, req bridge.TurnRequest) error {
			req.OnActivity(bridge.TurnActivity{Kind: bridge.ActivityText, Text: "Running the commands now."})
			burst(req, 0, 50)
			req.OnActivity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: "Bash", Text: strings.Repeat("x", 10000)})
			select {
			case <-next:
			case <-ctx.Done():
			}
			burst(req, 50, 100)
			return nil
		}}
	}
	h := startBridge(t, gw, fake, func(c *bridge.Config) { c.Settings.RunsDir = runsDir })
	gw.deliverMail(mailOpts{from: "alice", subject: "many commands", workspace: workdir(t, "p"), push: true})
	reported := func(calls int) func() bool {
		return func() bool {
			for _, r := range gw.putLog {
				if r.State == client.RunRunning && r.ToolCalls == calls {
					return true
				}
			}
			return false
		}
	}
	h.waitGW("a progress report of the first 50 tool calls", reported(50))
	close(next)
	h.waitGW("a progress report of all 100 tool calls", reported(100))
	close(release)
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })

	gw.mu.Lock()
	log := append([]client.Run(nil), gw.putLog...)
	gw.mu.Unlock()
	var progress []client.Run
	for _, r := range log {
		if r.State == client.RunRunning && r.ToolCalls > 0 {
			progress = append(progress, r)
		}
	}
	for i := 1; i < len(progress); i++ {
		if gap := progress[i].UpdatedAt.Sub(progress[i-1].UpdatedAt); gap < time.Second {
			t.Errorf("progress reports %d and %d are %v apart, want at least 1 s", i-1, i, gap)
		}
	}
	last := progress[len(progress)-1]
	if last.ToolCalls != 100 || last.LastTool != "Bash" || last.LastToolInput != "echo 99 && true" || last.BytesRead != 10000 || last.LastActivityAt == nil {
		t.Errorf("last progress report = %+v; want 100 tool calls, the last tool Bash with its input on one line, 10000 bytes read, the activity time", last)
	}

	text, err := os.ReadFile(filepath.Join(runsDir, last.RunID+".md"))
	if err != nil {
		t.Fatalf("the run's transcript: %v", err)
	}
	tr := string(text)
	for _, want := range []string{"## Prompt", "many commands", "## Assistant\n\nRunning the commands now.", "## Tool call: Bash", `"command": "echo 99\n  \u0026\u0026 true"`,
		"## Tool result: Bash", "(6000 bytes more)", "All 100 commands ran."} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q:\n%.3000s", want, tr)
		}
	}
	if strings.Contains(tr, strings.Repeat("x", 4001)) {
		t.Error("the transcript holds the whole 10000-byte tool result; want it bounded")
	}
}

// A transcript stops at its bound (AGENTMAIL_TRANSCRIPT_MAX_BYTES) and says so.
func TestTranscriptIsCutAtItsBoundAndSaysSo(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	runsDir := t.TempDir()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{Text: "done", Do: func(ctx context.Context, req bridge.TurnRequest) error {
			for i := 0; i < 20; i++ {
				req.OnActivity(bridge.TurnActivity{Kind: bridge.ActivityText, Text: strings.Repeat("talk ", 100)})
			}
			return nil
		}}
	}
	h := startBridge(t, gw, fake, func(c *bridge.Config) { c.Settings.RunsDir, c.Settings.TranscriptMaxBytes = runsDir, 3000 })
	gw.deliverMail(mailOpts{from: "alice", subject: "a long answer", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	runs := gw.allRuns()
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	text, err := os.ReadFile(filepath.Join(runsDir, runs[0].RunID+".md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(text) > 3000 || !strings.HasSuffix(string(text), "*Transcript cut here: it reached its bound of 3000 bytes (AGENTMAIL_TRANSCRIPT_MAX_BYTES).*\n") {
		t.Errorf("transcript of %d bytes ends %q; want at most 3000 bytes ending with the cut note", len(text), text[max(0, len(text)-200):])
	}
}
