package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpapi"
)

// longCtx outlives streamEnds' deadline, so a stream that ends did not end
// because its context did.
func longCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// streamEnds waits until the stream's events channel closes (the server
// ended it) and fails if an event or nothing arrives first.
func streamEnds(t *testing.T, s *client.Stream, what string) {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		if ok {
			t.Fatalf("%s: got event %s %s, want the stream to end", what, ev.Type, ev.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the stream is still open after 10 s", what)
	}
}

// TestRevokingAKeyEndsItsStreams checks that revoking a key ends every
// event stream opened with it right away (the heartbeat is an hour, so
// nothing else could end them), while a stream of another key of the same
// agent stays open; agent keys revoked by an admin and user keys revoked
// by their person alike.
func TestRevokingAKeyEndsItsStreams(t *testing.T) {
	e := newEnvWith(t, httpapi.Options{SSEHeartbeat: time.Hour})
	e.agent("dsh")
	k2, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "dsh", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	var k1 string
	keys, err := e.admin.ListAgentKeys(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys.Keys {
		if k.Owner == "dsh" && k.KeyID != k2.KeyID {
			k1 = k.KeyID
		}
	}
	first := client.New(e.url, client.WithToken("test-key-dsh-0123456789abcdef"))
	other := client.New(e.url, client.WithToken(k2.KeyToken))
	s1, err := first.Stream(longCtx(t), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := first.Stream(longCtx(t), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	kept, err := other.Stream(longCtx(t), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()

	if err := e.admin.DeleteAgentKey(e.ctx(), k1); err != nil {
		t.Fatal(err)
	}
	streamEnds(t, s1, "first stream of the revoked key")
	streamEnds(t, s2, "second stream of the revoked key")
	if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: "still here", Body: "x"}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, kept); ev.Type != client.EventNewMail {
		t.Fatalf("the other key's stream got %s", ev.Type)
	}
	_, err = first.Stream(longCtx(t), client.StreamOptions{})
	wantStatus(t, err, 401, "key_revoked")

	// A person's user key, revoked by that person.
	alice := e.person("alice")
	uk, err := alice.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "phone", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	us, err := client.New(e.url, client.WithToken(uk.KeyToken)).Stream(longCtx(t), client.StreamOptions{People: true})
	if err != nil {
		t.Fatal(err)
	}
	defer us.Close()
	if err := alice.DeleteUserKey(e.ctx(), uk.KeyID); err != nil {
		t.Fatal(err)
	}
	streamEnds(t, us, "stream of the revoked user key")
}

// TestExpiredKeyStreamEndsAtHeartbeat checks that a stream opened with a
// timed key ends at the first heartbeat after the key's expires_at (on the
// gateway's clock), and reconnecting is a 401.
func TestExpiredKeyStreamEndsAtHeartbeat(t *testing.T) {
	e := newEnvWith(t, httpapi.Options{SSEHeartbeat: 50 * time.Millisecond})
	exp := e.clock.Now().Add(time.Hour)
	k, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "dsh", Lifecycle: client.LifecycleTimed, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(e.url, client.WithToken(k.KeyToken))
	if _, err := c.Register(e.ctx(), client.RegisterRequest{Name: "dsh", Platform: "test", Workspaces: []client.Workspace{}}); err != nil {
		t.Fatal(err)
	}
	s, err := c.Stream(longCtx(t), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Alive across heartbeats before the expiry: a mail still arrives.
	if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: "before", Body: "x"}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, s); ev.Type != client.EventNewMail {
		t.Fatalf("got %s", ev.Type)
	}
	e.clock.Advance(2 * time.Hour)
	streamEnds(t, s, "stream of the expired key")
	_, err = c.Stream(longCtx(t), client.StreamOptions{})
	wantStatus(t, err, 401, "key_expired")
}
