package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// ScratchDatabase is a PostgreSQL database created for one test or one
// benchmark run on a server the caller owns, and dropped by Drop.
type ScratchDatabase struct {
	// Name is the database name: prefix, process id and random hex.
	Name string
	// URL is serverURL with its path replaced by Name.
	URL   string
	admin *sql.DB
}

// templateKey serialises the creation of migrated template databases among
// the processes of a test run.
const templateKey int64 = 0x61676d6c_00000003

var templates sync.Map // server URL → template database name

// CreateScratchDatabase creates a database with a unique name on the server
// of serverURL (any database there, usually /postgres, reached by a role
// allowed to CREATE DATABASE). prefix must be lower-case letters, digits and
// underscores.
//
// migrated false gives an empty database (Open then applies every
// migration); migrated true copies a template database on which the current
// migrations were applied once (created on first use, named after a hash of
// the migrations), which is several times faster than migrating again. The
// caller calls Drop when done.
func CreateScratchDatabase(ctx context.Context, serverURL, prefix string, migrated bool) (*ScratchDatabase, error) {
	if !IsPostgresURL(serverURL) {
		return nil, fmt.Errorf("store: scratch database: %q is not a postgres:// URL", redactURL(serverURL))
	}
	if !safeIdent(prefix) {
		return nil, fmt.Errorf("store: scratch database prefix %q: use a-z, 0-9 and _", prefix)
	}
	dsn, _, err := ParsePostgresURL(serverURL)
	if err != nil {
		return nil, err
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	admin.SetMaxOpenConns(1)
	from := ""
	if migrated {
		tmpl, err := migratedTemplate(ctx, admin, serverURL)
		if err != nil {
			admin.Close()
			return nil, err
		}
		from = " TEMPLATE " + tmpl
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("%s_%d_%s", prefix, os.Getpid(), hex.EncodeToString(rnd[:]))
	// Identifiers cannot be parameters; every part is checked by safeIdent.
	if err := execRetryingBusy(ctx, admin, `CREATE DATABASE `+name+from); err != nil {
		admin.Close()
		return nil, fmt.Errorf("store: create scratch database on %s: %w", redactURL(dsn), err)
	}
	return &ScratchDatabase{Name: name, URL: withDatabase(serverURL, name), admin: admin}, nil
}

// Drop removes the database, ending any connection still open on it.
func (d *ScratchDatabase) Drop(ctx context.Context) error {
	defer d.admin.Close()
	// FORCE ends connections a closing replica may still hold.
	_, err := d.admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+d.Name+` WITH (FORCE)`)
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: drop scratch database %s: %w", d.Name, err)
}

// migratedTemplate answers the name of a database holding the current
// migrations, creating it under an advisory lock when missing. It is built
// under another name and renamed when complete, so a crash midway never
// leaves a half-migrated template behind.
func migratedTemplate(ctx context.Context, admin *sql.DB, serverURL string) (string, error) {
	if v, ok := templates.Load(serverURL); ok {
		return v.(string), nil
	}
	ms, err := Migrations()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%d %s\n%s\n", m.Version, m.Name, m.SQL)
	}
	name := "agentmail_template_" + hex.EncodeToString(h.Sum(nil))[:16]
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, templateKey); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, templateKey)
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		return "", err
	}
	if n == 0 {
		building := name + "_building"
		if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`); err != nil {
			return "", err
		}
		if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+building); err != nil {
			return "", fmt.Errorf("store: create template database: %w", err)
		}
		st, err := Open(ctx, Options{DatabaseURL: withDatabase(serverURL, building)})
		if err != nil {
			return "", err
		}
		st.Close()
		if err := execRetryingBusy(ctx, conn, `ALTER DATABASE `+building+` RENAME TO `+name); err != nil {
			return "", fmt.Errorf("store: finish template database: %w", err)
		}
	}
	templates.Store(serverURL, name)
	return name, nil
}

// execRetryingBusy runs a CREATE/ALTER DATABASE that PostgreSQL refuses
// while a just-closed connection to the source is still ending ("being
// accessed by other users"), trying again for up to ten seconds.
func execRetryingBusy(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, stmt string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := db.ExecContext(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), "being accessed by other users") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// withDatabase answers serverURL with its database (the path) replaced.
func withDatabase(serverURL, name string) string {
	u, err := url.Parse(strings.TrimSpace(serverURL))
	if err != nil {
		return serverURL
	}
	u.Path = "/" + name
	return u.String()
}

func safeIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
