package mcptools

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// Main is the whole of `agentmail mcp`: it reads the configuration through
// getenv (see Config), protects the paths of ProtectedPrefixes (with the
// running executable's directory and the home directory), builds the
// gateway client with the agent key, logs the registered tools to stderr
// and serves MCP on stdin/stdout until stdin closes or ctx ends (then it
// returns nil). Errors: a configuration that cannot be used, or a broken
// transport.
func Main(ctx context.Context, getenv func(string) string, stdin io.ReadCloser, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("mcp: cannot read the working directory: %w", err)
	}
	cfg, err := ConfigFromEnv(getenv, cwd)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	for _, w := range cfg.Warnings {
		log.Warn("mcp: configuration", "problem", w)
	}
	if cfg.TurnTokenFile != "" {
		// A tool server that outlives its turns (the token comes from a file) is no
		// turn's tool process: it leaves the workspace, where stopping a turn ends the
		// processes working there (issue 16). Every path it uses is absolute by now
		// (the workspace, the data directory, the key and token files).
		if err := os.Chdir("/"); err != nil {
			return fmt.Errorf("mcp: leaving the workspace: %w", err)
		}
	}
	exe, _ := os.Executable()
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	protected, err := NewProtectedPaths(cfg.Workspace, cfg.ProtectedPrefixes(exe, home)...)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	// I-5: a degradation is said once, at start.
	hidden := []string{cfg.DataDir, cfg.AgentKeyFile}
	if cfg.TurnTokenFile != "" {
		hidden = append(hidden, cfg.TurnTokenFile)
	}
	if home != "" {
		hidden = append(hidden, filepath.Join(home, ".agentmail"), filepath.Join(home, ".config", "agentmail"))
	}
	sandbox, why := FindSandbox(ctx, cfg.Sandbox, cfg.Workspace, hidden, exec.LookPath)
	if sandbox == nil {
		log.Warn("mcp: run_command without a sandbox", "reason", why)
	} else {
		proc := "its own"
		if sandbox.SharesProc() {
			proc = "the platform sandbox's" // root inside the bridge's platform sandbox
		}
		log.Info("mcp: run_command in a bubblewrap sandbox", "writable", cfg.Workspace, "hidden", strings.Join(sandbox.Hidden, ":"), "proc", proc)
	}
	if cfg.TurnTokenFile != "" {
		log.Info("mcp: the turn's token is read from a file at every tool call", "file", cfg.TurnTokenFile)
	} else if cfg.AgentKey == "" {
		log.Warn("mcp: no agent key (AGENTMAIL_AGENT_KEY or " + cfg.AgentKeyFile + "); tools answer 401 until connect_to_server")
	}
	connect := func(url, key string) Gateway {
		return client.New(url, client.WithToken(key), client.WithUserAgent("agentmail-mcp/"+Version))
	}
	srv, err := New(Options{
		Config:    cfg,
		Gateway:   connect(cfg.GatewayURL, cfg.AgentKey),
		Connect:   connect,
		Protected: protected,
		Sandbox:   sandbox,
		Log:       log.With("agent", cfg.AgentName, "session_id", cfg.SessionID, "mail_id", cfg.MailID),
	})
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	err = srv.Run(ctx, StdioTransport(stdin, stdout, log))
	if err != nil && ctx.Err() != nil {
		return nil // stopped by a signal
	}
	return err
}
