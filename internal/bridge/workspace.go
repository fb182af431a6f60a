package bridge

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WorkspaceChoice is the working directory chosen for a mail (D-6).
type WorkspaceChoice struct {
	// Dir is the directory the turn runs in: an existing absolute directory.
	Dir string
	// Expected is the to_workspace the mail asked for ("" when none).
	Expected string
	// FellBack is true when Dir is the fallback directory, not Expected;
	// Reason then says why Expected was not usable (D-6.4 logs both).
	FellBack bool
	Reason   string
}

// ErrNoWorkspace is returned (wrapped) by ResolveWorkspace when neither the
// mail's directory nor the fallback is usable; the core then sends a
// failure report naming both (B-6, I-5).
var ErrNoWorkspace = errors.New("no usable working directory")

// ResolveWorkspace implements D-6 and B-3.1: the working directory of a
// turn is the mail's to_workspace when it is an absolute path (D-6.3) to a
// directory that already exists (D-6.1); otherwise the fallback directory
// (AGENTMAIL_FALLBACK_DIR) under the same two conditions. Nothing is ever
// created (D-6.2, N-2) and relative paths are refused (N-3). The error wraps
// ErrNoWorkspace and names the expected and the fallback directory.
func ResolveWorkspace(toWorkspace, fallback string) (WorkspaceChoice, error) {
	c := WorkspaceChoice{Expected: toWorkspace}
	reason := ""
	if toWorkspace == "" {
		reason = "the mail's address names no directory"
	} else if why := unusableDir(toWorkspace); why != "" {
		reason = why
	} else {
		c.Dir = filepath.Clean(toWorkspace)
		return c, nil
	}
	c.FellBack, c.Reason = true, reason
	if fallback == "" {
		return c, fmt.Errorf("%w: %s (%q) and AGENTMAIL_FALLBACK_DIR is unset", ErrNoWorkspace, reason, toWorkspace)
	}
	if why := unusableDir(fallback); why != "" {
		return c, fmt.Errorf("%w: %s (%q) and the fallback AGENTMAIL_FALLBACK_DIR=%q is unusable: %s",
			ErrNoWorkspace, reason, toWorkspace, fallback, why)
	}
	c.Dir = filepath.Clean(fallback)
	return c, nil
}

// unusableDir says why p cannot be a working directory, or "" when it can.
func unusableDir(p string) string {
	if !filepath.IsAbs(p) {
		return "the path is relative; an absolute path is needed"
	}
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "the directory does not exist (directories are never created)"
		}
		return "the directory cannot be read: " + err.Error()
	}
	if !st.IsDir() {
		return "the path is not a directory"
	}
	return ""
}
