// Command agentmail is the single AgentMail binary: the gateway (serve), the
// bridges (bridge), the MCP tool server (mcp), the command-line client for
// people (login, send, inbox, ...), and operations (backup, bench).
//
// Each subcommand lives in its own file and adds itself to rootCmd in an
// init function, so the wiring of one never touches another.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// rootCmd is the `agentmail` command; subcommands attach themselves in init.
var rootCmd = &cobra.Command{
	Use:           "agentmail",
	Short:         "Mail-driven collaboration between people and AI coding agents",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "agentmail:", err)
		os.Exit(exitCode(err))
	}
}

// exitCoder is implemented by errors that choose the process exit status.
type exitCoder interface{ ExitCode() int }

// exitCode maps an error to the exit status: the error's own ExitCode when it
// has one, else 1.
func exitCode(err error) int {
	if ec, ok := err.(exitCoder); ok {
		return ec.ExitCode()
	}
	return 1
}
