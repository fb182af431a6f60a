package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// TurnTokenRow is a stored turn token (never the token, only its hash):
// it acts as AgentName within SessionID only, minted with the agent key
// KeyID, until ExpiresAt or RevokedAt.
type TurnTokenRow struct {
	TokenID   string
	TokenHash string
	AgentName string
	SessionID string
	KeyID     string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

const turnTokenCols = `token_id, token_hash, agent_name, session_id, key_id, created_at, expires_at, revoked_at`

func scanTurnToken(sc interface{ Scan(...any) error }) (TurnTokenRow, error) {
	var t TurnTokenRow
	var created, exp int64
	var rev sql.NullInt64
	err := sc.Scan(&t.TokenID, &t.TokenHash, &t.AgentName, &t.SessionID, &t.KeyID, &created, &exp, &rev)
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = FromMillis(created), FromMillis(exp), TimePtr(rev)
	return t, err
}

// InsertTurnToken stores a turn token.
func (q *Q) InsertTurnToken(ctx context.Context, t TurnTokenRow) error {
	_, err := q.Exec(ctx, `INSERT INTO turn_tokens (`+turnTokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.TokenID, t.TokenHash, t.AgentName, t.SessionID, t.KeyID, Millis(t.CreatedAt), Millis(t.ExpiresAt), NullMillis(t.RevokedAt))
	return err
}

// TurnTokenByHash answers the turn token with that token hash, or
// ErrNotFound.
func (q *Q) TurnTokenByHash(ctx context.Context, hash string) (TurnTokenRow, error) {
	t, err := scanTurnToken(q.QueryRow(ctx, `SELECT `+turnTokenCols+` FROM turn_tokens WHERE token_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	return t, err
}

// RevokeTurnToken marks the agent's active turn token tokenID revoked at
// now; false when no such unrevoked token of that agent exists.
func (q *Q) RevokeTurnToken(ctx context.Context, tokenID, agent string, now time.Time) (bool, error) {
	res, err := q.Exec(ctx, `UPDATE turn_tokens SET revoked_at = ? WHERE token_id = ? AND agent_name = ? AND revoked_at IS NULL`,
		Millis(now), tokenID, agent)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// DeleteTurnTokensBefore removes turn tokens that expired before t (they
// can never authenticate again); it answers how many.
func (q *Q) DeleteTurnTokensBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := q.Exec(ctx, `DELETE FROM turn_tokens WHERE expires_at < ?`, Millis(t))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RevokeTurnTokensOfAgentsUnseenSince revokes at now every active turn
// token issued before cutoff whose agent has not been seen (heartbeat or
// registration, agents.last_seen) since cutoff: the bridge that holds it
// is gone and can no longer revoke it at the end of its turn. It answers
// how many it revoked.
func (q *Q) RevokeTurnTokensOfAgentsUnseenSince(ctx context.Context, cutoff, now time.Time) (int64, error) {
	res, err := q.Exec(ctx, `UPDATE turn_tokens SET revoked_at = ?
		WHERE revoked_at IS NULL AND expires_at > ? AND created_at < ?
		AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.name = turn_tokens.agent_name AND a.last_seen >= ?)`,
		Millis(now), Millis(now), Millis(cutoff), Millis(cutoff))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
