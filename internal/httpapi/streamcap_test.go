package httpapi_test

import (
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
