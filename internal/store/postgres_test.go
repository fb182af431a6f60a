package store

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The store's own tests cannot import storetest (it imports this package),
// so openTestStore repeats its choice: SQLite in t.TempDir(), or a scratch
// PostgreSQL database when AGENTMAIL_TEST_DATABASE=postgres.

func testOnPostgres() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv("AGENTMAIL_TEST_DATABASE")), "postgres")
}

// scratchURL answers the URL of a fresh PostgreSQL database dropped when t
// ends: empty, or already migrated (copied from a template).
func scratchURL(t testing.TB, migrated bool) string {
	t.Helper()
	server := os.Getenv("AGENTMAIL_TEST_POSTGRES_URL")
	if server == "" {
		t.Fatal("AGENTMAIL_TEST_DATABASE=postgres needs AGENTMAIL_TEST_POSTGRES_URL (scripts/pg.sh start prints one)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := CreateScratchDatabase(ctx, server, "agentmail_store", migrated)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Drop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return db.URL
}

// openTestStore answers a fresh store on the database the tests run on.
func openTestStore(t testing.TB) *Store {
	t.Helper()
	opt := Options{DataDir: t.TempDir()}
	if testOnPostgres() {
		opt.DatabaseURL = scratchURL(t, true)
	}
	st, err := Open(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func needPostgres(t *testing.T) {
	t.Helper()
	if !testOnPostgres() {
		t.Skip("PostgreSQL only: set AGENTMAIL_TEST_DATABASE=postgres and AGENTMAIL_TEST_POSTGRES_URL")
	}
}

func TestIsPostgresURLSelectsOnlyPostgresSchemes(t *testing.T) {
	for u, want := range map[string]bool{
		"postgres://u@h/db":             true,
		"postgresql://u@h:5432/db":      true,
		" postgres://u@h/db":            true,
		"":                              false,
		"sqlite:///var/lib/mail.db":     false,
		"file:mail.db":                  false,
		"mysql://u@h/db":                false,
		"postgres:/missing-slashes/db":  false,
		"POSTGRES_IS_NOT_A_SCHEME://db": false,
	} {
		if got := IsPostgresURL(u); got != want {
			t.Errorf("IsPostgresURL(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestParsePostgresURLTakesPoolSettingsOut(t *testing.T) {
	dsn, pool, err := ParsePostgresURL("postgres://am:secret@db:5432/agentmail?sslmode=require&pool_max_conns=40&pool_max_conn_idle_time=1m&pool_max_conn_lifetime=1h&pool_writers=6")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dsn, "pool_") || !strings.Contains(dsn, "sslmode=require") {
		t.Fatalf("dsn %q: pool parameters must go, pgx's must stay", dsn)
	}
	if pool.MaxConns != 40 || pool.MaxConnIdleTime != time.Minute || pool.MaxConnLifetime != time.Hour || pool.Writers != 6 {
		t.Fatalf("pool = %+v", pool)
	}
	_, pool, err = ParsePostgresURL("postgres://db/agentmail")
	if err != nil || pool.MaxConns != defaultPGMaxConns || pool.MaxConnLifetime != defaultPGMaxConnLifetime ||
		pool.Writers != defaultPGWriters {
		t.Fatalf("defaults: %+v %v", pool, err)
	}
	for _, bad := range []string{"postgres://db/x?pool_max_conns=1", "postgres://db/x?pool_max_conns=many",
		"postgres://db/x?pool_max_conn_idle_time=soon", "postgres://db/x?pool_writers=0"} {
		if _, _, err := ParsePostgresURL(bad); err == nil || !strings.Contains(err.Error(), "pool_") {
			t.Errorf("ParsePostgresURL(%q) = %v, want an error naming the parameter", bad, err)
		}
	}
}

func TestPostgresConnectErrorHidesPassword(t *testing.T) {
	// Port 1 on loopback refuses at once; no server is needed.
	_, err := Open(context.Background(), Options{DatabaseURL: "postgres://am:s3cret-pw@127.0.0.1:1/agentmail?connect_timeout=2"})
	if err == nil {
		t.Fatal("Open on a closed port succeeded")
	}
	if strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("error %q must hide the password and name DATABASE_URL", err)
	}
}

func TestPostgresReplicasStartingTogetherMigrateOnce(t *testing.T) {
	needPostgres(t)
	url := scratchURL(t, false)
	dir := t.TempDir() // one data directory for all: no SQLite lock on PostgreSQL
	var wg sync.WaitGroup
	stores := make([]*Store, 4)
	errs := make([]error, 4)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(context.Background(), Options{DatabaseURL: url, DataDir: dir})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	ms, _ := Migrations()
	var n int
	if err := stores[0].Read().QueryRow(context.Background(), `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("schema_migrations has %d rows (%v), want %d", n, err, len(ms))
	}
	if _, err := os.Stat(dir + "/agentmail.db.lock"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a PostgreSQL store made a SQLite lock file in the data directory: %v", err)
	}
}

// TestPostgresEventIDsBecomeVisibleInOrder: with writers racing on several
// connections, a reader that only ever asks for ids after the last one it
// saw must still see every event (the write lock orders the commits).
func TestPostgresEventIDsBecomeVisibleInOrder(t *testing.T) {
	needPostgres(t)
	st := openTestStore(t)
	ctx := context.Background()
	const writers, each = 8, 25
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := st.Write(ctx, func(q *Q) error {
					_, err := q.InsertEvent(ctx, "dsh", "new_mail", []byte(`{}`), time.Now())
					if err != nil {
						return err
					}
					// Work after the insert widens the window in which an
					// unordered commit would let a later id show first.
					_, err = q.Exec(ctx, `SELECT pg_sleep(0.001)`)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	var last int64
	seen := 0
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		evs, err := st.Read().EventsAfter(ctx, last, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			last = e.ID
			seen++
		}
	}
	evs, err := st.Read().EventsAfter(ctx, last, 1000)
	if err != nil {
		t.Fatal(err)
	}
	seen += len(evs)
	if seen != writers*each {
		t.Fatalf("a reader following the log saw %d of %d events: ids were skipped", seen, writers*each)
	}
}
