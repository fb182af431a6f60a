package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/store"
)

// TestSQLiteFilesArePrivateInAnExistingDataDirectory opens the store in a
// data directory that already exists with mode 0755 under umask 022 and
// checks that the database and the -wal and -shm files SQLite creates are
// 0600, that an older 0644 database is narrowed, and that the open data
// directory is reported in the log.
func TestSQLiteFilesArePrivateInAnExistingDataDirectory(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DataDir: dir, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, func(q *store.Q) error {
		_, err := q.ClaimName(ctx, "ann", store.KindPerson, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "agentmail.db")
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s after a write: %v", p, err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", p, fi.Mode().Perm())
		}
	}
	if !strings.Contains(logs.String(), "can be read by other users") || !strings.Contains(logs.String(), dir) {
		t.Errorf("no warning about the open data directory %s in the log:\n%s", dir, logs.String())
	}
	st.Close()

	// A database an older gateway left world-readable is narrowed on open.
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(ctx, store.Options{DataDir: dir, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if fi, _ := os.Stat(db); fi.Mode().Perm() != 0o600 {
		t.Errorf("reopened %s keeps mode %#o, want 0600", db, fi.Mode().Perm())
	}
}
