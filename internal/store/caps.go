package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// RelayAnswerRow is the claim of one answer slot of a received mail by a
// relay mail (migration 0023): per (AgentName, AnswersMail, Slot) there is
// at most one.
type RelayAnswerRow struct {
	AgentName   string
	AnswersMail string // the received mail answered
	Slot        string // "answer" | "failure"
	RelayKey    string
	MailID      string // the relay mail
	CreatedAt   time.Time
}

// ClaimRelayAnswer claims the slot for the relay mail; it answers false,
// storing nothing, when another relay holds it already (a unique
// constraint, not a count; ON CONFLICT so that PostgreSQL does not abort
// the transaction).
func (q *Q) ClaimRelayAnswer(ctx context.Context, r RelayAnswerRow) (bool, error) {
	res, err := q.Exec(ctx, `INSERT INTO relay_answers (agent_name, answers_mail, slot, relay_key, mail_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent_name, answers_mail, slot) DO NOTHING`,
		r.AgentName, r.AnswersMail, r.Slot, r.RelayKey, r.MailID, Millis(r.CreatedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RelayAnswer answers the claim of (agent, received mail, slot), or
// ErrNotFound.
func (q *Q) RelayAnswer(ctx context.Context, agent, answersMail, slot string) (RelayAnswerRow, error) {
	r := RelayAnswerRow{AgentName: agent, AnswersMail: answersMail, Slot: slot}
	var created int64
	err := q.QueryRow(ctx, `SELECT relay_key, mail_id, created_at FROM relay_answers
		WHERE agent_name = ? AND answers_mail = ? AND slot = ?`, agent, answersMail, slot).Scan(&r.RelayKey, &r.MailID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	r.CreatedAt = FromMillis(created)
	return r, err
}

// UnsentAttachmentBytes sums the sizes of the uploader's attachments that
// no mail carries yet (the per-uploader quota of unsent uploads).
func (q *Q) UnsentAttachmentBytes(ctx context.Context, uploader string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT COALESCE(SUM(a.size), 0) FROM attachments a WHERE a.uploader = ?
		AND NOT EXISTS (SELECT 1 FROM mail_attachments ma WHERE ma.attachment_id = a.attachment_id)`, uploader).Scan(&n)
	return n, err
}
