package client

import (
	"reflect"
	"time"
)

// Workspace is one element of RegisterRequest.Workspaces (W-2: an object,
// never a string).
type Workspace struct {
	Name string `json:"name" in:"optional"` // a request sends a name or a path, or both
	Path string `json:"path" in:"optional"`
}

// RegisterRequest is the body of POST /api/v1/agent/register (W-2). Name must
// equal the agent name the key was registered for (or be empty).
type RegisterRequest struct {
	Name       string      `json:"name" in:"optional"` // "" or the key's agent
	Platform   string      `json:"platform" in:"optional"`
	Workspaces []Workspace `json:"workspaces,omitempty"` // absent: none
	// Instance names the bridge process that registers: the gateway gives
	// it the agent's bridge lease, or refuses it with 409
	// bridge_instance_conflict while another instance's lease is live
	// (docs/API.md, "One bridge per agent"). Omitted (an older bridge):
	// no lease is taken, and a live lease of another instance refuses it.
	Instance *BridgeInstance `json:"instance,omitempty"`
	// Replaces is the instance id of an earlier bridge process on this
	// host that the bridge knows has ended (its process is gone): it takes
	// that instance's lease at once instead of waiting for it to expire.
	// "" none; ignored when that instance does not hold the lease.
	Replaces string `json:"replaces,omitempty" in:"optional"`
}

// BridgeInstance identifies one bridge process of an agent (the agent's
// bridge lease): ID is a random id made at the process's start (at most
// MaxInstanceID characters: letters, digits, '-', '_'), Host the host
// name and PID the process id, told to the person who starts a second
// bridge of the agent. Host is at most MaxInstanceHost characters, one
// line.
type BridgeInstance struct {
	ID   string `json:"id" bounds:"maxLength=64"`
	Host string `json:"host" in:"optional" bounds:"maxLength=255"`
	PID  int    `json:"pid" in:"optional"`
}

// Bounds of BridgeInstance's fields, in characters.
const (
	MaxInstanceID   = 64
	MaxInstanceHost = 255
)

// CodeBridgeInstanceConflict is the error code of a bridge refused because
// another instance of the agent's bridge holds its lease (409).
const CodeBridgeInstanceConflict = "bridge_instance_conflict"

// Agent describes an agent as people and admins see it.
type Agent struct {
	Name          string     `json:"name"`
	Platform      string     `json:"platform"`
	Status        string     `json:"status" enum:"online,offline"` // from LastSeen (online when seen within 90 s)
	LastSeen      *time.Time `json:"last_seen,omitempty"`
	DefaultRounds int        `json:"default_rounds"` // round budget given to new sessions; default 20
	RegisteredAt  *time.Time `json:"registered_at,omitempty"`
	// Failing is set while the agent is online and its bridge reports that
	// its recent turns all failed, or its start-up check found a cause
	// (issue 18 point 1): the page shows "online, failing: <reason>".
	Failing *AgentFailing `json:"failing,omitempty"`
	// BridgeVersion and PlatformVersion are the build fingerprint the
	// agent's bridge last reported in its heartbeat (seed 004 sections 3
	// and 7): the agentmail build and the platform's own `--version`
	// answer; absent until a bridge reported them.
	BridgeVersion   string `json:"bridge_version,omitempty"`
	PlatformVersion string `json:"platform_version,omitempty"`
}

// Causes of AgentFailing and AgentHealth: what the failures point to, each
// with its own fix (docs/PLATFORMS.md "Start-up check").
const (
	FailingNotSignedIn    = "not_signed_in"    // the platform has no login or API key
	FailingNoCLI          = "no_cli"           // the platform's program is missing or does not run
	FailingNoDirectory    = "no_directory"     // the mails' working directories do not exist
	FailingNoModelAllowed = "no_model_allowed" // the admin's model scope allows no model
	FailingBusy           = "busy"             // the model provider is busy or limits use
	FailingOther          = "other"            // another reason, in the platform's words
)

// AgentFailing says why an online agent's recent turns fail.
type AgentFailing struct {
	Cause  string `json:"cause" enum:"not_signed_in,no_cli,no_directory,no_model_allowed,busy,other"`
	Reason string `json:"reason"`           // one line in English that names the fix; at most 300 characters
	Detail string `json:"detail,omitempty"` // the platform's own words (or the directory), untranslated; at most 300 characters
}

// AgentHealth is the bridge's report of its recent turns in a heartbeat:
// Cause "" means they work (or none ran yet and the start-up check found
// nothing); otherwise the last failure's cause and reason.
type AgentHealth struct {
	Cause  string `json:"cause" enum:",not_signed_in,no_cli,no_directory,no_model_allowed,busy,other"`
	Reason string `json:"reason,omitempty"` // one line in English; at most 300 characters are kept
	Detail string `json:"detail,omitempty"` // the platform's own words; at most 300 characters are kept
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
	PlatformID string     `json:"platform_id" bounds:"maxLength=512"`
	Workspace  string     `json:"workspace" bounds:"maxLength=4096"`
	Slug       string     `json:"slug" bounds:"maxLength=200"`
	Title      string     `json:"title,omitempty" bounds:"maxLength=500"`
	MailDriven bool       `json:"mail_driven"`
	UpdatedAt  *time.Time `json:"updated_at,omitempty"`
}

// Model is one catalogue entry reported by a heartbeat (W-3).
type Model struct {
	Provider    string `json:"provider" bounds:"maxLength=200"`
	Model       string `json:"model" bounds:"maxLength=200"`
	DisplayName string `json:"display_name,omitempty" bounds:"maxLength=200"`
}

// ModelRef names one allowed model; lists of it are in priority order.
type ModelRef struct {
	Provider string `json:"provider" in:"optional"`
	Model    string `json:"model"`
}

// HeartbeatRequest is the body of POST /api/v1/agent/heartbeat (W-3). A nil
// slice (field omitted) keeps what the server has; an empty slice clears it
// (N-7). Both fields use pointers so the difference survives encoding.
type HeartbeatRequest struct {
	PlatformSessions *[]PlatformSession `json:"platform_sessions,omitempty"`
	Models           *[]Model           `json:"models,omitempty" bounds:"maxItems=1000"`
	// Health is the bridge's report of its recent turns (issue 18 point
	// 1); omitted keeps what the gateway has.
	Health *AgentHealth `json:"health,omitempty"`
	// BridgeVersion is the bridge's own build (`agentmail --version`) and
	// PlatformVersion the platform program's `--version` answer (seed 004
	// section 3, the build fingerprint); each at most MaxVersionText
	// characters, omitted keeps what the gateway has.
	BridgeVersion   string `json:"bridge_version,omitempty"`
	PlatformVersion string `json:"platform_version,omitempty"`
	// Instance renews the bridge lease RegisterRequest.Instance took (409
	// bridge_instance_conflict when another instance holds it now: this
	// bridge was silent longer than the lease and another one started).
	// Omitted (an older bridge): no lease is renewed or checked.
	Instance *BridgeInstance `json:"instance,omitempty"`
	// Release, with Instance, ends that instance's lease now: the bridge
	// stops, and the next bridge of the agent connects at once. Nothing
	// else of the request is stored; an instance that does not hold the
	// lease changes nothing. Release without Instance is a 400.
	Release bool `json:"release,omitempty"`
}

// MaxVersionText bounds HeartbeatRequest's version fields, in characters.
const MaxVersionText = 200

// Length bounds of a heartbeat's catalogue and mirror, in characters (a
// longer value is a 400 naming the field, and the heartbeat stores
// nothing): a Model's provider, model and display_name MaxModelRunes, at
// most MaxHeartbeatModels models; a PlatformSession's platform_id
// MaxPlatformIDRunes, slug MaxSlugRunes, title MaxPlatformTitleRunes and
// workspace MaxPlatformWorkspaceRunes.
const (
	MaxModelRunes             = 200
	MaxHeartbeatModels        = 1000
	MaxPlatformIDRunes        = 512
	MaxSlugRunes              = 200
	MaxPlatformTitleRunes     = 500
	MaxPlatformWorkspaceRunes = 4096
)

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

// AllowedModels answers GET /api/v1/agent/models/allowed and PUT
// /api/v1/admin/agents/{name}/models: the allowed models in priority
// order, or ModelsUnrestricted true (and an empty list) when none is set.
// The PUT's body is a SetAllowedModelsRequest.
type AllowedModels struct {
	AllowedModels      []ModelRef `json:"allowed_models"`
	ModelsUnrestricted bool       `json:"models_unrestricted"`
}

// SetAllowedModelsRequest is the body of PUT
// /api/v1/admin/agents/{name}/models, one of two shapes (W-3, D-3):
// {"allowed_models": [...]} sets the list in priority order ([] allows
// nothing; models_unrestricted, if sent, is false), or
// {"models_unrestricted": true} removes it (allowed_models absent or
// null). Anything else is a 400: both at once (even with []), neither, an
// empty model, the same model twice.
type SetAllowedModelsRequest struct {
	AllowedModels      *[]ModelRef `json:"allowed_models,omitempty"`
	ModelsUnrestricted bool        `json:"models_unrestricted,omitempty"`
}

// OpenAPIInputSchema describes the two shapes as a oneOf (the OpenAPI
// document of internal/httpapi).
func (SetAllowedModelsRequest) OpenAPIInputSchema(schemaOf func(reflect.Type) map[string]any) map[string]any {
	list := schemaOf(reflect.TypeOf([]ModelRef{}))
	return map[string]any{
		"description": "Either the allowed models in priority order, or models_unrestricted true to remove the list.",
		"oneOf": []any{
			map[string]any{"title": "AllowedModelsList", "type": "object", "required": []any{"allowed_models"},
				"properties": map[string]any{"allowed_models": list, "models_unrestricted": map[string]any{"type": "boolean", "const": false}}},
			map[string]any{"title": "ModelsUnrestricted", "type": "object", "required": []any{"models_unrestricted"},
				"properties": map[string]any{"allowed_models": map[string]any{"type": "null"}, "models_unrestricted": map[string]any{"type": "boolean", "const": true}}},
		},
	}
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
