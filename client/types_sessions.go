package client

import "time"

// Session is a mail session (conversation) as its participants see it.
// BudgetMax 0 means unlimited. AliasSource says where the alias came from,
// best first: "manual" (a person's choice, which always wins, W-7),
// "platform_slug", "platform_title" (D-5 levels 1 and 2), "subject"
// (derived from a mail subject, level 3), "auto" (the gateway's own name);
// "platform" is a platform name stored before the levels were kept.
// FormerAliases are the aliases the session had before, oldest first: each
// still reaches the session for its participants (issue 14). They are
// filled in the answers about one session (GET and PATCH
// /me/sessions/{id}, the bridge's sync) and in session_updated events, not
// in listings; absent when the session was never renamed.
type Session struct {
	SessionID         string   `json:"session_id"`
	Alias             string   `json:"alias"`
	AliasSource       string   `json:"alias_source" enum:"auto,subject,platform_title,platform_slug,platform,manual"`
	FormerAliases     []string `json:"former_aliases,omitempty"`
	Subject           string   `json:"subject"`
	AgentName         string   `json:"agent_name,omitempty"`
	Workspace         string   `json:"workspace"`
	BudgetMax         int      `json:"budget_max"`
	UsedRounds        int      `json:"used_rounds"`
	PlatformSessionID string   `json:"platform_session_id,omitempty"`
	// OriginSessionID is the session whose turn opened this one by
	// delegation (issue 15); absent for a session opened outside a turn.
	OriginSessionID string `json:"origin_session_id,omitempty"`
	// Origin is the origin session, filled in the answers about one
	// session (GET /me/sessions/{id}, GET /sessions/{id}) when the viewer
	// may see it; absent otherwise, as for a session opened outside a turn.
	Origin *SessionRef `json:"origin,omitempty"`
	// Delegations are the sessions delegated from this one (issue 15),
	// oldest first, at most 100, each with its own rounds: filled in the
	// answers about one session, absent when there are none.
	Delegations  []SessionRef `json:"delegations,omitempty"`
	Participants []string     `json:"participants"`
	CreatedBy    string       `json:"created_by"`
	CreatedAt    time.Time    `json:"created_at"`
	LastActivity time.Time    `json:"last_activity"`
	// Filled in session listings for the viewer:
	Unread      int    `json:"unread"`
	LastMailID  string `json:"last_mail_id,omitempty"`
	LastFrom    string `json:"last_from,omitempty"`
	LastSnippet string `json:"last_snippet,omitempty"` // the start of the last mail's body as plain text (Markdown dropped)
	// LastMailType is the last mail's type: a failure_report there marks
	// the session as failed in lists (issue 18 point 10).
	LastMailType   string `json:"last_mail_type,omitempty" enum:"normal,permission_request,permission_decision,failure_report,reminder"`
	MailCount      int    `json:"mail_count"`
	PendingPermits int    `json:"pending_permissions"`
	RunState       string `json:"run_state,omitempty" enum:"running,idle,queued,finished,failed"` // state of the latest run, if any
	// RunningTurns is how many of the session's runs are running now, any
	// of them, not only the latest (the inbox marks such a conversation,
	// issue 16).
	RunningTurns int `json:"running_turns,omitempty"`
}

// SessionRef names a session next to another one: the origin of a
// delegated session, or a session delegated from it (issue 15). AgentName
// is the agent asked in it; UsedRounds and BudgetMax are its own rounds (0
// = unlimited), which the origin is never charged for.
type SessionRef struct {
	SessionID  string `json:"session_id"`
	Alias      string `json:"alias"`
	Subject    string `json:"subject"`
	AgentName  string `json:"agent_name,omitempty"`
	UsedRounds int    `json:"used_rounds"`
	BudgetMax  int    `json:"budget_max"`
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
	Alias     *string `json:"alias,omitempty" bounds:"maxLength=200"`
	BudgetMax *int    `json:"budget_max,omitempty"` // >= 0; 0 = unlimited
	ResetUsed bool    `json:"reset_used,omitempty"`
}

// SyncSessionRequest is the body of POST /api/v1/sessions/{id}/sync (W-7).
// The answer is the Session with the final alias, which the bridge writes
// back to the platform (D-5).
//
// AliasLevel is the D-5 rung the alias came from: 1 the platform's slug, 2
// derived from its title, 3 derived from the mail subject; 0 (absent) is 1,
// W-7's alias being the platform's slug. The gateway takes the alias only
// when it is a better level than the session's current one and the
// session's first turn has not ended; a person's alias always stays. The
// title is taken whenever it is usable.
type SyncSessionRequest struct {
	Alias      string `json:"alias,omitempty"`
	Title      string `json:"title,omitempty"`
	AliasLevel int    `json:"alias_level,omitempty"`
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
