package mcptools

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRunCommandTruncatesLongOutputSayingHowMuch(t *testing.T) {
	h := newHarness(t, TierFull)
	out := h.mustOK("run_command", map[string]any{"command": "head -c 20000 /dev/zero | tr '\\0' a; head -c 100 /dev/zero | tr '\\0' e >&2"})
	contains(t, out, "exit code: 0", "[stdout truncated: the first 16000 characters are shown, 4000 more characters were cut]")
	if n := strings.Count(out, "a"); n < 16000 || n > 16000+200 {
		t.Errorf("stdout shows %d 'a', want 16000", n)
	}
	if strings.Contains(out, "stderr truncated") || !strings.Contains(out, strings.Repeat("e", 100)) {
		t.Errorf("stderr (100 characters) must be complete:\n%s", out[len(out)-400:])
	}
}

func TestHeadWriterCountsCharactersNotBytes(t *testing.T) {
	w := &headWriter{limit: 3}
	// "é" is two bytes; write it split across writes.
	in := []byte("aéöü€x")
	for i := range in {
		_, _ = w.Write(in[i : i+1])
	}
	w.finish()
	if w.buf.String() != "aéö" || w.cut != 3 {
		t.Errorf("kept %q cut %d; want \"aéö\" and 3", w.buf.String(), w.cut)
	}
}

func TestRunCommandReportsStderrExitCodeAndEmptyStreams(t *testing.T) {
	res, err := RunCommand(context.Background(), "echo to-err >&2; exit 7", t.TempDir(), time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 7 || res.Stdout != "" || res.Stderr != "to-err\n" {
		t.Errorf("result %+v", res)
	}
	text := res.Render(time.Minute)
	contains(t, text, "exit code: 7", "stdout: (empty)", "stderr:\nto-err")
}

func TestRunCommandKillsTheProcessGroupAfterTheTimeout(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	res, err := RunCommand(context.Background(), "sleep 60 & sleep 60; echo never", dir, 300*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 || strings.Contains(res.Stdout, "never") {
		t.Errorf("result %+v: want timed out with exit -1", res)
	}
	// WaitDelay would add 5 s if a child kept the pipes open.
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("took %s: the background child was not killed with the group", d)
	}
	contains(t, res.Render(300*time.Millisecond), "killed")
}

func TestRunCommandDoesNotPassTheAgentKey(t *testing.T) {
	t.Setenv("AGENTMAIL_AGENT_KEY", "am_very_secret")
	t.Setenv("SOME_OTHER", "visible")
	res, err := RunCommand(context.Background(), `echo "key=[$AGENTMAIL_AGENT_KEY] other=[$SOME_OTHER]"`, t.TempDir(), time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(res.Stdout) != "key=[] other=[visible]" {
		t.Errorf("stdout %q", res.Stdout)
	}
}

func TestRunCommandArgumentErrors(t *testing.T) {
	h := newHarness(t, TierFull)
	h.mustFail("run_command", map[string]any{"command": "  "}, "command is required")
	h.mustFail("run_command", map[string]any{"command": "true", "cwd": "does/not/exist"}, "not an existing directory")
	h.mustFail("run_command", map[string]any{"command": "true", "timeout_seconds": "soon"}, "timeout_seconds must be a whole number")
	out := h.mustOK("run_command", map[string]any{"command": "pwd", "timeout_seconds": "5"})
	contains(t, out, h.ws)
}
