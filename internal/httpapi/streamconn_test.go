package httpapi_test

import (
	"bufio"
	"net/http"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpapi"
)

// An HTTP/1.1 event stream runs on the connection taken over from net/http
// (chunked, Connection: close so no client pools the connection); one kept
// on the response writer behaves the same. Either way a client that
// leaves frees its stream and its slot of the per-key cap at once, not at
// the next heartbeat, and the other streams keep getting every event.
func TestStreamConnectionEndsWithItsClient(t *testing.T) {
	for _, onWriter := range []bool{false, true} {
		name := "taken over"
		if onWriter {
			name = "on the response writer"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnvWith(t, httpapi.Options{SSEHeartbeat: time.Hour, StreamsOnResponseWriter: onWriter})
			e.agent("dsh")
			const token = "test-key-dsh-0123456789abcdef"

			req, _ := http.NewRequestWithContext(longCtx(t), "GET", e.url+"/api/v1/events/stream", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			first, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil || first != "retry: 2000\n" || resp.StatusCode != 200 ||
				len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || resp.Close == onWriter {
				t.Fatalf("status %d, first line %q (%v), transfer %v, close %v, headers %v",
					resp.StatusCode, first, err, resp.TransferEncoding, resp.Close, resp.Header)
			}
			resp.Body.Close()
			waitSubscribers(t, e, 0)

			c := client.New(e.url, client.WithToken(token))
			var streams []*client.Stream
			for i := 0; i < httpapi.DefaultMaxStreamsPerKey; i++ {
				s, err := c.Stream(longCtx(t), client.StreamOptions{})
				if err != nil {
					t.Fatalf("stream %d: %v", i+1, err)
				}
				t.Cleanup(s.Close)
				streams = append(streams, s)
			}
			streams[0].Close()
			waitSubscribers(t, e, httpapi.DefaultMaxStreamsPerKey-1)
			again, err := c.Stream(longCtx(t), client.StreamOptions{})
			if err != nil {
				t.Fatalf("the freed slot: %v", err)
			}
			t.Cleanup(again.Close)
			if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: "to every stream", Body: "x"}); err != nil {
				t.Fatal(err)
			}
			for _, s := range append(streams[1:], again) {
				if ev := nextEvent(t, s); ev.Type != client.EventNewMail {
					t.Fatalf("got %s", ev.Type)
				}
			}
		})
	}
}

// waitSubscribers polls until the hub holds n streams.
func waitSubscribers(t *testing.T, e *env, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.hub.Subscribers() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d open streams, want %d", e.hub.Subscribers(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
