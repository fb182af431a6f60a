package bridge

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultGatewayURL is the gateway address used when AGENTMAIL_GATEWAY_URL
// is unset (issue 4 item 6).
const DefaultGatewayURL = "http://127.0.0.1:8180"

// Tier is the permission tier of AGENTMAIL_PERMISSION_MODE (seed 003):
// what the bridge answers when the platform asks before a dangerous tool.
type Tier string

// The three tiers. TierWorkspace is the default.
const (
	// TierPlan refuses every ask without asking anyone (a refusal that is
	// certain should not disturb a person).
	TierPlan Tier = "plan"
	// TierWorkspace asks the person by mail and waits (B-8), unless an
	// "always allow" grant covers the tool in this workspace.
	TierWorkspace Tier = "workspace"
	// TierFull allows without asking: the sender gave full authority.
	TierFull Tier = "full"
)

// ParseTier reads a tier name; "" is TierWorkspace. Any other value is an
// error naming AGENTMAIL_PERMISSION_MODE and the accepted values.
func ParseTier(s string) (Tier, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return TierWorkspace, nil
	case string(TierPlan):
		return TierPlan, nil
	case string(TierWorkspace):
		return TierWorkspace, nil
	case string(TierFull):
		return TierFull, nil
	}
	return "", fmt.Errorf("AGENTMAIL_PERMISSION_MODE=%q: use plan, workspace or full", s)
}

// Settings is the bridge configuration read from the environment (issue 4
// item 6). Every platform reads the same names.
type Settings struct {
	// GatewayURL is AGENTMAIL_GATEWAY_URL, default DefaultGatewayURL, without
	// a trailing slash.
	GatewayURL string
	// AgentName is AGENTMAIL_AGENT_NAME; "" lets the key decide the name.
	AgentName string
	// WaitForKey makes registration wait while the gateway refuses the key
	// (401), polling until an admin registers it, instead of stopping: set
	// for a key the bridge has just generated (issue 18 point 4) and for one
	// read from the key file, which a bridge stopped before its key was
	// registered left there.
	WaitForKey bool
	// AgentKey is AGENTMAIL_AGENT_KEY; "" means ~/.agentmail/agent.key or a
	// generated key (B-1.1, see ResolveAgentKey).
	AgentKey string
	// FallbackDir is AGENTMAIL_FALLBACK_DIR, the D-6 fallback working
	// directory; "" means there is none.
	FallbackDir string
	// Tier is AGENTMAIL_PERMISSION_MODE (plan / workspace / full), default
	// workspace.
	Tier Tier
	// RunsDir is where run transcripts are written (seed 004 A5):
	// AGENTMAIL_RUNS_DIR, default ~/.agentmail/runs; "" writes none.
	RunsDir string
	// TranscriptMaxBytes bounds one transcript:
	// AGENTMAIL_TRANSCRIPT_MAX_BYTES, default DefaultTranscriptMaxBytes.
	TranscriptMaxBytes int64
}

// LoadSettings reads Settings through getenv (os.Getenv in production).
// The only error is an unknown AGENTMAIL_PERMISSION_MODE.
func LoadSettings(getenv func(string) string) (Settings, error) {
	s := Settings{
		GatewayURL:  strings.TrimRight(strings.TrimSpace(getenv("AGENTMAIL_GATEWAY_URL")), "/"),
		AgentName:   strings.TrimSpace(getenv("AGENTMAIL_AGENT_NAME")),
		AgentKey:    strings.TrimSpace(getenv("AGENTMAIL_AGENT_KEY")),
		FallbackDir: strings.TrimSpace(getenv("AGENTMAIL_FALLBACK_DIR")),
	}
	if s.GatewayURL == "" {
		s.GatewayURL = DefaultGatewayURL
	}
	t, err := ParseTier(getenv("AGENTMAIL_PERMISSION_MODE"))
	if err != nil {
		return Settings{}, err
	}
	s.Tier = t
	s.RunsDir = strings.TrimSpace(getenv("AGENTMAIL_RUNS_DIR"))
	if s.RunsDir == "" {
		if home := strings.TrimSpace(getenv("HOME")); home != "" {
			s.RunsDir = filepath.Join(home, ".agentmail", "runs")
		}
	}
	s.TranscriptMaxBytes = DefaultTranscriptMaxBytes
	if v := strings.TrimSpace(getenv("AGENTMAIL_TRANSCRIPT_MAX_BYTES")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1024 {
			return Settings{}, fmt.Errorf("AGENTMAIL_TRANSCRIPT_MAX_BYTES=%q: use a number of bytes, at least 1024", v)
		}
		s.TranscriptMaxBytes = n
	}
	return s, nil
}

// BinEnvVar is the variable that names a platform's executable, e.g.
// AGENTMAIL_CLAUDE_BIN for "claude".
func BinEnvVar(platform string) string {
	up := strings.ToUpper(platform)
	up = strings.Map(func(r rune) rune {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, up)
	return "AGENTMAIL_" + up + "_BIN"
}

// FindPlatformBin returns the platform executable: AGENTMAIL_<PLATFORM>_BIN
// when set (it must exist), else the command name looked up in PATH. The
// error names both places so the operator knows what to set.
func FindPlatformBin(platform, command string, getenv func(string) string) (string, error) {
	v := BinEnvVar(platform)
	if p := strings.TrimSpace(getenv(v)); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %v", v, p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath(command)
	if err != nil {
		return "", fmt.Errorf("platform %s: %q is not in PATH; install it or set %s to its path", platform, command, v)
	}
	return p, nil
}

// MCPCommand is the argv that starts the AgentMail MCP tool server: the
// running binary's own path followed by "mcp", so the tools always come from
// the same build as the bridge.
func MCPCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locating the agentmail binary for the MCP command: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return []string{exe, "mcp"}, nil
}
