package client

import "time"

// Suggestion is one address suggestion (GET /api/v1/address/suggest?q=).
// Kind is "person", "agent", "workspace" or "session".
type Suggestion struct {
	Address    string     `json:"address"`
	Kind       string     `json:"kind" enum:"person,agent,workspace,session"`
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
	Kind      string `json:"kind" enum:"agent,person"`
	Workspace string `json:"workspace"`
	Session   string `json:"session" enum:"default,new,alias"`
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
