// Package pathwalk resolves a path the way the kernel reaches it, one
// component at a time, so that callers can judge each symbolic link on the
// way (the MCP tools' workspace confinement, the export's directory).
package pathwalk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// ErrTooManyLinks is answered when a walk meets more than its bound of
// symbolic links (a loop, or a deliberately deep chain).
var ErrTooManyLinks = errors.New("too many symbolic links")

// Resolve returns the absolute, symlink-free form of the absolute path p:
// components are taken left to right, "." is dropped, ".." goes to the
// parent of what has been resolved so far (so "link/.." is the parent of
// the link's target, not of the link), and every existing symbolic link is
// replaced by its target. Components that do not exist (yet) stand for
// themselves, so a path to a file about to be created resolves too.
// onLink, when not nil, is called with each link (its path and Lstat
// information) before it is followed; its error ends the walk and is
// answered as it is. More than maxLinks links answer ErrTooManyLinks; a
// link that cannot be read answers the file system's error.
func Resolve(p string, maxLinks int, onLink func(link string, fi os.FileInfo) error) (string, error) {
	resolved := string(filepath.Separator)
	queue := split(p)
	links := 0
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			// An existing non-link, or a component that does not exist:
			// either way it stands for itself.
			resolved = next
			continue
		}
		if onLink != nil {
			if err := onLink(next, fi); err != nil {
				return "", err
			}
		}
		if links++; links > maxLinks {
			return "", ErrTooManyLinks
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		queue = append(split(target), queue...)
	}
	return resolved, nil
}

func split(p string) []string { return strings.Split(filepath.ToSlash(p), "/") }
