package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// AttachmentRow is the metadata of one uploaded attachment (W-8); the bytes
// are in the blob store under SHA256.
type AttachmentRow struct {
	AttachmentID string
	SHA256       string
	Size         int64
	Filename     string
	ContentType  string
	Uploader     string
	UploaderKind string
	CreatedAt    time.Time
}

const attachmentCols = `attachment_id, sha256, size, filename, content_type, uploader, uploader_kind, created_at`

func scanAttachment(sc interface{ Scan(...any) error }) (AttachmentRow, error) {
	var a AttachmentRow
	var created int64
	err := sc.Scan(&a.AttachmentID, &a.SHA256, &a.Size, &a.Filename, &a.ContentType, &a.Uploader, &a.UploaderKind, &created)
	a.CreatedAt = FromMillis(created)
	return a, err
}

// InsertAttachment stores an attachment's metadata.
func (q *Q) InsertAttachment(ctx context.Context, a AttachmentRow) error {
	_, err := q.Exec(ctx, `INSERT INTO attachments (`+attachmentCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.AttachmentID, a.SHA256, a.Size, a.Filename, a.ContentType, a.Uploader, a.UploaderKind, Millis(a.CreatedAt))
	return err
}

// GetAttachment answers one attachment or ErrNotFound.
func (q *Q) GetAttachment(ctx context.Context, id string) (AttachmentRow, error) {
	a, err := scanAttachment(q.QueryRow(ctx, `SELECT `+attachmentCols+` FROM attachments WHERE attachment_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNotFound
	}
	return a, err
}

// AttachmentsByID answers the attachments among ids, keyed by id.
func (q *Q) AttachmentsByID(ctx context.Context, ids []string) (map[string]AttachmentRow, error) {
	out := map[string]AttachmentRow{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := q.Query(ctx, `SELECT `+attachmentCols+` FROM attachments WHERE attachment_id IN (`+InPlaceholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		a, err := scanAttachment(rows)
		if err != nil {
			return nil, err
		}
		out[a.AttachmentID] = a
	}
	return out, rows.Err()
}

// CanFetchAttachment reports whether name may download the attachment: name
// uploaded it, or sent or received a mail that carries it (W-8), or is a
// person who took part in the session of a run whose transcript it is
// (issue 16) when the run began: joined no later than the mail the run
// answers was stored (the run's start when it names no mail). Another agent
// of that session is not, and neither is a person who joined later: a
// transcript holds every mail its agent read, those to that agent alone and
// those from before the person joined included.
func (q *Q) CanFetchAttachment(ctx context.Context, id, name string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM attachments a WHERE a.attachment_id = ? AND (a.uploader = ?
		OR EXISTS (SELECT 1 FROM mail_attachments ma JOIN mails m ON m.mail_id = ma.mail_id
			WHERE ma.attachment_id = a.attachment_id AND (m.from_name = ?
			OR EXISTS (SELECT 1 FROM mail_recipients r WHERE r.mail_id = m.mail_id AND r.name = ?)))
		OR EXISTS (SELECT 1 FROM runs ru JOIN session_participants sp ON sp.session_id = ru.session_id
			LEFT JOIN mails rm ON rm.mail_id = ru.mail_id
			WHERE ru.transcript_attachment_id = a.attachment_id AND ru.agent_name = a.uploader AND sp.name = ? AND sp.kind = ?
			AND sp.joined_at <= COALESCE(rm.created_at, ru.started_at)))`,
		id, name, name, name, name, KindPerson).Scan(&n)
	return n > 0, err
}

// UnsentAttachmentsBefore answers up to limit attachments created before
// cutoff that no mail carries and no run names as its transcript (seed 001:
// removed after 24 h).
func (q *Q) UnsentAttachmentsBefore(ctx context.Context, cutoff time.Time, limit int) ([]AttachmentRow, error) {
	rows, err := q.Query(ctx, `SELECT `+prefixed("a.", attachmentCols)+` FROM attachments a WHERE a.created_at < ?
		AND NOT EXISTS (SELECT 1 FROM mail_attachments ma WHERE ma.attachment_id = a.attachment_id)
		AND NOT EXISTS (SELECT 1 FROM runs ru WHERE ru.transcript_attachment_id = a.attachment_id)
		ORDER BY a.created_at LIMIT ?`, Millis(cutoff), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AttachmentRow
	for rows.Next() {
		a, err := scanAttachment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// DeleteUnsentAttachment removes an attachment's metadata unless a mail
// carries it by now; it answers whether it removed it.
func (q *Q) DeleteUnsentAttachment(ctx context.Context, id string) (bool, error) {
	res, err := q.Exec(ctx, `DELETE FROM attachments WHERE attachment_id = ?
		AND NOT EXISTS (SELECT 1 FROM mail_attachments ma WHERE ma.attachment_id = ?)`, id, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SHA256Referenced reports whether any attachment still uses the blob.
func (q *Q) SHA256Referenced(ctx context.Context, sum string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM attachments WHERE sha256 = ?`, sum).Scan(&n)
	return n > 0, err
}
