package mcptools

import (
	"context"

	"github.com/agentmail/agentmail/internal/sandbox"
)

// Sandbox modes of AGENTMAIL_SANDBOX (see package sandbox).
const (
	// SandboxAuto confines approved commands with bubblewrap when it is
	// installed and works on this machine (the default).
	SandboxAuto = sandbox.Auto
	// SandboxOff runs approved commands without confinement.
	SandboxOff = sandbox.Off
)

// Sandbox confines the commands run_command runs after their approval
// (issue 12, point 9) with bubblewrap: the policy sandbox.Commands, i.e. the
// whole file system read-only, the workspace writable, a private /tmp, the
// hidden paths absent (an empty directory, or an empty file, in their
// place), and a new PID namespace with its own /proc, so a command sees
// neither the tool server's nor the platform's environment through
// /proc/<pid>/environ. The network stays as it is: builds fetch packages.
// A nil *Sandbox runs commands unconfined.
type Sandbox = sandbox.Sandbox

// FindSandbox answers the sandbox for mode (SandboxAuto, SandboxOff, or ""
// for auto) with the workspace writable and hidden absent (the gateway's
// data directory, the agent key file, ~/.agentmail, the command-line
// client's stored key in ~/.config/agentmail), or nil and the reason, in
// words for the log, why commands run unconfined: the mode is off, bwrap is
// not installed, or it cannot start here (no user namespaces). lookPath is
// exec.LookPath in production.
func FindSandbox(ctx context.Context, mode, workspace string, hidden []string, lookPath func(string) (string, error)) (*Sandbox, string) {
	sb, why := sandbox.Find(ctx, mode, sandbox.Commands(workspace, hidden), lookPath)
	if sb == nil {
		return nil, why + ": approved commands run without a sandbox and can read and write everything this user can"
	}
	return sb, ""
}
