package mcptools

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A tool server started by a platform process that outlives its turns gets the turn's
// token through AGENTMAIL_TURN_TOKEN_FILE: every tool call acts with the token the file
// holds at that moment, a call between turns (an empty file) is refused without reaching
// the gateway, and the agent key on disk is never read.
func TestTurnTokenFileIsReadAtEveryToolCall(t *testing.T) {
	file := filepath.Join(t.TempDir(), "turn-token")
	write := func(tok string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tt_first")
	h := newHarness(t, TierWorkspace, func(c *Config) {
		c.TurnTokenFile, c.TurnToken, c.AgentKey = file, "tt_first", "tt_first"
	})
	setKey := func(k string) {
		h.fg.mu.Lock()
		h.fg.key = k
		h.fg.mu.Unlock()
	}
	requests := func() int {
		h.fg.mu.Lock()
		defer h.fg.mu.Unlock()
		return len(h.fg.requests)
	}

	setKey("tt_first")
	h.mustOK("read_inbox", map[string]any{})

	// The next turn: the bridge rewrote the file; the gateway knows only the new token.
	write("tt_second")
	setKey("tt_second")
	h.mustOK("read_inbox", map[string]any{})

	// Between turns the file is empty: refused here, nothing sent with a stale token.
	write("")
	before := requests()
	h.mustFail("read_inbox", map[string]any{}, "no AgentMail turn is running")
	if n := requests() - before; n != 0 {
		t.Errorf("a call between turns sent %d requests to the gateway, want none", n)
	}

	write("tt_third")
	setKey("tt_third")
	h.mustOK("read_inbox", map[string]any{})
	// connect_to_server cannot swap in the agent key from its file either.
	h.mustFail("connect_to_server", map[string]any{}, "current turn only")
}

func TestConfigWithATurnTokenFileReadsNoKey(t *testing.T) {
	cwd, home := realDir(t), realDir(t)
	if err := os.MkdirAll(filepath.Join(home, ".agentmail"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".agentmail", "agent.key"), []byte("am_on_disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(cwd, "tok")
	env := map[string]string{"HOME": home, "AGENTMAIL_TURN_TOKEN_FILE": "tok", "AGENTMAIL_AGENT_KEY": "am_in_env"}
	cfg, err := ConfigFromEnv(func(k string) string { return env[k] }, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TurnTokenFile != file || cfg.AgentKey != "" || cfg.TurnToken != "" {
		t.Errorf("with no token file yet: file %q key %q token %q; want %s and no credential", cfg.TurnTokenFile, cfg.AgentKey, cfg.TurnToken, file)
	}
	if err := os.WriteFile(file, []byte(" tt_now \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ = ConfigFromEnv(func(k string) string { return env[k] }, cwd)
	if cfg.AgentKey != "tt_now" || cfg.TurnToken != "tt_now" {
		t.Errorf("key %q token %q, want the file's tt_now", cfg.AgentKey, cfg.TurnToken)
	}
	if got := cfg.ProtectedPrefixes("", home); !slices.Contains(got, file) {
		t.Errorf("ProtectedPrefixes %v lacks the token file", got)
	}
	if !slices.Contains(secretEnv, "AGENTMAIL_TURN_TOKEN_FILE") {
		t.Errorf("gated commands would inherit AGENTMAIL_TURN_TOKEN_FILE")
	}
}
