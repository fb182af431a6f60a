package mcptools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultGatewayURL is the gateway address when AGENTMAIL_GATEWAY_URL is unset.
const DefaultGatewayURL = "http://127.0.0.1:8180"

// Config is the tool server's configuration, read from the environment with
// the names every platform shares (issue 4 item 6, seed 003):
//
//	AGENTMAIL_GATEWAY_URL        gateway base URL (default http://127.0.0.1:8180)
//	AGENTMAIL_TURN_TOKEN         per turn: the turn token the bridge got for this
//	                             turn's session; when set it is the only
//	                             credential (no key is read from a file)
//	AGENTMAIL_TURN_TOKEN_FILE    instead, under a bridge whose platform process
//	                             outlives a turn: a file holding the current
//	                             turn's token, read again at every tool call
//	                             (empty between turns); the only credential
//	AGENTMAIL_AGENT_KEY          agent key (without a bridge); else the file
//	                             AGENTMAIL_AGENT_KEY_FILE or ~/.agentmail/agent.key
//	AGENTMAIL_AGENT_NAME         the agent's name (connect_to_server)
//	AGENTMAIL_PLATFORM           the platform name (connect_to_server), e.g. "claude"
//	AGENTMAIL_SESSION_ID         per turn: the mail session (mail-driven when set)
//	AGENTMAIL_MAIL_ID            per turn: the mail that started the turn
//	AGENTMAIL_WORKSPACE          per turn: the session's directory (default: the process cwd)
//	AGENTMAIL_PERMISSION_MODE    plan | workspace | full (default workspace)
//	AGENTMAIL_PERMISSION_WAIT_MS wait for a person's decision (default 540000 = 9 min)
//	AGENTMAIL_DATA_DIR           the gateway's data directory, protected (default ./data)
//	AGENTMAIL_PROTECTED_PATHS    more protected prefixes, separated by ':'
//	AGENTMAIL_SANDBOX            auto (default) or off: approved commands in bubblewrap
type Config struct {
	GatewayURL string
	// AgentKey is the bearer token the tools use: the turn token when
	// TurnToken is set, else the agent key.
	AgentKey string
	// TurnToken is AGENTMAIL_TURN_TOKEN, the bridge's per-turn token (or the
	// content of TurnTokenFile at start).
	TurnToken string
	// TurnTokenFile is AGENTMAIL_TURN_TOKEN_FILE (absolute; "" when unset): the
	// file the bridge rewrites with each turn's token, read at every tool call
	// (Server.gateway). When set, no agent key is read from anywhere.
	TurnTokenFile  string
	AgentKeyFile   string
	AgentName      string
	Platform       string
	SessionID      string
	MailID         string
	Workspace      string // absolute
	Tier           Tier
	PermissionWait time.Duration
	DataDir        string   // absolute
	ExtraProtected []string // as given
	// Sandbox is AGENTMAIL_SANDBOX: "auto" (default: bubblewrap when it
	// works here) or "off" (see FindSandbox).
	Sandbox string
	// Warnings are configuration problems that did not stop the start
	// (an unknown tier falls back to plan, the safe side); the command
	// logs them.
	Warnings []string
}

// ConfigFromEnv reads Config through getenv (os.Getenv in production).
// cwd is the process's working directory, the default workspace and the
// base of relative paths. Errors: a wait that is not a positive number of
// milliseconds; a home directory that cannot be found when no key file is
// named.
func ConfigFromEnv(getenv func(string) string, cwd string) (Config, error) {
	c := Config{
		GatewayURL: strings.TrimSpace(getenv("AGENTMAIL_GATEWAY_URL")),
		AgentKey:   strings.TrimSpace(getenv("AGENTMAIL_AGENT_KEY")),
		AgentName:  strings.TrimSpace(getenv("AGENTMAIL_AGENT_NAME")),
		Platform:   strings.TrimSpace(getenv("AGENTMAIL_PLATFORM")),
		SessionID:  strings.TrimSpace(getenv("AGENTMAIL_SESSION_ID")),
		MailID:     strings.TrimSpace(getenv("AGENTMAIL_MAIL_ID")),
		TurnToken:  strings.TrimSpace(getenv("AGENTMAIL_TURN_TOKEN")),
	}
	if c.GatewayURL == "" {
		c.GatewayURL = DefaultGatewayURL
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(cwd, p)
	}
	if f := strings.TrimSpace(getenv("AGENTMAIL_TURN_TOKEN_FILE")); f != "" {
		c.TurnTokenFile = abs(f)
		c.TurnToken = readTurnToken(c.TurnTokenFile)
		c.AgentKey = ""
	}
	if c.TurnToken != "" {
		c.AgentKey = c.TurnToken
	}
	c.Workspace = cwd
	if w := strings.TrimSpace(getenv("AGENTMAIL_WORKSPACE")); w != "" {
		c.Workspace = abs(w)
	}
	tier, err := ParseTier(getenv("AGENTMAIL_PERMISSION_MODE"))
	if err != nil {
		c.Warnings = append(c.Warnings, err.Error()+"; using plan (every run_command and write_file refused)")
	}
	c.Tier = tier
	c.PermissionWait = DefaultPermissionWait
	if w := strings.TrimSpace(getenv("AGENTMAIL_PERMISSION_WAIT_MS")); w != "" {
		ms, err := strconv.ParseInt(w, 10, 64)
		if err != nil || ms <= 0 {
			return c, fmt.Errorf("AGENTMAIL_PERMISSION_WAIT_MS %q must be a positive whole number of milliseconds (default 540000)", w)
		}
		c.PermissionWait = time.Duration(ms) * time.Millisecond
	}
	c.DataDir = abs("data")
	if d := strings.TrimSpace(getenv("AGENTMAIL_DATA_DIR")); d != "" {
		c.DataDir = abs(d)
	}
	for _, p := range strings.Split(getenv("AGENTMAIL_PROTECTED_PATHS"), ":") {
		if p = strings.TrimSpace(p); p != "" {
			c.ExtraProtected = append(c.ExtraProtected, abs(p))
		}
	}
	c.Sandbox = strings.TrimSpace(getenv("AGENTMAIL_SANDBOX"))
	c.AgentKeyFile = strings.TrimSpace(getenv("AGENTMAIL_AGENT_KEY_FILE"))
	if c.AgentKeyFile == "" {
		home := getenv("HOME")
		if home == "" {
			if h, err := os.UserHomeDir(); err == nil {
				home = h
			}
		}
		if home == "" {
			return c, errors.New("cannot find the home directory for ~/.agentmail/agent.key: set HOME or AGENTMAIL_AGENT_KEY_FILE")
		}
		c.AgentKeyFile = filepath.Join(home, ".agentmail", "agent.key")
	} else {
		c.AgentKeyFile = abs(c.AgentKeyFile)
	}
	if c.AgentKey == "" && c.TurnToken == "" && c.TurnTokenFile == "" {
		if b, err := os.ReadFile(c.AgentKeyFile); err == nil {
			c.AgentKey = strings.TrimSpace(string(b))
		}
	}
	return c, nil
}

// readTurnToken is the token in a turn token file: its content without
// surrounding space; "" when the file is missing, unreadable or empty (no
// turn is running).
func readTurnToken(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ProtectedPrefixes lists the protected path prefixes of seed 003 for this
// configuration: the gateway's data directory, the directory of the running
// executable (the bridge's own install), /etc/systemd, /etc/agentmail, the
// agent key file, the turn token file, ~/.agentmail, ~/.config/agentmail (the command-line
// client's stored key), ~/.ssh, and the extra
// prefixes of AGENTMAIL_PROTECTED_PATHS. exe is os.Executable() (may be ""),
// home the home directory (may be "").
func (c Config) ProtectedPrefixes(exe, home string) []string {
	out := []string{c.DataDir}
	if exe != "" {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		out = append(out, filepath.Dir(exe))
	}
	out = append(out, "/etc/systemd", "/etc/agentmail")
	if c.AgentKeyFile != "" {
		out = append(out, c.AgentKeyFile)
	}
	if c.TurnTokenFile != "" {
		out = append(out, c.TurnTokenFile)
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".agentmail"), filepath.Join(home, ".config", "agentmail"), filepath.Join(home, ".ssh"))
	}
	return append(out, c.ExtraProtected...)
}
