// Package openapicheck checks answers of the gateway against its OpenAPI
// document (api/openapi.json, the bytes httpapi.OpenAPIDocument generates):
// the status must be described for the operation and a JSON body must
// match the schema of that status. It is for tests only and is imported by
// no package of the agentmail binary, so its JSON Schema library stays out
// of it. It does not import httpapi, so httpapi's own tests can use it.
package openapicheck

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validator checks answers of the gateway against an OpenAPI
// document: the status must be described for the operation and a JSON body
// must match the schema of that status (formats such as date-time are
// asserted). It is safe for concurrent use.
type Validator struct {
	doc    map[string]any
	router *chi.Mux // documented patterns, to match concrete paths

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
}

// docURL names the document inside the schema compiler.
const docURL = "mem://agentmail/openapi.json"

// New parses an OpenAPI document (as httpapi.BuildOpenAPI writes it).
// Errors: the document is not JSON or has no paths.
func New(doc []byte) (*Validator, error) {
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("openapi validator: parse document: %w", err)
	}
	m, ok := parsed.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("openapi validator: the document is not a JSON object")
	}
	paths, ok := m["paths"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("openapi validator: the document has no paths")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, parsed); err != nil {
		return nil, fmt.Errorf("openapi validator: %w", err)
	}
	v := &Validator{doc: m, router: chi.NewRouter(), compiler: c, schemas: map[string]*jsonschema.Schema{}}
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		item, _ := paths[p].(map[string]any)
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
				v.router.MethodFunc(strings.ToUpper(method), p, noop)
			}
		}
	}
	return v, nil
}

// Pattern returns the documented path pattern a concrete request path
// matches ("/api/v1/mail/abc" -> "/api/v1/mail/{id}"), and false when no
// documented route matches method and path.
func (v *Validator) Pattern(method, path string) (string, bool) {
	rctx := chi.NewRouteContext()
	if !v.router.Match(rctx, strings.ToUpper(method), path) {
		return "", false
	}
	return rctx.RoutePattern(), true
}

// Validate checks one answer: method and pattern name the operation
// (pattern as documented, or as a chi pattern), status its response
// (falling back to "default"), contentType the answer's Content-Type and
// body its bytes. A JSON body must match the response schema; a described
// response without content must come without a body; other media types
// only need to be the described one. The error lists every mismatch.
func (v *Validator) Validate(method, pattern string, status int, contentType string, body []byte) error {
	pattern = documentedPath(pattern)
	m := strings.ToLower(method)
	where := fmt.Sprintf("%s %s -> %d", strings.ToUpper(method), pattern, status)
	paths, _ := v.doc["paths"].(map[string]any)
	item, _ := paths[pattern].(map[string]any)
	op, _ := item[m].(map[string]any)
	if op == nil {
		return fmt.Errorf("%s: the operation is not in the OpenAPI document", where)
	}
	responses, _ := op["responses"].(map[string]any)
	key := strconv.Itoa(status)
	resp, _ := responses[key].(map[string]any)
	if resp == nil {
		key = "default"
		resp, _ = responses[key].(map[string]any)
		if resp == nil || status < 400 {
			return fmt.Errorf("%s: status %d is not described for this operation", where, status)
		}
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(bytes.TrimSpace(body)) > 0 {
			return fmt.Errorf("%s: the document describes no body, the answer has %d bytes", where, len(body))
		}
		return nil
	}
	mt := "application/json"
	if contentType != "" {
		if parsed, _, err := mime.ParseMediaType(contentType); err == nil {
			mt = parsed
		}
	}
	media, _ := content[mt].(map[string]any)
	if media == nil {
		described := make([]string, 0, len(content))
		for k := range content {
			described = append(described, k)
		}
		sort.Strings(described)
		return fmt.Errorf("%s: answered %s, the document describes %s", where, mt, strings.Join(described, ", "))
	}
	if mt != "application/json" {
		return nil
	}
	sch, err := v.schema(pattern, m, key, mt)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: the body is not JSON: %v (body %q)", where, err, truncate(body, 300))
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s: the body does not match the schema: %v\nbody: %s", where, err, truncate(body, 2000))
	}
	return nil
}

// schema compiles (once) the schema at paths/<pattern>/<method>/responses/<key>/content/<mt>/schema.
func (v *Validator) schema(pattern, method, key, mt string) (*jsonschema.Schema, error) {
	ptr := "/paths/" + pointerEscape(pattern) + "/" + method + "/responses/" + key + "/content/" + pointerEscape(mt) + "/schema"
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.schemas[ptr]; ok {
		return s, nil
	}
	s, err := v.compiler.Compile(docURL + "#" + fragmentEscape(ptr))
	if err != nil {
		return nil, fmt.Errorf("compile the response schema %s: %w", ptr, err)
	}
	v.schemas[ptr] = s
	return s, nil
}

// chiParam matches a chi path parameter, with an optional regexp.
var chiParam = regexp.MustCompile(`\{([^}:]+)(:[^}]*)?\}`)

// documentedPath is a chi pattern as the document names it:
// "/mail/{id:[0-9]+}" -> "/mail/{id}".
func documentedPath(pattern string) string { return chiParam.ReplaceAllString(pattern, "{$1}") }

// SchemasCompile compiles the JSON schema of every described JSON answer,
// so each $ref resolves, and answers how many it compiled; the error lists
// every schema that does not compile.
func (v *Validator) SchemasCompile() (int, error) {
	paths, _ := v.doc["paths"].(map[string]any)
	var errs []string
	n := 0
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for m, op := range ops {
			opm, _ := op.(map[string]any)
			responses, _ := opm["responses"].(map[string]any)
			for code, resp := range responses {
				rm, _ := resp.(map[string]any)
				content, _ := rm["content"].(map[string]any)
				if _, ok := content["application/json"]; !ok {
					continue
				}
				if _, err := v.schema(p, m, code, "application/json"); err != nil {
					errs = append(errs, fmt.Sprintf("%s %s %s: %v", m, p, code, err))
				}
				n++
			}
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return n, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return n, nil
}

// pointerEscape escapes one JSON pointer token (RFC 6901).
func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// fragmentEscape percent-encodes what may not stand in a URI fragment.
func fragmentEscape(ptr string) string {
	var b strings.Builder
	for _, c := range []byte(ptr) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-._~/!$&'()*+,;=:@", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// TestingT is the part of testing.TB that CheckResponse uses.
type TestingT interface {
	Helper()
	Errorf(format string, args ...any)
}

// CheckResponse fails t when an answer does not match v's document: the
// function end-to-end tests call with (method, path pattern, status, body)
// of a recorded answer. The body is taken as JSON.
func (v *Validator) CheckResponse(t TestingT, method, pattern string, status int, body []byte) {
	t.Helper()
	ct := "application/json"
	if len(bytes.TrimSpace(body)) == 0 {
		ct = ""
	}
	if err := v.Validate(method, pattern, status, ct, body); err != nil {
		t.Errorf("OpenAPI: %v", err)
	}
}
