package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// KeyRow is a stored bearer key (never the token, only its hash).
type KeyRow struct {
	KeyID      string
	TokenHash  string
	Kind       string // "agent" | "user"
	Owner      string
	Label      string
	Lifecycle  string
	Prefix     string
	ExpiresAt  *time.Time
	CreatedAt  time.Time
	LastUsedAt *time.Time
	UsedAt     *time.Time
	RevokedAt  *time.Time
}

const keyCols = `key_id, token_hash, kind, owner, label, lifecycle, prefix, expires_at, created_at, last_used_at, used_at, revoked_at`

func scanKey(sc interface{ Scan(...any) error }) (KeyRow, error) {
	var k KeyRow
	var exp, last, used, rev sql.NullInt64
	var created int64
	err := sc.Scan(&k.KeyID, &k.TokenHash, &k.Kind, &k.Owner, &k.Label, &k.Lifecycle, &k.Prefix, &exp, &created, &last, &used, &rev)
	k.ExpiresAt, k.LastUsedAt, k.UsedAt, k.RevokedAt = TimePtr(exp), TimePtr(last), TimePtr(used), TimePtr(rev)
	k.CreatedAt = FromMillis(created)
	return k, err
}

// InsertKey stores a key. A token registered twice is a unique violation
// (check with IsUniqueViolation).
func (q *Q) InsertKey(ctx context.Context, k KeyRow) error {
	_, err := q.Exec(ctx, `INSERT INTO api_keys (`+keyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.KeyID, k.TokenHash, k.Kind, k.Owner, k.Label, k.Lifecycle, k.Prefix, NullMillis(k.ExpiresAt), Millis(k.CreatedAt),
		NullMillis(k.LastUsedAt), NullMillis(k.UsedAt), NullMillis(k.RevokedAt))
	return err
}

// KeyByHash answers the key with that token hash, or ErrNotFound.
func (q *Q) KeyByHash(ctx context.Context, hash string) (KeyRow, error) {
	k, err := scanKey(q.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE token_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	return k, err
}

// GetKey answers one key by id, or ErrNotFound.
func (q *Q) GetKey(ctx context.Context, keyID string) (KeyRow, error) {
	k, err := scanKey(q.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE key_id = ?`, keyID))
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	return k, err
}

// ListKeys answers keys of one kind, newest first; owner "" lists all owners.
func (q *Q) ListKeys(ctx context.Context, kind, owner string) ([]KeyRow, error) {
	query := `SELECT ` + keyCols + ` FROM api_keys WHERE kind = ?`
	args := []any{kind}
	if owner != "" {
		query += ` AND owner = ?`
		args = append(args, owner)
	}
	rows, err := q.Query(ctx, query+` ORDER BY created_at DESC, key_id DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []KeyRow
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// CountActiveKeys counts the keys of one kind and owner that still work at
// now: not revoked, not expired, and (one-time keys) not used.
func (q *Q) CountActiveKeys(ctx context.Context, kind, owner string, now time.Time) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM api_keys WHERE kind = ? AND owner = ? AND revoked_at IS NULL
		AND used_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`, kind, owner, Millis(now)).Scan(&n)
	return n, err
}

// UseOneTimeKey marks a one_time key used; it answers false when another
// request used it first (the database decides, so it holds across replicas).
func (q *Q) UseOneTimeKey(ctx context.Context, keyID string, now time.Time) (bool, error) {
	res, err := q.Exec(ctx, `UPDATE api_keys SET used_at = ?, last_used_at = ? WHERE key_id = ? AND used_at IS NULL`,
		Millis(now), Millis(now), keyID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// TouchKey records the key's last use.
func (q *Q) TouchKey(ctx context.Context, keyID string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE api_keys SET last_used_at = ? WHERE key_id = ?`, Millis(now), keyID)
	return err
}

// RevokeKey revokes a key of the given kind (and owner, unless owner is "").
// It answers false when no such live key exists.
func (q *Q) RevokeKey(ctx context.Context, keyID, kind, owner string, now time.Time) (bool, error) {
	query := `UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND kind = ? AND revoked_at IS NULL`
	args := []any{Millis(now), keyID, kind}
	if owner != "" {
		query += ` AND owner = ?`
		args = append(args, owner)
	}
	res, err := q.Exec(ctx, query, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
