package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/store"
)

// seedMail stores one session with one mail in a running store.
func seedMail(t *testing.T, st *store.Store, subject string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	err := st.Write(ctx, func(q *store.Q) error {
		if _, err := q.ClaimName(ctx, "ann-"+subject, store.KindPerson, now); err != nil {
			return err
		}
		sid := store.NewID()
		if err := q.InsertSession(ctx, store.SessionRow{SessionID: sid, Alias: "s-" + subject, AliasSource: store.AliasAuto,
			CreatedBy: "ann", CreatedByKind: store.KindPerson, CreatedAt: now, LastActivity: now}); err != nil {
			return err
		}
		return q.InsertMail(ctx, store.MailRow{MailID: store.NewID(), SessionID: sid, FromName: "ann", FromKind: store.KindPerson,
			FromAddress: "ann", Subject: subject, Body: "x", MailType: "normal", CreatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBackupCopiesTheSQLiteDatabaseWhileItIsOpen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// The "running gateway": the store stays open and holds the data
	// directory's lock during the backup.
	st, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seedMail(t, st, "before")

	out := filepath.Join(t.TempDir(), "nested", "agentmail-backup.db")
	var stdout bytes.Buffer
	if err := runBackup(ctx, &stdout, out, store.Options{DataDir: dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "1 mails") {
		t.Fatalf("backup report %q does not count the one mail", stdout.String())
	}
	seedMail(t, st, "after") // the gateway keeps writing; the copy is a snapshot

	copyStore, err := store.Open(ctx, store.Options{DatabaseURL: "sqlite://" + out})
	if err != nil {
		t.Fatalf("the backup does not open as a database: %v", err)
	}
	defer copyStore.Close()
	var subjects []string
	rows, err := copyStore.Read().Query(ctx, `SELECT subject FROM mails`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		subjects = append(subjects, s)
	}
	rows.Close()
	if len(subjects) != 1 || subjects[0] != "before" {
		t.Fatalf("backup holds %v, want [before]", subjects)
	}
	matches, _ := filepath.Glob(out + ".partial-*")
	if len(matches) != 0 {
		t.Fatalf("a partial file was left behind: %v", matches)
	}

	// An existing file is never overwritten.
	err = runBackup(ctx, &stdout, out, store.Options{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("backup over an existing file: %v", err)
	}
}

// TestBackupFileIsPrivate checks that the backup, which holds password
// hashes and mail bodies, is written with mode 0600 under umask 022.
func TestBackupFileIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seedMail(t, st, "secret")
	out := filepath.Join(t.TempDir(), "agentmail-backup.db")
	var stdout bytes.Buffer
	if err := runBackup(ctx, &stdout, out, store.Options{DataDir: dir}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup %s has mode %#o, want 0600", out, fi.Mode().Perm())
	}
}

func TestBackupRefusesMissingDatabaseAndOut(t *testing.T) {
	var stdout bytes.Buffer
	if err := runBackup(context.Background(), &stdout, "", store.Options{DataDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Fatalf("no --out: %v", err)
	}
	out := filepath.Join(t.TempDir(), "b.db")
	err := runBackup(context.Background(), &stdout, out, store.Options{DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "no database") {
		t.Fatalf("empty data directory: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Fatal("a failed backup created --out")
	}
}

func TestBackupOnPostgreSQLPrintsPgDumpWithoutThePassword(t *testing.T) {
	var stdout bytes.Buffer
	err := runBackup(context.Background(), &stdout, "/var/backups/am.dump",
		store.Options{DatabaseURL: "postgres://am:s3cret@db.internal:5432/agentmail?sslmode=require&pool_max_conns=32"})
	var ec exitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != 2 {
		t.Fatalf("err = %v, want exit status 2 (nothing copied)", err)
	}
	line := strings.TrimSpace(stdout.String())
	want := "pg_dump --format=custom --no-owner --file /var/backups/am.dump 'postgres://am@db.internal:5432/agentmail?sslmode=require'"
	if line != want {
		t.Fatalf("printed %q\nwant    %q", line, want)
	}
}
