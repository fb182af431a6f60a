package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentmail/agentmail/internal/store"
)

// backupFlags are the flags of `agentmail backup`.
var backupFlags struct {
	out, dataDir, databaseURL string
}

// backupCmd is `agentmail backup --out FILE`: an online copy of the SQLite
// database while the gateway keeps running (issue 7 "operations").
var backupCmd = &cobra.Command{
	Use:   "backup --out FILE",
	Short: "Copy the SQLite database while the gateway runs (PostgreSQL: prints the pg_dump command)",
	Long: `Write a consistent copy of the gateway's SQLite database to FILE with VACUUM INTO,
while the gateway keeps serving: the copy is one snapshot of the database, compacted,
written next to FILE first and renamed into place only after an integrity check,
so FILE is either the whole backup or absent. FILE must not exist. FILE is
created with mode 0600 (only your user can read it): it holds password hashes and mail bodies.

The database is found the way 'agentmail serve' finds it: DATABASE_URL
(sqlite:///path or file:path) or agentmail.db in AGENTMAIL_DATA_DIR (default ./data).
Attachments are files under the data directory (attachments/); copy that directory
too, after the database.

With a PostgreSQL DATABASE_URL nothing is copied: the command prints the pg_dump
command to run (see docs/OPERATIONS.md) and exits with status 2.

To restore SQLite: stop the gateway, replace agentmail.db with the copy (remove
agentmail.db-wal and agentmail.db-shm), start the gateway.

Exit codes: 0 copied, 1 error (no database, FILE exists, the copy failed; FILE is
then absent), 2 usage (no --out, bad flag) or PostgreSQL (nothing copied).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runBackup(ctx, cmd.OutOrStdout(), backupFlags.out, store.Options{DataDir: backupFlags.dataDir, DatabaseURL: backupFlags.databaseURL})
	},
}

func init() {
	f := backupCmd.Flags()
	f.StringVar(&backupFlags.out, "out", "", "file to write the backup to (must not exist)")
	f.StringVar(&backupFlags.dataDir, "data-dir", serveEnv("AGENTMAIL_DATA_DIR", "./data"), "data directory (AGENTMAIL_DATA_DIR)")
	f.StringVar(&backupFlags.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "database (DATABASE_URL); empty: <data-dir>/agentmail.db")
	rootCmd.AddCommand(backupCmd)
}

// backupExit is an error with its own exit status (2: nothing was copied
// because the database is PostgreSQL).
type backupExit struct {
	msg  string
	code int
}

func (e *backupExit) Error() string { return e.msg }
func (e *backupExit) ExitCode() int { return e.code }

// runBackup copies the database opt selects to out, or, for PostgreSQL,
// prints the pg_dump command and answers a status-2 error.
func runBackup(ctx context.Context, stdout io.Writer, out string, opt store.Options) error {
	if out == "" {
		return usagef("backup: --out is required: the file to write the backup to, e.g. --out /var/backups/agentmail-$(date +%%F).db")
	}
	if store.IsPostgresURL(opt.DatabaseURL) {
		line, err := store.PostgresDumpCommand(opt.DatabaseURL, out)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, line)
		return &backupExit{code: 2, msg: "backup: DATABASE_URL names PostgreSQL, which agentmail does not copy itself; " +
			"run the pg_dump command printed above (password from PGPASSWORD or ~/.pgpass; restore with pg_restore, docs/OPERATIONS.md)"}
	}
	src, err := store.SQLitePath(opt)
	if err != nil {
		return err
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("backup: no database at %s (%v); give --data-dir or DATABASE_URL as 'agentmail serve' has them", src, err)
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("backup: %s exists; give --out a new file name", out)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmp := fmt.Sprintf("%s.partial-%d", out, os.Getpid())
	// The copy holds password hashes and mail bodies: it is created empty
	// with store.PrivateFileMode (VACUUM INTO fills an empty file) and the
	// mode is set again, whatever the umask, before any byte is written.
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, store.PrivateFileMode)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	f.Close()
	defer os.Remove(tmp)
	if err := os.Chmod(tmp, store.PrivateFileMode); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := vacuumInto(ctx, src, tmp); err != nil {
		return err
	}
	mails, err := checkBackup(ctx, tmp)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup: %s → %s (%d bytes, %d mails)\n", src, out, st.Size(), mails)
	return nil
}

// vacuumInto writes a snapshot of the SQLite file src to dst. It opens the
// file beside the running gateway (no data-directory lock: VACUUM INTO only
// reads the source, and WAL lets it read while the gateway writes).
func vacuumInto(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+src+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return fmt.Errorf("backup: open %s: %w", src, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return fmt.Errorf("backup: VACUUM INTO %s: %w", dst, err)
	}
	return nil
}

// checkBackup runs SQLite's integrity check on the copy and answers its
// number of mails.
func checkBackup(ctx context.Context, path string) (int, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var verdict string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&verdict); err != nil || verdict != "ok" {
		return 0, fmt.Errorf("backup: the copy failed its integrity check (%q, %v); nothing was written to --out", verdict, err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM mails`).Scan(&n); err != nil {
		return 0, fmt.Errorf("backup: the copy has no mails table (%v); is this an AgentMail database?", err)
	}
	return n, nil
}
