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
	errsRead   = []int{400, 401, 403, 404, 500} // 400: a parameter with NUL or non-UTF-8 text (checkURLText)
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
		{Method: "POST", Path: p + "/auth/login", Auth: AuthNone, Summary: "Sign in; sets the HttpOnly session cookie", Request: client.LoginRequest{}, Response: client.LoginResponse{}, Status: 200, Errors: []int{400, 401, 403, 415, 429, 500}, Handler: (*Server).handleLogin},
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
		{Method: "GET", Path: p + "/admin/agents", Auth: AuthAdmin, Summary: "List agents", Response: client.AgentList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleListAgents},
		{Method: "PATCH", Path: p + "/admin/agents/{name}", Auth: AuthAdmin, Summary: "Change an agent's default round budget", Request: client.UpdateAgentRequest{}, Response: client.Agent{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleUpdateAgent},
		{Method: "GET", Path: p + "/admin/mail/{id}", Auth: AuthAdmin, Summary: "Explicit admin read of any mail", Response: client.Mail{}, Status: 200, Errors: errsRead, Handler: (*Server).handleAdminGetMail},

		// people: mail (issue 2 item 4)
		{Method: "POST", Path: p + "/me/mail/send", Auth: AuthPerson, Summary: "Send a mail as the person (round_budget for a new session); a reply conflicting with a permission request's decision is 409", Request: client.SendMailRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 413, 500}, Handler: (*Server).handleSend},
		{Method: "GET", Path: p + "/me/mail/inbox", Auth: AuthPerson, Summary: "The person's inbox, newest first (default status=all, limit=50, no marking)", Response: client.MailList{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleMeInbox},
		{Method: "GET", Path: p + "/me/mail/sent", Auth: AuthPerson, Summary: "Mails the person sent, newest first", Response: client.MailList{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleSent},
		{Method: "POST", Path: p + "/me/mail/read", Auth: AuthPerson, Summary: "Mark mails read or unread", Request: client.MarkReadRequest{}, Response: client.MarkReadResponse{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleMarkRead},
		{Method: "GET", Path: p + "/me/mail/{id}", Auth: AuthPerson, Summary: "One mail the person sent or received", Response: client.Mail{}, Status: 200, Errors: errsRead, Handler: (*Server).handleGetMail},
		{Method: "POST", Path: p + "/me/mail/{id}/forward", Auth: AuthPerson, Summary: "Forward a mail as a new thread", Request: client.ForwardRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleForward},
		{Method: "GET", Path: p + "/me/mail/{id}/tree", Auth: AuthPerson, Summary: "Conversation tree around a mail, paged both ways", Response: client.Tree{}, Status: 200, Errors: errsRead, Handler: (*Server).handleTree},
		{Method: "GET", Path: p + "/me/counts", Auth: AuthPerson, Summary: "Unread mails and pending permission requests", Response: client.Counts{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleCounts},
		{Method: "GET", Path: p + "/me/sessions", Auth: AuthPerson, Summary: "Sessions the person takes part in, most recent first", Response: client.SessionList{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleListSessions},
		{Method: "GET", Path: p + "/me/sessions/{id}", Auth: AuthPerson, Summary: "One session", Response: client.Session{}, Status: 200, Errors: errsRead, Handler: (*Server).handleGetSession},
		{Method: "PATCH", Path: p + "/me/sessions/{id}", Auth: AuthPerson, Summary: "Change alias (manual), budget, or reset used rounds", Request: client.UpdateSessionRequest{}, Response: client.Session{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleUpdateSession},
		{Method: "GET", Path: p + "/me/sessions/{id}/mails", Auth: AuthPerson, Summary: "A session's mails, oldest first; next_cursor continues with the newer ones", Response: client.MailList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleSessionMails},
		{Method: "GET", Path: p + "/me/sessions/{id}/runs", Auth: AuthPerson, Summary: "Runs of a session, newest first", Response: client.RunList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleSessionRuns},
		{Method: "GET", Path: p + "/me/events/stream", Auth: AuthPerson, Summary: "The person's event stream (SSE)", Status: 200, Errors: []int{400, 401, 403, 429}, Produces: "text/event-stream", Handler: (*Server).handleStream},
		{Method: "GET", Path: p + "/agents", Auth: AuthPerson, Summary: "List agents with online status", Response: client.AgentList{}, Status: 200, Errors: errsPerson, Handler: (*Server).handleListAgents},
		{Method: "GET", Path: p + "/agents/{name}", Auth: AuthPerson, Summary: "One agent with models and sessions", Response: client.AgentDetail{}, Status: 200, Errors: errsRead, Handler: (*Server).handleGetAgent},

		// agents (W-1)
		{Method: "POST", Path: p + "/agent/register", Auth: AuthAgent, Summary: "Register the agent (W-2)", Request: client.RegisterRequest{}, Response: client.Agent{}, Status: 200, Errors: errsAgent, Handler: (*Server).handleRegister},
		{Method: "POST", Path: p + "/agent/heartbeat", Auth: AuthAgent, Summary: "Heartbeat, mirror and catalogue; answers the model scope (W-3)", Request: client.HeartbeatRequest{}, Response: client.HeartbeatResponse{}, Status: 200, Errors: errsAgent, Handler: (*Server).handleHeartbeat},
		{Method: "GET", Path: p + "/agent/models/allowed", Auth: AuthAgent, Summary: "The agent's model scope", Response: client.AllowedModels{}, Status: 200, Errors: errsRead, Handler: (*Server).handleAllowedModels},
		{Method: "GET", Path: p + "/events/stream", Auth: AuthAgent, Summary: "The agent's event stream (SSE, W-4)", Status: 200, Errors: []int{400, 401, 403, 429}, Produces: "text/event-stream", Handler: (*Server).handleStream},
		{Method: "GET", Path: p + "/mail/inbox", Auth: AuthAgent, Summary: "The agent's inbox (T-1: default unread, 5, marks the listed mails read)", Response: client.MailList{}, Status: 200, Errors: errsAgent, Handler: (*Server).handleAgentInbox},
		{Method: "POST", Path: p + "/mail/read", Auth: AuthAgent, Summary: "Mark mails read or unread", Request: client.MarkReadRequest{}, Response: client.MarkReadResponse{}, Status: 200, Errors: errsAgent, Handler: (*Server).handleMarkRead},
		{Method: "POST", Path: p + "/mail/send", Auth: AuthAgent, Summary: "Send a mail (W-5)", Request: client.SendMailRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 413, 429, 500}, Handler: (*Server).handleSend},
		{Method: "GET", Path: p + "/mail/{id}", Auth: AuthAgent, Summary: "One mail the agent sent or received", Response: client.Mail{}, Status: 200, Errors: errsRead, Handler: (*Server).handleGetMail},
		{Method: "GET", Path: p + "/mail/{id}/thread", Auth: AuthAgent, Summary: "The mail's session, oldest first", Response: client.MailList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleThread},
		{Method: "POST", Path: p + "/mail/{id}/forward", Auth: AuthAgent, Summary: "Forward a mail as a new thread (T-5)", Request: client.ForwardRequest{}, Response: client.SendMailResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 429, 500}, Handler: (*Server).handleForward},
		{Method: "GET", Path: p + "/sessions/{id}", Auth: AuthAgent, Summary: "One session the agent takes part in", Response: client.Session{}, Status: 200, Errors: errsRead, Handler: (*Server).handleGetSession},
		{Method: "POST", Path: p + "/sessions/{id}/sync", Auth: AuthAgent, Summary: "Propose alias and title; answers the final alias (W-7)", Request: client.SyncSessionRequest{}, Response: client.Session{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleSyncSession},
		{Method: "PUT", Path: p + "/sessions/{id}/platform-session", Auth: AuthAgent, Summary: "Bind the platform's session id (B-3.3)", Request: client.BindPlatformSessionRequest{}, Response: client.Session{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleBindPlatformSession},
		{Method: "GET", Path: p + "/sessions/{id}/runs", Auth: AuthAgent, Summary: "Runs of a session, newest first", Response: client.RunList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleSessionRuns},
		{Method: "PUT", Path: p + "/runs/{run_id}", Auth: AuthAgent, Summary: "Report a run (upsert, seed 004)", Request: client.Run{}, Response: client.Run{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handlePutRun},
	}
}
