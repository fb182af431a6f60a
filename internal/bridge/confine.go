package bridge

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Confining the platform (issue 12, point 9). The platform's own shell tool
// (Claude Code's Bash, opencode's and pi's bash) runs as the bridge's user,
// so without confinement it reads whatever that user can. With bubblewrap
// (AGENTMAIL_SANDBOX=auto, the default, the same setting as run_command's
// sandbox) every platform process the adapters start runs in the policy
// sandbox.Platform of package sandbox (found by the bridge command; the core
// depends on no such package, N-12): the file system as it is, the paths of
// PlatformHidden absent, and a PID namespace and /proc of its own, so the
// bridge's process is not there to read. The network stays shared: the
// platform needs its model and the gateway.

// Sandbox wraps a platform's command line so that it runs confined;
// *sandbox.Sandbox implements it. Command answers the program and arguments
// that run argv in dir ("" keeps the caller's working directory).
type Sandbox interface {
	Command(dir string, argv ...string) (string, []string)
}

// PlatformHidden lists what a confined platform may not read: the agent key
// file and its folder (KeyFile(home), ~/.agentmail), AGENTMAIL_AGENT_KEY_FILE
// when set, the command-line client's stored login (AGENTMAIL_CONFIG,
// $XDG_CONFIG_HOME/agentmail, ~/.config/agentmail) and the gateway's data
// directory when AGENTMAIL_DATA_DIR names it. Relative paths are taken from
// the bridge's working directory; empty values are left out.
func PlatformHidden(getenv func(string) string, home string) []string {
	var out []string
	add := func(p string) {
		if p = strings.TrimSpace(p); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				out = append(out, abs)
			}
		}
	}
	if home != "" {
		add(KeyFile(home))
		add(filepath.Dir(KeyFile(home)))
		add(filepath.Join(home, ".config", "agentmail"))
	}
	add(getenv("AGENTMAIL_AGENT_KEY_FILE"))
	add(getenv("AGENTMAIL_CONFIG"))
	if x := strings.TrimSpace(getenv("XDG_CONFIG_HOME")); x != "" {
		add(filepath.Join(x, "agentmail"))
	}
	add(getenv("AGENTMAIL_DATA_DIR"))
	return out
}

// Command is the platform process bin args, confined when e.Sandbox is set
// (then the process that starts is bwrap, running bin inside). Adapters
// start every platform process with it and set Dir, Env and the pipes
// themselves. The process leads a process group of its own, so the adapter
// signals it and all it started with kill(-pid); confined, it also leads
// its own session, so it has no controlling terminal into which it could
// push keystrokes for the shell that started the bridge.
func (e Env) Command(bin string, args ...string) *exec.Cmd {
	if e.Sandbox == nil {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	name, argv := e.Sandbox.Command("", append([]string{bin}, args...)...)
	cmd := exec.Command(name, argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}
