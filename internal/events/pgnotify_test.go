package events_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/events"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// replica is one store and hub on the shared test database. The safety
// poll is an hour, so only a notification can wake the hub in time.
type replica struct {
	st  *store.Store
	hub *events.Hub
}

func startReplica(t *testing.T, ctx context.Context, url string) *replica {
	t.Helper()
	st, err := store.Open(ctx, store.Options{DatabaseURL: url, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hub := events.NewHub(st, events.Options{PollInterval: time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return &replica{st: st, hub: hub}
}

func appendEvent(t *testing.T, st *store.Store, recipient, body string) int64 {
	t.Helper()
	var id int64
	err := st.Write(context.Background(), func(q *store.Q) error {
		var err error
		id, err = q.InsertEvent(context.Background(), recipient, "new_mail", []byte(body), time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func receive(t *testing.T, sub *events.Sub, want int64) {
	t.Helper()
	select {
	case e, ok := <-sub.C:
		if !ok {
			t.Fatal("the subscription closed")
		}
		if e.ID != want {
			t.Fatalf("got event %d, want %d", e.ID, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("event %d written through the other replica never arrived", want)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPostgresNotifyWakesTheOtherReplicasHub(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only (AGENTMAIL_TEST_DATABASE=postgres)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := storetest.DatabaseURL(t)
	a := startReplica(t, ctx, url)
	b := startReplica(t, ctx, url)
	waitFor(t, "replica B to listen", b.hub.Listening)

	sub := b.hub.Subscribe("dsh")
	defer sub.Close()
	id := appendEvent(t, a.st, "dsh", `{"n":1}`)
	receive(t, sub, id)

	// A transaction that rolls back notifies nobody and leaves no event.
	_ = a.st.Write(ctx, func(q *store.Q) error {
		if _, err := q.InsertEvent(ctx, "dsh", "new_mail", []byte(`{}`), time.Now()); err != nil {
			return err
		}
		return fmt.Errorf("rolled back")
	})
	id2 := appendEvent(t, a.st, "dsh", `{"n":2}`)
	receive(t, sub, id2)
}

func TestPostgresListenerReconnectsAndCatchesUp(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only (AGENTMAIL_TEST_DATABASE=postgres)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := storetest.DatabaseURL(t)
	a := startReplica(t, ctx, url)
	b := startReplica(t, ctx, url)
	waitFor(t, "replica B to listen", b.hub.Listening)
	sub := b.hub.Subscribe("dsh")
	defer sub.Close()

	// Cut every LISTEN connection (what a database restart or a network
	// blip does), then write while B may not be listening.
	if _, err := a.st.Read().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%'`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replica B to notice the cut", func() bool { return !b.hub.Listening() })
	id := appendEvent(t, a.st, "dsh", `{"during":"outage"}`)
	waitFor(t, "replica B to listen again", b.hub.Listening)
	receive(t, sub, id)
	id2 := appendEvent(t, a.st, "dsh", `{"after":"outage"}`)
	receive(t, sub, id2)
}

func TestSQLiteHubDoesNotListen(t *testing.T) {
	if storetest.Postgres() {
		t.Skip("SQLite only")
	}
	st := storetest.Open(t)
	hub := events.NewHub(st, events.Options{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if hub.Listening() {
		t.Fatal("a SQLite hub claims a PostgreSQL LISTEN connection")
	}
}
