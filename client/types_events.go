package client

import "time"

// SSE event names. The SSE id of every event is its event-log id; a client
// reconnecting with Last-Event-ID gets what it missed; a first connection
// without it gets nothing old (N-11).
const (
	EventNewMail            = "new_mail"
	EventPermissionRequest  = "permission_request"  // people only
	EventPermissionDecision = "permission_decision" // agents and people
	EventSessionUpdated     = "session_updated"     // people only
	EventRunUpdated         = "run_updated"         // people only
	EventRunStop            = "run_stop"            // the run's agent only: a person asked to stop it (RunStopEvent)
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
	FromKind     string    `json:"from_kind" enum:"agent,person,system"`
	Subject      string    `json:"subject"`
	MailType     string    `json:"mail_type" enum:"normal,permission_request,permission_decision,failure_report,reminder"`
	Role         string    `json:"role" enum:"to,cc,from"` // "from" on the sender's own (person's) streams
	ToWorkspace  string    `json:"to_workspace"`
	SessionAlias string    `json:"session_alias"`
	ReplyAddress string    `json:"reply_address"`
	SelfAddress  string    `json:"self_address"`
	ParentMailID string    `json:"parent_mail_id,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	Importance   string    `json:"importance,omitempty" enum:"low,normal,high,urgent"` // "" is normal
	AckRequired  bool      `json:"ack_required,omitempty"`
	// StopWord is true on an agent's event when a person wrote the mail and
	// its whole text (subject aside, trimmed, any case) is "stop" or "停止":
	// the bridge stops the session's running turn instead of starting one,
	// and treats it as an ordinary mail when no turn runs (issue 16).
	StopWord bool `json:"stop_word,omitempty"`
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
	// DecidedVia is how it was decided: "api", "reply", "timeout", or
	// "stop" when a stop of its run closed it (people's streams only: the
	// agent's bridge ended the turn's asks itself).
	DecidedVia string `json:"decided_via,omitempty" enum:"api,reply,timeout,stop"`
	SessionID  string `json:"session_id"`
	RelayKey   string `json:"relay_key"`
	RelayKind  string `json:"relay_kind" enum:"permission"`
	ArgsHash   string `json:"args_hash,omitempty"`
}

// Event is one server-sent event as the client delivers it.
type Event struct {
	ID   int64  // event-log id (the SSE id)
	Type string // one of the Event* names
	Data []byte // JSON payload
}
