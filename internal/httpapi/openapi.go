package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// The OpenAPI 3.1 description of the API is generated from the route table
// and the wire types of package client by reflection, so it cannot say
// anything the code does not do. api/openapi.json is the committed copy;
// TestOpenAPIDocumentIsCurrent fails when it differs from what the code
// generates. Refresh it with:
//
//go:generate env AGENTMAIL_UPDATE_OPENAPI=1 go test -run TestOpenAPIDocumentIsCurrent -count=1 .

// OpenAPIVersion is the OpenAPI version of the generated document.
const OpenAPIVersion = "3.1.0"

// OpenAPIRoute is what the generator needs to know of one route.
type OpenAPIRoute struct {
	Method  string // "GET", "POST", ...
	Path    string // chi pattern including /api/v1, e.g. "/api/v1/mail/{id}"
	Auth    string // who may call: see openAPISecurity
	Summary string // one line
	// Description is a few sentences: what the operation does, its
	// defaults, what its semantic errors mean.
	Description string
	// Tag groups the operation; one of the tags passed to BuildOpenAPI.
	// Empty derives it from the path (oaOperationTag).
	Tag string
	// Request is the zero value of the JSON request body type, nil when the
	// route takes no JSON body.
	Request any
	// Response is the zero value of the JSON success body type, nil when the
	// success answer has no JSON body.
	Response any
	Status   int   // success status; 0 means 200
	Errors   []int // error statuses the route documents (each answers client.ErrorBody)
	// RequestContentType overrides the request media type:
	// "multipart/form-data" documents an upload in the field "file".
	RequestContentType string
	// ResponseContentType overrides the success media type, e.g.
	// "application/octet-stream" or "text/event-stream".
	ResponseContentType string
	// Query lists the query parameters.
	Query []OpenAPIParam
	// PlainErrors documents text/plain besides client.ErrorBody for the
	// error statuses (answers of a third-party handler behind the route).
	PlainErrors bool
}

// OpenAPIEvent is one server-sent event of the event streams: its name and
// the zero value of its JSON data. BuildOpenAPI lists the events under the
// document's "x-agentmail-events" (name -> schema of the data), so clients
// can type the payloads that no route's body describes.
type OpenAPIEvent struct {
	Name string // e.g. client.EventNewMail
	Data any    // e.g. client.NewMailEvent{}
}

// OpenAPITag is one declared tag of the document: its name and what the
// operations carrying it have in common.
type OpenAPITag struct {
	Name        string
	Description string
}

// OpenAPIParam is one query parameter.
type OpenAPIParam struct {
	Name        string
	Type        string // "string", "integer" or "boolean"
	Description string
	Enum        []string
	Default     any
	Required    bool
}

// openAPIDoc is the document as nested maps: encoding/json writes map keys
// sorted, which makes the output byte-stable.
type openAPIDoc = map[string]any

// BuildOpenAPI returns the OpenAPI 3.1 document describing routes, as
// indented JSON ending in a newline. Schemas of named struct types become
// components/schemas entries named after the type; every error status and
// "default" answer client.ErrorBody (errorBody is its zero value); events
// become "x-agentmail-events". A string field tagged `enum:"a,b"` may take
// only those values (a JSON Schema enum); a field tagged
// `bounds:"minimum=1,maximum=60"` carries those bounds (oaBounds). Tags
// are declared in the document's top-level "tags" in the order given. The
// output is deterministic: the same routes give the same bytes. Errors: a
// route with an empty method or a path not starting with "/", the same
// method and path twice, or (when tags are given) a route whose tag is not
// among them.
func BuildOpenAPI(routes []OpenAPIRoute, tags []OpenAPITag, errorBody any, events ...OpenAPIEvent) ([]byte, error) {
	declared := map[string]bool{}
	for _, t := range tags {
		declared[t.Name] = true
	}
	g := newOASchemaGen()
	g.collectOutputs(reflect.TypeOf(errorBody))
	for _, e := range events {
		g.collectOutputs(reflect.TypeOf(e.Data))
	}
	for _, r := range routes {
		if r.Response != nil {
			g.collectOutputs(reflect.TypeOf(r.Response))
		}
	}
	errRef := g.schemaFor(reflect.TypeOf(errorBody))
	eventSchemas := map[string]any{}
	for _, e := range events {
		eventSchemas[e.Name] = g.schemaFor(reflect.TypeOf(e.Data))
	}
	paths := map[string]any{}
	opIDs := map[string]string{}
	for _, r := range routes {
		method := strings.ToLower(strings.TrimSpace(r.Method))
		if method == "" || !strings.HasPrefix(r.Path, "/") {
			return nil, fmt.Errorf("openapi: route %q %q: method and a path starting with / are required", r.Method, r.Path)
		}
		path, params := openAPIPath(r.Path)
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		if _, dup := item[method]; dup {
			return nil, fmt.Errorf("openapi: route %s %s is listed twice", r.Method, r.Path)
		}
		if r.Tag == "" {
			r.Tag = oaOperationTag(r.Path)
		}
		if len(tags) > 0 && !declared[r.Tag] {
			return nil, fmt.Errorf("openapi: route %s %s: tag %q is not declared", r.Method, r.Path, r.Tag)
		}
		op := g.operation(r, method, path, params, errRef)
		id := op["operationId"].(string)
		if prev, dup := opIDs[id]; dup {
			return nil, fmt.Errorf("openapi: routes %s and %s %s both get the operationId %s", prev, r.Method, r.Path, id)
		}
		opIDs[id] = r.Method + " " + r.Path
		item[method] = op
		if method == "get" {
			head := oaHeadOperation(op)
			opIDs[head["operationId"].(string)] = "HEAD " + r.Path
			item["head"] = head
		}
	}
	doc := openAPIDoc{
		"openapi": OpenAPIVersion,
		"info": map[string]any{
			"title":   "AgentMail API",
			"version": "1",
			"description": "The HTTP API of the AgentMail gateway: mail between people and AI coding agents. " +
				"Every error answers the ErrorBody shape {error, code, field, suggestion} (W-9). " +
				"People authenticate with a user key (Bearer) or the session cookie from POST /api/v1/auth/login, " +
				"sending the csrf_token of that answer as X-CSRF-Token on every cookie-authenticated write; " +
				"agents authenticate with an agent key (Bearer). See docs/API.md for the rules behind each route.",
			"license": map[string]any{"name": "see the repository"},
		},
		"servers": []any{map[string]any{"url": "/", "description": "the gateway this document was fetched from"}},
		"paths":   paths,
		"components": map[string]any{
			"schemas": g.components,
			"securitySchemes": map[string]any{
				"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "description": "An agent key or a user key."},
				"cookieAuth": map[string]any{"type": "apiKey", "in": "cookie", "name": "agentmail_session", "description": "The HttpOnly session cookie set by POST /api/v1/auth/login."},
				"csrfToken":  map[string]any{"type": "apiKey", "in": "header", "name": "X-CSRF-Token", "description": "The csrf_token of the login answer; required with the session cookie on POST, PUT, PATCH and DELETE."},
			},
		},
	}
	if len(tags) > 0 {
		list := make([]any, len(tags))
		for i, t := range tags {
			list[i] = map[string]any{"name": t.Name, "description": t.Description}
		}
		doc["tags"] = list
	}
	if len(eventSchemas) > 0 {
		doc["x-agentmail-events"] = eventSchemas
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	return append(out, '\n'), nil
}

// oaChiParam matches a chi path parameter, with an optional regexp.
var oaChiParam = regexp.MustCompile(`\{([^}:]+)(:[^}]*)?\}`)

// openAPIPath turns a chi pattern into an OpenAPI path and its parameter
// names ("/mail/{id:[0-9]+}" -> "/mail/{id}", ["id"]).
func openAPIPath(pattern string) (string, []string) {
	var names []string
	path := oaChiParam.ReplaceAllStringFunc(pattern, func(m string) string {
		sub := oaChiParam.FindStringSubmatch(m)
		names = append(names, sub[1])
		return "{" + sub[1] + "}"
	})
	return path, names
}

// openAPIPattern is the path of a chi pattern as the document names it.
func openAPIPattern(pattern string) string {
	p, _ := openAPIPath(pattern)
	return p
}

// oaOperationID derives a unique camelCase id: GET /api/v1/me/mail/{id}/tree
// gives "getMeMailByIdTree".
func oaOperationID(method, path string) string {
	var b strings.Builder
	b.WriteString(method)
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/api/v1"), "/") {
		if seg == "" {
			continue
		}
		prefix := ""
		if strings.HasPrefix(seg, "{") {
			seg = strings.Trim(seg, "{}")
			prefix = "By"
		}
		b.WriteString(prefix)
		for _, word := range strings.FieldsFunc(seg, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// oaOperationTag groups an operation by the first path segment after /api/v1
// ("me", "mail", "admin", ...); routes outside /api/v1 are "operations".
func oaOperationTag(path string) string {
	if !strings.HasPrefix(path, "/api/v1/") {
		return "operations"
	}
	rest := strings.TrimPrefix(path, "/api/v1/")
	seg, _, _ := strings.Cut(rest, "/")
	if strings.HasPrefix(seg, "{") || seg == "" {
		return "api"
	}
	return seg
}

// oaHeadOperation is the HEAD twin of a GET operation (the router answers
// HEAD for every GET route): the same parameters, security and statuses,
// with the headers but no content.
func oaHeadOperation(get map[string]any) map[string]any {
	head := make(map[string]any, len(get))
	for k, v := range get {
		head[k] = v
	}
	head["operationId"] = "head" + strings.TrimPrefix(get["operationId"].(string), "get")
	if sum, ok := get["summary"].(string); ok {
		head["summary"] = "HEAD of: " + sum
	}
	head["description"] = "The status and headers the GET of this path answers, without a body. " + fmt.Sprint(get["description"])
	responses := map[string]any{}
	for code, r := range get["responses"].(map[string]any) {
		resp := map[string]any{}
		for k, v := range r.(map[string]any) {
			if k != "content" {
				resp[k] = v
			}
		}
		responses[code] = resp
	}
	head["responses"] = responses
	return head
}

// oaCaller says in a sentence who may call an operation of the auth level.
func oaCaller(auth string) string {
	switch strings.ToLower(auth) {
	case "", "none", "public":
		return "No credentials needed."
	case "agent":
		return "Caller: an agent (agent key as Bearer)."
	case "person":
		return "Caller: a person (user key as Bearer, or the session cookie with X-CSRF-Token on writes)."
	case "admin":
		return "Caller: a person with the admin role (user key or session cookie)."
	case "any":
		return "Caller: a person or an agent."
	}
	return ""
}

// openAPISecurity maps the route table's Auth to security requirements.
// "none" (or "") needs nothing; "agent" a Bearer agent key; "cookie" the
// session cookie; "person", "user", "admin" and "any" a Bearer key or the
// cookie. Cookie-authenticated writes also need the CSRF header.
func openAPISecurity(auth, method string) []any {
	write := method != "get" && method != "head" && method != "options"
	cookie := map[string]any{"cookieAuth": []any{}}
	if write {
		cookie["csrfToken"] = []any{}
	}
	bearer := map[string]any{"bearerAuth": []any{}}
	switch strings.ToLower(auth) {
	case "", "none", "public":
		return []any{}
	case "agent":
		return []any{bearer}
	case "cookie":
		return []any{cookie}
	}
	return []any{bearer, cookie}
}

// operation builds one operation object.
func (g *oaSchemaGen) operation(r OpenAPIRoute, method, path string, pathParams []string, errRef map[string]any) map[string]any {
	op := map[string]any{
		"operationId": oaOperationID(method, path),
		"tags":        []any{r.Tag},
		"security":    openAPISecurity(r.Auth, method),
	}
	if r.Summary != "" {
		op["summary"] = r.Summary
	}
	if d := strings.TrimSpace(r.Description + " " + oaCaller(r.Auth)); d != "" {
		op["description"] = d
	}
	if r.Auth != "" {
		op["x-agentmail-auth"] = r.Auth
	}
	var params []any
	for _, name := range pathParams {
		params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
	}
	for _, q := range r.Query {
		s := map[string]any{"type": q.Type}
		if q.Type == "" {
			s["type"] = "string"
		}
		if len(q.Enum) > 0 {
			enum := make([]any, len(q.Enum))
			for i, e := range q.Enum {
				enum[i] = e
			}
			s["enum"] = enum
		}
		if q.Default != nil {
			s["default"] = q.Default
		}
		p := map[string]any{"name": q.Name, "in": "query", "required": q.Required, "schema": s}
		if q.Description != "" {
			p["description"] = q.Description
		}
		params = append(params, p)
	}
	if len(params) > 0 {
		op["parameters"] = params
	}

	switch {
	case r.RequestContentType == "multipart/form-data":
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"multipart/form-data": map[string]any{"schema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"file": map[string]any{"type": "string", "contentMediaType": "application/octet-stream", "description": "the file; its part's filename names the attachment"}},
			"required":   []any{"file"},
		}}}}
	case r.Request != nil:
		ct := r.RequestContentType
		if ct == "" {
			ct = "application/json"
		}
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{ct: map[string]any{"schema": g.inputSchemaFor(reflect.TypeOf(r.Request))}}}
	}

	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	success := map[string]any{"description": http.StatusText(status)}
	switch {
	case r.ResponseContentType != "" && r.ResponseContentType != "application/json":
		var s map[string]any
		switch r.ResponseContentType {
		case "text/event-stream", "text/plain":
			s = map[string]any{"type": "string"}
		default:
			s = map[string]any{"type": "string", "contentMediaType": r.ResponseContentType}
		}
		success["content"] = map[string]any{r.ResponseContentType: map[string]any{"schema": s}}
	case r.Response != nil:
		success["content"] = map[string]any{"application/json": map[string]any{"schema": g.schemaFor(reflect.TypeOf(r.Response))}}
	}
	responses := map[string]any{strconv.Itoa(status): success}
	errResponse := func(code int) map[string]any {
		desc := http.StatusText(code)
		if desc == "" {
			desc = "error"
		}
		content := map[string]any{"application/json": map[string]any{"schema": errRef}}
		if r.PlainErrors {
			content["text/plain"] = map[string]any{"schema": map[string]any{"type": "string"}}
		}
		resp := map[string]any{"description": desc, "content": content}
		if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
			resp["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait", "schema": map[string]any{"type": "integer"}}}
		}
		return resp
	}
	for _, code := range r.Errors {
		responses[strconv.Itoa(code)] = errResponse(code)
	}
	def := errResponse(0)
	def["description"] = "any other error"
	responses["default"] = def
	op["responses"] = responses
	return op
}
