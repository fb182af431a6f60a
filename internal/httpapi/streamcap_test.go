package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpapi"
)

// TestStreamsPerKeyAreCapped checks the default cap of event streams per
// key: 16 streams of one agent key open, the 17th is a 429
// too_many_streams with Retry-After naming the setting, while another key
// of the same agent still opens its own.
func TestStreamsPerKeyAreCapped(t *testing.T) {
	e := newEnvWith(t, httpapi.Options{SSEHeartbeat: time.Hour})
	e.agent("dsh")
	first := client.New(e.url, client.WithToken("test-key-dsh-0123456789abcdef"))
	for i := 0; i < httpapi.DefaultMaxStreamsPerKey; i++ {
		s, err := first.Stream(longCtx(t), client.StreamOptions{})
		if err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
		t.Cleanup(s.Close)
	}
	_, err := first.Stream(longCtx(t), client.StreamOptions{})
	ae := wantStatus(t, err, http.StatusTooManyRequests, "too_many_streams")
	if !strings.Contains(ae.Body.Error, "16") || !strings.Contains(ae.Body.Suggestion, httpapi.EnvMaxStreamsPerKey) || ae.Body.RetryAfterSeconds <= 0 {
		t.Fatalf("the 429 should name the limit, the setting and when to retry: %+v", ae.Body)
	}
	k2, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "dsh", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	s, err := client.New(e.url, client.WithToken(k2.KeyToken)).Stream(longCtx(t), client.StreamOptions{})
	if err != nil {
		t.Fatalf("another key's stream: %v", err)
	}
	s.Close()
}

// TestStreamsPerPrincipalAreCapped: the cap per key cannot be passed by
// minting more keys (any person may, without limit) or signing in again:
// one person or agent holds at most httpapi.StreamsPerPrincipalFactor
// times the per-key cap, over all its keys and sign-ins, and the next
// stream is a 429 too_many_streams whichever credential opens it. Another
// person's streams are not counted, and a closed stream frees its place.
func TestStreamsPerPrincipalAreCapped(t *testing.T) {
	const perKey = 2
	e := newEnvWith(t, httpapi.Options{SSEHeartbeat: time.Hour, MaxStreamsPerKey: perKey})
	alice := e.person("alice")
	bob := e.person("bob")
	total := perKey * httpapi.StreamsPerPrincipalFactor
	var last *client.Stream
	for k := 0; k < httpapi.StreamsPerPrincipalFactor; k++ {
		key, err := alice.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "many"})
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(e.url, client.WithToken(key.KeyToken))
		for i := 0; i < perKey; i++ {
			s, err := c.Stream(longCtx(t), client.StreamOptions{People: true})
			if err != nil {
				t.Fatalf("stream %d of key %d: %v", i+1, k+1, err)
			}
			t.Cleanup(s.Close)
			last = s
		}
	}
	key, err := alice.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "one more"})
	if err != nil {
		t.Fatal(err)
	}
	fresh := client.New(e.url, client.WithToken(key.KeyToken))
	_, err = fresh.Stream(longCtx(t), client.StreamOptions{People: true})
	ae := wantStatus(t, err, http.StatusTooManyRequests, "too_many_streams")
	if !strings.Contains(ae.Body.Error, fmt.Sprint(total)) || ae.Body.RetryAfterSeconds <= 0 {
		t.Fatalf("the 429 should name the person's limit %d and when to retry: %+v", total, ae.Body)
	}
	_, err = e.login("alice", "alice-password").Stream(longCtx(t), client.StreamOptions{People: true})
	wantStatus(t, err, http.StatusTooManyRequests, "too_many_streams")

	s, err := bob.Stream(longCtx(t), client.StreamOptions{People: true})
	if err != nil {
		t.Fatalf("another person's stream: %v", err)
	}
	s.Close()

	last.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := fresh.Stream(longCtx(t), client.StreamOptions{People: true})
		if err == nil {
			s.Close()
			break
		}
		wantStatus(t, err, http.StatusTooManyRequests, "too_many_streams")
		if time.Now().After(deadline) {
			t.Fatal("a closed stream did not free its place within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
