//go:build unix

package cli

import (
	"os"
	"syscall"
)

// ownedByAnotherUser reports whether the file belongs to a user other than
// the one running the command (the export's directories must be its own).
func ownedByAnotherUser(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) != os.Geteuid()
}

// linkOfAnotherUser reports whether a symbolic link belongs to a user other
// than the one running the command and other than root: such a user may
// point it elsewhere at any time.
func linkOfAnotherUser(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid != 0 && int(st.Uid) != os.Geteuid()
}
