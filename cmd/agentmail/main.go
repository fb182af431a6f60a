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
	"time"

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

// buildVersion answers the binary's version for --version and the
// bridge's heartbeat (bridge_version, the same text): the module version
// of a `go install …@vX` build (a tagged version), else versionOfSettings
// of the VCS stamp.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return versionOfSettings(nil)
	}
	// A build in a checkout is "(devel)", or (Go 1.24 on) the pseudo-version
	// v0.0.0-<time>-<revision>[+dirty]: both are named by the VCS stamp.
	if v := bi.Main.Version; v != "" && v != "(devel)" && !strings.HasPrefix(v, "v0.0.0-") {
		return v
	}
	return versionOfSettings(bi.Settings)
}

// versionOfSettings names a development build by its VCS stamp: "devel",
// the revision's first 7 hex digits, its commit time to the minute (UTC)
// and "(modified)" for a tree with uncommitted changes, e.g.
// "devel 304a166 2026-12-02T13:00Z (modified)". A build without a stamp
// (-buildvcs=false, a git worktree, or no git checkout) says so.
func versionOfSettings(settings []debug.BuildSetting) string {
	var rev, at string
	modified := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				at = t.UTC().Format("2006-01-02T15:04Z")
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel (no revision recorded in this build)"
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	v := "devel " + rev
	if at != "" {
		v += " " + at
	}
	if modified {
		v += " (modified)"
	}
	return v
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
