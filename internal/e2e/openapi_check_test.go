package e2e

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agentmail/agentmail/internal/httpapi"
	"github.com/agentmail/agentmail/internal/testkit/openapicheck"
)

// The OpenAPI check of recorded answers (issue 8 item 2): a test that wants
// every answer it receives validated against the document builds its
// clients with CheckedHTTPClient (or wraps a transport with
// SchemaCheckingTransport); a single recorded answer is checked with
// CheckResponse.

var (
	oaValidatorOnce sync.Once
	oaValidator     *openapicheck.Validator
	oaValidatorErr  error
)

// openAPIValidator returns the validator of the document the route table
// generates (the same one the gateway binary serves).
func openAPIValidator(t testing.TB) *openapicheck.Validator {
	t.Helper()
	oaValidatorOnce.Do(func() {
		doc, err := httpapi.OpenAPIDocument()
		if err != nil {
			oaValidatorErr = err
			return
		}
		oaValidator, oaValidatorErr = openapicheck.New(doc)
	})
	if oaValidatorErr != nil {
		t.Fatalf("OpenAPI validator: %v", oaValidatorErr)
	}
	return oaValidator
}

// CheckResponse fails t when body is not what the OpenAPI document
// describes for method, pattern (the chi route pattern, e.g.
// "/api/v1/mail/{id}") and status. The body is taken as JSON; an empty body
// must match a response without content.
func CheckResponse(t testing.TB, method, pattern string, status int, body []byte) {
	t.Helper()
	openAPIValidator(t).CheckResponse(t, method, pattern, status, body)
}

// SchemaCheckingTransport wraps base (nil: http.DefaultTransport) so that
// every answer of a documented route is validated against the OpenAPI
// document; a mismatch, or a non-404 answer on an /api/ path the document
// does not describe, fails t. JSON bodies are read whole and handed on
// unchanged; event streams and downloads are checked by status and media
// type only and stay streamed. At the end of the test it logs how many
// answers of how many operations were checked.
func SchemaCheckingTransport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	t.Helper()
	if base == nil {
		base = http.DefaultTransport
	}
	st := &schemaCheckingTransport{t: t, base: base, v: openAPIValidator(t), seen: map[string]int{}}
	t.Cleanup(func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.seen) == 0 {
			return
		}
		ops := make([]string, 0, len(st.seen))
		total := 0
		for op, n := range st.seen {
			ops = append(ops, op)
			total += n
		}
		sort.Strings(ops)
		t.Logf("OpenAPI: checked %d answers of %d operation/status pairs: %s", total, len(ops), strings.Join(ops, ", "))
	})
	return st
}

// CheckedHTTPClient is an *http.Client whose answers are validated as
// SchemaCheckingTransport does; give it to client.WithHTTPClient.
func CheckedHTTPClient(t testing.TB) *http.Client {
	t.Helper()
	return &http.Client{Transport: SchemaCheckingTransport(t, nil)}
}

type schemaCheckingTransport struct {
	t    testing.TB
	base http.RoundTripper
	v    *openapicheck.Validator

	mu   sync.Mutex
	seen map[string]int // "METHOD pattern status" -> answers checked
}

// maxCheckedBody bounds the JSON answers read for validation (64 MiB).
const maxCheckedBody = 64 << 20

func (s *schemaCheckingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	pattern, ok := s.v.Pattern(req.Method, req.URL.Path)
	if !ok {
		if strings.HasPrefix(req.URL.Path, "/api/") && resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			s.t.Errorf("OpenAPI: %s %s answered %d but the document describes no such route", req.Method, req.URL.Path, resp.StatusCode)
		}
		return resp, nil
	}
	s.mu.Lock()
	s.seen[fmt.Sprintf("%s %s %d", req.Method, pattern, resp.StatusCode)]++
	s.mu.Unlock()

	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt != "" && mt != "application/json" {
		// A stream or a download: check the status and media type without
		// consuming the body.
		if err := s.v.Validate(req.Method, pattern, resp.StatusCode, ct, nil); err != nil {
			s.t.Errorf("OpenAPI: %v", err)
		}
		return resp, nil
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxCheckedBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil {
		return resp, nil // the caller sees the short body; nothing to judge
	}
	if req.Method == http.MethodHead {
		return resp, nil
	}
	if err := s.v.Validate(req.Method, pattern, resp.StatusCode, ct, body); err != nil {
		s.t.Errorf("OpenAPI: %v", err)
	}
	return resp, nil
}

// oaFakeTB records what SchemaCheckingTransport reports, to test the check
// itself.
type oaFakeTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *oaFakeTB) Helper() {}
func (f *oaFakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *oaFakeTB) Logf(string, ...any) {}

// TestSchemaCheckingTransportReportsDrift answers the document correctly,
// a person with a wrong shape, and an undocumented API route, and expects
// exactly the last two reported.
func TestSchemaCheckingTransportReportsDrift(t *testing.T) {
	served := httpapi.New(nil, nil, nil, httpapi.Options{}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/me":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"username":5}`)
		case "/api/v1/not-a-route":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{}`)
		default:
			served.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	fake := &oaFakeTB{TB: t}
	hc := &http.Client{Transport: SchemaCheckingTransport(fake, nil)}
	for _, p := range []string{"/api/v1/openapi.json", "/api/v1/me", "/api/v1/not-a-route"} {
		resp, err := hc.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(body) == 0 {
			t.Errorf("%s: the checked body was not handed on", p)
		}
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.errs) != 2 || !strings.Contains(fake.errs[0], "GET /api/v1/me -> 200") || !strings.Contains(fake.errs[1], "/api/v1/not-a-route") {
		t.Errorf("reports %q, want the /me shape and the undocumented route", fake.errs)
	}
	CheckResponse(t, "GET", "/healthz", 200, []byte(`{"status":"ok"}`))
}
