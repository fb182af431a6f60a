package client

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// recorded is one request as the fake gateway received it.
type recorded struct {
	Method   string
	Path     string // escaped path, as sent on the wire
	RawQuery string
	Header   http.Header
	Body     []byte
	Cookies  []*http.Cookie
}

// fakeGateway is an httptest server answering every request with the
// configured status, headers and body, and recording what it received.
type fakeGateway struct {
	srv *httptest.Server

	mu     sync.Mutex
	reqs   []recorded
	status int
	body   []byte
	header http.Header
}

func newFakeGateway(t *testing.T) *fakeGateway {
	t.Helper()
	f := &fakeGateway{status: http.StatusOK}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{
			Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
			Header: r.Header.Clone(), Body: body, Cookies: r.Cookies(),
		})
		status, answer, header := f.status, f.body, f.header
		f.mu.Unlock()
		for k, vs := range header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if answer != nil && w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// answer sets the next answers: status, a value encoded as JSON (nil for
// no body) and extra headers.
func (f *fakeGateway) answer(t *testing.T, status int, v any, header http.Header) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.header, f.body = status, header, nil
	if v != nil {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("encode fake answer: %v", err)
		}
		f.body = raw
	}
}

// answerRaw sets the next answer to raw bytes.
func (f *fakeGateway) answerRaw(status int, raw string, header http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.header, f.body = status, header, []byte(raw)
}

// last returns the last recorded request and fails when there is none.
func (f *fakeGateway) last(t *testing.T) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("the fake gateway received no request")
	}
	return f.reqs[len(f.reqs)-1]
}

// count returns how many requests were received.
func (f *fakeGateway) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// jsonEqual tells whether two JSON texts encode the same value.
func jsonEqual(t *testing.T, got []byte, want any) bool {
	t.Helper()
	wantRaw, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("encode expected body: %v", err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("request body %q is not JSON: %v", got, err)
		return false
	}
	_ = json.Unmarshal(wantRaw, &w)
	gs, _ := json.Marshal(g)
	ws, _ := json.Marshal(w)
	return string(gs) == string(ws)
}
