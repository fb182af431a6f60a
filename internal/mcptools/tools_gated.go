package mcptools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"
)

// ------------------------------------------------------- execution gate

// runCommand is the gated shell (seed 003 section 2). Order: arguments,
// protected working directory (refused before asking anyone), the gate,
// then bash.
func (s *Server) runCommand(ctx context.Context, a args) (string, error) {
	command, err := a.str("command")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(command) == "" {
		return "", badArg("command is required: the bash command line to run")
	}
	secs, err := a.bounded("timeout_seconds", int(DefaultCommandTimeout/time.Second), 1, maxCommandSeconds)
	if err != nil {
		return "", err
	}
	timeout := time.Duration(secs) * time.Second
	cwd, err := a.str("cwd")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(cwd) == "" {
		cwd = s.cfg.Workspace
	}
	dir, err := s.checkPath(cwd)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", badArg("cwd %q is not an existing directory", cwd)
	}
	input := map[string]any{"command": command, "cwd": dir}
	ok, err := s.gate.Authorize(ctx, GateRequest{
		Tool:     "run_command",
		Input:    input,
		Question: fmt.Sprintf("Allow this command to run in %s?", dir),
		Context:  fmt.Sprintf("Tool run_command (bash -c)\nDirectory: %s\nCommand:\n%s", dir, command),
	})
	if err != nil {
		return "", err
	}
	res, err := RunCommand(ctx, command, dir, timeout, s.sandbox)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Ran in %s (%s).\n%s", dir, ok.Via, res.Render(timeout)), nil
}

// writeFile is the gated file write (seed 003 section 2): protected paths
// are refused before asking anyone; after the approval the path is
// resolved again, so a link planted while waiting cannot redirect the
// write.
func (s *Server) writeFile(ctx context.Context, a args) (string, error) {
	p, err := a.required("path", "the file to write")
	if err != nil {
		return "", err
	}
	if !a.has("content") {
		return "", badArg("content is required: the complete new content of the file (it may be empty)")
	}
	content, err := a.str("content")
	if err != nil {
		return "", err
	}
	r, err := s.checkPath(p)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(r); err == nil && fi.IsDir() {
		return "", badArg("path %q is a directory; give a file path", p)
	}
	sum := sha256.Sum256([]byte(content))
	preview, cut := cutChars(content, 2000)
	ctxText := fmt.Sprintf("Tool write_file\nPath: %s\nBytes: %d\nContent:\n%s", r, len(content), preview)
	if cut > 0 {
		ctxText += fmt.Sprintf("\n[... %d more characters]", cut)
	}
	ok, err := s.gate.Authorize(ctx, GateRequest{
		Tool:     "write_file",
		Input:    map[string]any{"path": r, "bytes": len(content), "sha256": hex.EncodeToString(sum[:])},
		Question: fmt.Sprintf("Allow writing %d bytes to %s?", len(content), r),
		Context:  ctxText,
	})
	if err != nil {
		return "", err
	}
	again, err := s.checkPath(p)
	if err != nil {
		return "", err
	}
	if again != r {
		return "", &Refusal{Reason: fmt.Sprintf("%s now resolves to %s instead of the approved %s: nothing was written", p, again, r), Asked: true}
	}
	n, err := WriteFile(r, []byte(content))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Wrote %d bytes to %s (%s).\n", n, r, ok.Via), nil
}
