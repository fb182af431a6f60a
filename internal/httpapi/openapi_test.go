package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/internal/testkit/openapicheck"
)

// oaCommittedPath is the committed document, relative to this package.
var oaCommittedPath = filepath.Join("..", "..", "api", "openapi.json")

// oaRefresh is how to bring api/openapi.json up to date.
const oaRefresh = "go generate ./internal/httpapi (or: AGENTMAIL_UPDATE_OPENAPI=1 go test -run TestOpenAPIDocumentIsCurrent ./internal/httpapi)"

// TestOpenAPIDocumentIsCurrent fails when api/openapi.json differs from the
// document the route table and the wire types generate. With
// AGENTMAIL_UPDATE_OPENAPI=1 it rewrites the file instead.
func TestOpenAPIDocumentIsCurrent(t *testing.T) {
	doc, err := OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("AGENTMAIL_UPDATE_OPENAPI") == "1" {
		if err := os.MkdirAll(filepath.Dir(oaCommittedPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(oaCommittedPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", oaCommittedPath, len(doc))
		return
	}
	committed, err := os.ReadFile(oaCommittedPath)
	if err != nil {
		t.Fatalf("read the committed document: %v; create it with %s", err, oaRefresh)
	}
	if !bytes.Equal(committed, doc) {
		gl, cl := strings.Split(string(doc), "\n"), strings.Split(string(committed), "\n")
		line := 0
		for line < len(gl) && line < len(cl) && gl[line] == cl[line] {
			line++
		}
		at := func(ls []string) string {
			if line < len(ls) {
				return strings.TrimSpace(ls[line])
			}
			return "(end of file)"
		}
		t.Fatalf("api/openapi.json is not what the code generates (first difference at line %d: committed %q, generated %q); refresh it with %s and commit it",
			line+1, at(cl), at(gl), oaRefresh)
	}
}

// oaRegisteredRoutes lists "METHOD /path" of every route the router
// serves, with chi patterns in document form.
func oaRegisteredRoutes(t *testing.T) map[string]bool {
	t.Helper()
	h, ok := New(nil, nil, nil, Options{}).Handler().(chi.Routes)
	if !ok {
		t.Fatal("Server.Handler is not a chi router")
	}
	out := map[string]bool{}
	err := chi.Walk(h, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out[method+" "+openAPIPattern(route)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// oaDescribedRoutes lists "METHOD /path" of every operation of doc.
func oaDescribedRoutes(t *testing.T, doc []byte) map[string]bool {
	t.Helper()
	var parsed struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for p, item := range parsed.Paths {
		for m := range item {
			out[strings.ToUpper(m)+" "+p] = true
		}
	}
	return out
}

// TestOpenAPIDescribesExactlyTheRegisteredRoutes fails when the router
// serves a route the document lacks, or the document describes a route the
// router does not serve.
func TestOpenAPIDescribesExactlyTheRegisteredRoutes(t *testing.T) {
	doc, err := OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	registered, described := oaRegisteredRoutes(t), oaDescribedRoutes(t, doc)
	var missing, phantom []string
	for r := range registered {
		if !described[r] {
			missing = append(missing, r)
		}
	}
	for r := range described {
		if !registered[r] {
			phantom = append(phantom, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(phantom)
	if len(missing) > 0 {
		t.Errorf("registered but not in the OpenAPI document (add them to the route table, not to the router by hand):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(phantom) > 0 {
		t.Errorf("in the OpenAPI document but not registered:\n  %s", strings.Join(phantom, "\n  "))
	}
	if len(registered) == 0 {
		t.Error("the router serves no route at all")
	}

	// The committed copy must describe the same set, so a stale file is
	// caught even before its bytes are compared.
	if committed, err := os.ReadFile(oaCommittedPath); err == nil {
		old := oaDescribedRoutes(t, committed)
		for r := range registered {
			if !old[r] {
				t.Errorf("api/openapi.json lacks %s; refresh it with %s", r, oaRefresh)
			}
		}
	}
}

// TestOpenAPIServedAtItsRoute fetches GET /api/v1/openapi.json through the
// real router without credentials and checks it is the generated document
// and valid by its own schema.
func TestOpenAPIServedAtItsRoute(t *testing.T) {
	srv := httptest.NewServer(New(nil, nil, nil, Options{}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	doc, _ := OpenAPIDocument()
	if resp.StatusCode != 200 || !bytes.Equal(body, doc) {
		t.Fatalf("status %d, %d bytes; want 200 and the %d bytes of the generated document", resp.StatusCode, len(body), len(doc))
	}
	v, err := openapicheck.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate("GET", "/api/v1/openapi.json", resp.StatusCode, resp.Header.Get("Content-Type"), body); err != nil {
		t.Error(err)
	}
}

// TestOpenAPIEverySchemaCompiles compiles the JSON schema of every
// described JSON request and answer, so each $ref resolves.
func TestOpenAPIEverySchemaCompiles(t *testing.T) {
	doc, err := OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	v, err := openapicheck.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	n, err := v.SchemasCompile()
	if err != nil {
		t.Error(err)
	}
	if n == 0 {
		t.Error("no JSON answer is described")
	}
}
