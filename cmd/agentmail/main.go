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
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// rootCmd is the `agentmail` command; subcommands attach themselves in init.
var rootCmd = &cobra.Command{
	Use:           "agentmail",
	Short:         "Mail-driven collaboration between people and AI coding agents",
	Version:       buildVersion(),
	SilenceUsage:  true,
	SilenceErrors: true,
}

// buildVersion answers the binary's version for --version: the module
// version of a `go install …@vX` build, else the VCS revision (with
// "+changes" for a modified tree) and its time, else "devel".
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+changes"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return strings.TrimSpace("devel " + rev + modified + " " + at)
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
