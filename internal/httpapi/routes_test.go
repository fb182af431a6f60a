package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRouteTableEntriesAreComplete fails for a route that has no handler or
// two, no success status, or a method and path another route already has.
func TestRouteTableEntriesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, rt := range RouteTable() {
		name := rt.Method + " " + rt.Path
		if (rt.Answer == nil) == (rt.Handler == nil) {
			t.Errorf("%s: set exactly one of Answer and Handler", name)
		}
		if rt.Status == 0 {
			t.Errorf("%s: no success Status", name)
		}
		if seen[name] {
			t.Errorf("%s is listed twice", name)
		}
		seen[name] = true
	}
	if len(seen) == 0 {
		t.Fatal("the route table is empty")
	}
}

// TestServeWritesTheAnswerWithTheRouteStatus checks the one place an
// Answer's success is written: the value as JSON with the route's Status,
// only the Status for a nil value, and nothing but the error for an error.
func TestServeWritesTheAnswerWithTheRouteStatus(t *testing.T) {
	s := New(nil, nil, nil, Options{})
	type body struct {
		N int `json:"n"`
	}
	cases := []struct {
		name   string
		rt     Route
		status int
		ctype  string
		body   string
	}{
		{"value", Route{Status: http.StatusCreated, Answer: answer(func(*Server, http.ResponseWriter, *http.Request) (*body, error) {
			return &body{N: 7}, nil
		})}, http.StatusCreated, "application/json; charset=utf-8", "{\"n\":7}\n"},
		{"no body", Route{Status: http.StatusNoContent, Answer: noBody(func(*Server, http.ResponseWriter, *http.Request) error {
			return nil
		})}, http.StatusNoContent, "", ""},
		{"error", Route{Status: http.StatusCreated, Answer: answer(func(*Server, http.ResponseWriter, *http.Request) (*body, error) {
			return &body{N: 7}, errBoom
		})}, 0, "", ""},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		err := s.serve(c.rt, rec, httptest.NewRequest("GET", "/x", nil))
		if c.status == 0 {
			if err != errBoom || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
				t.Errorf("%s: err %v, body %q; want the error and nothing written", c.name, err, rec.Body.String())
			}
			continue
		}
		if err != nil || rec.Code != c.status || rec.Header().Get("Content-Type") != c.ctype || rec.Body.String() != c.body {
			t.Errorf("%s: err %v, %d %q %q; want %d %q %q", c.name, err, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(),
				c.status, c.ctype, c.body)
		}
	}
}

var errBoom = errors.New("boom")
