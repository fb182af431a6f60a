package httpapi_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/internal/httpapi"
)

// TestRouteTableDocumentsEveryRoute fails for a route without a summary, a
// description or a tag from httpapi.RouteTags (issue 19 item 5), and for a
// declared tag no route carries.
func TestRouteTableDocumentsEveryRoute(t *testing.T) {
	declared := map[string]bool{}
	for _, tag := range httpapi.RouteTags {
		if tag.Name == "" || tag.Description == "" {
			t.Errorf("declared tag %+v needs a name and a description", tag)
		}
		declared[tag.Name] = true
	}
	used := map[string]bool{}
	for _, rt := range httpapi.RouteTable() {
		name := rt.Method + " " + rt.Path
		if strings.TrimSpace(rt.Summary) == "" {
			t.Errorf("%s: no Summary", name)
		}
		if len(strings.TrimSpace(rt.Description)) < 10 {
			t.Errorf("%s: no Description", name)
		}
		if !declared[rt.Tag] {
			t.Errorf("%s: tag %q is not one of RouteTags", name, rt.Tag)
		}
		used[rt.Tag] = true
	}
	for tag := range declared {
		if !used[tag] {
			t.Errorf("tag %q is declared but no route carries it", tag)
		}
	}
}

// TestHeadIsAnsweredForEveryGetRoute sends HEAD to the GET routes that need
// no path parameter and checks the GET's status without a body, and that a
// HEAD of an event stream answers its headers and opens no stream.
func TestHeadIsAnsweredForEveryGetRoute(t *testing.T) {
	e := newEnv(t)
	e.agent("hd")
	agentKey := "test-key-hd-0123456789abcdef"
	for _, rt := range httpapi.RouteTable() {
		if rt.Method != "GET" || strings.Contains(rt.Path, "{") || rt.Path == httpapi.MCPPath {
			continue
		}
		token := ""
		switch rt.Auth {
		case httpapi.AuthAgent, httpapi.AuthAny:
			token = agentKey
		case httpapi.AuthPerson, httpapi.AuthAdmin:
			continue // cookie routes: covered with the agent's 403 below
		}
		get, _, _ := e.raw("GET", rt.Path, token, "")
		if rt.Produces == "text/event-stream" {
			get = 200 // a GET would hold the stream open
		}
		head, body, h := e.raw("HEAD", rt.Path, token, "")
		if head != get || body != "" {
			t.Errorf("HEAD %s: %d with %d body bytes; GET answers %d", rt.Path, head, len(body), get)
		}
		if rt.Produces == "text/event-stream" && !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
			t.Errorf("HEAD %s: Content-Type %q", rt.Path, h.Get("Content-Type"))
		}
	}
	// A person's route with an agent key: HEAD answers the GET's 403.
	if st, body, _ := e.raw("HEAD", "/api/v1/me/mail/inbox", agentKey, ""); st != 403 || body != "" {
		t.Errorf("HEAD /api/v1/me/mail/inbox with an agent key: %d %q; want 403 without body", st, body)
	}
	if st, _, h := e.raw("HEAD", "/api/v1/openapi.json", "", ""); st != 200 || h.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD /api/v1/openapi.json: %d %q", st, h.Get("Content-Type"))
	}
}

// TestMethodNotAllowedCarriesAllow checks RFC 9110 15.5.6: every 405 names
// the methods the path has in Allow.
func TestMethodNotAllowedCarriesAllow(t *testing.T) {
	e := newEnv(t)
	cases := []struct{ method, path, allow string }{
		{"DELETE", "/api/v1/openapi.json", "GET, HEAD"},
		{"PUT", "/api/v1/mail/send", "GET, HEAD, POST"}, // GET and HEAD: /mail/{id},
		{"POST", "/api/v1/me/mail/m1", "GET, HEAD"},
		{"PUT", "/api/v1/agent/register", "POST"},
		{"PUT", "/api/v1/me", "GET, HEAD, PATCH"},
		{"POST", "/api/v1/admin/agents/a/models", "GET, HEAD, PUT"},
		{"PATCH", httpapi.MCPPath, "GET, HEAD, POST, DELETE"},
	}
	for _, c := range cases {
		st, body, h := e.raw(c.method, c.path, "", "")
		if st != http.StatusMethodNotAllowed || h.Get("Allow") != c.allow || !strings.Contains(body, "method_not_allowed") {
			t.Errorf("%s %s: %d Allow %q %s; want 405 with Allow %q", c.method, c.path, st, h.Get("Allow"), body, c.allow)
		}
	}
}

// TestStreamAnnouncesRetryAtConnect checks that an event stream begins with
// a retry: field (the reconnect delay of EventSource clients).
func TestStreamAnnouncesRetryAtConnect(t *testing.T) {
	e := newEnv(t)
	e.agent("rt")
	req, _ := http.NewRequestWithContext(e.ctx(), "GET", e.url+"/api/v1/events/stream", nil)
	req.Header.Set("Authorization", "Bearer test-key-rt-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || first != "retry: 2000\n" || httpapi.StreamRetry.Milliseconds() != 2000 {
		t.Fatalf("first line %q (%v); want \"retry: 2000\"", first, err)
	}
}

// The OpenAPI document is compressed for clients that accept gzip and
// revalidated by its ETag (304), like the web page's files.
func TestOpenAPIDocumentIsCompressedAndRevalidated(t *testing.T) {
	e := newEnv(t)
	get := func(hdr map[string]string) *http.Response {
		req, _ := http.NewRequestWithContext(e.ctx(), "GET", e.url+"/api/v1/openapi.json", nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	plain := get(nil)
	doc, _ := io.ReadAll(plain.Body)
	zipped := get(map[string]string{"Accept-Encoding": "gzip"})
	wire, _ := io.ReadAll(zipped.Body)
	if zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("Content-Type") != "application/json" ||
		zipped.Header.Get("Content-Length") != strconv.Itoa(len(wire)) || 4*len(wire) > len(doc) {
		t.Fatalf("gzip answer: %d bytes for %d, %v", len(wire), len(doc), zipped.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(wire))
	if err != nil {
		t.Fatal(err)
	}
	if back, _ := io.ReadAll(zr); !bytes.Equal(back, doc) {
		t.Fatal("the gzip form is not the document")
	}
	for _, r := range []*http.Response{plain, zipped} {
		if again := get(map[string]string{"Accept-Encoding": r.Header.Get("Content-Encoding"), "If-None-Match": r.Header.Get("ETag")}); again.StatusCode != 304 {
			t.Fatalf("revalidating %q: %d", r.Header.Get("ETag"), again.StatusCode)
		}
	}
}
