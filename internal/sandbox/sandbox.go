// Package sandbox confines processes with bubblewrap (`bwrap`, Debian package
// bubblewrap), for the two places where a model's commands run (issue 12,
// point 9): the commands run_command runs after their approval
// (internal/mcptools), and the platform process the bridge starts together
// with everything it starts, the platform's own shell tool among them
// (internal/bridge). Both read the same setting, AGENTMAIL_SANDBOX (auto or
// off), and share one argument builder, so what "hidden" and "own /proc"
// mean cannot drift apart.
package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Modes of AGENTMAIL_SANDBOX.
const (
	// Auto confines with bubblewrap when it is installed and works on this
	// machine (the default).
	Auto = "auto"
	// Off runs without confinement.
	Off = "off"
)

// InsideEnv is set (to "platform") in the environment of a platform process
// the bridge confined, and so in everything that process starts. A tool
// server that finds it knows that its parent already runs in a sandbox with
// its own PID namespace (see Find).
const InsideEnv = "AGENTMAIL_IN_SANDBOX"

// Policy says what a confined process may see and change.
type Policy struct {
	// ReadOnly mounts the whole file system read-only, with a minimal /dev
	// of its own, except the Writable directories. When false the file
	// system and /dev stay as they are, writable where they were.
	ReadOnly bool
	// PrivateTmp gives the process an empty /tmp of its own.
	PrivateTmp bool
	// DieWithParent kills the process when the process that started the
	// sandbox dies.
	DieWithParent bool
	// Nestable lets the process start a sandbox of its own inside this one
	// (the platform's tool server starts one for run_command): it sets
	// InsideEnv, and a process running as root keeps the one capability it
	// needs for that, CAP_SETFCAP (mapping root into a new user namespace;
	// the bounding set holds nothing else, so no file capability can give
	// more).
	Nestable bool
	// Writable are directories the process may write when ReadOnly is set
	// (the workspace).
	Writable []string
	// Hidden are files and directories the process may not read at all: an
	// empty read-only directory, or an empty file, takes their place. They
	// are looked up each time a command is built; a path that does not
	// exist then is left out (there is nothing to read).
	Hidden []string
}

// Commands is the policy of run_command's approved commands: the file
// system read-only, workspace writable, a private /tmp, hidden paths absent,
// and the command dies with the tool server.
func Commands(workspace string, hidden []string) Policy {
	return Policy{ReadOnly: true, PrivateTmp: true, DieWithParent: true, Writable: []string{workspace}, Hidden: hidden}
}

// Platform is the policy of a platform process (Claude Code, opencode, pi)
// and everything it starts: the file system as it is (the workspaces and the
// platform's own configuration and state folders stay writable), hidden
// paths absent, and its own PID namespace and /proc so that the bridge's
// process is not visible. It may start the tool server's sandbox inside.
// It does not die with the bridge, as a platform process did not before.
func Platform(hidden []string) Policy {
	return Policy{Nestable: true, Hidden: hidden}
}

// Sandbox is a bubblewrap sandbox that works on this machine. A nil
// *Sandbox means no confinement.
type Sandbox struct {
	// Bwrap is the path of the bwrap executable.
	Bwrap string
	Policy
	// sharedProc keeps the /proc of the sandbox this process already runs
	// in instead of a PID namespace of its own (see Find).
	sharedProc bool
}

// Find answers the sandbox for mode (Auto, Off, or "" for auto) and policy,
// after checking with a probe that it starts here, or nil and the reason in
// plain words for the log: the mode is off or unknown, bwrap is not
// installed, or it cannot start here (no user namespaces, no permission to
// mount /proc). The caller says what runs without confinement.
//
// Inside a platform sandbox (InsideEnv set, process 1 is bubblewrap's),
// bubblewrap running as root cannot mount a /proc of its own; a sandbox
// that keeps the outer one's /proc is used then, which shows only the
// platform's processes. lookPath is exec.LookPath in production. Hidden
// paths are cleaned.
func Find(ctx context.Context, mode string, policy Policy, lookPath func(string) (string, error)) (*Sandbox, string) {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case Off:
		return nil, "AGENTMAIL_SANDBOX=off"
	case "", Auto:
	default:
		return nil, fmt.Sprintf("AGENTMAIL_SANDBOX=%q is not auto or off", mode)
	}
	bwrap, err := lookPath("bwrap")
	if err != nil {
		return nil, "bubblewrap (bwrap) is not installed; install the Debian package bubblewrap"
	}
	var hidden []string
	for _, h := range policy.Hidden {
		if h != "" {
			hidden = append(hidden, filepath.Clean(h))
		}
	}
	policy.Hidden = hidden
	sb := &Sandbox{Bwrap: bwrap, Policy: policy}
	why := sb.probe(ctx)
	if why == "" {
		return sb, ""
	}
	if insidePlatformSandbox() {
		nested := &Sandbox{Bwrap: bwrap, Policy: policy, sharedProc: true}
		if nested.probe(ctx) == "" {
			return nested, ""
		}
	}
	return nil, "bubblewrap cannot start here (" + why + ")"
}

// insidePlatformSandbox reports whether this process runs in a platform
// sandbox with a PID namespace of its own: InsideEnv is set and process 1,
// as this process sees it, is bubblewrap's (not the machine's init), so
// the outer /proc shows no process of the bridge.
func insidePlatformSandbox() bool {
	if os.Getenv(InsideEnv) == "" {
		return false
	}
	comm, err := os.ReadFile("/proc/1/comm")
	return err == nil && strings.TrimSpace(string(comm)) == "bwrap"
}

// probe runs `true` in the sandbox; "" when it worked, else what failed.
func (sb *Sandbox) probe(ctx context.Context) string {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	name, args := sb.Command(os.TempDir(), "true")
	out, err := exec.CommandContext(pctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
}

// SharesProc reports whether the sandbox keeps the /proc of the sandbox this
// process already runs in (see Find) instead of one of its own.
func (sb *Sandbox) SharesProc() bool { return sb.sharedProc }

// Command answers the program and arguments that run argv inside the
// sandbox, in dir ("" keeps the caller's working directory). The mounts are
// applied in order: / (read-only or as it is), /dev, a fresh /proc in a new
// PID namespace, a private /tmp, the writable directories bound over that,
// and the hidden paths last, so a hidden path inside the workspace stays
// hidden.
func (sb *Sandbox) Command(dir string, argv ...string) (string, []string) {
	var args []string
	if sb.ReadOnly {
		args = append(args, "--ro-bind", "/", "/", "--dev", "/dev")
	} else {
		args = append(args, "--bind", "/", "/", "--dev-bind", "/dev", "/dev")
	}
	if sb.sharedProc {
		// Root without capabilities may create a user namespace (the
		// platform sandbox kept CAP_SETFCAP for it) but not mount a new
		// /proc under the outer sandbox's; the outer /proc stays.
		args = append(args, "--unshare-user")
	} else {
		args = append(args, "--proc", "/proc", "--unshare-pid")
	}
	if sb.PrivateTmp {
		args = append(args, "--tmpfs", "/tmp")
	}
	if sb.DieWithParent {
		args = append(args, "--die-with-parent")
	}
	// Run as root, a process would keep the capabilities to unmount what
	// hides the keys or remount / writable: it gets none.
	args = append(args, "--cap-drop", "ALL")
	if sb.Nestable && os.Geteuid() == 0 {
		args = append(args, "--cap-add", "CAP_SETFCAP")
	}
	if sb.ReadOnly {
		for _, w := range sb.Writable {
			args = append(args, "--bind", w, w)
		}
	}
	for _, h := range sb.Hidden {
		fi, err := os.Stat(h)
		switch {
		case err != nil:
		case fi.IsDir():
			args = append(args, "--tmpfs", h, "--remount-ro", h)
		default:
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	if sb.Nestable && !sb.sharedProc {
		args = append(args, "--setenv", InsideEnv, "platform")
	}
	if dir != "" {
		args = append(args, "--chdir", dir)
	}
	args = append(args, "--")
	return sb.Bwrap, append(args, argv...)
}
