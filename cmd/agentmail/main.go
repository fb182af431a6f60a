// Command agentmail is the single AgentMail binary: the gateway (serve), the
// bridges (bridge), the MCP tool server (mcp), the command-line client for
// people (login, send, inbox, ...), and operations (backup, bench).
//
// Each subcommand lives in its own file and adds itself to rootCmd in an
// init function, so the wiring of one never touches another.
package main

import (
	"errors"
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
	if code, err := execute(os.Args[1:]); err != nil { // usage.go: usage errors exit 2
		fmt.Fprintln(os.Stderr, "agentmail:", err)
		os.Exit(code)
	}
}

// exitCoder is implemented by errors that choose the process exit status.
type exitCoder interface{ ExitCode() int }

// exitCode maps an error to the exit status: the ExitCode of the error or
// of one it wraps, else 1. Usage errors are 2 (usage.go).
func exitCode(err error) int {
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}
