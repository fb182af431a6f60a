package store

import (
	"os"
	"syscall"
)

// datasync flushes a file's data (and the size that reaches it) to disk:
// fdatasync, as SQLite's own unix VFS uses for the WAL.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
