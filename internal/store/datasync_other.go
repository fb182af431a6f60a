//go:build !linux

package store

import "os"

// datasync flushes a file to disk (fsync where fdatasync is not offered).
func datasync(f *os.File) error { return f.Sync() }
