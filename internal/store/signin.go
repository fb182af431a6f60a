package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// LoginThrottleRow is the sign-in failure count of one key
// ("user:<name>", "device:<hash>", "addr:<address>", or "inflight:<key>"
// for the attempts in flight under key), see migration 0011.
type LoginThrottleRow struct {
	Key         string
	Failures    int
	LastFailure time.Time
}

// LoginThrottle answers the count stored under key, or ErrNotFound.
func (q *Q) LoginThrottle(ctx context.Context, key string) (LoginThrottleRow, error) {
	r := LoginThrottleRow{Key: key}
	var last int64
	err := q.QueryRow(ctx, `SELECT failures, last_failure FROM login_throttle WHERE throttle_key = ?`, key).Scan(&r.Failures, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	r.LastFailure = FromMillis(last)
	return r, err
}

// CountLoginAttempt adds one attempt to key's count at now; a count whose
// last failure lies before forgetBefore starts again at 1.
func (q *Q) CountLoginAttempt(ctx context.Context, key string, now, forgetBefore time.Time) error {
	_, err := q.Exec(ctx, `INSERT INTO login_throttle (throttle_key, failures, last_failure) VALUES (?, 1, ?)
		ON CONFLICT (throttle_key) DO UPDATE SET
			failures = CASE WHEN login_throttle.last_failure < ? THEN 1 ELSE login_throttle.failures + 1 END,
			last_failure = excluded.last_failure`,
		key, Millis(now), Millis(forgetBefore))
	return err
}

// ForgiveLoginAttempt takes one attempt off key's count (the attempt
// turned out to be a success); the count never goes below 0.
func (q *Q) ForgiveLoginAttempt(ctx context.Context, key string) error {
	_, err := q.Exec(ctx, `UPDATE login_throttle SET failures = failures - 1 WHERE throttle_key = ? AND failures > 0`, key)
	return err
}

// ClearLoginThrottle forgets key's count (a successful sign-in).
func (q *Q) ClearLoginThrottle(ctx context.Context, key string) error {
	_, err := q.Exec(ctx, `DELETE FROM login_throttle WHERE throttle_key = ?`, key)
	return err
}

// DeleteStaleLoginThrottles removes counts whose last failure lies before
// cutoff (they are forgotten anyway), so probing unknown usernames does not
// grow the table without bound.
func (q *Q) DeleteStaleLoginThrottles(ctx context.Context, cutoff time.Time) error {
	_, err := q.Exec(ctx, `DELETE FROM login_throttle WHERE last_failure < ?`, Millis(cutoff))
	return err
}

// DeleteOtherAuthSessions removes every cookie session of username except
// the one stored under keepHash ("" keeps none): a password change signs
// the person out everywhere else.
func (q *Q) DeleteOtherAuthSessions(ctx context.Context, username, keepHash string) error {
	_, err := q.Exec(ctx, `DELETE FROM auth_sessions WHERE username = ? AND id_hash <> ?`, username, keepHash)
	return err
}

// KnownDevice is a browser or client that signed in to Username before
// (migration 0047): TokenHash is the hash of its agentmail_device cookie.
type KnownDevice struct {
	TokenHash  string
	Username   string
	CreatedAt  time.Time
	LastUsedAt time.Time
}

// GetKnownDevice answers the device stored under tokenHash, or ErrNotFound.
func (q *Q) GetKnownDevice(ctx context.Context, tokenHash string) (KnownDevice, error) {
	d := KnownDevice{TokenHash: tokenHash}
	var created, used int64
	err := q.QueryRow(ctx, `SELECT username, created_at, last_used_at FROM known_devices WHERE token_hash = ?`, tokenHash).
		Scan(&d.Username, &created, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	d.CreatedAt, d.LastUsedAt = FromMillis(created), FromMillis(used)
	return d, err
}

// RememberDevice stores a device of d.Username (or refreshes its last use)
// and drops that person's devices beyond the keep most recently used ones.
func (q *Q) RememberDevice(ctx context.Context, d KnownDevice, keep int) error {
	if _, err := q.Exec(ctx, `INSERT INTO known_devices (token_hash, username, created_at, last_used_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (token_hash) DO UPDATE SET last_used_at = excluded.last_used_at`,
		d.TokenHash, d.Username, Millis(d.CreatedAt), Millis(d.LastUsedAt)); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM known_devices WHERE username = ? AND token_hash NOT IN
		(SELECT token_hash FROM known_devices WHERE username = ? ORDER BY last_used_at DESC, token_hash LIMIT ?)`,
		d.Username, d.Username, keep)
	return err
}

// DeleteStaleKnownDevices removes devices last used before cutoff.
func (q *Q) DeleteStaleKnownDevices(ctx context.Context, cutoff time.Time) error {
	_, err := q.Exec(ctx, `DELETE FROM known_devices WHERE last_used_at < ?`, Millis(cutoff))
	return err
}
