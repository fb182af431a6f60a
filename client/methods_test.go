package client

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"
)

// methodCase is one typed method: what it must send and what it decodes.
type methodCase struct {
	name   string
	call   func(ctx context.Context, c *Client) (any, error)
	method string
	path   string     // escaped path the gateway must see
	query  url.Values // nil = no query string
	in     any        // expected JSON body, nil = no body
	status int        // answer status; 0 = 200
	out    any        // answer value (pointer), nil = no body (204)
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func methodCases() []methodCase {
	send := SendMailRequest{To: "claude@/srv/app.new", Cc: "bob, ann", Subject: "s", Body: "b", AttachmentIDs: []string{"a1"}, RoundBudget: Int(3)}
	sent := &SendMailResponse{Status: "sent", MailID: "m1", SessionID: "s1", SessionAlias: "fix", NewSession: true, BudgetRemaining: 3, BudgetMax: 3}
	mail := &Mail{MailID: "m/1", SessionID: "s1", FromName: "ann", FromKind: "person", Subject: "hi", Body: "x", MailType: MailTypeNormal, CreatedAt: t0, Recipients: []Recipient{{Name: "claude", Kind: "agent", Role: "to", Address: "claude@/srv"}}, Attachments: []Attachment{}}
	list := &MailList{Mails: []Mail{*mail}, Unread: 4, NextCursor: "c2"}
	found := &SearchResults{Hits: []SearchHit{{Mail: *mail, Score: 1.5, Subject: []TextSpan{{Text: "hi", Match: true}}, Snippet: []TextSpan{{Text: "x"}}}}, Sort: SearchRelevance, NextCursor: "r20"}
	keys := &KeyList{Keys: []KeyInfo{{KeyID: "k1", Kind: "user", Owner: "ann", Label: "cli", Lifecycle: LifecyclePermanent, Prefix: "am_", CreatedAt: t0, Active: true}}}
	// KeyInfo.KeyID is shadowed by CreatedKey.KeyID in JSON, so it stays empty.
	created := &CreatedKey{KeyID: "k1", KeyToken: "am_secret", KeyInfo: KeyInfo{Kind: "user", CreatedAt: t0}}
	agent := &Agent{Name: "claude", Platform: "claude-code", Status: "online", DefaultRounds: 20}
	session := &Session{SessionID: "s1", Alias: "fix", AliasSource: "manual", Workspace: "/srv", Participants: []string{"ann", "claude"}, CreatedAt: t0, LastActivity: t0}
	perm := &Permission{MailID: "p1", SessionID: "s1", AgentName: "claude", Question: "rm?", Options: []string{"approve", "deny"}, RelayKey: "rk", Status: "pending", CreatedAt: t0}
	sched := &Schedule{ScheduleID: "sc1", Owner: "ann", Title: "t", EventTime: t0, RemindAt: t0, Recipients: []string{"ann"}, CreatedAt: t0}
	run := Run{RunID: "r 1", SessionID: "s1", MailID: "m1", AgentName: "claude", State: RunRunning, StartedAt: t0, UpdatedAt: t0}
	expires := t0.Add(time.Hour)

	return []methodCase{
		// accounts
		{name: "Me", call: func(ctx context.Context, c *Client) (any, error) { return c.Me(ctx) },
			method: "GET", path: "/api/v1/me", out: &Me{Username: "ann", Role: "user", AuthKind: "user_key"}},
		{name: "ChangePassword", call: func(ctx context.Context, c *Client) (any, error) {
			return nil, c.ChangePassword(ctx, ChangePasswordRequest{CurrentPassword: "old-secret", NewPassword: "new-secret"})
		}, method: "POST", path: "/api/v1/me/password", in: ChangePasswordRequest{CurrentPassword: "old-secret", NewPassword: "new-secret"}, status: 204},
		{name: "CreateUserKey", call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateUserKey(ctx, CreateUserKeyRequest{Label: "cli", Lifecycle: LifecycleTimed, ExpiresAt: &expires})
		}, method: "POST", path: "/api/v1/me/keys", in: CreateUserKeyRequest{Label: "cli", Lifecycle: LifecycleTimed, ExpiresAt: &expires}, status: 201, out: created},
		{name: "ListUserKeys", call: func(ctx context.Context, c *Client) (any, error) { return c.ListUserKeys(ctx) },
			method: "GET", path: "/api/v1/me/keys", out: keys},
		{name: "DeleteUserKey", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteUserKey(ctx, "k/1") },
			method: "DELETE", path: "/api/v1/me/keys/k%2F1", status: 204},
		{name: "CreateAgentKey", call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateAgentKey(ctx, CreateAgentKeyRequest{AgentName: "claude", KeyToken: "tok", Lifecycle: LifecyclePermanent})
		}, method: "POST", path: "/api/v1/admin/agent-keys", in: CreateAgentKeyRequest{AgentName: "claude", KeyToken: "tok", Lifecycle: LifecyclePermanent}, status: 201, out: created},
		{name: "ListAgentKeys", call: func(ctx context.Context, c *Client) (any, error) { return c.ListAgentKeys(ctx) },
			method: "GET", path: "/api/v1/admin/agent-keys", out: keys},
		{name: "DeleteAgentKey", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteAgentKey(ctx, "k1") },
			method: "DELETE", path: "/api/v1/admin/agent-keys/k1", status: 204},
		{name: "AdminListUserKeys", call: func(ctx context.Context, c *Client) (any, error) { return c.AdminListUserKeys(ctx) },
			method: "GET", path: "/api/v1/admin/user-keys", out: keys},
		{name: "AdminDeleteUserKey", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.AdminDeleteUserKey(ctx, "k1") },
			method: "DELETE", path: "/api/v1/admin/user-keys/k1", status: 204},
		{name: "AdminListUsers", call: func(ctx context.Context, c *Client) (any, error) { return c.AdminListUsers(ctx) },
			method: "GET", path: "/api/v1/admin/users", out: &UserList{Users: []User{{Username: "ann", Role: "user", CreatedAt: t0}}}},
		{name: "AdminCreateUser", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AdminCreateUser(ctx, CreateUserRequest{Username: "bob", Password: "longenough", Role: "user"})
		}, method: "POST", path: "/api/v1/admin/users", in: CreateUserRequest{Username: "bob", Password: "longenough", Role: "user"}, status: 201, out: &User{Username: "bob", Role: "user", CreatedAt: t0}},
		{name: "AdminUpdateUser", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AdminUpdateUser(ctx, "bob", UpdateUserRequest{Disabled: Bool(true)})
		}, method: "PATCH", path: "/api/v1/admin/users/bob", in: map[string]any{"disabled": true}, out: &User{Username: "bob", Disabled: true, CreatedAt: t0}},
		{name: "AdminListAgents", call: func(ctx context.Context, c *Client) (any, error) { return c.AdminListAgents(ctx) },
			method: "GET", path: "/api/v1/admin/agents", out: &AgentList{Agents: []Agent{*agent}}},
		{name: "AdminUpdateAgent", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AdminUpdateAgent(ctx, "claude", UpdateAgentRequest{DefaultRounds: Int(0)})
		}, method: "PATCH", path: "/api/v1/admin/agents/claude", in: map[string]any{"default_rounds": 0}, out: agent},
		{name: "AdminGetAgentModels", call: func(ctx context.Context, c *Client) (any, error) { return c.AdminGetAgentModels(ctx, "claude") },
			method: "GET", path: "/api/v1/admin/agents/claude/models", out: &AgentDetail{Agent: *agent, Models: []Model{{Provider: "anthropic", Model: "opus"}}}},
		{name: "AdminSetAgentModels", call: func(ctx context.Context, c *Client) (any, error) {
			return c.AdminSetAgentModels(ctx, "claude", AllowedModels{AllowedModels: []ModelRef{{Provider: "anthropic", Model: "opus"}}})
		}, method: "PUT", path: "/api/v1/admin/agents/claude/models", in: SetAllowedModelsRequest{AllowedModels: &[]ModelRef{{Provider: "anthropic", Model: "opus"}}}, out: &AllowedModels{AllowedModels: []ModelRef{{Provider: "anthropic", Model: "opus"}}}},
		{name: "AdminGetMail", call: func(ctx context.Context, c *Client) (any, error) { return c.AdminGetMail(ctx, "m1") },
			method: "GET", path: "/api/v1/admin/mail/m1", out: mail},

		// agent side
		{name: "Register", call: func(ctx context.Context, c *Client) (any, error) {
			return c.Register(ctx, RegisterRequest{Name: "claude", Platform: "claude-code", Workspaces: []Workspace{{Name: "app", Path: "/srv/app"}}})
		}, method: "POST", path: "/api/v1/agent/register", in: RegisterRequest{Name: "claude", Platform: "claude-code", Workspaces: []Workspace{{Name: "app", Path: "/srv/app"}}}, out: agent},
		{name: "Heartbeat keeps omitted and clears empty", call: func(ctx context.Context, c *Client) (any, error) {
			return c.Heartbeat(ctx, HeartbeatRequest{Models: &[]Model{}})
		}, method: "POST", path: "/api/v1/agent/heartbeat", in: map[string]any{"models": []any{}}, out: &HeartbeatResponse{Status: "ok", PendingMails: 2, ModelsUnrestricted: true}},
		{name: "AllowedModels", call: func(ctx context.Context, c *Client) (any, error) { return c.AllowedModels(ctx) },
			method: "GET", path: "/api/v1/agent/models/allowed", out: &AllowedModels{ModelsUnrestricted: true}},
		{name: "Inbox with defaults sends no parameters", call: func(ctx context.Context, c *Client) (any, error) { return c.Inbox(ctx, InboxQuery{}) },
			method: "GET", path: "/api/v1/mail/inbox", out: list},
		{name: "Inbox with every parameter", call: func(ctx context.Context, c *Client) (any, error) {
			return c.Inbox(ctx, InboxQuery{Status: "all", Limit: 7, MarkRead: Bool(false), Cursor: "c1"})
		}, method: "GET", path: "/api/v1/mail/inbox", query: url.Values{"status": {"all"}, "limit": {"7"}, "mark_read": {"false"}, "cursor": {"c1"}}, out: list},
		{name: "MarkRead", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MarkRead(ctx, MarkReadRequest{MailIDs: []string{"m1", "m2"}})
		}, method: "POST", path: "/api/v1/mail/read", in: MarkReadRequest{MailIDs: []string{"m1", "m2"}}, out: &MarkReadResponse{Marked: 2}},
		{name: "SendMail", call: func(ctx context.Context, c *Client) (any, error) { return c.SendMail(ctx, send) },
			method: "POST", path: "/api/v1/mail/send", in: send, out: sent},
		{name: "GetMail escapes the id", call: func(ctx context.Context, c *Client) (any, error) { return c.GetMail(ctx, "m/1") },
			method: "GET", path: "/api/v1/mail/m%2F1", out: mail},
		{name: "Thread", call: func(ctx context.Context, c *Client) (any, error) { return c.Thread(ctx, "m1") },
			method: "GET", path: "/api/v1/mail/m1/thread", out: list},
		{name: "Forward", call: func(ctx context.Context, c *Client) (any, error) {
			return c.Forward(ctx, "m1", ForwardRequest{To: "bob", Body: "fyi"})
		}, method: "POST", path: "/api/v1/mail/m1/forward", in: ForwardRequest{To: "bob", Body: "fyi"}, out: sent},
		{name: "RequestPermission", call: func(ctx context.Context, c *Client) (any, error) {
			return c.RequestPermission(ctx, PermissionRequest{Question: "rm?", SessionID: "s1", RelayKey: "rk", Tool: "Bash", ToolInput: map[string]any{"command": "rm -rf x"}})
		}, method: "POST", path: "/api/v1/permission/request", in: PermissionRequest{Question: "rm?", SessionID: "s1", RelayKey: "rk", Tool: "Bash", ToolInput: map[string]any{"command": "rm -rf x"}}, out: perm},
		{name: "GetPermission", call: func(ctx context.Context, c *Client) (any, error) { return c.GetPermission(ctx, "p1") },
			method: "GET", path: "/api/v1/permission/p1", out: perm},
		{name: "Grants filters", call: func(ctx context.Context, c *Client) (any, error) { return c.Grants(ctx, "s1", "Bash") },
			method: "GET", path: "/api/v1/grants", query: url.Values{"session_id": {"s1"}, "tool": {"Bash"}}, out: &GrantList{Grants: []Grant{{GrantID: "g1", Tool: "Bash", CreatedAt: t0}}}},
		{name: "Grants of a session", call: func(ctx context.Context, c *Client) (any, error) { return c.Grants(ctx, "s1", "") },
			method: "GET", path: "/api/v1/grants", query: url.Values{"session_id": {"s1"}}, out: &GrantList{Grants: []Grant{}}},
		{name: "GetSession", call: func(ctx context.Context, c *Client) (any, error) { return c.GetSession(ctx, "s1") },
			method: "GET", path: "/api/v1/sessions/s1", out: session},
		{name: "SyncSession", call: func(ctx context.Context, c *Client) (any, error) {
			return c.SyncSession(ctx, "s1", SyncSessionRequest{Alias: "fix-imports"})
		}, method: "POST", path: "/api/v1/sessions/s1/sync", in: SyncSessionRequest{Alias: "fix-imports"}, out: session},
		{name: "BindPlatformSession", call: func(ctx context.Context, c *Client) (any, error) {
			return c.BindPlatformSession(ctx, "s1", BindPlatformSessionRequest{PlatformSessionID: "ps1"})
		}, method: "PUT", path: "/api/v1/sessions/s1/platform-session", in: BindPlatformSessionRequest{PlatformSessionID: "ps1"}, out: session},
		{name: "Participants", call: func(ctx context.Context, c *Client) (any, error) { return c.Participants(ctx, "s1") },
			method: "GET", path: "/api/v1/sessions/s1/participants", out: &ParticipantList{SessionID: "s1", Participants: []Participant{{Name: "ann", Kind: "person", Address: "ann"}}}},
		{name: "SessionRuns", call: func(ctx context.Context, c *Client) (any, error) { return c.SessionRuns(ctx, "s1") },
			method: "GET", path: "/api/v1/sessions/s1/runs", out: &RunList{Runs: []Run{run}}},
		{name: "PutRun uses the run id in the path", call: func(ctx context.Context, c *Client) (any, error) { return c.PutRun(ctx, run) },
			method: "PUT", path: "/api/v1/runs/r%201", in: run, out: &run},
		{name: "CreateSchedule", call: func(ctx context.Context, c *Client) (any, error) {
			return c.CreateSchedule(ctx, CreateScheduleRequest{Title: "t", EventTime: "2026-12-01T09:00:00Z", RemindBeforeMinutes: "15"})
		}, method: "POST", path: "/api/v1/schedules", in: CreateScheduleRequest{Title: "t", EventTime: "2026-12-01T09:00:00Z", RemindBeforeMinutes: "15"}, status: 201, out: sched},
		{name: "ListSchedules", call: func(ctx context.Context, c *Client) (any, error) { return c.ListSchedules(ctx) },
			method: "GET", path: "/api/v1/schedules", out: &ScheduleList{Schedules: []Schedule{*sched}, Count: 1, Limit: 100}},
		{name: "UpdateSchedule", call: func(ctx context.Context, c *Client) (any, error) {
			return c.UpdateSchedule(ctx, "sc1", UpdateScheduleRequest{Title: String("t2")})
		}, method: "PATCH", path: "/api/v1/schedules/sc1", in: map[string]any{"title": "t2"}, out: sched},
		{name: "DeleteSchedule", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteSchedule(ctx, "sc1") },
			method: "DELETE", path: "/api/v1/schedules/sc1", status: 204},
		{name: "Contacts", call: func(ctx context.Context, c *Client) (any, error) { return c.Contacts(ctx) },
			method: "GET", path: "/api/v1/contacts", out: &ContactList{Contacts: []Contact{{Name: "ann", Kind: "person"}}}},
		{name: "Suggest", call: func(ctx context.Context, c *Client) (any, error) { return c.Suggest(ctx, "cla", 3) },
			method: "GET", path: "/api/v1/address/suggest", query: url.Values{"q": {"cla"}, "limit": {"3"}}, out: &SuggestionList{Suggestions: []Suggestion{{Address: "claude@/srv", Kind: "agent", Name: "claude"}}}},
		{name: "Resolve", call: func(ctx context.Context, c *Client) (any, error) { return c.Resolve(ctx, "claude@/srv.fix") },
			method: "GET", path: "/api/v1/address/resolve", query: url.Values{"address": {"claude@/srv.fix"}}, out: &Resolution{Address: "claude@/srv.fix", Name: "claude", Kind: "agent", Workspace: "/srv", Session: "alias", Exists: true}},

		// people side
		{name: "MeSend", call: func(ctx context.Context, c *Client) (any, error) { return c.MeSend(ctx, send) },
			method: "POST", path: "/api/v1/me/mail/send", in: send, out: sent},
		{name: "MeInbox", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeInbox(ctx, InboxQuery{Status: "unread", Limit: 10})
		},
			method: "GET", path: "/api/v1/me/mail/inbox", query: url.Values{"status": {"unread"}, "limit": {"10"}}, out: list},
		{name: "MeSent without page", call: func(ctx context.Context, c *Client) (any, error) { return c.MeSent(ctx) },
			method: "GET", path: "/api/v1/me/mail/sent", out: list},
		{name: "MeSent with page", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeSent(ctx, PageQuery{Limit: 2, Cursor: "c"})
		},
			method: "GET", path: "/api/v1/me/mail/sent", query: url.Values{"limit": {"2"}, "cursor": {"c"}}, out: list},
		{name: "MeSearch", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeSearch(ctx, SearchQuery{Q: "50% off_deploy", Limit: 20, Cursor: "c3"})
		},
			method: "GET", path: "/api/v1/me/mail/search", query: url.Values{"q": {"50% off_deploy"}, "limit": {"20"}, "cursor": {"c3"}}, out: found},
		{name: "SearchMail", call: func(ctx context.Context, c *Client) (any, error) {
			return c.SearchMail(ctx, SearchQuery{Q: "部署 from:ann", Sort: SearchNewest})
		},
			method: "GET", path: "/api/v1/mail/search", query: url.Values{"q": {"部署 from:ann"}, "sort": {"newest"}}, out: found},
		{name: "MeMarkRead unread", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeMarkRead(ctx, MarkReadRequest{MailIDs: []string{"m1"}, Unread: true})
		}, method: "POST", path: "/api/v1/me/mail/read", in: MarkReadRequest{MailIDs: []string{"m1"}, Unread: true}, out: &MarkReadResponse{Marked: 1}},
		{name: "MeGetMail", call: func(ctx context.Context, c *Client) (any, error) { return c.MeGetMail(ctx, "m1") },
			method: "GET", path: "/api/v1/me/mail/m1", out: mail},
		{name: "MeForward", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeForward(ctx, "m1", ForwardRequest{To: "pi@/srv.new"})
		}, method: "POST", path: "/api/v1/me/mail/m1/forward", in: ForwardRequest{To: "pi@/srv.new"}, out: sent},
		{name: "MeTree", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeTree(ctx, "m1", TreeQuery{Before: 5, After: 6})
		},
			method: "GET", path: "/api/v1/me/mail/m1/tree", query: url.Values{"before": {"5"}, "after": {"6"}}, out: &Tree{RootID: "m0", FocusID: "m1", Nodes: []TreeNode{{MailID: "m1", CreatedAt: t0}}, Total: 1}},
		{name: "MeCounts", call: func(ctx context.Context, c *Client) (any, error) { return c.MeCounts(ctx) },
			method: "GET", path: "/api/v1/me/counts", out: &Counts{Unread: 3, PendingPermissions: 1}},
		{name: "MeSessions", call: func(ctx context.Context, c *Client) (any, error) { return c.MeSessions(ctx) },
			method: "GET", path: "/api/v1/me/sessions", out: &SessionList{Sessions: []Session{*session}}},
		{name: "MeSession", call: func(ctx context.Context, c *Client) (any, error) { return c.MeSession(ctx, "s1") },
			method: "GET", path: "/api/v1/me/sessions/s1", out: session},
		{name: "MeUpdateSession", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeUpdateSession(ctx, "s1", UpdateSessionRequest{Alias: String("fix"), ResetUsed: true})
		}, method: "PATCH", path: "/api/v1/me/sessions/s1", in: map[string]any{"alias": "fix", "reset_used": true}, out: session},
		{name: "MeSessionMails", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeSessionMails(ctx, "s1", PageQuery{Limit: 9})
		},
			method: "GET", path: "/api/v1/me/sessions/s1/mails", query: url.Values{"limit": {"9"}}, out: list},
		{name: "MeSessionRuns", call: func(ctx context.Context, c *Client) (any, error) { return c.MeSessionRuns(ctx, "s1") },
			method: "GET", path: "/api/v1/me/sessions/s1/runs", out: &RunList{Runs: []Run{run}}},
		{name: "MePermissions", call: func(ctx context.Context, c *Client) (any, error) { return c.MePermissions(ctx, "pending") },
			method: "GET", path: "/api/v1/me/permissions", query: url.Values{"status": {"pending"}}, out: &PermissionList{Permissions: []Permission{*perm}}},
		{name: "Decide", call: func(ctx context.Context, c *Client) (any, error) {
			return c.Decide(ctx, "p1", DecideRequest{Decision: "always", Note: "ok"})
		}, method: "POST", path: "/api/v1/me/permission/p1/decide", in: DecideRequest{Decision: "always", Note: "ok"}, out: perm},
		{name: "MeGrants", call: func(ctx context.Context, c *Client) (any, error) { return c.MeGrants(ctx) },
			method: "GET", path: "/api/v1/me/grants", out: &GrantList{Grants: []Grant{}}},
		{name: "MeDeleteGrant", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.MeDeleteGrant(ctx, "g1") },
			method: "DELETE", path: "/api/v1/me/grants/g1", status: 204},
		{name: "MeCreateSchedule", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeCreateSchedule(ctx, CreateScheduleRequest{Title: "t", EventTime: "2026-12-01", RemindBeforeMinutes: 5, Recipients: "ann，bob"})
		}, method: "POST", path: "/api/v1/me/schedules", in: CreateScheduleRequest{Title: "t", EventTime: "2026-12-01", RemindBeforeMinutes: 5, Recipients: "ann，bob"}, status: 201, out: sched},
		{name: "MeListSchedules", call: func(ctx context.Context, c *Client) (any, error) { return c.MeListSchedules(ctx) },
			method: "GET", path: "/api/v1/me/schedules", out: &ScheduleList{Schedules: []Schedule{}, Limit: 100}},
		{name: "MeUpdateSchedule", call: func(ctx context.Context, c *Client) (any, error) {
			return c.MeUpdateSchedule(ctx, "sc1", UpdateScheduleRequest{EventTime: String("2026-12-02")})
		}, method: "PATCH", path: "/api/v1/me/schedules/sc1", in: map[string]any{"event_time": "2026-12-02"}, out: sched},
		{name: "MeDeleteSchedule", call: func(ctx context.Context, c *Client) (any, error) { return nil, c.MeDeleteSchedule(ctx, "sc1") },
			method: "DELETE", path: "/api/v1/me/schedules/sc1", status: 204},
		{name: "Agents", call: func(ctx context.Context, c *Client) (any, error) { return c.Agents(ctx) },
			method: "GET", path: "/api/v1/agents", out: &AgentList{Agents: []Agent{*agent}}},
		{name: "Agent", call: func(ctx context.Context, c *Client) (any, error) { return c.Agent(ctx, "claude") },
			method: "GET", path: "/api/v1/agents/claude", out: &AgentDetail{Agent: *agent, Sessions: []Session{*session}}},
	}
}

// TestMethodsSendTheDocumentedRequests calls every typed method against the
// fake gateway and checks the method, path, query, headers and JSON body it
// sent and the value it decoded from the answer.
func TestMethodsSendTheDocumentedRequests(t *testing.T) {
	f := newFakeGateway(t)
	c := New(f.srv.URL+"/", WithToken("am_key"), WithUserAgent("test-agent/1"))
	for _, tc := range methodCases() {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == 0 {
				status = http.StatusOK
			}
			f.answer(t, status, tc.out, nil)
			got, err := tc.call(context.Background(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			r := f.last(t)
			if r.Method != tc.method || r.Path != tc.path {
				t.Errorf("sent %s %s, want %s %s", r.Method, r.Path, tc.method, tc.path)
			}
			wantQuery := ""
			if tc.query != nil {
				wantQuery = tc.query.Encode()
			}
			if r.RawQuery != wantQuery {
				t.Errorf("query %q, want %q", r.RawQuery, wantQuery)
			}
			if h := r.Header.Get("Authorization"); h != "Bearer am_key" {
				t.Errorf("Authorization %q, want the Bearer key", h)
			}
			if h := r.Header.Get("User-Agent"); h != "test-agent/1" {
				t.Errorf("User-Agent %q", h)
			}
			if h := r.Header.Get("X-CSRF-Token"); h != "" {
				t.Errorf("a Bearer request sent X-CSRF-Token %q", h)
			}
			if tc.in == nil {
				if len(r.Body) != 0 {
					t.Errorf("sent a body %q, want none", r.Body)
				}
			} else {
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				if !jsonEqual(t, r.Body, tc.in) {
					t.Errorf("body %s, want the JSON of %#v", r.Body, tc.in)
				}
			}
			if tc.out == nil {
				if got != nil {
					t.Errorf("got %#v, want nothing", got)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.out) {
				t.Errorf("decoded %#v\nwant %#v", got, tc.out)
			}
		})
	}
}

// TestBaseURLForms shows that the gateway root and the API root both work
// as base URL.
func TestBaseURLForms(t *testing.T) {
	f := newFakeGateway(t)
	for _, base := range []string{f.srv.URL, f.srv.URL + "/", f.srv.URL + "/api/v1", f.srv.URL + "/api/v1/"} {
		f.answer(t, 200, Counts{Unread: 1}, nil)
		if _, err := New(base).MeCounts(context.Background()); err != nil {
			t.Fatalf("base %q: %v", base, err)
		}
		if p := f.last(t).Path; p != "/api/v1/me/counts" {
			t.Errorf("base %q sent path %q", base, p)
		}
	}
}
