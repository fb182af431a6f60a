package main

import (
	"context"
	"os/exec"

	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/sandbox"
)

// findPlatformSandbox answers the sandbox of the platform's processes
// (issue 12, point 9): policy sandbox.Platform hiding bridge.PlatformHidden,
// under AGENTMAIL_SANDBOX (auto or off, the same setting as run_command's
// sandbox). Without one it answers nil and the reason in plain words, for
// the one log line at start (I-5).
func findPlatformSandbox(ctx context.Context, getenv func(string) string, home string) (*sandbox.Sandbox, string) {
	return sandbox.Find(ctx, getenv("AGENTMAIL_SANDBOX"), sandbox.Platform(bridge.PlatformHidden(getenv, home)), exec.LookPath)
}
