package mcptools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Sandbox modes of AGENTMAIL_SANDBOX.
const (
	// SandboxAuto confines approved commands with bubblewrap when it is
	// installed and works on this machine (the default).
	SandboxAuto = "auto"
	// SandboxOff runs approved commands without confinement.
	SandboxOff = "off"
)

// Sandbox confines the commands run_command runs after their approval
// (issue 12, point 9) with bubblewrap (`bwrap`, Debian package bubblewrap):
// the whole file system read-only, the workspace writable, a private /tmp,
// the Hidden paths absent (an empty directory, or an empty file, in their
// place), and a new PID namespace with its own /proc, so a command sees
// neither the tool server's nor the platform's environment through
// /proc/<pid>/environ. The network stays as it is: builds fetch packages.
// A nil *Sandbox runs commands unconfined.
type Sandbox struct {
	// Bwrap is the path of the bwrap executable.
	Bwrap string
	// Writable are the directories a command may write (the workspace).
	Writable []string
	// Hidden are the files and directories a command may not read at all
	// (the gateway's data directory, the agent key file, ~/.agentmail, the
	// command-line client's stored key in ~/.config/agentmail).
	Hidden []string
}

// FindSandbox answers the sandbox for mode (SandboxAuto, SandboxOff, or ""
// for auto) with the workspace writable and hidden absent, or nil and the
// reason, in words for the log, why commands run unconfined: the mode is
// off, bwrap is not installed, or it cannot start here (no user
// namespaces). lookPath is exec.LookPath in production.
func FindSandbox(ctx context.Context, mode, workspace string, hidden []string, lookPath func(string) (string, error)) (*Sandbox, string) {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case SandboxOff:
		return nil, "AGENTMAIL_SANDBOX=off: approved commands run without a sandbox and can read and write everything this user can"
	case "", SandboxAuto:
	default:
		return nil, fmt.Sprintf("AGENTMAIL_SANDBOX=%q is not auto or off: approved commands run without a sandbox", mode)
	}
	bwrap, err := lookPath("bwrap")
	if err != nil {
		return nil, "bubblewrap (bwrap) is not installed: approved commands run without a sandbox and can read and write everything this user can; install the Debian package bubblewrap"
	}
	sb := &Sandbox{Bwrap: bwrap, Writable: []string{workspace}}
	for _, h := range hidden {
		if h != "" {
			sb.Hidden = append(sb.Hidden, filepath.Clean(h))
		}
	}
	probe, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	name, args := sb.command(os.TempDir(), "true")
	if out, err := exec.CommandContext(probe, name, args...).CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("bubblewrap cannot start here (%v: %s): approved commands run without a sandbox", err, strings.TrimSpace(string(out)))
	}
	return sb, ""
}

// command answers the program and arguments that run `bash -c command` in
// dir inside the sandbox. The mounts are applied in order: / read-only, a
// fresh /dev and /proc, a private /tmp, the writable directories bound over
// that, and the hidden paths last, so a hidden path inside the workspace
// stays hidden. A hidden path that does not exist is left out (there is
// nothing to read).
func (sb *Sandbox) command(dir, command string) (string, []string) {
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--unshare-pid",
		"--die-with-parent",
		// Run as root, a command would keep the capabilities to unmount
		// what hides the keys or remount / writable: it gets none.
		"--cap-drop", "ALL",
	}
	for _, w := range sb.Writable {
		args = append(args, "--bind", w, w)
	}
	for _, h := range sb.Hidden {
		fi, err := os.Stat(h)
		switch {
		case err != nil:
		case fi.IsDir():
			args = append(args, "--tmpfs", h)
		default:
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	args = append(args, "--chdir", dir, "--", "bash", "-c", command)
	return sb.Bwrap, args
}
