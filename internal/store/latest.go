package store

import (
	"context"
	"database/sql"
	"errors"
)

// LatestMailTo answers the id of the newest mail of the session addressed
// to name (to or cc), or ErrNotFound.
func (q *Q) LatestMailTo(ctx context.Context, sessionID, name string) (string, error) {
	var id string
	err := q.QueryRow(ctx, `SELECT m.mail_id FROM mails m
		JOIN mail_recipients r ON r.mail_id = m.mail_id AND r.name = ?
		WHERE m.session_id = ? ORDER BY m.mail_id DESC LIMIT 1`, name, sessionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return id, err
}

// LinkAttachmentsAt links attachments to a mail at positions first,
// first+1, ... (after the ones LinkAttachments put at 0..first-1): a
// forward lists the forwarder's own attachments, then the original's.
func (q *Q) LinkAttachmentsAt(ctx context.Context, mailID string, ids []string, first int) error {
	for i, id := range ids {
		if _, err := q.Exec(ctx, `INSERT INTO mail_attachments (mail_id, attachment_id, position) VALUES (?, ?, ?)`, mailID, id, first+i); err != nil {
			return err
		}
	}
	return nil
}
