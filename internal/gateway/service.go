// Package gateway holds the rules of AgentMail: accounts and keys, agents,
// sending mail (addressing, sessions, round budgets, relays, the new-session
// rate limit), conversation trees and runs. It knows nothing of HTTP; the
// httpapi package turns its typed errors into status codes.
//
// Every write goes through Service.Write, one database transaction; every
// mail is stored with its recipients and its events in that same
// transaction, and the event hub is woken after the commit.
package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentmail/agentmail/internal/store"
)

// DefaultOnlineWithin is Config.OnlineWithin's default: an agent without a
// heartbeat for 90 s (three missed 30 s heartbeats) is offline.
const DefaultOnlineWithin = 90 * time.Second

// Config holds the tunable rules. Zero fields take the defaults below.
type Config struct {
	// DefaultRounds is the round budget of a new agent (admin-set per agent
	// afterwards); default 20 (seed 001 "round-trip budget").
	DefaultRounds int
	// NewSessionLimit is how many new sessions an agent may create per
	// NewSessionWindow; default 20 per hour (issue 2 item 7). People are exempt.
	NewSessionLimit  int
	NewSessionWindow time.Duration
	// OnlineWithin: an agent seen within this long is "online"; default
	// DefaultOnlineWithin (three missed 30 s heartbeats). An agent not seen
	// for longer is offline and loses its turn tokens
	// (RevokeOfflineTurnTokens).
	OnlineWithin time.Duration
	// CookieTTL is how long a cookie session lives without use; default 14 days.
	CookieTTL time.Duration
	// BcryptCost is the bcrypt work factor of stored passwords; default
	// bcrypt.DefaultCost. Tests lower it to bcrypt.MinCost to run fast;
	// `agentmail serve` leaves the default.
	BcryptCost int
	// ScheduleLimit is how many schedules one owner may keep, sent ones
	// included; the next is a 409 schedule_limit. Default
	// DefaultScheduleLimit (AGENTMAIL_SCHEDULE_LIMIT).
	ScheduleLimit int
	// MaxSessionsPerOwner is how many sessions one person or agent may
	// open (sessions never close, so all it ever opened count); the next
	// send that would open one is a 409 session_limit. Default
	// DefaultMaxSessionsPerOwner (AGENTMAIL_MAX_SESSIONS_PER_OWNER).
	MaxSessionsPerOwner int
	// ScheduleZone is the zone in which an event_time without zone is read
	// and reminder times are written; default time.Local (TZ).
	ScheduleZone *time.Location
	// KeyCacheTTL is how long a verified bearer key is served from memory
	// (keycache.go): the longest a revocation or a person's disabling made
	// on another replica goes unseen here. Default 2 s; negative turns the
	// cache off.
	KeyCacheTTL time.Duration
	// MaxPendingPermissions is how many permission requests of one session
	// may wait for a decision at once; the next is a 429
	// too_many_pending_permissions (caps.go). Default
	// DefaultMaxPendingPermissions.
	MaxPendingPermissions int
	// AttachmentQuotaBytes is how many bytes of uploads no mail carries yet
	// one uploader (person or agent) may hold; an upload beyond it is a 413
	// attachment_quota_exceeded (caps.go). Default
	// DefaultAttachmentQuotaBytes.
	AttachmentQuotaBytes int64
	// TurnTokenTTL bounds the life of a per-turn token (turntokens.go): it
	// expires this long after it was issued even when nobody revokes it.
	// Default 12 h.
	TurnTokenTTL time.Duration
	// ReservationOfflineTTL is how long the holder of a reservation may go
	// unseen (no heartbeat, register or reservation call) before its
	// reservations end (reservations.go). Default
	// DefaultReservationOfflineTTL (AGENTMAIL_RESERVATION_OFFLINE_TTL).
	ReservationOfflineTTL time.Duration
	// DelegationDepth bounds a chain of delegated sessions (origin of
	// origin ..., issue 15 point 5): a send from a turn whose session is
	// already this many delegations deep is a 400 delegation_too_deep.
	// Default DefaultDelegationDepth.
	DelegationDepth int
}

func (c *Config) fill() {
	if c.DefaultRounds == 0 {
		c.DefaultRounds = 20
	}
	if c.NewSessionLimit == 0 {
		c.NewSessionLimit = 20
	}
	if c.NewSessionWindow == 0 {
		c.NewSessionWindow = time.Hour
	}
	if c.OnlineWithin <= 0 {
		c.OnlineWithin = DefaultOnlineWithin
	}
	if c.CookieTTL == 0 {
		c.CookieTTL = 14 * 24 * time.Hour
	}
	if c.BcryptCost == 0 {
		c.BcryptCost = bcrypt.DefaultCost
	}
	if c.MaxSessionsPerOwner <= 0 {
		c.MaxSessionsPerOwner = DefaultMaxSessionsPerOwner
	}
	if c.ScheduleLimit <= 0 {
		c.ScheduleLimit = DefaultScheduleLimit
	}
	if c.ScheduleZone == nil {
		c.ScheduleZone = time.Local
	}
	if c.KeyCacheTTL == 0 {
		c.KeyCacheTTL = 2 * time.Second
	}
	if c.MaxPendingPermissions <= 0 {
		c.MaxPendingPermissions = DefaultMaxPendingPermissions
	}
	if c.AttachmentQuotaBytes <= 0 {
		c.AttachmentQuotaBytes = DefaultAttachmentQuotaBytes
	}
	if c.DelegationDepth <= 0 {
		c.DelegationDepth = DefaultDelegationDepth
	}
	if c.TurnTokenTTL <= 0 {
		c.TurnTokenTTL = DefaultTurnTokenTTL
	}
	if c.ReservationOfflineTTL <= 0 {
		c.ReservationOfflineTTL = DefaultReservationOfflineTTL
	}
}

// Notifier is woken after a transaction that wrote events commits (the SSE
// hub; a PostgreSQL LISTEN/NOTIFY bridge can sit behind the same call).
type Notifier interface {
	Notify()
}

// Service is the gateway's rule engine over one store.
type Service struct {
	Store  *store.Store
	Clock  Clock
	Config Config
	Log    *slog.Logger
	// Notifier is woken after commits that wrote events; may be nil.
	Notifier Notifier
	// MailsCommitted, when set, is told the mail_type of every mail a
	// transaction stored, once it has committed (the mails-sent metric).
	MailsCommitted func(mailTypes []string)

	keys      keyCache // verified bearer keys (keycache.go)
	dummyOnce sync.Once
	dummy     []byte   // a bcrypt hash at Config.BcryptCost (accounts.go dummyHash)
	nameKinds sync.Map // name → kind, for good (keycache.go)
}

// New builds a Service with defaults filled in. clock nil means
// SystemClock; log nil means slog.Default().
func New(st *store.Store, clock Clock, cfg Config, log *slog.Logger) *Service {
	if clock == nil {
		clock = SystemClock{}
	}
	if log == nil {
		log = slog.Default()
	}
	cfg.fill()
	return &Service{Store: st, Clock: clock, Config: cfg, Log: log}
}

// Now answers the service clock's time truncated to milliseconds (the
// stored precision), in UTC.
func (s *Service) Now() time.Time { return s.Clock.Now().UTC().Truncate(time.Millisecond) }

// Tx is a write transaction with the service's helpers. Now is fixed for
// the whole transaction.
type Tx struct {
	*store.Q
	Svc    *Service
	Now    time.Time
	events int
	// mailTypes lists the mails CreateMailTx stored in this transaction.
	mailTypes []string
}

// Write runs fn in one transaction. Nothing is kept when fn fails; when it
// succeeds and wrote events, the Notifier is woken after the commit.
// Errors that are not *Error become 500s at the HTTP layer.
//
// On PostgreSQL the transaction runs alone among the writes of every
// replica (store.Store.Write). fn may run more than once (store Write):
// results are assigned to variables outside, never appended.
func (s *Service) Write(ctx context.Context, fn func(tx *Tx) error) error {
	return s.write(ctx, fn, false)
}

// WriteShared is Write for a write that holds its count-then-insert
// rules through narrow locks (tx.LockKeys before each rule's read, see
// store.Store.WriteShared): on PostgreSQL it runs in parallel with the
// other shared writes of every replica. Sends use it (mail.go).
func (s *Service) WriteShared(ctx context.Context, fn func(tx *Tx) error) error {
	return s.write(ctx, fn, true)
}

func (s *Service) write(ctx context.Context, fn func(tx *Tx) error, shared bool) error {
	var events int
	var mailTypes []string
	write := s.Store.Write
	if shared {
		write = s.Store.WriteShared
	}
	err := write(ctx, func(q *store.Q) error {
		tx := &Tx{Q: q, Svc: s, Now: s.Now()}
		err := fn(tx)
		events, mailTypes = tx.events, tx.mailTypes
		return err
	})
	if err == nil && events > 0 && s.Notifier != nil {
		s.Notifier.Notify()
	}
	if err == nil && len(mailTypes) > 0 && s.MailsCommitted != nil {
		s.MailsCommitted(mailTypes)
	}
	return err
}

// Read answers a read-only query handle.
func (s *Service) Read() *store.Q { return s.Store.Read() }

// Emit writes one event for one recipient into the event log, in this
// transaction (issue 2 item 9). payload is encoded as JSON.
func (tx *Tx) Emit(ctx context.Context, recipient, typ string, payload any) (int64, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return 0, err
	}
	id, err := tx.InsertEvent(ctx, recipient, typ, b, tx.Now)
	if err == nil {
		tx.events++
	}
	return id, err
}

// EmitLater is Emit for an event whose id the caller does not need at
// once: on PostgreSQL the row is queued with the transaction's other
// waiting statements (store.Q.QueueEvent), and events queued one after
// the other go as one insert. The id is the answer's EventID.
func (tx *Tx) EmitLater(ctx context.Context, recipient, typ string, payload any) (*store.Later, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	l := tx.QueueEvent(ctx, recipient, typ, b, tx.Now)
	if err := l.Err(); err != nil {
		return nil, err
	}
	tx.events++
	return l, nil
}
