package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBridgeWithoutThePlatformMakesNoKey: `agentmail bridge --platform
// opencode` with no opencode in PATH exits 1 naming what to install or
// set, before it generates, saves or prints an agent key (a key printed
// with "waits and connects by itself" would ask for a registration that
// leads nowhere).
func TestBridgeWithoutThePlatformMakesNoKey(t *testing.T) {
	t.Run("opencode", func(t *testing.T) {
		bridgeWithoutItsPlatform(t, []string{"--platform", "opencode"}, `"opencode" is not in PATH`, "AGENTMAIL_OPENCODE_BIN")
	})
	t.Run("acp", func(t *testing.T) {
		bridgeWithoutItsPlatform(t, []string{"--platform", "acp", "--acp-command", "gemini --acp"}, `"gemini" is not an executable`, "--acp-command")
	})
}

// bridgeWithoutItsPlatform runs the bridge with args and an empty PATH and
// checks the exit, that stderr holds each of want, and that no key was made.
func bridgeWithoutItsPlatform(t *testing.T, args []string, want ...string) {
	home := t.TempDir()
	emptyPath := t.TempDir()
	r := runCLIEnv(t, home, []string{"PATH=" + emptyPath, "AGENTMAIL_GATEWAY_URL=http://127.0.0.1:1"}, "", append([]string{"bridge"}, args...)...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
		}
	}
	for _, leak := range []string{"Generated a new agent key", "amk_", "waits and connects"} {
		if strings.Contains(r.stderr+r.stdout, leak) {
			t.Errorf("output holds %q although the bridge cannot start:\n%s%s", leak, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".agentmail", "agent.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an agent key file was written (%v)", err)
	}
}
