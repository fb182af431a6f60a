package client

import (
	"path"
	"strings"
	"time"
)

// Coordination between agents (issue 21 items 1-3): importance,
// acknowledgements and file reservations.

// Importance levels of a mail, lowest first. "" on a send is normal.
const (
	ImportanceLow    = "low"
	ImportanceNormal = "normal"
	ImportanceHigh   = "high"
	ImportanceUrgent = "urgent"
)

// Bounds of acknowledgements.
const (
	// DefaultAckWithinMinutes is how long recipients have to acknowledge a
	// mail sent with ack_required when the send names no ack_within_minutes:
	// 24 hours. After it the acknowledgement is overdue.
	DefaultAckWithinMinutes = 24 * 60
	// MaxAckWithinMinutes bounds ack_within_minutes: 30 days.
	MaxAckWithinMinutes = 30 * 24 * 60
)

// MailAck is one recipient's acknowledgement state of a mail sent with
// ack_required: AckedAt is nil while the recipient has not acknowledged.
type MailAck struct {
	Name    string     `json:"name"`
	AckedAt *time.Time `json:"acked_at,omitempty"`
}

// AckResponse answers POST /api/v1/mail/{id}/ack and
// /api/v1/me/mail/{id}/ack. Already is true when the caller had
// acknowledged the mail before (AckedAt is then that first time).
type AckResponse struct {
	MailID  string    `json:"mail_id"`
	AckedAt time.Time `json:"acked_at"`
	Already bool      `json:"already"`
}

// AckWaiting is one mail of the "waiting for acknowledgement" view. Role
// "sender": the caller sent it and Pending names the recipients who have
// not acknowledged; Role "recipient": the caller owes the
// acknowledgement. Overdue is true once DueAt has passed.
type AckWaiting struct {
	MailID       string    `json:"mail_id"`
	SessionID    string    `json:"session_id"`
	SessionAlias string    `json:"session_alias"`
	Subject      string    `json:"subject"`
	FromName     string    `json:"from_name"`
	Importance   string    `json:"importance" enum:"low,normal,high,urgent"`
	Role         string    `json:"role" enum:"sender,recipient"`
	CreatedAt    time.Time `json:"created_at"`
	DueAt        time.Time `json:"due_at"`
	Overdue      bool      `json:"overdue"`
	Pending      []string  `json:"pending"`
	Acked        []MailAck `json:"acked"`
}

// AckWaitingList answers GET /api/v1/mail/unacknowledged and
// /api/v1/me/mail/unacknowledged, oldest due first.
type AckWaitingList struct {
	Mails []AckWaiting `json:"mails"`
}

// AckWaitingQuery selects the waiting-for-acknowledgement view: Role
// "sender", "recipient" or "" (both); Overdue true keeps only overdue
// ones; Limit 0 is the gateway's default (50, at most 200).
type AckWaitingQuery struct {
	Role    string
	Overdue bool
	Limit   int
}

// Bounds of reservations.
const (
	// DefaultReservationTTLMinutes is the life of a reservation that names
	// no ttl_minutes: 60.
	DefaultReservationTTLMinutes = 60
	// MaxReservationTTLMinutes bounds ttl_minutes: 24 hours.
	MaxReservationTTLMinutes = 24 * 60
	// MaxReservationPaths bounds the paths of one request.
	MaxReservationPaths = 100
	// MaxReservationPathBytes bounds one path or glob.
	MaxReservationPathBytes = 1024
	// MaxReservationReasonRunes bounds a reservation's reason.
	MaxReservationReasonRunes = 500
	// MaxReservationsPerAgent bounds what one agent holds at once.
	MaxReservationsPerAgent = 500
)

// Reservation is an advisory lease on a path or glob of a workspace (an
// absolute directory), held by an agent until ExpiresAt. Path is relative
// to Workspace ("src/api/*.go", "docs/**", "README.md"). SessionID and
// SessionAlias name the session it was taken in, only for a viewer who
// takes part in that session.
type Reservation struct {
	ReservationID string    `json:"reservation_id"`
	Workspace     string    `json:"workspace"`
	Path          string    `json:"path"`
	Exclusive     bool      `json:"exclusive"`
	Reason        string    `json:"reason"`
	Holder        string    `json:"holder"`
	SessionID     string    `json:"session_id,omitempty"`
	SessionAlias  string    `json:"session_alias,omitempty"`
	TTLMinutes    int       `json:"ttl_minutes"`
	CreatedAt     time.Time `json:"created_at"`
	RenewedAt     time.Time `json:"renewed_at"`
	ExpiresAt     time.Time `json:"expires_at"`
}

// ReservationConflict is another agent's reservation that overlaps a
// requested path. Refused is true when the path was not granted because of
// it (either side is exclusive).
type ReservationConflict struct {
	Path    string      `json:"path"`
	Refused bool        `json:"refused"`
	Held    Reservation `json:"held"`
}

// ReserveRequest is the body of POST /api/v1/reservations. Workspace is
// the absolute directory the paths are relative to (a turn token: its
// session's workspace or a directory inside it); Paths are 1 to 100
// relative paths or globs (*, ?, [..], {a,b}, ** across directories) of at
// most 1024 bytes each; Exclusive defaults to true; TTLMinutes defaults to
// 60, 1 to 1440; Reason at most 500 characters. SessionID, when set, is
// the session the reservation belongs to (a turn token's own session when
// empty).
type ReserveRequest struct {
	Workspace  string   `json:"workspace" bounds:"maxLength=4096"`
	Paths      []string `json:"paths" bounds:"minItems=1,maxItems=100,maxLength=1024"`
	Exclusive  *bool    `json:"exclusive,omitempty"`
	TTLMinutes int      `json:"ttl_minutes,omitempty" bounds:"minimum=0,maximum=1440"`
	Reason     string   `json:"reason,omitempty" bounds:"maxLength=500"`
	SessionID  string   `json:"session_id,omitempty"`
}

// ReserveResponse answers POST /api/v1/reservations: the granted
// reservations (new or renewed), every conflict with another agent's
// reservation, and the paths refused because of an exclusive conflict.
type ReserveResponse struct {
	Granted   []Reservation         `json:"granted"`
	Conflicts []ReservationConflict `json:"conflicts"`
	Refused   []string              `json:"refused"`
}

// ReservationSelect is the body of POST /api/v1/reservations/renew and
// /release: the caller's own reservations with those ids, or in Workspace
// with those paths, or (neither given) all of them in Workspace (every one
// when Workspace is empty too). TTLMinutes (renew only) is the new life
// from now, 1 to 1440; 0 keeps each one's own.
type ReservationSelect struct {
	Workspace      string   `json:"workspace,omitempty" bounds:"maxLength=4096"`
	Paths          []string `json:"paths,omitempty" bounds:"maxItems=100,maxLength=1024"`
	ReservationIDs []string `json:"reservation_ids,omitempty" bounds:"maxItems=500"`
	TTLMinutes     int      `json:"ttl_minutes,omitempty" bounds:"minimum=0,maximum=1440"`
}

// ReservationList answers GET /api/v1/reservations and
// /api/v1/me/reservations, and renew and release (the reservations
// changed).
type ReservationList struct {
	Reservations []Reservation `json:"reservations"`
}

// ReservationCheckRequest is the body of POST /api/v1/reservations/check
// and /api/v1/me/reservations/check (the pre-commit guard): the paths
// (relative to Workspace, at most 10000 of at most 1024 bytes) about to be
// committed.
type ReservationCheckRequest struct {
	Workspace string   `json:"workspace" bounds:"maxLength=4096"`
	Paths     []string `json:"paths,omitempty" bounds:"maxItems=10000,maxLength=1024"`
}

// MaxCheckPaths bounds the paths of one ReservationCheckRequest.
const MaxCheckPaths = 10000

// ReservationCheck answers a ReservationCheckRequest: Blocking lists the
// paths another agent holds exclusively (the commit should stop), Shared
// the paths others hold shared (a notice).
type ReservationCheck struct {
	Workspace string                `json:"workspace"`
	Blocking  []ReservationConflict `json:"blocking"`
	Shared    []ReservationConflict `json:"shared"`
}

// Reservation changes of a reservation_changed event.
const (
	ReservationReserved      = "reserved"
	ReservationRenewed       = "renewed"
	ReservationReleased      = "released"
	ReservationExpired       = "expired"
	ReservationRunStopped    = "run_stopped"
	ReservationHolderOffline = "holder_offline"
)

// ReservationEvent is the data of a reservation_changed event, sent to
// every agent that holds a reservation in the workspace (the ones whose
// reservations ended included). By is who made the change (an agent or a
// person), or "" when the gateway ended them. The reservations carry no
// session.
type ReservationEvent struct {
	Workspace    string        `json:"workspace"`
	Change       string        `json:"change" enum:"reserved,renewed,released,expired,run_stopped,holder_offline"`
	By           string        `json:"by,omitempty"`
	Reservations []Reservation `json:"reservations"`
}

// EventReservationChanged is the event of reservations taken, renewed or
// ended in a workspace (agents only).
const EventReservationChanged = "reservation_changed"

// WorkspaceTooShallow reports whether the absolute path p names "/" or a
// directory right under it ("/home", "/tmp"), which the gateway refuses as
// a registered workspace (POST /agent/register, 400): those hold
// everybody's work, and a registered workspace reaches the reservations in
// and below it. A relative or empty p is false.
func WorkspaceTooShallow(p string) bool {
	p = strings.TrimSpace(p)
	return path.IsAbs(p) && strings.Count(path.Clean(p), "/") < 2
}
