package mcptools

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentmail/agentmail/internal/pathwalk"
)

// maxSymlinkHops bounds how many symbolic links ResolvePath follows for one
// path before it gives up (a loop, or a deliberately deep chain).
const maxSymlinkHops = 64

// ResolvePath returns the absolute, symlink-free form of p as the kernel
// would reach it: components are taken left to right, "." is dropped, ".."
// goes to the parent of what has been resolved so far (so "link/.." is the
// parent of the link's target, not of the link), and every existing symbolic
// link is replaced by its target. Components that do not exist yet are kept
// literally, so a path to a file about to be created resolves too (its
// longest existing ancestor is resolved, the rest appended).
//
// A relative p is taken relative to base, which must then be absolute.
// Errors: a relative path with a relative base, or more than 64 symbolic
// links on the way (a loop).
func ResolvePath(base, p string) (string, error) {
	if p == "" {
		return "", errors.New("path is empty: give an absolute path or one relative to the workspace")
	}
	if !filepath.IsAbs(p) {
		if !filepath.IsAbs(base) {
			return "", fmt.Errorf("path %q is relative and the base directory %q is not absolute", p, base)
		}
		p = base + string(filepath.Separator) + p
	}
	resolved, err := pathwalk.Resolve(p, maxSymlinkHops, nil)
	if errors.Is(err, pathwalk.ErrTooManyLinks) {
		return "", fmt.Errorf("path %q: more than %d symbolic links (a loop?)", p, maxSymlinkHops)
	}
	if err != nil {
		return "", fmt.Errorf("path %q: read symbolic link: %w", p, err)
	}
	return resolved, nil
}

// ProtectedPaths is the list of resolved absolute path prefixes that no
// tool of the execution gate may write into, whoever approves (seed 003
// section 2: the gateway's data, the bridge's own install, /etc/systemd,
// /etc/agentmail, key files, ~/.ssh). Matching is on whole components:
// "/etc/systemd" covers "/etc/systemd/x" but not "/etc/systemdx".
type ProtectedPaths struct {
	prefixes []string
}

// NewProtectedPaths resolves each prefix with ResolvePath (relative ones
// against base) so that a symlinked prefix still matches the real location.
// Empty entries are skipped. Errors name the prefix that failed.
func NewProtectedPaths(base string, prefixes ...string) (*ProtectedPaths, error) {
	pp := &ProtectedPaths{}
	seen := map[string]bool{}
	for _, raw := range prefixes {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		r, err := ResolvePath(base, raw)
		if err != nil {
			return nil, fmt.Errorf("protected path %q: %w", raw, err)
		}
		if !seen[r] {
			seen[r] = true
			pp.prefixes = append(pp.prefixes, r)
		}
	}
	return pp, nil
}

// Prefixes returns the resolved prefixes, in the order given.
func (pp *ProtectedPaths) Prefixes() []string {
	return append([]string(nil), pp.prefixes...)
}

// Match reports the protected prefix that covers the already resolved path
// r, or "" when none does.
func (pp *ProtectedPaths) Match(r string) string {
	for _, pre := range pp.prefixes {
		if r == pre || pre == string(filepath.Separator) || strings.HasPrefix(r, pre+string(filepath.Separator)) {
			return pre
		}
	}
	return ""
}

// Check resolves p (relative to base) and returns the resolved path, or an
// error when it cannot be resolved or lies under a protected prefix. The
// error names both the path and the prefix so the model can choose another
// place.
func (pp *ProtectedPaths) Check(base, p string) (string, error) {
	r, err := ResolvePath(base, p)
	if err != nil {
		return "", err
	}
	if pre := pp.Match(r); pre != "" {
		if r != filepath.Clean(p) {
			return r, fmt.Errorf("%s (resolved to %s) is under the protected path %s: no tool writes there, whoever approves; choose a path outside it", p, r, pre)
		}
		return r, fmt.Errorf("%s is under the protected path %s: no tool writes there, whoever approves; choose a path outside it", p, pre)
	}
	return r, nil
}
