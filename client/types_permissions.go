package client

import "time"

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
// "approved" or "denied". DecidedVia is "api", "reply", "timeout" or
// "stop": a stop of the run it was asked in closed it as denied (issue 16,
// B-9.2; DecidedBy is the person who stopped the run).
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
	Status         string     `json:"status" enum:"pending,approved,denied"`
	Decision       string     `json:"decision,omitempty"`
	Approved       bool       `json:"approved"`
	Always         bool       `json:"always"`
	Note           string     `json:"note,omitempty"`
	DecidedBy      string     `json:"decided_by,omitempty"`
	DecidedVia     string     `json:"decided_via,omitempty" enum:"api,reply,timeout,stop"`
	DecisionMailID string     `json:"decision_mail_id,omitempty"`
	DecidedAt      *time.Time `json:"decided_at,omitempty"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	// RunID is the run the request was asked in: the agent's run of the
	// session that was running when the request arrived (absent when none
	// was). Stopping that run closes the request.
	RunID string `json:"run_id,omitempty"`
	// Duplicate is true when this answer is a replay: of an earlier
	// request (the same relay_key), or of an earlier decision (the same
	// person deciding the same way again, which changes nothing).
	Duplicate bool `json:"duplicate,omitempty"`
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
