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
	home := t.TempDir()
	emptyPath := t.TempDir()
	r := runCLIEnv(t, home, []string{"PATH=" + emptyPath, "AGENTMAIL_GATEWAY_URL=http://127.0.0.1:1"}, "", "bridge", "--platform", "opencode")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, `"opencode" is not in PATH`) || !strings.Contains(r.stderr, "AGENTMAIL_OPENCODE_BIN") {
		t.Errorf("stderr does not say to install opencode or set AGENTMAIL_OPENCODE_BIN:\n%s", r.stderr)
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
