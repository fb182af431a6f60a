package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/agentmail/agentmail/internal/mcptools"
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
AGENTMAIL_AGENT_NAME, and per turn AGENTMAIL_TURN_TOKEN (under a bridge: the turn's
only credential, used instead of any key; or AGENTMAIL_TURN_TOKEN_FILE, a file the
bridge rewrites for each turn, read at every tool call), AGENTMAIL_SESSION_ID, AGENTMAIL_MAIL_ID,
AGENTMAIL_WORKSPACE, AGENTMAIL_PERMISSION_MODE (plan, workspace or full; default
workspace), AGENTMAIL_PERMISSION_WAIT_MS (default 540000), AGENTMAIL_DATA_DIR and
AGENTMAIL_PROTECTED_PATHS (protected path prefixes, ':'-separated). See docs/TOOLS.md.

Exit codes: 0 stdin ended or a signal stopped it, 1 error (no working directory,
no credentials, the configuration is wrong), 2 usage (bad flag or argument).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return mcptools.Main(ctx, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	},
}

func init() {
	rootCmd.AddCommand(mcpCmd)
}
