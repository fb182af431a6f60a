package client

import "time"

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
	Role      string `json:"role" enum:"admin,user"`
	CSRFToken string `json:"csrf_token"`
}

// Me answers GET /api/v1/me. CSRFToken is present only for cookie sessions.
type Me struct {
	Username  string `json:"username"`
	Role      string `json:"role" enum:"admin,user"`
	AuthKind  string `json:"auth_kind" enum:"cookie,user_key"`
	CSRFToken string `json:"csrf_token,omitempty"`
	// Language is the person's language, "en" (default) or "zh": texts the
	// gateway and bridges write for the person follow it (issue 18).
	Language string `json:"language" enum:"en,zh"`
	// The email channel (issue 20). EmailAvailable is whether this gateway
	// sends email at all. Email is the verified address notifications go
	// to ("" none), confirmed at EmailVerifiedAt; EmailPending an address
	// waiting for its code until EmailPendingExpiresAt. EmailNotify is
	// "all", "permission" (default: permission requests and failure
	// reports) or "none". EmailDelivery is the person's last email.
	EmailAvailable        bool           `json:"email_available"`
	Email                 string         `json:"email"`
	EmailVerifiedAt       *time.Time     `json:"email_verified_at,omitempty"`
	EmailPending          string         `json:"email_pending,omitempty"`
	EmailPendingExpiresAt *time.Time     `json:"email_pending_expires_at,omitempty"`
	EmailNotify           string         `json:"email_notify" enum:"all,permission,none"`
	EmailDelivery         *EmailDelivery `json:"email_delivery,omitempty"`
}

// UpdateMeRequest is the body of PATCH /api/v1/me (issue 20); absent
// fields stay. Language sets the person's language ("en" or "zh"). Email sets the address to notify (a 6-digit code and a link
// are mailed to it; it takes effect once confirmed with POST
// /api/v1/me/email/verify); "" removes the address. EmailNotify is "all",
// "permission" or "none".
type UpdateMeRequest struct {
	Language    *string `json:"language,omitempty" enum:"en,zh"`
	Email       *string `json:"email,omitempty"`
	EmailNotify *string `json:"email_notify,omitempty"`
}

// VerifyEmailRequest is the body of POST /api/v1/me/email/verify: the
// 6-digit Code from the email, or the Token of its link.
type VerifyEmailRequest struct {
	Code  string `json:"code,omitempty"`
	Token string `json:"token,omitempty"`
}

// EmailDelivery is the state of one email to a person. State is "pending"
// (not tried yet), "retrying" (a temporary failure; NextAttemptAt says
// when), "sent" or "failed" (given up; Error says why). Kind is "mail" (a
// notification of MailID), "verify" (a code) or "notice".
type EmailDelivery struct {
	State         string     `json:"state" enum:"pending,retrying,sent,failed"`
	Kind          string     `json:"kind" enum:"mail,verify,notice"`
	Address       string     `json:"address"`
	MailID        string     `json:"mail_id,omitempty"`
	Attempts      int        `json:"attempts"`
	Error         string     `json:"error,omitempty"`
	At            time.Time  `json:"at"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
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
	Label     string     `json:"label" in:"optional"`
	Lifecycle string     `json:"lifecycle" in:"optional" enum:",permanent,one_time,timed"` // "" means "permanent"
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// CreateAgentKeyRequest is the body of POST /api/v1/admin/agent-keys.
// KeyToken, when set, registers a client-generated token (seed 9.9: the
// field is key_token); when empty the gateway issues one and returns it once.
type CreateAgentKeyRequest struct {
	AgentName string     `json:"agent_name"`
	KeyToken  string     `json:"key_token,omitempty"`
	Label     string     `json:"label,omitempty"`
	Lifecycle string     `json:"lifecycle" in:"optional" enum:",permanent,one_time,timed"` // "" means "permanent"
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
	Kind       string     `json:"kind" enum:"agent,user"`
	Owner      string     `json:"owner"`
	Label      string     `json:"label"`
	Lifecycle  string     `json:"lifecycle" enum:"permanent,one_time,timed"`
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
	Role      string    `json:"role" enum:"admin,user"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateUserRequest is the body of POST /api/v1/admin/users.
type CreateUserRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`                              // at least 8 characters
	Role     string `json:"role" in:"optional" enum:",admin,user"` // "" means "user"
}

// UpdateUserRequest is the body of PATCH /api/v1/admin/users/{username};
// only the fields sent change.
type UpdateUserRequest struct {
	Disabled *bool   `json:"disabled,omitempty"`
	Password *string `json:"password,omitempty"`
	Role     *string `json:"role,omitempty" enum:"admin,user"`
}

// UserList answers GET /api/v1/admin/users.
type UserList struct {
	Users []User `json:"users"`
}
