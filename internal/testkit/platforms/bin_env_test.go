package platforms

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder stands in for a test so Require's skip/fail choice can be observed.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = fmt.Sprintf(format, a...) }
func (r *recorder) Fatalf(format string, a ...any) { r.failed = fmt.Sprintf(format, a...) }

func TestBinPrefersEnvOverrideAndNamesMissingInstall(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "my-claude")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTMAIL_CLAUDE_BIN", exe)
	if got, err := Bin(Claude); err != nil || got != exe {
		t.Fatalf("Bin(Claude) = %q, %v; want %q", got, err, exe)
	}
	t.Setenv("AGENTMAIL_CLAUDE_BIN", filepath.Join(t.TempDir(), "absent"))
	if _, err := Bin(Claude); err == nil || !strings.Contains(err.Error(), "AGENTMAIL_CLAUDE_BIN") {
		t.Fatalf("missing override: err %v", err)
	}
	t.Setenv("AGENTMAIL_PI_BIN", "")
	t.Setenv("AGENTMAIL_PLATFORMS_PREFIX", t.TempDir())
	_, err := Bin(Pi)
	if err == nil || !strings.Contains(err.Error(), "scripts/install-platforms.sh pi") {
		t.Fatalf("empty prefix: err %v", err)
	}
	if _, err := Bin("zcode"); err == nil {
		t.Fatal("unknown platform accepted")
	}
}

func TestRequireSkipsLocallyAndFailsUnderCI(t *testing.T) {
	t.Setenv("AGENTMAIL_OPENCODE_BIN", "")
	t.Setenv("AGENTMAIL_PLATFORMS_PREFIX", t.TempDir())

	t.Setenv("CI", "")
	r := &recorder{TB: t}
	Require(r, OpenCode)
	if r.skipped == "" || r.failed != "" {
		t.Fatalf("locally: skipped %q failed %q", r.skipped, r.failed)
	}

	t.Setenv("CI", "true")
	r = &recorder{TB: t}
	Require(r, OpenCode)
	if r.failed == "" || r.skipped != "" || !strings.Contains(r.failed, "CI=true") {
		t.Fatalf("under CI: skipped %q failed %q", r.skipped, r.failed)
	}
}

func TestEnvIsolatesHomeAndDropsCallerSecrets(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "real-key")
	t.Setenv("OPENAI_API_KEY", "real-key")
	e := NewEnv(t)
	e.UseClaude("http://127.0.0.1:1")
	got := map[string]string{}
	for _, kv := range e.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	if got["HOME"] != e.Home || got["XDG_CONFIG_HOME"] != e.ConfigDir || got["PATH"] == "" {
		t.Fatalf("env %v", got)
	}
	if got["ANTHROPIC_API_KEY"] == "real-key" || got["OPENAI_API_KEY"] != "" {
		t.Fatalf("caller key leaked: %v", got)
	}
	for _, k := range []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "OPENCODE_DISABLE_MODELS_FETCH", "PI_OFFLINE"} {
		if got[k] != "1" {
			t.Errorf("%s = %q, want 1", k, got[k])
		}
	}
	dir, err := e.UsePi("http://127.0.0.1:1/v1")
	if err != nil || e.Get("PI_CODING_AGENT_DIR") != dir {
		t.Fatalf("UsePi: %q %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "models.json")); err != nil {
		t.Fatal(err)
	}
}
