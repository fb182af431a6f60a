// Package platforms gives tests the installed agent platforms (Claude Code, opencode,
// pi): where their binaries are, an isolated environment that keeps them offline and away
// from the real home folder, and configuration that points them at a scriptedmodel server.
//
// Binaries come from AGENTMAIL_CLAUDE_BIN / AGENTMAIL_OPENCODE_BIN / AGENTMAIL_PI_BIN, else
// from the prefix that scripts/install-platforms.sh fills (AGENTMAIL_PLATFORMS_PREFIX, default
// ~/.cache/agentmail/platforms). A missing platform skips the test, except under CI=true, where it
// fails it: CI must have run scripts/install-platforms.sh.
package platforms

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Platform names one agent platform.
type Platform string

// The platforms the bridge drives: the three with adapters of their own, and the ACP
// agents that `agentmail bridge --platform acp` drives (opencode's `opencode acp` is the
// OpenCode binary).
const (
	Claude   Platform = "claude"
	OpenCode Platform = "opencode"
	Pi       Platform = "pi"
	// ClaudeAgentACP is @zed-industries/claude-agent-acp (Claude through the Claude Agent SDK).
	ClaudeAgentACP Platform = "claude-agent-acp"
	// Qwen is @qwen-code/qwen-code (`qwen --acp`).
	Qwen Platform = "qwen"
	// Gemini is @google/gemini-cli (`gemini --acp`).
	Gemini Platform = "gemini"
	// CodexACP is @zed-industries/codex-acp (OpenAI Codex).
	CodexACP Platform = "codex-acp"
)

// Pinned versions installed by scripts/install-platforms.sh (keep the two in step).
var Pinned = map[Platform]string{
	Claude:         "2.1.328",
	OpenCode:       "1.18.33",
	Pi:             "0.73.1",
	ClaudeAgentACP: "0.23.1",
	Qwen:           "0.24.4",
	Gemini:         "0.61.0",
	CodexACP:       "0.16.0",
}

// BinEnv returns the environment variable that overrides the binary of p,
// e.g. "AGENTMAIL_CLAUDE_BIN", "AGENTMAIL_CLAUDE_AGENT_ACP_BIN".
func BinEnv(p Platform) string {
	return "AGENTMAIL_" + strings.ToUpper(strings.ReplaceAll(string(p), "-", "_")) + "_BIN"
}

// Prefix returns the install prefix of scripts/install-platforms.sh:
// AGENTMAIL_PLATFORMS_PREFIX, else $XDG_CACHE_HOME/agentmail/platforms, else
// ~/.cache/agentmail/platforms (outside the checkout, so a machine keeps the installs
// between CI runs of fresh clones).
func Prefix() (string, error) {
	if p := os.Getenv("AGENTMAIL_PLATFORMS_PREFIX"); p != "" {
		return p, nil
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "agentmail", "platforms"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("platforms: no home folder for the install prefix: %w (set AGENTMAIL_PLATFORMS_PREFIX)", err)
	}
	return filepath.Join(home, ".cache", "agentmail", "platforms"), nil
}

// Bin returns the absolute path of p's executable: the BinEnv(p) override when set
// (a path, or a name looked up in PATH), else <prefix>/<p>/node_modules/.bin/<p>.
// The error says how to install the platform.
func Bin(p Platform) (string, error) {
	if _, ok := Pinned[p]; !ok {
		return "", fmt.Errorf("platforms: unknown platform %q (known: claude, opencode, pi, claude-agent-acp, qwen, gemini, codex-acp)", p)
	}
	if v := os.Getenv(BinEnv(p)); v != "" {
		path, err := exec.LookPath(v)
		if err != nil {
			return "", fmt.Errorf("platforms: %s=%q is not an executable: %w", BinEnv(p), v, err)
		}
		return filepath.Abs(path)
	}
	prefix, err := Prefix()
	if err != nil {
		return "", err
	}
	path := filepath.Join(prefix, string(p), "node_modules", ".bin", string(p))
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return "", fmt.Errorf("platforms: %s is not installed at %s: run scripts/install-platforms.sh %s, or set %s", p, path, p, BinEnv(p))
	}
	return path, nil
}

// MissingIsFailure reports whether a missing platform fails the test instead of skipping
// it: true when CI=true (CI must install every platform).
func MissingIsFailure() bool { return os.Getenv("CI") == "true" }

// Require returns the binary of p, or ends the test: a skip with the reason, or under
// CI=true a failure.
func Require(t testing.TB, p Platform) string {
	t.Helper()
	bin, err := Bin(p)
	if err != nil {
		if MissingIsFailure() {
			t.Fatalf("%v (CI=true: a missing platform is a failure)", err)
			return ""
		}
		t.Skipf("%v", err)
	}
	return bin
}

// Env is an isolated environment for one platform process: a temporary HOME and XDG
// folders, the offline and telemetry switches of all three platforms, and nothing of the
// caller's environment except PATH, locale and TMPDIR (so no real key or config leaks in).
type Env struct {
	Home      string
	ConfigDir string // XDG_CONFIG_HOME
	DataDir   string // XDG_DATA_HOME
	CacheDir  string // XDG_CACHE_HOME
	StateDir  string // XDG_STATE_HOME
	vars      map[string]string
}

// NewEnv makes the folders under t.TempDir() and returns the environment.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	root := t.TempDir()
	e := &Env{
		Home:      filepath.Join(root, "home"),
		ConfigDir: filepath.Join(root, "xdg", "config"),
		DataDir:   filepath.Join(root, "xdg", "data"),
		CacheDir:  filepath.Join(root, "xdg", "cache"),
		StateDir:  filepath.Join(root, "xdg", "state"),
		vars:      map[string]string{},
	}
	for _, d := range []string{e.Home, e.ConfigDir, e.DataDir, e.CacheDir, e.StateDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("platforms: make %s: %v", d, err)
		}
	}
	for _, k := range []string{"PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			e.vars[k] = v
		}
	}
	for k, v := range map[string]string{
		"HOME":            e.Home,
		"XDG_CONFIG_HOME": e.ConfigDir,
		"XDG_DATA_HOME":   e.DataDir,
		"XDG_CACHE_HOME":  e.CacheDir,
		"XDG_STATE_HOME":  e.StateDir,
		"NO_COLOR":        "1",
		// Claude Code: no start-up, update, telemetry or error-report traffic.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		// opencode: no model catalogue fetch, update, LSP download or share.
		"OPENCODE_DISABLE_MODELS_FETCH": "1",
		"OPENCODE_DISABLE_AUTOUPDATE":   "1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
		"OPENCODE_DISABLE_SHARE":        "1",
		// pi: no version check or telemetry.
		"PI_OFFLINE":            "1",
		"PI_SKIP_VERSION_CHECK": "1",
		"PI_TELEMETRY":          "0",
	} {
		e.vars[k] = v
	}
	return e
}

// Set adds or replaces one variable.
func (e *Env) Set(key, value string) { e.vars[key] = value }

// Get returns one variable ("" when unset).
func (e *Env) Get(key string) string { return e.vars[key] }

// Environ returns the variables as KEY=VALUE lines for exec.Cmd.Env.
func (e *Env) Environ() []string {
	out := make([]string, 0, len(e.vars))
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	return out
}

// UseClaude points Claude Code at an Anthropic-compatible server at baseURL
// (scriptedmodel.Server.URL) with a dummy key.
func (e *Env) UseClaude(baseURL string) {
	e.Set("ANTHROPIC_BASE_URL", baseURL)
	e.Set("ANTHROPIC_API_KEY", "sk-ant-fakemodel")
}

// FakeProvider is the provider id under which opencode and pi see the fake model.
const FakeProvider = "fakemodel"

// OpenCodeConfig returns an opencode configuration (the JSON for OPENCODE_CONFIG_CONTENT)
// with one OpenAI-compatible provider FakeProvider at openAIBaseURL (ending in /v1)
// offering models, the first being the default, and the built-in provider hidden.
func OpenCodeConfig(openAIBaseURL string, models ...string) string {
	if len(models) == 0 {
		models = []string{"fake-model"}
	}
	ms := map[string]any{}
	for _, m := range models {
		ms[m] = map[string]any{"name": m}
	}
	cfg := map[string]any{
		"$schema":           "https://opencode.ai/config.json",
		"enabled_providers": []string{FakeProvider},
		"model":             FakeProvider + "/" + models[0],
		"small_model":       FakeProvider + "/" + models[0],
		"autoupdate":        false,
		"share":             "disabled",
		"provider": map[string]any{
			FakeProvider: map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Fake model",
				"options": map[string]any{"baseURL": openAIBaseURL, "apiKey": "sk-fakemodel"},
				"models":  ms,
			},
		},
	}
	b, _ := json.Marshal(cfg)
	return string(b)
}

// UseOpenCode points opencode at openAIBaseURL through OPENCODE_CONFIG_CONTENT.
func (e *Env) UseOpenCode(openAIBaseURL string, models ...string) {
	e.Set("OPENCODE_CONFIG_CONTENT", OpenCodeConfig(openAIBaseURL, models...))
}

// UseOpenCodeACP is UseOpenCode for `opencode acp`, plus the permission settings an
// operator gives it (OPENCODE_PERMISSION): bash and edits ask before they run, where
// opencode's default runs them without asking.
func (e *Env) UseOpenCodeACP(openAIBaseURL string, models ...string) {
	e.UseOpenCode(openAIBaseURL, models...)
	e.Set("OPENCODE_PERMISSION", `{"bash":"ask","edit":"ask"}`)
}

// UsePi writes models.json and settings.json into a fresh agent folder under HOME, points
// PI_CODING_AGENT_DIR at it and returns the folder. The provider is FakeProvider at
// openAIBaseURL (ending in /v1); the first model is the default.
func (e *Env) UsePi(openAIBaseURL string, models ...string) (string, error) {
	if len(models) == 0 {
		models = []string{"fake-model"}
	}
	dir := filepath.Join(e.Home, ".pi", "agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var list []map[string]any
	for _, m := range models {
		list = append(list, map[string]any{"id": m, "name": m})
	}
	modelsJSON, _ := json.MarshalIndent(map[string]any{"providers": map[string]any{
		FakeProvider: map[string]any{"baseUrl": openAIBaseURL, "api": "openai-completions", "apiKey": "sk-fakemodel", "models": list},
	}}, "", "  ")
	settingsJSON, _ := json.MarshalIndent(map[string]any{"defaultProvider": FakeProvider, "defaultModel": models[0]}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "models.json"), modelsJSON, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), settingsJSON, 0o644); err != nil {
		return "", err
	}
	e.Set("PI_CODING_AGENT_DIR", dir)
	return dir, nil
}

// UseQwen points Qwen Code at an OpenAI-compatible server at openAIBaseURL (ending in
// /v1) with models (the first is the default; "fake-model" when none), and writes
// ~/.qwen/settings.json for running headless and offline: the models under the provider
// "openai" (modelProviders), OpenAI auth, the default approval
// mode (ACP's "auto" lets a model classifier approve without asking), no tool search, no
// managed memory or follow-up suggestions (each adds model requests after a turn), no
// telemetry or update check. QWEN_CODE_LEGACY_MCP_BLOCKING=1 makes the first model request
// of a session carry the MCP tools.
func (e *Env) UseQwen(openAIBaseURL string, models ...string) error {
	if len(models) == 0 {
		models = []string{"fake-model"}
	}
	e.Set("OPENAI_BASE_URL", openAIBaseURL)
	e.Set("OPENAI_API_KEY", "sk-fakemodel")
	e.Set("OPENAI_MODEL", models[0])
	e.Set("QWEN_CODE_LEGACY_MCP_BLOCKING", "1")
	dir := filepath.Join(e.Home, ".qwen")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var list []map[string]any
	for _, m := range models {
		list = append(list, map[string]any{"id": m, "name": m, "baseUrl": openAIBaseURL, "envKey": "OPENAI_API_KEY"})
	}
	settings, _ := json.MarshalIndent(map[string]any{
		"modelProviders": map[string]any{"openai": list},
		"security":       map[string]any{"auth": map[string]any{"selectedType": "openai"}, "folderTrust": map[string]any{"enabled": false}},
		"model":          map[string]any{"name": models[0]},
		"tools":          map[string]any{"approvalMode": "default", "toolSearch": map[string]any{"enabled": false}},
		"memory":         map[string]any{"enableManagedAutoMemory": false},
		"ui":             map[string]any{"enableFollowupSuggestions": false},
		"privacy":        map[string]any{"usageStatisticsEnabled": false},
		"telemetry":      map[string]any{"enabled": false},
		"general":        map[string]any{"enableAutoUpdate": false, "disableAutoUpdate": true},
	}, "", "  ")
	return os.WriteFile(filepath.Join(dir, "settings.json"), settings, 0o644)
}

// UseGemini points Gemini CLI at a Gemini-API server at baseURL (no version path) with a
// dummy key, and writes ~/.gemini/settings.json for running headless and offline: the
// model fixed to model (with "auto" it first sends a routing request), API-key auth, no
// folder trust check (an untrusted folder silently starts no MCP servers;
// GEMINI_CLI_TRUST_WORKSPACE=true says the same), no telemetry, usage statistics or
// update check.
func (e *Env) UseGemini(baseURL, model string) error {
	e.Set("GOOGLE_GEMINI_BASE_URL", baseURL)
	e.Set("GEMINI_API_KEY", "fakemodel-gemini-key")
	e.Set("GEMINI_CLI_TRUST_WORKSPACE", "true")
	dir := filepath.Join(e.Home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	settings, _ := json.MarshalIndent(map[string]any{
		"model":     map[string]any{"name": model},
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false},
	}, "", "  ")
	return os.WriteFile(filepath.Join(dir, "settings.json"), settings, 0o644)
}

// UseCodex points Codex (codex-acp) at an OpenAI Responses server at openAIBaseURL
// (ending in /v1): CODEX_HOME with a config.toml whose provider FakeProvider speaks
// wire_api "responses" with no retries, model as the default (an id Codex knows, or its
// answers carry a warning), no update check or analytics, and commands unsandboxed but
// asked for (approval_policy "untrusted"; Codex's own sandbox needs bubblewrap, and
// without it sandboxed commands fail with no question).
func (e *Env) UseCodex(openAIBaseURL, model string) error {
	dir := filepath.Join(e.Home, ".codex")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e.Set("CODEX_HOME", dir)
	e.Set("FAKEMODEL_API_KEY", "sk-fakemodel")
	cfg := fmt.Sprintf(`model = %q
model_provider = %q
approval_policy = "untrusted"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.%s]
name = "Fake model"
base_url = %q
wire_api = "responses"
env_key = "FAKEMODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, model, FakeProvider, FakeProvider, openAIBaseURL)
	return os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o644)
}

// RequireBwrap ends the test unless bubblewrap (`bwrap`, Debian package bubblewrap) is
// installed: a skip, or under CI=true a failure (scripts/deps.sh installs it there).
func RequireBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if MissingIsFailure() {
			t.Fatal("bwrap is not installed; scripts/deps.sh installs the Debian package bubblewrap")
		}
		t.Skip("bwrap is not installed (Debian package bubblewrap)")
	}
}
