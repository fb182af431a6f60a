package client

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseConn is the script of one connection of the fake event stream.
type sseConn struct {
	status int    // 0 = 200 with text/event-stream
	body   string // written and flushed at once
	hold   bool   // keep the connection open until the client leaves
}

// sseServer serves its scripts in order, one per connection, recording the
// Last-Event-ID and path of each.
type sseServer struct {
	srv *httptest.Server

	mu      sync.Mutex
	scripts []sseConn
	lastIDs []string
	hasID   []bool
	paths   []string
	auth    []string
}

func newSSEServer(t *testing.T, scripts ...sseConn) *sseServer {
	t.Helper()
	s := &sseServer{scripts: scripts}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := len(s.paths)
		_, has := r.Header["Last-Event-Id"]
		s.lastIDs = append(s.lastIDs, r.Header.Get("Last-Event-ID"))
		s.hasID = append(s.hasID, has)
		s.paths = append(s.paths, r.URL.Path)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		var sc sseConn
		if n < len(s.scripts) {
			sc = s.scripts[n]
		} else {
			sc = sseConn{hold: true}
		}
		s.mu.Unlock()
		if r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		if sc.status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(sc.status)
			_, _ = io.WriteString(w, sc.body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, sc.body)
		w.(http.Flusher).Flush()
		if sc.hold {
			<-r.Context().Done()
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sseServer) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.paths)
}

// next waits (generously) for the next event.
func next(t *testing.T, st *Stream) Event {
	t.Helper()
	select {
	case ev, ok := <-st.Events():
		if !ok {
			t.Fatalf("stream ended early: %v", st.Err())
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20 s")
	}
	return Event{}
}

// waitEnd waits (generously) for the stream to end.
func waitEnd(t *testing.T, st *Stream) {
	t.Helper()
	select {
	case <-st.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("stream did not end within 20 s")
	}
}

// TestStreamParsesEventsAndFirstConnectionHasNoLastEventID covers the SSE
// format (event, id, multi-line data, comments, CRLF and CR line ends, an
// event without a name, an id-only block) and N-11: no Last-Event-ID on a
// first connection.
func TestStreamParsesEventsAndFirstConnectionHasNoLastEventID(t *testing.T) {
	body := ": hello\n\n" +
		"event: new_mail\nid: 7\ndata: {\"mail_id\":\"m1\",\n" + "data: \"subject\":\"hi\"}\n\n" +
		": heartbeat\r\n\r\n" +
		"event: permission_decision\r\nid: 8\r\ndata:{\"mail_id\":\"p1\",\"approved\":true}\r\n\r\n" +
		"id: 9\n\n" + // no data: no event, but the id counts
		"data: plain\rid: 10\r\r" +
		"event: ignored\ndata: never completed"
	s := newSSEServer(t, sseConn{body: body, hold: true})
	st, err := New(s.srv.URL, WithToken("ak")).Stream(context.Background(), StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	ev := next(t, st)
	if ev.ID != 7 || ev.Type != EventNewMail || string(ev.Data) != "{\"mail_id\":\"m1\",\n\"subject\":\"hi\"}" {
		t.Errorf("first event %+v (data %q)", ev, ev.Data)
	}
	var nm NewMailEvent
	if err := ev.Decode(&nm); err != nil || nm.MailID != "m1" || nm.Subject != "hi" {
		t.Errorf("decoded %+v, %v", nm, err)
	}
	ev = next(t, st)
	var pd PermissionDecisionEvent
	if ev.ID != 8 || ev.Type != EventPermissionDecision || ev.Decode(&pd) != nil || !pd.Approved || pd.MailID != "p1" {
		t.Errorf("second event %+v", ev)
	}
	ev = next(t, st)
	if ev.ID != 10 || ev.Type != "message" || string(ev.Data) != "plain" {
		t.Errorf("third event %+v (data %q)", ev, ev.Data)
	}
	if st.LastEventID() != 10 {
		t.Errorf("LastEventID %d, want 10", st.LastEventID())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hasID[0] {
		t.Errorf("first connection sent Last-Event-ID %q (N-11)", s.lastIDs[0])
	}
	if s.paths[0] != "/api/v1/events/stream" || s.auth[0] != "Bearer ak" {
		t.Errorf("path %q auth %q", s.paths[0], s.auth[0])
	}
}

// TestStreamReconnectsWithLastEventID shows D-7.2: after a drop the stream
// reconnects and sends the last id it saw; events continue.
func TestStreamReconnectsWithLastEventID(t *testing.T) {
	s := newSSEServer(t,
		sseConn{body: "event: new_mail\nid: 3\ndata: {}\n\nevent: new_mail\nid: 4\ndata: {}\n\n"}, // then drops
		sseConn{status: 502, body: "bad gateway"},                                                 // a failed attempt is retried
		sseConn{body: "event: new_mail\nid: 5\ndata: {}\n\n", hold: true},
	)
	var mu sync.Mutex
	var connects []int64
	var drops int
	st, err := New(s.srv.URL).Stream(context.Background(), StreamOptions{
		People: true, Reconnect: true, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		OnConnect:    func(id int64) { mu.Lock(); connects = append(connects, id); mu.Unlock() },
		OnDisconnect: func(error) { mu.Lock(); drops++; mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, want := range []int64{3, 4, 5} {
		if ev := next(t, st); ev.ID != want {
			t.Fatalf("event id %d, want %d", ev.ID, want)
		}
	}
	s.mu.Lock()
	if len(s.paths) != 3 || s.paths[2] != "/api/v1/me/events/stream" {
		t.Errorf("connections %v", s.paths)
	}
	if s.hasID[0] || s.lastIDs[1] != "4" || s.lastIDs[2] != "4" {
		t.Errorf("Last-Event-ID per connection %q (present %v), want none, 4, 4", s.lastIDs, s.hasID)
	}
	s.mu.Unlock()
	mu.Lock()
	if len(connects) != 2 || connects[0] != 0 || connects[1] != 4 || drops != 2 {
		t.Errorf("OnConnect ids %v, drops %d", connects, drops)
	}
	mu.Unlock()
	st.Close()
	if st.Err() != nil {
		t.Errorf("Err after Close: %v", st.Err())
	}
	if _, ok := <-st.Events(); ok {
		t.Error("Events still open after Close")
	}
}

// TestStreamResumesFromGivenLastEventID sends the id of StreamOptions on
// the first connection.
func TestStreamResumesFromGivenLastEventID(t *testing.T) {
	s := newSSEServer(t, sseConn{body: "id: 42\nevent: new_mail\ndata: {}\n\n", hold: true})
	st, err := New(s.srv.URL).Stream(context.Background(), StreamOptions{LastEventID: 41})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	next(t, st)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastIDs[0] != "41" {
		t.Errorf("Last-Event-ID %q, want 41", s.lastIDs[0])
	}
}

// TestStreamWithoutReconnectEndsAtDrop ends with io.ErrUnexpectedEOF.
func TestStreamWithoutReconnectEndsAtDrop(t *testing.T) {
	s := newSSEServer(t, sseConn{body: "id: 1\nevent: new_mail\ndata: {}\n\n"})
	st, err := New(s.srv.URL).Stream(context.Background(), StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next(t, st)
	waitEnd(t, st)
	if !errors.Is(st.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("Err %v, want io.ErrUnexpectedEOF", st.Err())
	}
	if s.connections() != 1 {
		t.Errorf("%d connections, want 1", s.connections())
	}
}

// TestStreamFirstConnectionErrorIsReturned returns a 401 at once.
func TestStreamFirstConnectionErrorIsReturned(t *testing.T) {
	s := newSSEServer(t, sseConn{status: 401, body: `{"error":"unknown key","code":"unauthorized"}`})
	_, err := New(s.srv.URL, WithToken("bad")).Stream(context.Background(), StreamOptions{Reconnect: true})
	if !IsUnauthorized(err) {
		t.Fatalf("got %v, want a 401 APIError", err)
	}
}

// TestStreamStopsWhenReconnectionIsRefused ends with the 401 that refused a
// reconnection (a revoked key is not retried forever).
func TestStreamStopsWhenReconnectionIsRefused(t *testing.T) {
	s := newSSEServer(t,
		sseConn{body: "id: 1\nevent: new_mail\ndata: {}\n\n"},
		sseConn{status: 401, body: `{"error":"key revoked","code":"unauthorized"}`},
	)
	st, err := New(s.srv.URL).Stream(context.Background(), StreamOptions{Reconnect: true, MinBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	next(t, st)
	waitEnd(t, st)
	if !IsUnauthorized(st.Err()) {
		t.Errorf("Err %v, want the 401", st.Err())
	}
}

// TestStreamEndsWithContext ends with the context's error when cancelled.
func TestStreamEndsWithContext(t *testing.T) {
	s := newSSEServer(t, sseConn{hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := New(s.srv.URL).Stream(ctx, StreamOptions{Reconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	waitEnd(t, st)
	if !errors.Is(st.Err(), context.Canceled) {
		t.Errorf("Err %v, want context.Canceled", st.Err())
	}
}

// TestStreamRefusesNonEventStream refuses a 200 that is not text/event-stream.
func TestStreamRefusesNonEventStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>")
	}))
	defer srv.Close()
	_, err := New(srv.URL).Stream(context.Background(), StreamOptions{})
	if err == nil || !strings.Contains(err.Error(), "not an event stream") {
		t.Fatalf("got %v", err)
	}
}

// TestScanSSELines splits on LF, CRLF and CR, also across reads.
func TestScanSSELines(t *testing.T) {
	in := "a\nb\r\nc\rd\r"
	r := bufio.NewScanner(&oneByteReader{s: in})
	r.Split(scanSSELines)
	var got []string
	for r.Scan() {
		got = append(got, r.Text())
	}
	if strings.Join(got, "|") != "a|b|c|d" {
		t.Errorf("lines %q", got)
	}
}

// oneByteReader returns one byte per Read, to split a CRLF across reads.
type oneByteReader struct{ s string }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if o.s == "" {
		return 0, io.EOF
	}
	p[0] = o.s[0]
	o.s = o.s[1:]
	return 1, nil
}
