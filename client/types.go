package client

import "time"

// This file is the wire contract of the AgentMail HTTP API: every request and
// response body the gateway accepts or returns, as Go types. The gateway
// encodes with these very types, so the server and this client cannot drift
// apart. Field names are snake_case JSON. Times are RFC 3339 in UTC.
// docs/API.md gives the route for each type.

// ErrorBody is the JSON shape of every error answer (W-9).
//
// Status codes: 400 bad field (Field names it), 401 bad or missing key,
// 403 round budget spent or not allowed, 404 unknown id or alias (an id the
// caller may not see is also a 404), 409 conflict (decision already made, no
// person to decide), 413 attachment too large, 429 rate limited
// (RetryAfterSeconds set, and a Retry-After header), 5xx server fault.
type ErrorBody struct {
	Error             string `json:"error"`                         // human-readable message
	Code              string `json:"code"`                          // stable machine code, e.g. "alias_not_found"
	Field             string `json:"field,omitempty"`               // request field at fault, for 400
	Suggestion        string `json:"suggestion,omitempty"`          // what to do instead
	RetryAfterSeconds int    `json:"retry_after_seconds,omitempty"` // for 429
}

// ---------------------------------------------------------------- accounts

// ChangePasswordRequest is the body of POST /api/v1/me/password: a person
// changes their own password (at least 8 characters). Other cookie sessions
// of that person end; the current one stays signed in.
type ChangePasswordRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// LoginRequest is the body of POST /api/v1/auth/login.
type LoginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// LoginResponse answers POST /api/v1/auth/login; the session cookie is set
// alongside. CSRFToken must be sent as X-CSRF-Token on every cookie-
// authenticated write.
type LoginResponse struct {
	Username  string `json:"username"`
	Role      string `json:"role"` // "admin" | "user"
	CSRFToken string `json:"csrf_token"`
}

// Me answers GET /api/v1/me. CSRFToken is present only for cookie sessions.
type Me struct {
	Username  string `json:"username"`
	Role      string `json:"role"`
	AuthKind  string `json:"auth_kind"` // "cookie" | "user_key"
	CSRFToken string `json:"csrf_token,omitempty"`
}

// Key lifecycles.
const (
	LifecyclePermanent = "permanent"
	LifecycleOneTime   = "one_time" // dies after its first successful use
	LifecycleTimed     = "timed"    // dies at ExpiresAt
)

// CreateUserKeyRequest is the body of POST /api/v1/me/keys.
// ExpiresAt is required when Lifecycle is "timed" and refused otherwise.
type CreateUserKeyRequest struct {
	Label     string     `json:"label"`
	Lifecycle string     `json:"lifecycle"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// CreateAgentKeyRequest is the body of POST /api/v1/admin/agent-keys.
// KeyToken, when set, registers a client-generated token (seed 9.9: the
// field is key_token); when empty the gateway issues one and returns it once.
type CreateAgentKeyRequest struct {
	AgentName string     `json:"agent_name"`
	KeyToken  string     `json:"key_token,omitempty"`
	Label     string     `json:"label,omitempty"`
	Lifecycle string     `json:"lifecycle"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// CreatedKey answers key creation. KeyToken is only present when the
// gateway generated the token, and only in this one answer.
type CreatedKey struct {
	KeyID    string `json:"key_id"`
	KeyToken string `json:"key_token,omitempty"`
	KeyInfo
}

// KeyInfo describes a stored key; the token itself is never returned again
// (only a hash is stored). Kind is "agent" or "user"; Owner is the agent
// name or the username.
type KeyInfo struct {
	KeyID      string     `json:"key_id"`
	Kind       string     `json:"kind"`
	Owner      string     `json:"owner"`
	Label      string     `json:"label"`
	Lifecycle  string     `json:"lifecycle"`
	Prefix     string     `json:"prefix"` // first characters of the token, to recognise it
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	Active     bool       `json:"active"` // not revoked, not expired, not a used one-time key
}

// KeyList answers GET /api/v1/me/keys, /admin/agent-keys and /admin/user-keys.
type KeyList struct {
	Keys []KeyInfo `json:"keys"`
}

// User is a person's account as the admin sees it.
type User struct {
	Username  string    `json:"username"`
	Role      string    `json:"role"` // "admin" | "user"
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateUserRequest is the body of POST /api/v1/admin/users.
type CreateUserRequest struct {
	Username string `json:"username"`
	Password string `json:"password"` // at least 8 characters
	Role     string `json:"role"`     // "admin" | "user"; default "user"
}

// UpdateUserRequest is the body of PATCH /api/v1/admin/users/{username};
// only the fields sent change.
type UpdateUserRequest struct {
	Disabled *bool   `json:"disabled,omitempty"`
	Password *string `json:"password,omitempty"`
	Role     *string `json:"role,omitempty"`
}

// UserList answers GET /api/v1/admin/users.
type UserList struct {
	Users []User `json:"users"`
}

// ------------------------------------------------------------------ agents

// Workspace is one element of RegisterRequest.Workspaces (W-2: an object,
// never a string).
type Workspace struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// RegisterRequest is the body of POST /api/v1/agent/register (W-2). Name must
// equal the agent name the key was registered for (or be empty).
type RegisterRequest struct {
	Name       string      `json:"name"`
	Platform   string      `json:"platform"`
	Workspaces []Workspace `json:"workspaces"`
}

// Agent describes an agent as people and admins see it.
type Agent struct {
	Name          string     `json:"name"`
	Platform      string     `json:"platform"`
	Status        string     `json:"status"` // "online" | "offline", from LastSeen (online when seen within 90 s)
	LastSeen      *time.Time `json:"last_seen,omitempty"`
	DefaultRounds int        `json:"default_rounds"` // round budget given to new sessions; default 20
	RegisteredAt  *time.Time `json:"registered_at,omitempty"`
}

// AgentList answers GET /api/v1/agents and GET /api/v1/admin/agents.
type AgentList struct {
	Agents []Agent `json:"agents"`
}

// AgentDetail answers GET /api/v1/agents/{name}.
type AgentDetail struct {
	Agent
	Models             []Model           `json:"models"`         // catalogue from the last heartbeat
	AllowedModels      []ModelRef        `json:"allowed_models"` // priority order
	ModelsUnrestricted bool              `json:"models_unrestricted"`
	Sessions           []Session         `json:"sessions"`          // mail sessions of this agent, most recent first
	PlatformSessions   []PlatformSession `json:"platform_sessions"` // mirror from the last heartbeat
}

// UpdateAgentRequest is the body of PATCH /api/v1/admin/agents/{name}.
type UpdateAgentRequest struct {
	DefaultRounds *int `json:"default_rounds,omitempty"` // >= 0; 0 means unlimited
}

// PlatformSession is one entry of the heartbeat's platform session snapshot
// (W-3, S-1..S-4).
type PlatformSession struct {
	PlatformID string     `json:"platform_id"`
	Workspace  string     `json:"workspace"`
	Slug       string     `json:"slug"`
	Title      string     `json:"title,omitempty"`
	MailDriven bool       `json:"mail_driven"`
	UpdatedAt  *time.Time `json:"updated_at,omitempty"`
}

// Model is one catalogue entry reported by a heartbeat (W-3).
type Model struct {
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	DisplayName string `json:"display_name,omitempty"`
}

// ModelRef names one allowed model; lists of it are in priority order.
type ModelRef struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// HeartbeatRequest is the body of POST /api/v1/agent/heartbeat (W-3). A nil
// slice (field omitted) keeps what the server has; an empty slice clears it
// (N-7). Both fields use pointers so the difference survives encoding.
type HeartbeatRequest struct {
	PlatformSessions *[]PlatformSession `json:"platform_sessions,omitempty"`
	Models           *[]Model           `json:"models,omitempty"`
}

// AgentStats is part of HeartbeatResponse.
type AgentStats struct {
	AgentName     string `json:"agent_name"`
	DefaultRounds int    `json:"default_rounds"`
	SentTotal     int    `json:"sent_total"`
}

// HeartbeatResponse answers POST /api/v1/agent/heartbeat (W-3).
// ModelsUnrestricted true means no list is set (use the platform default),
// which differs from an empty AllowedModels with ModelsUnrestricted false
// (nothing allowed).
type HeartbeatResponse struct {
	Status                 string     `json:"status"` // "ok"
	PendingMails           int        `json:"pending_mails"`
	Stats                  AgentStats `json:"stats"`
	PlatformSessionsSynced int        `json:"platform_sessions_synced"`
	ModelsSynced           int        `json:"models_synced"`
	AllowedModels          []ModelRef `json:"allowed_models"`
	ModelsUnrestricted     bool       `json:"models_unrestricted"`
}

// AllowedModels answers GET /api/v1/agent/models/allowed and is the body and
// answer of PUT /api/v1/admin/agents/{name}/models. In the PUT, a null or
// absent AllowedModels with ModelsUnrestricted true removes the list.
type AllowedModels struct {
	AllowedModels      []ModelRef `json:"allowed_models"`
	ModelsUnrestricted bool       `json:"models_unrestricted"`
}

// ------------------------------------------------------------------- mail

// Mail types.
const (
	MailTypeNormal             = "normal"
	MailTypePermissionRequest  = "permission_request"
	MailTypePermissionDecision = "permission_decision"
	MailTypeFailureReport      = "failure_report"
	MailTypeReminder           = "reminder"
)

// Relay kinds (W-5): the only legal non-empty values of SendMailRequest.Relay.
const (
	RelaySummary    = "summary"
	RelayPermission = "permission"
)

// SendMailRequest is the body of POST /api/v1/mail/send (agents, W-5) and
// POST /api/v1/me/mail/send (people, who may also set RoundBudget).
//
// To is one address `name@path.session` or a bare person name. Cc is a list
// separated by comma, semicolon, whitespace or a full-width comma.
// SessionAlias only applies when a new session is created. Relay is "" or
// "summary" ("permission" is stored only by POST /api/v1/permission/request;
// a send with it is a 400); RelayKey is required when Relay is set (W-5.1)
// and a replay answers {"status":"duplicate_relay"} (W-5.2). A summary relay
// must have ReplyTo set to a mail the sender received, and reaches only that
// mail's sender and its session's participants.
type SendMailRequest struct {
	To            string   `json:"to"`
	Cc            string   `json:"cc,omitempty"`
	Subject       string   `json:"subject"`
	Body          string   `json:"body"` // Markdown
	ReplyTo       string   `json:"reply_to,omitempty"`
	SessionAlias  string   `json:"session_alias,omitempty"`
	AttachmentIDs []string `json:"attachment_ids,omitempty"`
	Relay         string   `json:"relay,omitempty"`
	RelayKey      string   `json:"relay_key,omitempty"`
	MailType      string   `json:"mail_type,omitempty"`    // agents: "" | "normal" | "failure_report"
	RoundBudget   *int     `json:"round_budget,omitempty"` // people only; 0 = unlimited; only for a mail that opens a session (else 400)
}

// SendMailResponse answers a send or forward (W-5). Status is "sent", or
// "duplicate_relay" when the relay_key was seen before (then nothing was
// stored and MailID names the original mail). BudgetMax 0 means unlimited.
type SendMailResponse struct {
	Status          string `json:"status"`
	MailID          string `json:"mail_id"`
	SessionID       string `json:"session_id"`
	SessionAlias    string `json:"session_alias"`
	NewSession      bool   `json:"new_session"`
	BudgetRemaining int    `json:"budget_remaining"`
	BudgetMax       int    `json:"budget_max"`
}

// ForwardRequest is the body of POST /api/v1/mail/{id}/forward and
// /api/v1/me/mail/{id}/forward (T-5): a new thread to To with full
// addressing, quoting the original; Body is the forwarder's note.
type ForwardRequest struct {
	To      string `json:"to"`
	Cc      string `json:"cc,omitempty"`
	Subject string `json:"subject,omitempty"` // default "Fwd: <original subject>"
	Body    string `json:"body,omitempty"`
	// AttachmentIDs adds the forwarder's own attachments; the original's
	// attachments always travel with the forward.
	AttachmentIDs []string `json:"attachment_ids,omitempty"`
}

// Recipient is one addressee of a mail.
type Recipient struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"` // "agent" | "person"
	Role      string `json:"role"` // "to" | "cc"
	Address   string `json:"address"`
	Workspace string `json:"workspace,omitempty"`
}

// Attachment describes a stored attachment (W-8).
type Attachment struct {
	AttachmentID string    `json:"attachment_id"`
	Filename     string    `json:"filename"`
	Size         int64     `json:"size"` // bytes
	SHA256       string    `json:"sha256"`
	ContentType  string    `json:"content_type"` // as declared by the uploader; downloads are always octet-stream
	CreatedAt    time.Time `json:"created_at"`
}

// Mail is one stored mail as its viewer sees it. Read and Role are the
// viewer's own state; they are empty for the sender.
type Mail struct {
	MailID       string       `json:"mail_id"`
	SessionID    string       `json:"session_id"`
	SessionAlias string       `json:"session_alias"`
	ParentMailID string       `json:"parent_mail_id,omitempty"`
	FromName     string       `json:"from_name"`
	FromKind     string       `json:"from_kind"` // "agent" | "person" | "system"
	FromAddress  string       `json:"from_address"`
	Recipients   []Recipient  `json:"recipients"`
	Subject      string       `json:"subject"`
	Body         string       `json:"body"`
	MailType     string       `json:"mail_type"`
	Relay        string       `json:"relay,omitempty"`
	Attachments  []Attachment `json:"attachments"`
	CreatedAt    time.Time    `json:"created_at"`
	Read         bool         `json:"read"`
	Role         string       `json:"role,omitempty"`       // "to" | "cc" for a recipient viewer
	Permission   *Permission  `json:"permission,omitempty"` // for permission_request mails
}

// MailList answers inbox, sent, search, thread and session mail listings.
// Unread is the number of unread mails the viewer has in all (not only the
// listed ones). NextCursor, set when the page was full, continues the
// listing in its own order: older mails for the newest-first listings
// (inbox, sent, search), newer mails for a session's mails (oldest first).
type MailList struct {
	Mails      []Mail `json:"mails"`
	Unread     int    `json:"unread"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// MarkReadRequest is the body of POST /api/v1/mail/read and
// /api/v1/me/mail/read. Unread true marks them unread instead.
type MarkReadRequest struct {
	MailIDs []string `json:"mail_ids"`
	Unread  bool     `json:"unread,omitempty"`
}

// MarkReadResponse answers a MarkReadRequest.
type MarkReadResponse struct {
	Marked int `json:"marked"`
}

// TreeNode is one mail in a conversation tree (parent_mail_id links, across
// sessions through forwards), without the body.
type TreeNode struct {
	MailID       string    `json:"mail_id"`
	ParentMailID string    `json:"parent_mail_id,omitempty"`
	SessionID    string    `json:"session_id"`
	SessionAlias string    `json:"session_alias"`
	FromName     string    `json:"from_name"`
	Subject      string    `json:"subject"`
	Snippet      string    `json:"snippet"` // first 140 characters of the body
	MailType     string    `json:"mail_type"`
	Depth        int       `json:"depth"` // 0 = root
	CreatedAt    time.Time `json:"created_at"`
}

// Tree answers GET /api/v1/me/mail/{id}/tree?before=N&after=N&cursor=...
// Nodes are in conversation order (depth-first by time). HasBefore/HasAfter
// tell whether more nodes exist; BeforeCursor/AfterCursor load them.
type Tree struct {
	RootID       string     `json:"root_id"`
	FocusID      string     `json:"focus_id"`
	Nodes        []TreeNode `json:"nodes"`
	HasBefore    bool       `json:"has_before"`
	HasAfter     bool       `json:"has_after"`
	BeforeCursor string     `json:"before_cursor,omitempty"`
	AfterCursor  string     `json:"after_cursor,omitempty"`
	Total        int        `json:"total"`
}

// --------------------------------------------------------------- sessions

// Session is a mail session (conversation) as its participants see it.
// BudgetMax 0 means unlimited. AliasSource is "auto", "platform" or
// "manual" (a person's choice, which always wins, W-7).
type Session struct {
	SessionID         string    `json:"session_id"`
	Alias             string    `json:"alias"`
	AliasSource       string    `json:"alias_source"`
	Subject           string    `json:"subject"`
	AgentName         string    `json:"agent_name,omitempty"`
	Workspace         string    `json:"workspace"`
	BudgetMax         int       `json:"budget_max"`
	UsedRounds        int       `json:"used_rounds"`
	PlatformSessionID string    `json:"platform_session_id,omitempty"`
	Participants      []string  `json:"participants"`
	CreatedBy         string    `json:"created_by"`
	CreatedAt         time.Time `json:"created_at"`
	LastActivity      time.Time `json:"last_activity"`
	// Filled in session listings for the viewer:
	Unread         int    `json:"unread"`
	LastMailID     string `json:"last_mail_id,omitempty"`
	LastFrom       string `json:"last_from,omitempty"`
	LastSnippet    string `json:"last_snippet,omitempty"`
	MailCount      int    `json:"mail_count"`
	PendingPermits int    `json:"pending_permissions"`
	RunState       string `json:"run_state,omitempty"` // state of the latest run, if any
}

// SessionList answers GET /api/v1/me/sessions (most recent activity first).
// NextCursor, when set, is the cursor of the next (older) page.
type SessionList struct {
	Sessions   []Session `json:"sessions"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// UpdateSessionRequest is the body of PATCH /api/v1/me/sessions/{id}.
// Alias set by a person becomes alias_source "manual". ResetUsed sets
// used_rounds back to 0.
type UpdateSessionRequest struct {
	Alias     *string `json:"alias,omitempty"`
	BudgetMax *int    `json:"budget_max,omitempty"` // >= 0; 0 = unlimited
	ResetUsed bool    `json:"reset_used,omitempty"`
}

// SyncSessionRequest is the body of POST /api/v1/sessions/{id}/sync (W-7).
// The answer is the Session with the final alias, which the bridge writes
// back to the platform (D-5).
type SyncSessionRequest struct {
	Alias string `json:"alias,omitempty"`
	Title string `json:"title,omitempty"`
}

// BindPlatformSessionRequest is the body of PUT
// /api/v1/sessions/{id}/platform-session: the bridge stores the platform's
// session id on the mail session (B-3.3), so the map survives a restart.
type BindPlatformSessionRequest struct {
	PlatformSessionID string `json:"platform_session_id"`
}

// Participant is one member of a session.
type Participant struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"` // "agent" | "person"
	Address string `json:"address"`
}

// ParticipantList answers GET /api/v1/sessions/{id}/participants.
type ParticipantList struct {
	SessionID    string        `json:"session_id"`
	Participants []Participant `json:"participants"`
}

// ------------------------------------------------------------ permissions

// PermissionRequest is the body of POST /api/v1/permission/request (W-6).
// Options default to ["approve", "always", "deny"]. RelayKey (the platform's
// permission id) makes the call idempotent. Tool and ToolInput describe the
// exact call; the gateway stores a SHA-256 of the canonical ToolInput and a
// decision only applies to that hash. ExpiresAt, when set, makes the gateway
// decide "deny" with decided_by "timeout" once it passes.
type PermissionRequest struct {
	Question  string         `json:"question"`
	Options   []string       `json:"options,omitempty"`
	Context   string         `json:"context,omitempty"`
	SessionID string         `json:"session_id"`
	RelayKey  string         `json:"relay_key"`
	Tool      string         `json:"tool,omitempty"`
	ToolInput map[string]any `json:"tool_input,omitempty"`
	Scope     string         `json:"scope,omitempty"` // grant scope, e.g. the workspace; default the session's workspace
	ExpiresAt *time.Time     `json:"expires_at,omitempty"`
}

// Permission is the state of one permission request. Status is "pending",
// "approved" or "denied". DecidedVia is "api", "reply" or "timeout".
type Permission struct {
	MailID    string   `json:"mail_id"`
	SessionID string   `json:"session_id"`
	AgentName string   `json:"agent_name"`
	Question  string   `json:"question"`
	Options   []string `json:"options"`
	Context   string   `json:"context,omitempty"`
	Tool      string   `json:"tool,omitempty"`
	ArgsHash  string   `json:"args_hash,omitempty"`
	// ToolSummary is one line naming the tool and its arguments (for
	// example "Bash: rm -rf build/"), for lists that show no mail body.
	ToolSummary    string     `json:"tool_summary,omitempty"`
	RelayKey       string     `json:"relay_key"`
	Status         string     `json:"status"`
	Decision       string     `json:"decision,omitempty"`
	Approved       bool       `json:"approved"`
	Always         bool       `json:"always"`
	Note           string     `json:"note,omitempty"`
	DecidedBy      string     `json:"decided_by,omitempty"`
	DecidedVia     string     `json:"decided_via,omitempty"`
	DecisionMailID string     `json:"decision_mail_id,omitempty"`
	DecidedAt      *time.Time `json:"decided_at,omitempty"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	Duplicate      bool       `json:"duplicate,omitempty"` // true when this answer is a replay of an earlier request
}

// PermissionList answers GET /api/v1/me/permissions?status=pending.
type PermissionList struct {
	Permissions []Permission `json:"permissions"`
}

// DecideRequest is the body of POST /api/v1/me/permission/{mail_id}/decide.
// Only an approval word (see ApprovalWords in the gateway) approves; any
// other text, the empty string included, denies. "always"/"一直同意" also
// stores a grant.
type DecideRequest struct {
	Decision string `json:"decision"`
	Note     string `json:"note,omitempty"`
}

// Grant is a stored "always allow": agent + tool + scope.
type Grant struct {
	GrantID   string    `json:"grant_id"`
	AgentName string    `json:"agent_name"`
	Tool      string    `json:"tool"`
	Scope     string    `json:"scope"`
	GrantedBy string    `json:"granted_by"`
	MailID    string    `json:"mail_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// GrantList answers GET /api/v1/grants (agent: its own, filter ?tool=&scope=)
// and GET /api/v1/me/grants.
type GrantList struct {
	Grants []Grant `json:"grants"`
}

// -------------------------------------------------------------- schedules

// CreateScheduleRequest is the body of POST /api/v1/schedules and
// /api/v1/me/schedules. EventTime accepts RFC 3339, a local time without
// zone (server zone) or a date alone (09:00 that day); natural language is a
// 400 whose message includes the server's current time. Recipients is one
// string separated by ASCII or full-width commas; empty means the owner.
// RemindBeforeMinutes accepts a number or a numeric string.
type CreateScheduleRequest struct {
	Title               string `json:"title"`
	Body                string `json:"body,omitempty"`
	EventTime           string `json:"event_time"`
	RemindBeforeMinutes any    `json:"remind_before_minutes,omitempty"`
	Recipients          string `json:"recipients,omitempty"`
}

// UpdateScheduleRequest is the body of PATCH /api/v1/schedules/{id}: only
// the fields sent change.
type UpdateScheduleRequest struct {
	Title               *string `json:"title,omitempty"`
	Body                *string `json:"body,omitempty"`
	EventTime           *string `json:"event_time,omitempty"`
	RemindBeforeMinutes any     `json:"remind_before_minutes,omitempty"`
	Recipients          *string `json:"recipients,omitempty"`
}

// Schedule is a stored reminder. SentAt is set once the reminder mail went
// out (exactly once, even across restarts and replicas).
type Schedule struct {
	ScheduleID          string     `json:"schedule_id"`
	Owner               string     `json:"owner"`
	Title               string     `json:"title"`
	Body                string     `json:"body"`
	EventTime           time.Time  `json:"event_time"`
	RemindBeforeMinutes int        `json:"remind_before_minutes"`
	RemindAt            time.Time  `json:"remind_at"`
	Recipients          []string   `json:"recipients"`
	SentAt              *time.Time `json:"sent_at,omitempty"`
	CreatedAt           time.Time  `json:"created_at"`
}

// ScheduleList answers GET /api/v1/schedules. Hint is set when Count is at
// or above 75 % of Limit.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
	Count     int        `json:"count"`
	Limit     int        `json:"limit"`
	Hint      string     `json:"hint,omitempty"`
}

// ------------------------------------------------------------- discovery

// Suggestion is one address suggestion (GET /api/v1/address/suggest?q=).
// Kind is "person", "agent", "workspace" or "session".
type Suggestion struct {
	Address    string     `json:"address"`
	Kind       string     `json:"kind"`
	Name       string     `json:"name"`
	Workspace  string     `json:"workspace,omitempty"`
	Alias      string     `json:"alias,omitempty"`
	Title      string     `json:"title,omitempty"`
	LastActive *time.Time `json:"last_active,omitempty"`
}

// SuggestionList answers GET /api/v1/address/suggest.
type SuggestionList struct {
	Suggestions []Suggestion `json:"suggestions"`
}

// Resolution answers GET /api/v1/address/resolve?address=: where a mail to
// that address would go, without creating anything. Session is "default",
// "new" or "alias"; Exists tells whether that session exists now (a default
// session that does not exist yet will be created). An unknown alias or
// name is a 404 ErrorBody, exactly as sending would be.
type Resolution struct {
	Address   string `json:"address"`
	Name      string `json:"name"`
	Kind      string `json:"kind"` // "agent" | "person"
	Workspace string `json:"workspace"`
	Session   string `json:"session"`
	Exists    bool   `json:"exists"`
	SessionID string `json:"session_id,omitempty"`
	Alias     string `json:"alias,omitempty"`
}

// Contact is one entry of GET /api/v1/contacts.
type Contact struct {
	Name     string     `json:"name"`
	Kind     string     `json:"kind"` // "agent" | "person"
	Platform string     `json:"platform,omitempty"`
	Status   string     `json:"status,omitempty"`
	LastSeen *time.Time `json:"last_seen,omitempty"`
}

// ContactList answers GET /api/v1/contacts.
type ContactList struct {
	Contacts []Contact `json:"contacts"`
}

// Counts answers GET /api/v1/me/counts.
type Counts struct {
	Unread             int `json:"unread"`
	PendingPermissions int `json:"pending_permissions"`
}

// ------------------------------------------------------------------- runs

// Run states (seed 004): one vocabulary everywhere.
const (
	RunRunning  = "running"
	RunIdle     = "idle"
	RunFinished = "finished"
	RunFailed   = "failed"
)

// Run is one turn of an agent platform for one mail, reported by the bridge
// with PUT /api/v1/runs/{run_id} (an upsert) and listed with
// GET /api/v1/me/sessions/{id}/runs. Every field is backed by a process fact.
type Run struct {
	RunID         string     `json:"run_id"`
	SessionID     string     `json:"session_id"`
	MailID        string     `json:"mail_id"`
	AgentName     string     `json:"agent_name"`
	State         string     `json:"state"` // running | idle | finished | failed
	Model         string     `json:"model,omitempty"`
	Attempt       int        `json:"attempt"`
	PID           int        `json:"pid,omitempty"`
	ExitCode      *int       `json:"exit_code,omitempty"`
	StartedAt     time.Time  `json:"started_at"`
	EndedAt       *time.Time `json:"ended_at,omitempty"`
	DurationMS    int64      `json:"duration_ms"`
	BytesRead     int64      `json:"bytes_read"`
	UnparsedLines int        `json:"unparsed_lines"`
	StopReason    string     `json:"stop_reason,omitempty"`
	Error         string     `json:"error,omitempty"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// RunList answers GET /api/v1/me/sessions/{id}/runs and
// GET /api/v1/sessions/{id}/runs.
type RunList struct {
	Runs []Run `json:"runs"`
}

// ----------------------------------------------------------------- events

// SSE event names. The SSE id of every event is its event-log id; a client
// reconnecting with Last-Event-ID gets what it missed; a first connection
// without it gets nothing old (N-11).
const (
	EventNewMail            = "new_mail"
	EventPermissionRequest  = "permission_request"  // people only
	EventPermissionDecision = "permission_decision" // agents and people
	EventSessionUpdated     = "session_updated"     // people only
	EventRunUpdated         = "run_updated"         // people only
)

// NewMailEvent is the data of a new_mail event (W-4). ToWorkspace is the
// path part of this recipient's own address.
//
// Role is "to" or "cc" for a recipient. A person's own streams
// (/me/events/stream) also get the event of each mail that person sent,
// with Role "from" (ToWorkspace "", SelfAddress the sender's address,
// ReplyAddress the first "to" recipient's), so other tabs show sent mail
// live; agents never get "from" events, and a client following new work
// must skip them.
type NewMailEvent struct {
	MailID       string    `json:"mail_id"`
	SessionID    string    `json:"session_id"`
	FromName     string    `json:"from_name"`
	FromKind     string    `json:"from_kind"`
	Subject      string    `json:"subject"`
	MailType     string    `json:"mail_type"`
	Role         string    `json:"role"` // "to" | "cc"; "from" on the sender's own (person's) streams
	ToWorkspace  string    `json:"to_workspace"`
	SessionAlias string    `json:"session_alias"`
	ReplyAddress string    `json:"reply_address"`
	SelfAddress  string    `json:"self_address"`
	ParentMailID string    `json:"parent_mail_id,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// PermissionDecisionEvent is the data of a permission_decision event (W-4).
// Decision is the decider's word ("approve", "同意", "deny", ...); Approved
// is the gateway's verdict on it.
type PermissionDecisionEvent struct {
	MailID         string `json:"mail_id"`
	DecisionMailID string `json:"decision_mail_id"`
	Decision       string `json:"decision"`
	Approved       bool   `json:"approved"`
	Always         bool   `json:"always"`
	Note           string `json:"note"`
	DecidedBy      string `json:"decided_by"` // username, or "timeout"
	SessionID      string `json:"session_id"`
	RelayKey       string `json:"relay_key"`
	RelayKind      string `json:"relay_kind"` // "permission"
	ArgsHash       string `json:"args_hash,omitempty"`
}

// Event is one server-sent event as the client delivers it.
type Event struct {
	ID   int64  // event-log id (the SSE id)
	Type string // one of the Event* names
	Data []byte // JSON payload
}

// CreateTurnTokenRequest is the body of POST /api/v1/agent/turn-tokens: the
// session the token will act in (one the agent takes part in).
type CreateTurnTokenRequest struct {
	SessionID string `json:"session_id"`
}

// TurnToken answers POST /api/v1/agent/turn-tokens. Token is the bearer
// token (prefix "amt_"), present in this one answer only; TokenID names it
// for DELETE /api/v1/agent/turn-tokens/{token_id}. It acts as the agent
// within SessionID only, until ExpiresAt (at most the gateway's bound,
// 12 h by default) or its revocation.
type TurnToken struct {
	TokenID   string    `json:"token_id"`
	Token     string    `json:"token"`
	SessionID string    `json:"session_id"`
	ExpiresAt time.Time `json:"expires_at"`
}
