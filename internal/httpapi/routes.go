package httpapi

import (
	"net/http"

	"github.com/agentmail/agentmail/client"
)

// Auth levels of a route.
const (
	AuthNone   = "none"   // no credentials needed
	AuthPerson = "person" // a person: cookie (with CSRF on writes) or user key
	AuthAdmin  = "admin"  // a person with the admin role
	AuthAgent  = "agent"  // an agent key
	AuthAny    = "any"    // a person or an agent
)

// HandlerFunc is a route handler: it writes its success answer itself and
// returns any error to the error funnel (writeError).
type HandlerFunc func(s *Server, w http.ResponseWriter, r *http.Request) error

// Route is one entry of the route table, the single description of the
// HTTP API from which the router is built and the OpenAPI document is
// generated.
//
// Path is a chi pattern including the /api/v1 prefix ("/healthz" and
// "/readyz" have none). Request and Response are zero values of the wire
// types in client/types.go (nil when there is no JSON body); Status is the
// success status; Errors lists the error statuses the route can answer
// (each with a client.ErrorBody). Produces is the success content type when
// it is not JSON ("text/event-stream", "application/octet-stream").
type Route struct {
	Method   string
	Path     string
	Auth     string
	Summary  string
	Request  any
	Response any
	Status   int
	Errors   []int
	Produces string
	Handler  HandlerFunc
}

// Prefix is the path prefix of every API route.
const Prefix = "/api/v1"

var extraRoutes []Route

// RegisterRoutes adds routes of another domain to the table; call it from
// an init function in that domain's file, one Route per endpoint, exactly as
// the core entries below are written.
func RegisterRoutes(rs ...Route) { extraRoutes = append(extraRoutes, rs...) }

// RouteTable answers every route: the core table below followed by the
// routes other domains registered.
func RouteTable() []Route {
	out := append([]Route(nil), coreRoutes()...)
	return append(out, extraRoutes...)
}

// Error status sets used by many routes.
var (
	errsPublic = []int{400, 500}
	errsPerson = []int{400, 401, 403, 500}
	errsAgent  = []int{400, 401, 403, 500}
	errsRead   = []int{401, 403, 404, 500}
)

// coreRoutes is the table of the gateway core (issue 2, issue 8 item 1).
func coreRoutes() []Route {
	p := Prefix
	return []Route{
		// operations
		{Method: "GET", Path: "/healthz", Auth: AuthNone, Summary: "Liveness", Response: map[string]string{}, Status: 200, Handler: (*Server).handleHealthz},
		{Method: "GET", Path: "/readyz", Auth: AuthNone, Summary: "Readiness: the database answers", Response: map[string]string{}, Status: 200, Errors: []int{503}, Handler: (*Server).handleReadyz},
		{Method: "GET", Path: p + "/openapi.json", Auth: AuthNone, Summary: "This API's OpenAPI 3.1 description", Response: map[string]any{}, Status: 200, Errors: []int{500}, Handler: (*Server).handleOpenAPI},

		// accounts (issue 8 item 1)
		{Method: "POST", Path: p + "/auth/login", Auth: AuthNone, Summary: "Sign in; sets the HttpOnly session cookie", Request: client.LoginRequest{}, Response: client.LoginResponse{}, Status: 200, Errors: []int{400, 401, 500}, Handler: (*Server).handleLogin},
		{Method: "POST", Path: p + "/auth/logout", Auth: AuthPerson, Summary: "Sign out; clears the session cookie", Status: 204, Errors: errsPerson, Handler: (*Server).handleLogout},
		{Method: "GET", Path: p + "/me", Auth: AuthPerson, Summary: "The signed-in person", Response: client.Me{}, Status: 200, Errors: errsRead, Handler: (*Server).handleMe},
		{Method: "POST", Path: p + "/me/keys", Auth: AuthPerson, Summary: "Create a user key (token shown once)", Request: client.CreateUserKeyRequest{}, Response: client.CreatedKey{}, Status: 201, Errors: errsPerson, Handler: (*Server).handleCreateUserKey},
		{Method: "GET", Path: p + "/me/keys", Auth: AuthPerson, Summary: "List the person's user keys", Response: client.KeyList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleListUserKeys},
		{Method: "DELETE", Path: p + "/me/keys/{key_id}", Auth: AuthPerson, Summary: "Revoke one of the person's user keys", Status: 204, Errors: errsRead, Handler: (*Server).handleDeleteUserKey},

		// admin: accounts and keys
		{Method: "POST", Path: p + "/admin/agent-keys", Auth: AuthAdmin, Summary: "Register a client-generated agent key (key_token) or issue one", Request: client.CreateAgentKeyRequest{}, Response: client.CreatedKey{}, Status: 201, Errors: []int{400, 401, 403, 409, 500}, Handler: (*Server).handleCreateAgentKey},
		{Method: "GET", Path: p + "/admin/agent-keys", Auth: AuthAdmin, Summary: "List agent keys", Response: client.KeyList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleListAgentKeys},
		{Method: "DELETE", Path: p + "/admin/agent-keys/{key_id}", Auth: AuthAdmin, Summary: "Revoke an agent key", Status: 204, Errors: errsRead, Handler: (*Server).handleDeleteAgentKey},
		{Method: "GET", Path: p + "/admin/user-keys", Auth: AuthAdmin, Summary: "List every person's user keys", Response: client.KeyList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleAdminListUserKeys},
		{Method: "DELETE", Path: p + "/admin/user-keys/{key_id}", Auth: AuthAdmin, Summary: "Revoke any user key", Status: 204, Errors: errsRead, Handler: (*Server).handleAdminDeleteUserKey},
		{Method: "GET", Path: p + "/admin/users", Auth: AuthAdmin, Summary: "List people", Response: client.UserList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleListUsers},
		{Method: "POST", Path: p + "/admin/users", Auth: AuthAdmin, Summary: "Create a person", Request: client.CreateUserRequest{}, Response: client.User{}, Status: 201, Errors: []int{400, 401, 403, 409, 500}, Handler: (*Server).handleCreateUser},
		{Method: "PATCH", Path: p + "/admin/users/{username}", Auth: AuthAdmin, Summary: "Disable, reset password or change role", Request: client.UpdateUserRequest{}, Response: client.User{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleUpdateUser},
	}
}
