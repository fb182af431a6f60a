package gateway

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsStorageFull reports whether err comes from a full disk (issue 18 point
// 12): ENOSPC from the file system, SQLite's "database or disk is full"
// (SQLITE_FULL), or PostgreSQL's SQLSTATE class 53 disk_full (53100).
// Nothing is lost then and writes succeed again once space is freed.
func IsStorageFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "53100"
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "no space left on device")
}

// StorageFull is the 507 storage_full answer to a write that found the disk
// full: with SQLite "the gateway's disk is full: free space in <data dir>";
// with PostgreSQL the database's own words.
func (s *Service) StorageFull(err error) *Error {
	msg := "the gateway's disk is full"
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &pg):
		msg = fmt.Sprintf("the gateway's database is out of disk space: %s", pg.Message)
	case s.Store != nil && s.Store.Path() != "":
		msg = fmt.Sprintf("the gateway's disk is full: free space in %s", filepath.Dir(s.Store.Path()))
	}
	return &Error{Kind: KindStorageFull, Code: "storage_full", Message: msg,
		Suggestion: "nothing was stored; send again once space is freed", Err: err}
}
