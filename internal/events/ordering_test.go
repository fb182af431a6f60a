package events_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/events"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// TestReplicaStreamsNeverSkipAnEvent is the ordering guarantee of the event
// log across replicas: two replicas (on PostgreSQL two stores on one
// database, each with its hub; on SQLite two hubs over one store) take
// concurrent writes on both, some of which roll back after appending an
// event (a hole in the ids), while every recipient holds a subscription on
// each replica. Afterwards every subscription has received, in increasing
// id order, exactly the committed events of its recipient between its
// start and its hub's last id: no stream ever skipped an event.
func TestReplicaStreamsNeverSkipAnEvent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var stores []*store.Store
	if storetest.Postgres() {
		url := storetest.DatabaseURL(t)
		for i := 0; i < 2; i++ {
			st, err := store.Open(ctx, store.Options{DatabaseURL: url, DataDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			stores = append(stores, st)
		}
	} else {
		st := storetest.Open(t)
		stores = []*store.Store{st, st}
	}
	const recipients, writersPerReplica, writesPerWriter = 6, 8, 60
	var hubs []*events.Hub
	type stream struct {
		name string
		sub  *events.Sub
		got  []int64
	}
	var streams []*stream
	for _, st := range stores {
		// The safety poll is short: a rolled-back hole wakes no one.
		hub := events.NewHub(st, events.Options{PollInterval: 20 * time.Millisecond, Buffer: 1 << 16}, quiet)
		if err := hub.Start(ctx); err != nil {
			t.Fatal(err)
		}
		hubs = append(hubs, hub)
		for r := 0; r < recipients; r++ {
			name := fmt.Sprintf("r%d", r)
			streams = append(streams, &stream{name: name, sub: hub.Subscribe(name)})
		}
	}
	var collect sync.WaitGroup
	for _, s := range streams {
		collect.Add(1)
		go func(s *stream) {
			defer collect.Done()
			for e := range s.sub.C {
				s.got = append(s.got, e.ID)
			}
		}(s)
	}

	errRollback := errors.New("rolled back on purpose")
	var wg sync.WaitGroup
	for ri, st := range stores {
		for w := 0; w < writersPerReplica; w++ {
			wg.Add(1)
			go func(ri, w int, st *store.Store) {
				defer wg.Done()
				for n := 0; n < writesPerWriter; n++ {
					err := st.Write(ctx, func(q *store.Q) error {
						for k := 0; k < 1+n%3; k++ {
							rcpt := fmt.Sprintf("r%d", (w+n+k)%recipients)
							if _, err := q.InsertEvent(ctx, rcpt, "new_mail", []byte(fmt.Sprintf(`{"replica":%d}`, ri)), time.Now()); err != nil {
								return err
							}
						}
						if n%7 == 3 {
							return errRollback
						}
						return nil
					})
					if err != nil && !errors.Is(err, errRollback) {
						t.Errorf("write: %v", err)
						return
					}
				}
			}(ri, w, st)
		}
	}
	wg.Wait()
	maxID, err := stores[0].Read().MaxEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, hub := range hubs {
		hub.Notify()
		waitFor(t, fmt.Sprintf("hub %d to reach event %d", i, maxID), func() bool { return hub.Last() >= maxID })
	}
	for _, s := range streams {
		s.sub.Close()
	}
	collect.Wait()

	for i, s := range streams {
		hub := hubs[i/recipients]
		var want []int64
		if err := hub.Replay(ctx, s.name, s.sub.From, hub.Last(), func(e events.Event) error {
			want = append(want, e.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("stream %d (%s): no committed events to compare", i, s.name)
		}
		for k := 1; k < len(s.got); k++ {
			if s.got[k] <= s.got[k-1] {
				t.Fatalf("stream %d (%s): event %d after %d: not in id order", i, s.name, s.got[k], s.got[k-1])
			}
		}
		if fmt.Sprint(s.got) != fmt.Sprint(want) {
			gotSet := map[int64]bool{}
			for _, id := range s.got {
				gotSet[id] = true
			}
			for _, id := range want {
				if !gotSet[id] {
					t.Fatalf("stream %d (%s) skipped committed event %d (received %d events, the log holds %d)", i, s.name, id, len(s.got), len(want))
				}
			}
			t.Fatalf("stream %d (%s) received events the log does not hold: got %v, want %v", i, s.name, s.got, want)
		}
	}
}
