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
