package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/testkit/platforms"
)

// Started as `<test binary> inner-sandbox <workspace> <hidden>`, the test
// binary is the tool server inside a platform sandbox: it finds the
// run_command sandbox there and runs a probe in it.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "inner-sandbox" {
		os.Exit(innerSandbox(os.Args[2], os.Args[3]))
	}
	os.Exit(m.Run())
}

func innerSandbox(workspace, hidden string) int {
	sb, why := Find(context.Background(), Auto, Commands(workspace, []string{hidden}), exec.LookPath)
	if sb == nil {
		fmt.Println("NO-INNER-SANDBOX:", why)
		return 0
	}
	name, args := sb.Command(workspace, "bash", "-c",
		`cat `+hidden+`/key 2>&1; touch /etc/agentmail-inner-probe 2>/dev/null && echo WROTE-ETC; echo inner > inside.txt; echo inner-done`)
	out, err := exec.Command(name, args...).CombinedOutput()
	fmt.Printf("INNER shared-proc=%v err=%v\n%s", sb.SharesProc(), err, out)
	return 0
}

// realDir is a temporary directory with symlinks resolved.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// holder starts a process that keeps secret in its environment, as a bridge
// started with AGENTMAIL_AGENT_KEY would, and stops it at the end.
func holder(t *testing.T, secret string) int {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), "AGENTMAIL_AGENT_KEY="+secret)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

func run(t *testing.T, name string, args []string, dir string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// The platform's sandbox: the bridge's process and the key files are gone,
// the rest of the file system is as it was, writable where it was, and the
// process cannot unmount what hides the keys, even as root.
func TestPlatformSandboxHidesTheKeysAndTheBridgeAndKeepsTheFileSystem(t *testing.T) {
	platforms.RequireBwrap(t)
	const secret = "amk_platform_sandbox_secret_42"
	home, ws, elsewhere := realDir(t), realDir(t), realDir(t)
	keyDir := filepath.Join(home, ".agentmail")
	keyFile := filepath.Join(keyDir, "agent.key")
	dataDir := filepath.Join(home, "gateway-data")
	for _, f := range []string{keyFile, filepath.Join(dataDir, "agentmail.db")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pid := holder(t, secret)
	probe := strings.Join([]string{
		`cat /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep AGENTMAIL_AGENT_KEY`,
		fmt.Sprintf(`test -e /proc/%d && echo HOLDER-VISIBLE`, pid),
		`cat ` + keyFile + ` 2>&1`,
		`ls -A ` + keyDir + ` ` + dataDir + ` 2>/dev/null | sed 's/^/entry:/'`,
		`umount ` + keyDir + ` 2>/dev/null; umount ` + dataDir + ` 2>/dev/null; cat ` + keyFile + ` 2>&1`,
		`unshare -U -r -m sh -c 'umount ` + keyDir + `; cat ` + keyFile + `' 2>/dev/null`,
		`echo kept > ` + elsewhere + `/made.txt && echo WROTE-ELSEWHERE`,
		`echo here > made.txt`,
		`touch ` + keyDir + `/new 2>/dev/null && echo WROTE-HIDDEN`,
		`echo "inside=$` + InsideEnv + `"`,
		`echo probe-done`,
	}, "; ")

	open := run(t, "bash", []string{"-c", probe}, ws)
	if !strings.Contains(open, secret) || !strings.Contains(open, "HOLDER-VISIBLE") || !strings.Contains(open, "entry:agent.key") {
		t.Fatalf("the unconfined probe found neither the key nor its holder, so it proves nothing:\n%s", open)
	}
	_ = os.Remove(filepath.Join(elsewhere, "made.txt"))
	_ = os.Remove(filepath.Join(keyDir, "new"))

	sb, why := Find(context.Background(), Auto, Platform([]string{keyFile, keyDir, dataDir, filepath.Join(home, "missing")}), exec.LookPath)
	if sb == nil {
		t.Fatalf("no sandbox although bwrap is installed: %s", why)
	}
	name, args := sb.Command("", "bash", "-c", probe)
	out := run(t, name, args, ws)
	if !strings.Contains(out, "probe-done") {
		t.Fatalf("the probe did not run to its end:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("the confined platform read the agent key:\n%s", out)
	}
	for _, bad := range []string{"HOLDER-VISIBLE", "entry:agentmail.db", "entry:agent.key", "WROTE-HIDDEN"} {
		if strings.Contains(out, bad) {
			t.Errorf("the confined platform saw %s:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "WROTE-ELSEWHERE") || !strings.Contains(out, "inside=platform") {
		t.Errorf("the platform's file system is not as it was (writable outside the workspace) or the sandbox is not marked:\n%s", out)
	}
	for f, want := range map[string]string{filepath.Join(elsewhere, "made.txt"): "kept\n", filepath.Join(ws, "made.txt"): "here\n"} {
		if b, err := os.ReadFile(f); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q written from inside", f, b, err, want)
		}
	}
	if b, err := os.ReadFile(keyFile); err != nil || string(b) != secret+"\n" {
		t.Errorf("the key file outside changed: %q, %v", b, err)
	}
}

// The tool server inside the platform's sandbox still confines run_command
// (as root with the platform sandbox's /proc, which holds no bridge).
func TestCommandSandboxWorksInsideThePlatformSandbox(t *testing.T) {
	platforms.RequireBwrap(t)
	t.Cleanup(func() { _ = os.Remove("/etc/agentmail-inner-probe") })
	home, ws := realDir(t), realDir(t)
	keyDir := filepath.Join(home, ".agentmail")
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keyDir, "key"), []byte("amk_inner_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sb, why := Find(context.Background(), Auto, Platform(nil), exec.LookPath)
	if sb == nil {
		t.Fatalf("no platform sandbox: %s", why)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	name, args := sb.Command("", self, "inner-sandbox", ws, keyDir)
	out := run(t, name, args, ws)
	if !strings.Contains(out, "inner-done") || strings.Contains(out, "NO-INNER-SANDBOX") {
		t.Fatalf("run_command's sandbox did not start inside the platform's:\n%s", out)
	}
	if strings.Contains(out, "amk_inner_secret") || strings.Contains(out, "WROTE-ETC") {
		t.Errorf("the inner sandbox read the hidden key or wrote /etc:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "inner\n" {
		t.Errorf("the inner sandbox did not write the workspace: %q, %v\n%s", b, err, out)
	}
	if wantShared := os.Geteuid() == 0; !strings.Contains(out, fmt.Sprintf("shared-proc=%v", wantShared)) {
		t.Errorf("want shared-proc=%v (only root keeps the outer /proc):\n%s", wantShared, out)
	}
}

// The adapters stop a platform with kill(-pid): the signal reaches the
// process inside the sandbox, which can still shut down in its own time.
func TestGroupSignalReachesTheConfinedProcess(t *testing.T) {
	platforms.RequireBwrap(t)
	sb, why := Find(context.Background(), Auto, Platform(nil), exec.LookPath)
	if sb == nil {
		t.Fatalf("no sandbox: %s", why)
	}
	dir := realDir(t)
	mark := filepath.Join(dir, "stopped")
	name, args := sb.Command("", "bash", "-c", `trap 'sleep 0.3; echo graceful > `+mark+`; exit 0' TERM; echo ready; while :; do sleep 0.05; done`)
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("the confined process did not start: %q, %v", buf, err)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(mark); err == nil && string(b) == "graceful\n" {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatal("the process inside the sandbox did not get SIGTERM through its group")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Wait()
}

func TestFindSaysWhyThereIsNoSandbox(t *testing.T) {
	missing := func(string) (string, error) { return "", errors.New("not found") }
	cases := []struct {
		mode, want string
		look       func(string) (string, error)
	}{
		{Off, "AGENTMAIL_SANDBOX=off", exec.LookPath},
		{"strict", `AGENTMAIL_SANDBOX="strict" is not auto or off`, exec.LookPath},
		{Auto, "install the Debian package bubblewrap", missing},
		{"", "install the Debian package bubblewrap", missing},
		{Auto, "cannot start here", func(string) (string, error) { return "/bin/false", nil }},
	}
	for _, c := range cases {
		sb, why := Find(context.Background(), c.mode, Platform(nil), c.look)
		if sb != nil || !strings.Contains(why, c.want) {
			t.Errorf("mode %q: sandbox %v, reason %q; want none and %q", c.mode, sb, why, c.want)
		}
	}
}
