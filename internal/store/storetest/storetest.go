// Package storetest gives every test a fresh database, so the whole suite
// runs against SQLite (the default) and, unchanged, against PostgreSQL:
//
//	AGENTMAIL_TEST_DATABASE=postgres \
//	AGENTMAIL_TEST_POSTGRES_URL=$(scripts/pg.sh start) go test ./internal/...
//
// With PostgreSQL each call creates a database with a unique name on the
// server of AGENTMAIL_TEST_POSTGRES_URL (CREATE DATABASE) and drops it when
// the test ends, so tests stay independent and may run in parallel.
package storetest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/store"
)

// Environment variables that select the test database.
const (
	// EnvDatabase is "postgres" to run on PostgreSQL; empty or "sqlite"
	// keeps SQLite.
	EnvDatabase = "AGENTMAIL_TEST_DATABASE"
	// EnvPostgresURL is the server the scratch databases are created on,
	// e.g. postgres://agentmail@127.0.0.1:54329/postgres?sslmode=disable
	// (what scripts/pg.sh start prints).
	EnvPostgresURL = "AGENTMAIL_TEST_POSTGRES_URL"
)

// Postgres reports whether tests run on PostgreSQL.
func Postgres() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv(EnvDatabase)), "postgres")
}

// Name answers "postgres" or "sqlite", for messages and subtest names.
func Name() string {
	if Postgres() {
		return "postgres"
	}
	return "sqlite"
}

// Open answers a fresh, migrated store for t, closed (and, on PostgreSQL,
// dropped) when t ends. SQLite lives in t.TempDir().
func Open(t testing.TB) *store.Store {
	t.Helper()
	return OpenOptions(t, store.Options{})
}

// OpenOptions is Open with options; DataDir defaults to t.TempDir() and
// DatabaseURL is replaced by a fresh PostgreSQL database when tests run on
// PostgreSQL.
func OpenOptions(t testing.TB, opt store.Options) *store.Store {
	t.Helper()
	if opt.DataDir == "" {
		opt.DataDir = t.TempDir()
	}
	if Postgres() {
		opt.DatabaseURL = DatabaseURL(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, opt)
	if err != nil {
		t.Fatalf("storetest: open %s store: %v", Name(), err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// DatabaseURL answers the DATABASE_URL for a fresh database that t owns:
// "" on SQLite (the started binary then uses agentmail.db in its
// AGENTMAIL_DATA_DIR), or the URL of a new empty PostgreSQL database,
// dropped when t ends. Give the same URL to several `agentmail serve`
// processes to run them as replicas of one database; the first one to
// start applies the migrations.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	if !Postgres() {
		return ""
	}
	server := strings.TrimSpace(os.Getenv(EnvPostgresURL))
	if server == "" {
		t.Fatalf("storetest: %s=postgres needs %s, the URL of a PostgreSQL server where tests may create databases "+
			"(export %s=$(scripts/pg.sh start))", EnvDatabase, EnvPostgresURL, EnvPostgresURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := store.CreateScratchDatabase(ctx, server, "agentmail_test", true)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := db.Drop(ctx); err != nil {
			t.Errorf("storetest: %v", err)
		}
	})
	return db.URL
}
