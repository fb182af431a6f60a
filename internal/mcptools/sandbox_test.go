package mcptools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/testkit/platforms"
)

// probeCommand prints what a command can learn of the agent key: its own
// environment, its parent's (/proc/$PPID/environ), the key file and the
// gateway's data directory, and tries to write inside and outside the
// workspace.
func probeCommand(keyFile, dataDir, outside string) string {
	return strings.Join([]string{
		`cat ` + keyFile + ` 2>&1`,
		`ls -A ` + dataDir + ` 2>&1; cat ` + dataDir + `/agentmail.db 2>&1`,
		`env | grep AGENTMAIL_AGENT`,
		`tr '\0' '\n' < /proc/$PPID/environ | grep AGENTMAIL_AGENT`,
		`for p in /proc/[0-9]*; do tr '\0' '\n' < $p/environ 2>/dev/null; done | grep AGENTMAIL_AGENT`,
		`umount ` + keyFile + ` 2>/dev/null; umount ` + dataDir + ` 2>/dev/null; cat ` + keyFile + ` 2>&1`,
		`mount -o remount,rw / 2>/dev/null && echo REMOUNTED`,
		`echo made > inside.txt`,
		`echo escaped > ` + outside + `/escaped.txt 2>/dev/null`,
		`if touch /etc/agentmail-sandbox-probe 2>/dev/null; then echo WROTE-ETC; fi`,
		`echo probe-done`,
	}, "; ")
}

func TestSandboxedCommandSeesNoAgentKeyAndWritesOnlyTheWorkspace(t *testing.T) {
	platforms.RequireBwrap(t)
	const secret = "am_sandbox_secret_1234"
	t.Setenv("AGENTMAIL_AGENT_KEY", secret)
	t.Cleanup(func() { _ = os.Remove("/etc/agentmail-sandbox-probe") })
	ws, home, outside := realDir(t), realDir(t), realDir(t)
	keyFile := filepath.Join(home, ".agentmail", "agent.key")
	dataDir := filepath.Join(home, "gateway-data")
	for _, f := range []string{keyFile, filepath.Join(dataDir, "agentmail.db")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	command := probeCommand(keyFile, dataDir, outside)

	// Control: unconfined, the parent's environment and the files give the
	// key away, so the probe can see what the sandbox must hide.
	open, err := RunCommand(context.Background(), command, ws, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(open.Stdout, secret) {
		t.Fatalf("the unconfined probe did not find the key, so it proves nothing:\n%s", open.Stdout)
	}
	_ = os.Remove(filepath.Join(outside, "escaped.txt"))
	_ = os.Remove("/etc/agentmail-sandbox-probe")

	sb, why := FindSandbox(context.Background(), SandboxAuto, ws, []string{dataDir, keyFile, filepath.Join(home, ".agentmail")}, exec.LookPath)
	if sb == nil {
		t.Fatalf("no sandbox although bwrap is installed: %s", why)
	}
	res, err := RunCommand(context.Background(), command, ws, time.Minute, sb)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "probe-done") {
		t.Fatalf("the probe did not run to its end: %+v", res)
	}
	if strings.Contains(res.Stdout+res.Stderr, secret) {
		t.Errorf("a sandboxed command read the agent key:\n%s", res.Stdout)
	}
	if strings.Contains(res.Stdout, "WROTE-ETC") || strings.Contains(res.Stdout, "REMOUNTED") {
		t.Errorf("a sandboxed command wrote into /etc or remounted / writable:\n%s", res.Stdout)
	}
	assertContent(t, filepath.Join(ws, "inside.txt"), "made\n")
	assertAbsent(t, filepath.Join(outside, "escaped.txt"))
}

func TestSandboxedCommandIsKilledWithItsChildrenAfterTheTimeout(t *testing.T) {
	platforms.RequireBwrap(t)
	ws := realDir(t)
	sb, why := FindSandbox(context.Background(), SandboxAuto, ws, nil, exec.LookPath)
	if sb == nil {
		t.Fatalf("no sandbox: %s", why)
	}
	res, err := RunCommand(context.Background(), "sleep 60 & sleep 60; echo never", ws, 300*time.Millisecond, sb)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || strings.Contains(res.Stdout, "never") {
		t.Errorf("result %+v: want timed out", res)
	}
}

// The reasons themselves are package sandbox's (TestFindSaysWhyThereIsNoSandbox);
// the tool server adds what they mean for approved commands.
func TestFindSandboxSaysWhyCommandsRunUnconfined(t *testing.T) {
	missing := func(string) (string, error) { return "", errors.New("not found") }
	sb, why := FindSandbox(context.Background(), SandboxAuto, t.TempDir(), nil, missing)
	if sb != nil || !strings.Contains(why, "install the Debian package bubblewrap") || !strings.Contains(why, "approved commands run without a sandbox") {
		t.Errorf("no bwrap: sandbox %v, reason %q", sb, why)
	}
}

// Across the process boundary: `agentmail mcp` holds the agent key in its
// environment; an approved run_command reads neither it (through
// /proc/$PPID/environ) nor the key file, and says at start that it runs
// commands in the sandbox.
func TestMCPProcessRunCommandCannotReadTheAgentKey(t *testing.T) {
	platforms.RequireBwrap(t)
	fg := newFakeGateway(t)
	ws, home, outside := realDir(t), realDir(t), realDir(t)
	env := processEnv(fg, ws, home, "full")
	keyFile := filepath.Join(home, ".agentmail", "agent.key")
	if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(fg.key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startMCP(t, env, ws)
	initProcess(t, p)
	text, isErr := p.callTool(1, "run_command", map[string]any{"command": probeCommand(keyFile, env["AGENTMAIL_DATA_DIR"], outside)})
	if isErr || !strings.Contains(text, "probe-done") {
		t.Fatalf("run_command: isError %v\n%s", isErr, text)
	}
	if strings.Contains(text, fg.key) {
		t.Errorf("run_command read the agent key:\n%s", text)
	}
	assertContent(t, filepath.Join(ws, "inside.txt"), "made\n")
	assertAbsent(t, filepath.Join(outside, "escaped.txt"))
	if !strings.Contains(p.stderr.String(), "bubblewrap sandbox") {
		t.Errorf("the start log does not say that commands run in the sandbox:\n%s", p.stderr.String())
	}
}
