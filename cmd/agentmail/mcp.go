package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/mcptools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// mcpCmd is `agentmail mcp`: the MCP tool server over stdio (JSON-RPC, one
// message per line on stdin/stdout; logs go to stderr).
var mcpCmd = &cobra.Command{
	Use:   "mcp",
	Short: "Serve the AgentMail tools to an agent platform over MCP (stdio)",
	Long: `Serve the AgentMail MCP tools over stdin/stdout: the mail tools (read_inbox,
send_mail, ...), the schedule tools and the execution gate (run_command,
write_file). Platforms start it as a local MCP server, for example
  claude --mcp-config '{"mcpServers":{"agentmail":{"command":"agentmail","args":["mcp"]}}}'

Environment: AGENTMAIL_GATEWAY_URL, AGENTMAIL_AGENT_KEY (else ~/.agentmail/agent.key),
AGENTMAIL_AGENT_NAME, and per turn AGENTMAIL_SESSION_ID, AGENTMAIL_MAIL_ID,
AGENTMAIL_WORKSPACE, AGENTMAIL_PERMISSION_MODE (plan, workspace or full; default
workspace), AGENTMAIL_PERMISSION_WAIT_MS (default 540000), AGENTMAIL_DATA_DIR and
AGENTMAIL_PROTECTED_PATHS (protected path prefixes, ':'-separated).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		cwd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("mcp: cannot read the working directory: %w", err)
		}
		cfg, err := mcptools.ConfigFromEnv(os.Getenv, cwd)
		if err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
		for _, w := range cfg.Warnings {
			log.Warn("mcp: configuration", "problem", w)
		}
		exe, _ := os.Executable()
		home, _ := os.UserHomeDir()
		protected, err := mcptools.NewProtectedPaths(cfg.Workspace, cfg.ProtectedPrefixes(exe, home)...)
		if err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
		if cfg.AgentKey == "" {
			log.Warn("mcp: no agent key (AGENTMAIL_AGENT_KEY or " + cfg.AgentKeyFile + "); tools will answer 401 until connect_to_server")
		}
		srv, err := mcptools.New(mcptools.Options{
			Config:    cfg,
			Gateway:   client.New(cfg.GatewayURL, client.WithToken(cfg.AgentKey), client.WithUserAgent("agentmail-mcp/"+mcptools.Version)),
			Protected: protected,
			Log:       log.With("agent", cfg.AgentName, "session_id", cfg.SessionID, "mail_id", cfg.MailID),
		})
		if err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = srv.Run(ctx, &mcp.StdioTransport{})
		if err != nil && ctx.Err() != nil {
			return nil // stopped by a signal
		}
		return err
	},
}

func init() {
	rootCmd.AddCommand(mcpCmd)
}
