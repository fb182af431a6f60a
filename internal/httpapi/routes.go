package httpapi

import (
	"net/http"
	"slices"
)

// Auth levels of a route.
const (
	AuthNone   = "none"   // no credentials needed
	AuthPerson = "person" // a person: cookie (with CSRF on writes) or user key
	AuthAdmin  = "admin"  // a person with the admin role
	AuthAgent  = "agent"  // an agent key
	AuthAny    = "any"    // a person or an agent
)

// HandlerFunc is a route handler that writes its success answer itself, as
// event streams, downloads and metrics must, and returns any error to the
// error funnel (writeError). Handlers that answer one JSON value are
// simpler as an AnswerFunc.
type HandlerFunc func(s *Server, w http.ResponseWriter, r *http.Request) error

// AnswerFunc is a route handler that returns its success answer instead of
// writing it: the router writes the value as JSON with the route's Status,
// or only the Status when the value is nil (a 204 without body). An error
// goes to the error funnel and nothing else is written. The handler may
// still set headers and cookies on w.
type AnswerFunc func(s *Server, w http.ResponseWriter, r *http.Request) (any, error)

// answer adapts a handler returning a typed value (the route's Response
// type) to an AnswerFunc.
func answer[T any](h func(*Server, http.ResponseWriter, *http.Request) (T, error)) AnswerFunc {
	return func(s *Server, w http.ResponseWriter, r *http.Request) (any, error) {
		v, err := h(s, w, r)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

// noBody adapts a handler whose success has no body (Status 204) to an
// AnswerFunc: it only returns its error.
func noBody(h func(*Server, http.ResponseWriter, *http.Request) error) AnswerFunc {
	return func(s *Server, w http.ResponseWriter, r *http.Request) (any, error) { return nil, h(s, w, r) }
}

// Route is one entry of the route table, the single description of the
// HTTP API from which the router is built and the OpenAPI document is
// generated.
//
// Path is a chi pattern including the /api/v1 prefix ("/healthz" and
// "/readyz" have none). Request and Response are zero values of the wire
// types in client/types*.go (nil when there is no JSON body); Status is the
// success status; Errors lists the error statuses the route can answer
// (each with a client.ErrorBody). Query lists the query parameters the
// handler reads, as docs/API.md documents them. Consumes is the request
// content type when it is not JSON ("multipart/form-data": an upload in
// the field "file"); Produces is the success content type when it is not
// JSON ("text/event-stream", "application/octet-stream"). Exactly one of
// Answer and Handler is set: Answer when the router writes the success
// answer with Status, Handler when the handler writes it itself.
type Route struct {
	Method   string
	Path     string
	Auth     string
	Summary  string
	Request  any
	Response any
	Status   int
	Errors   []int
	Query    []OpenAPIParam
	Consumes string
	Produces string
	Answer   AnswerFunc
	Handler  HandlerFunc
}

// Prefix is the path prefix of every API route.
const Prefix = "/api/v1"

// RouteTable answers every route of the API, one list per domain, each
// declared next to its handlers. A new endpoint goes into its domain's
// list (or a new list added here); docs/ARCHITECTURE.md "How to add an
// endpoint".
func RouteTable() []Route {
	return slices.Concat(
		operationRoutes(),      // server.go: /healthz, /readyz, /openapi.json
		metricsRoutes(),        // metrics.go
		accountRoutes(),        // accounts.go: sign-in, keys, people
		passwordRoutes(),       // password.go
		agentRoutes(),          // agents.go
		modelScopeRoutes(),     // modelscope.go
		mailRoutes(),           // mail.go
		searchRoutes(),         // search.go
		sessionRoutes(),        // sessions.go: sessions and runs
		eventRoutes(),          // events.go: event streams
		permissionRoutes(),     // permission.go: requests, decisions, grants
		attachmentRoutes(),     // attachment.go
		scheduleRoutes(),       // schedule.go
		discoveryRoutes(),      // discovery.go
		turnTokenIssueRoutes(), // turntokens.go
		emailRoutes(),          // email.go: the person's email address
		ackRoutes(),            // acks.go
		reservationRoutes(),    // reservations.go
		mcpRoutes(),            // mcp.go: MCP over Streamable HTTP
	)
}

// Error status sets used by many routes.
var (
	errsPublic = []int{400, 500}
	errsPerson = []int{400, 401, 403, 500}
	errsAgent  = []int{400, 401, 403, 500}
	errsRead   = []int{400, 401, 403, 404, 500} // 400: a parameter with NUL or non-UTF-8 text (checkURLText)
)

// Query parameters used by many routes.
var (
	// queryLimit is the page size with its default.
	queryLimit = func(def int) OpenAPIParam {
		return OpenAPIParam{Name: "limit", Type: "integer", Default: def, Description: "at most this many items"}
	}
	// queryCursor continues a paged listing.
	queryCursor = OpenAPIParam{Name: "cursor", Type: "string", Description: "next_cursor of the previous page"}
)
