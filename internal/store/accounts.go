package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Name kinds in the shared name space.
const (
	KindPerson = "person"
	KindAgent  = "agent"
	KindSystem = "system"
)

// ClaimName reserves name for kind in the shared name space. It answers
// (false, nil) when the name is already taken by either kind, in any case
// (the names_lower index, migration 0012). ON CONFLICT DO NOTHING rather
// than a caught unique violation: on PostgreSQL a failed statement aborts
// the whole transaction.
func (q *Q) ClaimName(ctx context.Context, name, kind string, now time.Time) (bool, error) {
	return q.ClaimNameSkeleton(ctx, name, "", kind, now)
}

// ClaimNameSkeleton is ClaimName storing the name's confusable skeleton
// ("" stores NULL, no skeleton); it answers (false, nil) as well when
// another name already has that skeleton (the names_skeleton index,
// migration 0014).
func (q *Q) ClaimNameSkeleton(ctx context.Context, name, skeleton, kind string, now time.Time) (bool, error) {
	var skel any
	if skeleton != "" {
		skel = skeleton
	}
	res, err := q.Exec(ctx, `INSERT INTO names (name, kind, created_at, skeleton) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		name, kind, Millis(now), skel)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// NameBySkeleton answers the name and kind holding that confusable
// skeleton, or ErrNotFound.
func (q *Q) NameBySkeleton(ctx context.Context, skeleton string) (name, kind string, err error) {
	err = q.QueryRow(ctx, `SELECT name, kind FROM names WHERE skeleton = ?`, skeleton).Scan(&name, &kind)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", ErrNotFound
	}
	return name, kind, err
}

// NamesWithoutSkeleton answers the claimed names whose skeleton is NULL,
// oldest first (created_at, then name).
func (q *Q) NamesWithoutSkeleton(ctx context.Context) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT name FROM names WHERE skeleton IS NULL ORDER BY created_at, name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// SetNameSkeleton stores the skeleton of a name that has none yet. It
// answers false, changing nothing, when the name already has one or
// another name holds that skeleton (two names that looked alike before
// migration 0014: the later keeps NULL).
func (q *Q) SetNameSkeleton(ctx context.Context, name, skeleton string) (bool, error) {
	res, err := q.Exec(ctx, `UPDATE names SET skeleton = ? WHERE name = ? AND skeleton IS NULL
		AND NOT EXISTS (SELECT 1 FROM names o WHERE o.skeleton = ?)`, skeleton, name, skeleton)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// NameKind answers the kind of a claimed name, or ErrNotFound.
func (q *Q) NameKind(ctx context.Context, name string) (string, error) {
	var kind string
	err := q.QueryRow(ctx, `SELECT kind FROM names WHERE name = ?`, name).Scan(&kind)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return kind, err
}

// UserRow is a person's account.
type UserRow struct {
	Username     string
	PasswordHash string
	Role         string
	Disabled     bool
	CreatedAt    time.Time
}

const userCols = `username, password_hash, role, disabled, created_at`

func scanUser(sc interface{ Scan(...any) error }) (UserRow, error) {
	var u UserRow
	var created int64
	err := sc.Scan(&u.Username, &u.PasswordHash, &u.Role, &u.Disabled, &created)
	u.CreatedAt = FromMillis(created)
	return u, err
}

// InsertUser stores a new account; the name must be claimed first.
func (q *Q) InsertUser(ctx context.Context, u UserRow) error {
	_, err := q.Exec(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?, ?)`,
		u.Username, u.PasswordHash, u.Role, u.Disabled, Millis(u.CreatedAt))
	return err
}

// GetUser answers one account or ErrNotFound.
func (q *Q) GetUser(ctx context.Context, username string) (UserRow, error) {
	u, err := scanUser(q.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE username = ?`, username))
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	return u, err
}

// ListUsers answers every account, by name.
func (q *Q) ListUsers(ctx context.Context) ([]UserRow, error) {
	rows, err := q.Query(ctx, `SELECT `+userCols+` FROM users ORDER BY username`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UserRow
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// CountUsers answers the number of accounts.
func (q *Q) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	return n, err
}

// UpdateUser writes role, disabled and password hash back.
func (q *Q) UpdateUser(ctx context.Context, u UserRow) error {
	_, err := q.Exec(ctx, `UPDATE users SET password_hash = ?, role = ?, disabled = ? WHERE username = ?`,
		u.PasswordHash, u.Role, u.Disabled, u.Username)
	return err
}

// AuthSessionRow is a cookie session, stored server-side by the hash of the
// cookie value.
type AuthSessionRow struct {
	IDHash     string
	Username   string
	CSRFToken  string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastUsedAt time.Time
}

// InsertAuthSession stores a cookie session.
func (q *Q) InsertAuthSession(ctx context.Context, s AuthSessionRow) error {
	_, err := q.Exec(ctx, `INSERT INTO auth_sessions (id_hash, username, csrf_token, created_at, expires_at, last_used_at)
		VALUES (?, ?, ?, ?, ?, ?)`, s.IDHash, s.Username, s.CSRFToken, Millis(s.CreatedAt), Millis(s.ExpiresAt), Millis(s.LastUsedAt))
	return err
}

// GetAuthSession answers a cookie session with its user, or ErrNotFound.
func (q *Q) GetAuthSession(ctx context.Context, idHash string) (AuthSessionRow, UserRow, error) {
	var s AuthSessionRow
	var c, e, l int64
	row := q.QueryRow(ctx, `SELECT a.id_hash, a.username, a.csrf_token, a.created_at, a.expires_at, a.last_used_at,
		u.username, u.password_hash, u.role, u.disabled, u.created_at
		FROM auth_sessions a JOIN users u ON u.username = a.username WHERE a.id_hash = ?`, idHash)
	var u UserRow
	var uc int64
	err := row.Scan(&s.IDHash, &s.Username, &s.CSRFToken, &c, &e, &l, &u.Username, &u.PasswordHash, &u.Role, &u.Disabled, &uc)
	if errors.Is(err, sql.ErrNoRows) {
		return s, u, ErrNotFound
	}
	s.CreatedAt, s.ExpiresAt, s.LastUsedAt, u.CreatedAt = FromMillis(c), FromMillis(e), FromMillis(l), FromMillis(uc)
	return s, u, err
}

// TouchAuthSession moves a cookie session's last use (and expiry) forward.
func (q *Q) TouchAuthSession(ctx context.Context, idHash string, now, expires time.Time) error {
	_, err := q.Exec(ctx, `UPDATE auth_sessions SET last_used_at = ?, expires_at = ? WHERE id_hash = ?`, Millis(now), Millis(expires), idHash)
	return err
}

// DeleteAuthSession removes one cookie session.
func (q *Q) DeleteAuthSession(ctx context.Context, idHash string) error {
	_, err := q.Exec(ctx, `DELETE FROM auth_sessions WHERE id_hash = ?`, idHash)
	return err
}

// DeleteUserAuthSessions removes every cookie session of a user (password
// reset, disabling).
func (q *Q) DeleteUserAuthSessions(ctx context.Context, username string) error {
	_, err := q.Exec(ctx, `DELETE FROM auth_sessions WHERE username = ?`, username)
	return err
}

// DeleteExpiredAuthSessions removes cookie sessions past their expiry.
func (q *Q) DeleteExpiredAuthSessions(ctx context.Context, now time.Time) (int64, error) {
	res, err := q.Exec(ctx, `DELETE FROM auth_sessions WHERE expires_at < ?`, Millis(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// UserLanguage answers a person's language ("en" or "zh", issue 18), or
// ErrNotFound when there is no such person.
func (q *Q) UserLanguage(ctx context.Context, username string) (string, error) {
	var lang string
	err := q.QueryRow(ctx, `SELECT language FROM users WHERE username = ?`, username).Scan(&lang)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return lang, err
}

// SetUserLanguage stores a person's language; the caller checks the value.
func (q *Q) SetUserLanguage(ctx context.Context, username, lang string) error {
	_, err := q.Exec(ctx, `UPDATE users SET language = ? WHERE username = ?`, lang, username)
	return err
}
