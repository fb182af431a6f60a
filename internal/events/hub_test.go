package events

import (
	"context"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	return storetest.Open(t) // SQLite, or PostgreSQL with AGENTMAIL_TEST_DATABASE=postgres
}

func appendEvent(t *testing.T, st *store.Store, recipient string) int64 {
	t.Helper()
	var id int64
	err := st.Write(context.Background(), func(q *store.Q) error {
		var err error
		id, err = q.InsertEvent(context.Background(), recipient, "new_mail", []byte(`{}`), time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func recv(t *testing.T, s *Sub) Event {
	t.Helper()
	select {
	case e, ok := <-s.C:
		if !ok {
			t.Fatal("subscription closed")
		}
		return *e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return Event{}
}

func TestHubDeliversOnlyNewEventsToEverySubscriberOfTheRecipient(t *testing.T) {
	st := openStore(t)
	old := appendEvent(t, st, "dsh")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := NewHub(st, Options{PollInterval: time.Hour}, nil)
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	a, b, other := h.Subscribe("dsh"), h.Subscribe("dsh"), h.Subscribe("pi")
	if a.From != old {
		t.Fatalf("From = %d, want the log's end %d (a first connection gets nothing old)", a.From, old)
	}
	id := appendEvent(t, st, "dsh")
	h.Notify()
	if e := recv(t, a); e.ID != id {
		t.Fatalf("a got %d, want %d", e.ID, id)
	}
	if e := recv(t, b); e.ID != id {
		t.Fatalf("b got %d, want %d", e.ID, id)
	}
	select {
	case e := <-other.C:
		t.Fatalf("pi got dsh's event %d", e.ID)
	default:
	}
	// Replay covers (after, From].
	var got []int64
	if err := h.Replay(ctx, "dsh", 0, id, func(e Event) error { got = append(got, e.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != old || got[1] != id {
		t.Fatalf("replay = %v, want [%d %d]", got, old, id)
	}
}

func TestHubPollsWithoutNotify(t *testing.T) {
	st := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := NewHub(st, Options{PollInterval: 20 * time.Millisecond}, nil)
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s := h.Subscribe("dsh")
	id := appendEvent(t, st, "dsh") // written "by another process": no Notify
	if e := recv(t, s); e.ID != id {
		t.Fatalf("got %d, want %d", e.ID, id)
	}
}

func TestHubDropsASlowSubscriberAndClosesOnShutdown(t *testing.T) {
	st := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	h := NewHub(st, Options{PollInterval: time.Hour, Buffer: 2}, nil)
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	slow := h.Subscribe("dsh")
	var last int64
	for i := 0; i < 3; i++ {
		last = appendEvent(t, st, "dsh")
	}
	h.Notify()
	// Wait until the hub has dispatched all three, without reading.
	for deadline := time.Now().Add(10 * time.Second); h.Last() < last; {
		if time.Now().After(deadline) {
			t.Fatal("hub did not read the log")
		}
		time.Sleep(5 * time.Millisecond)
	}
	n := 0
	for range slow.C {
		n++
	}
	if n != 2 {
		t.Fatalf("got %d events before the close, want 2 (the buffer)", n)
	}
	if h.Subscribers() != 0 {
		t.Fatalf("Subscribers = %d after the drop", h.Subscribers())
	}
	live := h.Subscribe("pi")
	cancel()
	select {
	case _, ok := <-live.C:
		if ok {
			t.Fatal("event after shutdown")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("subscription not closed at shutdown")
	}
	live.Close() // closing twice is safe
}
