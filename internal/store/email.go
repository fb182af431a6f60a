package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// The email channel's tables (migration 0033, internal/emailchannel).

// EmailAccountRow is a person's mail address and notification preference.
// Address is the verified address in force ("" none); PendingAddress waits
// for the code whose SHA-256 is CodeHash (and the link token's LinkHash).
type EmailAccountRow struct {
	Username       string
	Address        string
	VerifiedAt     *time.Time
	Notify         string // "all" | "permission" | "none"
	PendingAddress string
	CodeHash       string
	LinkHash       string
	CodeExpiresAt  *time.Time
	CodeTries      int
	CodeSentAt     *time.Time
	CodesSent      int       // codes sent since CodesWindow
	CodesWindow    time.Time // start of the window CodesSent counts in
	UpdatedAt      time.Time
}

const emailAccountCols = `username, address, verified_at, notify, pending_address, code_hash, link_hash,
	code_expires_at, code_tries, code_sent_at, codes_sent, codes_window, updated_at`

func scanEmailAccount(sc interface{ Scan(...any) error }) (EmailAccountRow, error) {
	var a EmailAccountRow
	var verified, expires, sent sql.NullInt64
	var window, updated int64
	err := sc.Scan(&a.Username, &a.Address, &verified, &a.Notify, &a.PendingAddress, &a.CodeHash, &a.LinkHash,
		&expires, &a.CodeTries, &sent, &a.CodesSent, &window, &updated)
	a.VerifiedAt, a.CodeExpiresAt, a.CodeSentAt = TimePtr(verified), TimePtr(expires), TimePtr(sent)
	a.CodesWindow, a.UpdatedAt = FromMillis(window), FromMillis(updated)
	return a, err
}

// EmailAccount answers the person's row, or ErrNotFound when they never
// set an address or a preference.
func (q *Q) EmailAccount(ctx context.Context, username string) (EmailAccountRow, error) {
	a, err := scanEmailAccount(q.QueryRow(ctx, `SELECT `+emailAccountCols+` FROM email_accounts WHERE username = ?`, username))
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNotFound
	}
	return a, err
}

// EmailAddressOwner answers the person whose verified address is addr
// (compared in lower case), or ErrNotFound.
func (q *Q) EmailAddressOwner(ctx context.Context, addrKey string) (string, error) {
	var name string
	err := q.QueryRow(ctx, `SELECT username FROM email_accounts WHERE address_key = ?`, addrKey).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return name, err
}

// PutEmailAccount writes the person's whole row. addrKey is the
// lower-cased Address ("" stores NULL); a verified address another person
// holds is a unique violation (IsUniqueViolation).
func (q *Q) PutEmailAccount(ctx context.Context, a EmailAccountRow, addrKey string) error {
	key := sql.NullString{String: addrKey, Valid: addrKey != ""}
	_, err := q.Exec(ctx, `INSERT INTO email_accounts (`+emailAccountCols+`, address_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (username) DO UPDATE SET address = excluded.address, verified_at = excluded.verified_at,
			notify = excluded.notify, pending_address = excluded.pending_address, code_hash = excluded.code_hash,
			link_hash = excluded.link_hash, code_expires_at = excluded.code_expires_at, code_tries = excluded.code_tries,
			code_sent_at = excluded.code_sent_at, codes_sent = excluded.codes_sent, codes_window = excluded.codes_window,
			updated_at = excluded.updated_at, address_key = excluded.address_key`,
		a.Username, a.Address, NullMillis(a.VerifiedAt), a.Notify, a.PendingAddress, a.CodeHash, a.LinkHash,
		NullMillis(a.CodeExpiresAt), a.CodeTries, NullMillis(a.CodeSentAt), a.CodesSent, Millis(a.CodesWindow),
		Millis(a.UpdatedAt), key)
	return err
}

// Outbox states.
const (
	OutboxPending = "pending"
	OutboxSent    = "sent"
	OutboxFailed  = "failed"
)

// OutboxRow is one email to deliver. Message is the RFC 5322 message (""
// once delivered or given up).
type OutboxRow struct {
	OutboxID      string
	DedupeKey     string
	Kind          string // "mail" | "verify" | "notice"
	Username      string
	MailID        string
	Address       string
	MessageID     string
	Message       string
	State         string
	Attempts      int
	NextAttemptAt time.Time
	LeaseUntil    time.Time
	LastError     string
	CreatedAt     time.Time
	SentAt        *time.Time
	UpdatedAt     time.Time
}

const outboxCols = `outbox_id, dedupe_key, kind, username, mail_id, address, message_id, message, state, attempts,
	next_attempt_at, lease_until, last_error, created_at, sent_at, updated_at`

func scanOutbox(sc interface{ Scan(...any) error }) (OutboxRow, error) {
	var o OutboxRow
	var next, lease, created, updated int64
	var sent sql.NullInt64
	err := sc.Scan(&o.OutboxID, &o.DedupeKey, &o.Kind, &o.Username, &o.MailID, &o.Address, &o.MessageID, &o.Message,
		&o.State, &o.Attempts, &next, &lease, &o.LastError, &created, &sent, &updated)
	o.NextAttemptAt, o.LeaseUntil, o.CreatedAt, o.UpdatedAt = FromMillis(next), FromMillis(lease), FromMillis(created), FromMillis(updated)
	o.SentAt = TimePtr(sent)
	return o, err
}

// InsertOutbox adds an email to the outbox; false (nothing written) when
// an entry with the same DedupeKey exists.
func (q *Q) InsertOutbox(ctx context.Context, o OutboxRow) (bool, error) {
	res, err := q.Exec(ctx, `INSERT INTO email_outbox (`+outboxCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (dedupe_key) DO NOTHING`,
		o.OutboxID, o.DedupeKey, o.Kind, o.Username, o.MailID, o.Address, o.MessageID, o.Message, o.State, o.Attempts,
		Millis(o.NextAttemptAt), Millis(o.LeaseUntil), o.LastError, Millis(o.CreatedAt), NullMillis(o.SentAt), Millis(o.UpdatedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// ClaimOutbox leases the pending entry due longest ago (next_attempt_at <=
// now, no lease in force) until leaseUntil and answers it; ErrNotFound
// when none is due. Call it in a write transaction: writes are serialised,
// so two senders never claim the same entry.
func (q *Q) ClaimOutbox(ctx context.Context, now, leaseUntil time.Time) (OutboxRow, error) {
	o, err := scanOutbox(q.QueryRow(ctx, `SELECT `+outboxCols+` FROM email_outbox
		WHERE state = ? AND next_attempt_at <= ? AND lease_until <= ? ORDER BY next_attempt_at, outbox_id LIMIT 1`,
		OutboxPending, Millis(now), Millis(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return o, ErrNotFound
	}
	if err != nil {
		return o, err
	}
	if _, err := q.Exec(ctx, `UPDATE email_outbox SET lease_until = ?, attempts = attempts + 1, updated_at = ? WHERE outbox_id = ?`,
		Millis(leaseUntil), Millis(now), o.OutboxID); err != nil {
		return o, err
	}
	o.LeaseUntil = leaseUntil
	o.Attempts++
	return o, nil
}

// NextOutboxDue answers when the next pending entry falls due (its
// next_attempt_at or the end of its lease, whichever is later), or
// ErrNotFound when nothing is pending.
func (q *Q) NextOutboxDue(ctx context.Context) (time.Time, error) {
	var due sql.NullInt64
	err := q.QueryRow(ctx, `SELECT MIN(CASE WHEN lease_until > next_attempt_at THEN lease_until ELSE next_attempt_at END)
		FROM email_outbox WHERE state = ?`, OutboxPending).Scan(&due)
	if err != nil {
		return time.Time{}, err
	}
	if !due.Valid {
		return time.Time{}, ErrNotFound
	}
	return FromMillis(due.Int64), nil
}

// FinishOutbox records the outcome of a delivery attempt of a leased
// entry: state OutboxSent or OutboxFailed empties the message; OutboxPending
// schedules the next attempt at next. lastError is kept for the account
// page ("" after a success).
func (q *Q) FinishOutbox(ctx context.Context, id, state, lastError string, now, next time.Time) error {
	var sent sql.NullInt64
	if state == OutboxSent {
		sent = sql.NullInt64{Int64: Millis(now), Valid: true}
	}
	msg := `message`
	if state != OutboxPending {
		msg = `''`
	}
	_, err := q.Exec(ctx, `UPDATE email_outbox SET state = ?, last_error = ?, next_attempt_at = ?, lease_until = 0,
		sent_at = COALESCE(?, sent_at), message = `+msg+`, updated_at = ? WHERE outbox_id = ?`,
		state, lastError, Millis(next), sent, Millis(now), id)
	return err
}

// LastOutbox answers the person's most recently updated outbox entry
// (without its message), or ErrNotFound.
func (q *Q) LastOutbox(ctx context.Context, username string) (OutboxRow, error) {
	o, err := scanOutbox(q.QueryRow(ctx, `SELECT outbox_id, dedupe_key, kind, username, mail_id, address, message_id, '',
		state, attempts, next_attempt_at, lease_until, last_error, created_at, sent_at, updated_at
		FROM email_outbox WHERE username = ? ORDER BY updated_at DESC, outbox_id DESC LIMIT 1`, username))
	if errors.Is(err, sql.ErrNoRows) {
		return o, ErrNotFound
	}
	return o, err
}

// OutboxByMail answers the outbox entries of a mail (without messages),
// oldest first.
func (q *Q) OutboxByMail(ctx context.Context, mailID string) ([]OutboxRow, error) {
	rows, err := q.Query(ctx, `SELECT outbox_id, dedupe_key, kind, username, mail_id, address, message_id, '',
		state, attempts, next_attempt_at, lease_until, last_error, created_at, sent_at, updated_at
		FROM email_outbox WHERE mail_id = ? ORDER BY created_at, outbox_id`, mailID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OutboxRow
	for rows.Next() {
		o, err := scanOutbox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// ReplyTokenRow binds a reply address's token (by its SHA-256) to one
// person and one mail.
type ReplyTokenRow struct {
	TokenHash string
	Username  string
	MailID    string
	CreatedAt time.Time
}

// InsertReplyToken stores a reply token's hash.
func (q *Q) InsertReplyToken(ctx context.Context, t ReplyTokenRow) error {
	_, err := q.Exec(ctx, `INSERT INTO email_reply_tokens (token_hash, username, mail_id, created_at) VALUES (?, ?, ?, ?)`,
		t.TokenHash, t.Username, t.MailID, Millis(t.CreatedAt))
	return err
}

// ReplyToken answers the token with that hash, or ErrNotFound.
func (q *Q) ReplyToken(ctx context.Context, hash string) (ReplyTokenRow, error) {
	var t ReplyTokenRow
	var created int64
	err := q.QueryRow(ctx, `SELECT token_hash, username, mail_id, created_at FROM email_reply_tokens WHERE token_hash = ?`, hash).
		Scan(&t.TokenHash, &t.Username, &t.MailID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	t.CreatedAt = FromMillis(created)
	return t, err
}

// EmailCursor answers the last event id the outbox has followed, or
// ErrNotFound before its first start.
func (q *Q) EmailCursor(ctx context.Context) (int64, error) {
	var id int64
	err := q.QueryRow(ctx, `SELECT last_event_id FROM email_cursor WHERE name = 'outbox'`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return id, err
}

// InitEmailCursor sets the cursor to id unless it exists.
func (q *Q) InitEmailCursor(ctx context.Context, id int64) error {
	_, err := q.Exec(ctx, `INSERT INTO email_cursor (name, last_event_id) VALUES ('outbox', ?) ON CONFLICT (name) DO NOTHING`, id)
	return err
}

// AdvanceEmailCursor moves the cursor from `from` to `to`; false when
// another gateway moved it meanwhile (then nothing changed).
func (q *Q) AdvanceEmailCursor(ctx context.Context, from, to int64) (bool, error) {
	res, err := q.Exec(ctx, `UPDATE email_cursor SET last_event_id = ? WHERE name = 'outbox' AND last_event_id = ?`, to, from)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// MailEventsForEmail answers up to limit new_mail events with after < id
// <= upTo, oldest first, whose recipient has a verified address.
func (q *Q) MailEventsForEmail(ctx context.Context, after, upTo int64, limit int) ([]EventRow, error) {
	return q.eventRows(ctx, `SELECT event_id, recipient, type, data, created_at FROM events
		WHERE event_id > ? AND event_id <= ? AND type = 'new_mail'
		AND recipient IN (SELECT username FROM email_accounts WHERE address <> '')
		ORDER BY event_id LIMIT ?`, after, upTo, limit)
}

// InboundRow is one reply taken in by email.
type InboundRow struct {
	InboundID  string
	Username   string
	MessageID  string // the reply's Message-ID header, "" none
	MailID     string // the mail it was stored as
	Size       int64
	ReceivedAt time.Time
}

// InsertInbound records a reply; false (nothing written) when the person's
// reply with the same Message-ID was taken in before.
func (q *Q) InsertInbound(ctx context.Context, r InboundRow) (bool, error) {
	mid := sql.NullString{String: r.MessageID, Valid: r.MessageID != ""}
	res, err := q.Exec(ctx, `INSERT INTO email_inbound (inbound_id, username, message_id, mail_id, size, received_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (username, message_id) DO NOTHING`,
		r.InboundID, r.Username, mid, r.MailID, r.Size, Millis(r.ReceivedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// InboundMessage answers the mail a person's reply with that Message-ID
// was stored as, or ErrNotFound.
func (q *Q) InboundMessage(ctx context.Context, username, messageID string) (string, error) {
	var id string
	err := q.QueryRow(ctx, `SELECT mail_id FROM email_inbound WHERE username = ? AND message_id = ?`, username, messageID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return id, err
}

// InboundSince answers how many replies of the person were taken in since
// t and their total size in bytes.
func (q *Q) InboundSince(ctx context.Context, username string, since time.Time) (count int, bytes int64, err error) {
	err = q.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM email_inbound WHERE username = ? AND received_at >= ?`,
		username, Millis(since)).Scan(&count, &bytes)
	return count, bytes, err
}

// CountPendingOutbox answers how many emails wait for delivery.
func (q *Q) CountPendingOutbox(ctx context.Context) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM email_outbox WHERE state = ?`, OutboxPending).Scan(&n)
	return n, err
}

// InboundMessageIDs answers, for the mails among mailIDs that were replies
// taken in by email, the Message-ID their sender's client gave them.
func (q *Q) InboundMessageIDs(ctx context.Context, mailIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(mailIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(mailIDs))
	for i, id := range mailIDs {
		args[i] = id
	}
	rows, err := q.Query(ctx, `SELECT mail_id, message_id FROM email_inbound WHERE message_id IS NOT NULL AND mail_id IN (`+
		InPlaceholders(len(mailIDs))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, mid string
		if err := rows.Scan(&id, &mid); err != nil {
			return nil, err
		}
		out[id] = mid
	}
	return out, rows.Err()
}
