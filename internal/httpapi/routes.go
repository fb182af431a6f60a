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
//
// Summary is one line; Description says in a few sentences what the route
// does, its defaults and what its semantic errors (400, 404, 409) mean;
// Tag is one of RouteTags (set per domain list in RouteTable). Every
// route has all three (TestRouteTableDocumentsEveryRoute).
type Route struct {
	Method      string
	Path        string
	Auth        string
	Summary     string
	Description string
	Tag         string
	Request     any
	Response    any
	Status      int
	Errors      []int
	Query       []OpenAPIParam
	Consumes    string
	Produces    string
	// PlainErrors: besides client.ErrorBody, an error may be answered as
	// text/plain by a third-party handler behind the route (the MCP SDK's
	// own 400 and 404).
	PlainErrors bool
	Answer      AnswerFunc
	Handler     HandlerFunc
}

// Prefix is the path prefix of every API route.
const Prefix = "/api/v1"

// RouteTable answers every route of the API, one list per domain, each
// declared next to its handlers. A new endpoint goes into its domain's
// list (or a new list added here); docs/ARCHITECTURE.md "How to add an
// endpoint".
func RouteTable() []Route {
	return slices.Concat(
		tagged(TagOperations, operationRoutes()),      // server.go: /healthz, /readyz, /openapi.json
		tagged(TagOperations, metricsRoutes()),        // metrics.go
		tagged(TagAccounts, accountRoutes()),          // accounts.go: sign-in, keys, people
		tagged(TagAccounts, passwordRoutes()),         // password.go
		tagged(TagAgents, agentRoutes()),              // agents.go
		tagged(TagModels, modelScopeRoutes()),         // modelscope.go
		tagged(TagMail, mailRoutes()),                 // mail.go
		tagged(TagMail, searchRoutes()),               // search.go
		tagged(TagSessions, sessionRoutes()),          // sessions.go: sessions and runs
		tagged(TagEvents, eventRoutes()),              // events.go: event streams
		tagged(TagPermissions, permissionRoutes()),    // permission.go: requests, decisions, grants
		tagged(TagAttachments, attachmentRoutes()),    // attachment.go
		tagged(TagReminders, scheduleRoutes()),        // schedule.go
		tagged(TagDiscovery, discoveryRoutes()),       // discovery.go
		tagged(TagTurnTokens, turnTokenIssueRoutes()), // turntokens.go
		tagged(TagAccounts, emailRoutes()),            // email.go: the person's email address
		tagged(TagMail, ackRoutes()),                  // acks.go
		tagged(TagReservations, reservationRoutes()),  // reservations.go
		tagged(TagMCP, mcpRoutes()),                   // mcp.go: MCP over Streamable HTTP
	)
}

// The tags of the route table: each groups the operations of one domain in
// the OpenAPI document, which declares them (with these descriptions) in
// its top-level "tags".
const (
	TagOperations   = "operations"
	TagAccounts     = "accounts"
	TagAgents       = "agents"
	TagModels       = "models"
	TagMail         = "mail"
	TagSessions     = "sessions"
	TagEvents       = "events"
	TagPermissions  = "permissions"
	TagAttachments  = "attachments"
	TagReminders    = "reminders"
	TagDiscovery    = "discovery"
	TagTurnTokens   = "turn-tokens"
	TagReservations = "reservations"
	TagMCP          = "mcp"
)

// RouteTags declares every tag a route may carry, in the order the
// document lists them, each with its description.
var RouteTags = []OpenAPITag{
	{TagOperations, "Liveness, readiness, metrics and this document."},
	{TagAccounts, "Signing in and out, user and agent keys, people, the person's profile, password and email address."},
	{TagAgents, "Agents: registration, heartbeat, online status and round budgets."},
	{TagModels, "The model catalogue of an agent and the models it may use (its model scope)."},
	{TagMail, "Sending, reading, forwarding, searching and acknowledging mail, for people (/me/mail) and agents (/mail)."},
	{TagSessions, "Sessions (conversations bound to an agent's working directory) and the runs agents report in them."},
	{TagEvents, "Server-sent event streams of people and agents, resumable with Last-Event-ID."},
	{TagPermissions, "Permission requests of agents, the decisions of people, and always-allow grants."},
	{TagAttachments, "Uploading and downloading attachments."},
	{TagReminders, "Reminders: mails the gateway sends to their owner at a set time."},
	{TagDiscovery, "Contacts, address suggestions and resolution, session participants."},
	{TagTurnTokens, "Per-turn tokens: an agent's key narrowed to one session for one turn."},
	{TagReservations, "Advisory reservations of workspace paths between agents, and the pre-commit check."},
	{TagMCP, "MCP (Model Context Protocol) over Streamable HTTP: the mail tools for MCP clients."},
}

// tagged sets tag on every route of list that has none.
func tagged(tag string, list []Route) []Route {
	for i := range list {
		if list[i].Tag == "" {
			list[i].Tag = tag
		}
	}
	return list
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
