package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"time"
)

// MailRow is a stored mail.
type MailRow struct {
	MailID       string
	SessionID    string
	ParentMailID string
	FromName     string
	FromKind     string
	FromAddress  string
	Subject      string
	Body         string
	MailType     string
	Relay        string
	RelayKey     string
	CreatedAt    time.Time
	// Importance is the rank ImportanceLow..ImportanceUrgent (coordination.go).
	Importance int
	// AckRequired asks each recipient to acknowledge the mail by AckDueAt.
	AckRequired bool
	AckDueAt    *time.Time
}

// RecipientRow is one addressee of a mail with that addressee's state.
type RecipientRow struct {
	MailID    string
	Name      string
	Kind      string
	Role      string
	Address   string
	Workspace string
	Read      bool
	ReadAt    *time.Time
	Position  int
	// Importance copies the mail's (the index of importance listings).
	Importance int
}

// ViewedMail is a mail with the viewer's own recipient state (Role "" and
// Read false when the viewer is only the sender).
type ViewedMail struct {
	MailRow
	Role string
	Read bool
}

const mailCols = `mail_id, session_id, parent_mail_id, from_name, from_kind, from_address, subject, body, mail_type, relay, relay_key, created_at, importance, ack_required, ack_due_at`

func scanMail(sc interface{ Scan(...any) error }, extra ...any) (MailRow, error) {
	var m MailRow
	var parent sql.NullString
	var created int64
	var due sql.NullInt64
	dst := append([]any{&m.MailID, &m.SessionID, &parent, &m.FromName, &m.FromKind, &m.FromAddress, &m.Subject, &m.Body,
		&m.MailType, &m.Relay, &m.RelayKey, &created, &m.Importance, &m.AckRequired, &due}, extra...)
	err := sc.Scan(dst...)
	m.ParentMailID, m.CreatedAt, m.AckDueAt = parent.String, FromMillis(created), TimePtr(due)
	return m, err
}

// InsertMail stores a mail row (recipients and events are separate calls in
// the same transaction). In a PostgreSQL write transaction the insert is
// queued (ExecLater): its error comes with a later statement or at the
// request's end.
func (q *Q) InsertMail(ctx context.Context, m MailRow) error {
	var parent any
	if m.ParentMailID != "" {
		parent = m.ParentMailID
	}
	return q.execLater(ctx, `INSERT INTO mails (`+mailCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.MailID, m.SessionID, parent, m.FromName, m.FromKind, m.FromAddress, m.Subject, m.Body, m.MailType,
		m.Relay, m.RelayKey, Millis(m.CreatedAt), m.Importance, m.AckRequired, NullMillis(m.AckDueAt))
}

// InsertRecipient stores one addressee (unread) and counts it in the
// recipient's unread counter; queued as InsertMail is.
func (q *Q) InsertRecipient(ctx context.Context, r RecipientRow) error {
	err := q.execLater(ctx, `INSERT INTO mail_recipients (mail_id, name, kind, role, address, workspace, is_read, read_at, position, importance)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.MailID, r.Name, r.Kind, r.Role, r.Address, r.Workspace, r.Read, NullMillis(r.ReadAt), r.Position, r.Importance)
	if err != nil || r.Read {
		return err
	}
	return q.addUnread(ctx, r.Name, 1)
}

// addUnread moves name's unread counter by n. In a write transaction the
// delta is held and written with the batch's others just before the
// commit (writebatch.go flushUnread); Unread in the same transaction
// counts it already.
func (q *Q) addUnread(ctx context.Context, name string, n int) error {
	if q.batch != nil {
		if q.staged == nil {
			q.staged = map[string]int{}
		}
		q.staged[name] += n
		return nil
	}
	_, err := q.Exec(ctx, `INSERT INTO mailbox_counts (name, unread) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET unread = mailbox_counts.unread + excluded.unread`, name, n)
	return err
}

// LinkAttachments records the attachment ids of a mail in order; queued as
// InsertMail is.
func (q *Q) LinkAttachments(ctx context.Context, mailID string, ids []string) error {
	for i, id := range ids {
		if err := q.execLater(ctx, `INSERT INTO mail_attachments (mail_id, attachment_id, position) VALUES (?, ?, ?)`, mailID, id, i); err != nil {
			return err
		}
	}
	return nil
}

// AttachmentIDs answers the attachment ids of each mail, in order.
func (q *Q) AttachmentIDs(ctx context.Context, mailIDs []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(mailIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(mailIDs))
	for i, id := range mailIDs {
		args[i] = id
	}
	rows, err := q.Query(ctx, `SELECT mail_id, attachment_id FROM mail_attachments WHERE mail_id IN (`+
		InPlaceholders(len(mailIDs))+`) ORDER BY mail_id, position`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var m, a string
		if err := rows.Scan(&m, &a); err != nil {
			return nil, err
		}
		out[m] = append(out[m], a)
	}
	return out, rows.Err()
}

// GetMail answers one mail or ErrNotFound.
func (q *Q) GetMail(ctx context.Context, id string) (MailRow, error) {
	m, err := scanMail(q.QueryRow(ctx, `SELECT `+mailCols+` FROM mails WHERE mail_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return m, ErrNotFound
	}
	return m, err
}

// ViewMail answers a mail as name sees it, or ErrNotFound when name is
// neither its sender nor one of its recipients (scoped reads: another's
// mail id is a 404).
func (q *Q) ViewMail(ctx context.Context, id, name string) (ViewedMail, error) {
	var v ViewedMail
	var role sql.NullString
	var read sql.NullBool
	m, err := scanMail(q.QueryRow(ctx, `SELECT `+prefixed("m.", mailCols)+`, r.role, r.is_read FROM mails m
		LEFT JOIN mail_recipients r ON r.mail_id = m.mail_id AND r.name = ?
		WHERE m.mail_id = ? AND (m.from_name = ? OR r.name IS NOT NULL)`, name, id, name), &role, &read)
	if errors.Is(err, sql.ErrNoRows) {
		return v, ErrNotFound
	}
	v.MailRow, v.Role, v.Read = m, role.String, read.Bool
	return v, err
}

// RecipientsOf answers the recipients of each mail, to before cc, in
// insertion order.
func (q *Q) RecipientsOf(ctx context.Context, mailIDs []string) (map[string][]RecipientRow, error) {
	out := map[string][]RecipientRow{}
	if len(mailIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(mailIDs))
	for i, id := range mailIDs {
		args[i] = id
	}
	// Ordered here rather than by the query: an ORDER BY over the IN list
	// costs SQLite a sort about as dear as reading the rows.
	rows, err := q.Query(ctx, `SELECT mail_id, name, kind, role, address, workspace, is_read, read_at, position
		FROM mail_recipients WHERE mail_id IN (`+InPlaceholders(len(mailIDs))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r RecipientRow
		var at sql.NullInt64
		if err := rows.Scan(&r.MailID, &r.Name, &r.Kind, &r.Role, &r.Address, &r.Workspace, &r.Read, &at, &r.Position); err != nil {
			return nil, err
		}
		r.ReadAt = TimePtr(at)
		out[r.MailID] = append(out[r.MailID], r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, list := range out {
		sort.SliceStable(list, func(i, j int) bool {
			ti, tj := list[i].Role == "to", list[j].Role == "to"
			if ti != tj {
				return ti
			}
			return list[i].Position < list[j].Position
		})
	}
	return out, nil
}

// SessionAliases answers the alias of each of the sessions by id (one
// query for a page of mails from many sessions); unknown ids are absent.
func (q *Q) SessionAliases(ctx context.Context, sessionIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(sessionIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(sessionIDs))
	for i, id := range sessionIDs {
		args[i] = id
	}
	rows, err := q.Query(ctx, `SELECT session_id, alias FROM mail_sessions WHERE session_id IN (`+
		InPlaceholders(len(sessionIDs))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, alias string
		if err := rows.Scan(&id, &alias); err != nil {
			return nil, err
		}
		out[id] = alias
	}
	return out, rows.Err()
}

// Inbox statuses.
const (
	InboxUnread = "unread"
	InboxRead   = "read"
	InboxAll    = "all"
)

// Inbox answers the mails addressed to name, newest first, with status
// "unread", "read" or "all", older than beforeID when given.
func (q *Q) Inbox(ctx context.Context, name, status string, limit int, beforeID string) ([]ViewedMail, error) {
	return q.InboxFiltered(ctx, name, status, ImportanceFilter{}, limit, beforeID) // coordination.go
}

// SentMails answers mails sent by name, newest first, older than beforeID
// when given.
func (q *Q) SentMails(ctx context.Context, name string, limit int, beforeID string) ([]ViewedMail, error) {
	// FALSE, not a parameter: PostgreSQL types a bare select-list parameter
	// as text and will not take a bool for it.
	query := `SELECT ` + mailCols + `, '', FALSE FROM mails WHERE from_name = ?`
	args := []any{name}
	if beforeID != "" {
		query += ` AND mail_id < ?`
		args = append(args, beforeID)
	}
	query += ` ORDER BY mail_id DESC LIMIT ?`
	args = append(args, limit)
	return q.viewedMails(ctx, query, args...)
}

// SessionMails answers the mails of a session that viewer sent or received,
// oldest first, newer than afterID when given.
func (q *Q) SessionMails(ctx context.Context, sessionID, viewer string, limit int, afterID string) ([]ViewedMail, error) {
	return q.sessionMails(ctx, sessionID, viewer, false, limit, afterID)
}

// SessionMailsAll is SessionMails listing every mail of the session, also
// those viewer neither sent nor received (read for the people of a
// delegated session's origin, who see it without taking part). Mails
// viewer did not receive carry role "".
func (q *Q) SessionMailsAll(ctx context.Context, sessionID, viewer string, limit int, afterID string) ([]ViewedMail, error) {
	return q.sessionMails(ctx, sessionID, viewer, true, limit, afterID)
}

func (q *Q) sessionMails(ctx context.Context, sessionID, viewer string, all bool, limit int, afterID string) ([]ViewedMail, error) {
	query := `SELECT ` + prefixed("m.", mailCols) + `, COALESCE(r.role, ''), COALESCE(r.is_read, ?) FROM mails m
		LEFT JOIN mail_recipients r ON r.mail_id = m.mail_id AND r.name = ?
		WHERE m.session_id = ? AND (? OR m.from_name = ? OR r.name IS NOT NULL)`
	args := []any{all, viewer, sessionID, all, viewer}
	if afterID != "" {
		query += ` AND m.mail_id > ?`
		args = append(args, afterID)
	}
	query += ` ORDER BY m.mail_id LIMIT ?`
	args = append(args, limit)
	return q.viewedMails(ctx, query, args...)
}

func (q *Q) viewedMails(ctx context.Context, query string, args ...any) ([]ViewedMail, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ViewedMail
	for rows.Next() {
		var v ViewedMail
		var role sql.NullString
		var read sql.NullBool
		m, err := scanMail(rows, &role, &read)
		if err != nil {
			return nil, err
		}
		v.MailRow, v.Role, v.Read = m, role.String, read.Bool
		out = append(out, v)
	}
	return out, rows.Err()
}

// MarkRead marks name's copies of the given mails read (or unread when
// unread is true) and answers how many changed; the unread counter moves by
// exactly that many. Mails not addressed to name are ignored.
func (q *Q) MarkRead(ctx context.Context, name string, mailIDs []string, unread bool, now time.Time) (int, error) {
	if len(mailIDs) == 0 {
		return 0, nil
	}
	args := []any{!unread}
	var readAt any
	if !unread {
		readAt = Millis(now)
	}
	args = append(args, readAt, name, unread)
	for _, id := range mailIDs {
		args = append(args, id)
	}
	res, err := q.Exec(ctx, `UPDATE mail_recipients SET is_read = ?, read_at = ? WHERE name = ? AND is_read = ?
		AND mail_id IN (`+InPlaceholders(len(mailIDs))+`)`, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return int(n), err
	}
	delta := -int(n)
	if unread {
		delta = int(n)
	}
	return int(n), q.addUnread(ctx, name, delta)
}

// Unread answers name's unread count from the counter (in a write
// transaction with the deltas it has not written yet, see addUnread).
func (q *Q) Unread(ctx context.Context, name string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT unread FROM mailbox_counts WHERE name = ?`, name).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		n, err = 0, nil
	}
	if q.batch != nil {
		n += q.batch.unread[name] + q.staged[name]
	}
	return n, err
}

// RelayedMail answers the mail id stored for (agent, relay_key), or
// ErrNotFound.
func (q *Q) RelayedMail(ctx context.Context, agent, key string) (string, error) {
	var id string
	err := q.QueryRow(ctx, `SELECT mail_id FROM relayed_mails WHERE agent_name = ? AND relay_key = ?`, agent, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return id, err
}

// InsertRelay claims (agent, relay_key) for a mail; it answers false when
// the key was claimed before (W-5.2, a unique constraint, not a count; ON
// CONFLICT so that PostgreSQL does not abort the transaction).
func (q *Q) InsertRelay(ctx context.Context, agent, key, kind, mailID string, now time.Time) (bool, error) {
	res, err := q.Exec(ctx, `INSERT INTO relayed_mails (agent_name, relay_key, relay_kind, mail_id, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent_name, relay_key) DO NOTHING`, agent, key, kind, mailID, Millis(now))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// TreeNodeRow is one mail of a conversation tree.
type TreeNodeRow struct {
	MailRow
	Depth   int
	Visible bool // the viewer sent or received it
}

// TreeRoot walks parent links up from mailID and answers the root's id.
func (q *Q) TreeRoot(ctx context.Context, mailID string) (string, error) {
	var root string
	err := q.QueryRow(ctx, `WITH RECURSIVE up(mail_id, parent_mail_id, depth) AS (
			SELECT mail_id, parent_mail_id, 0 FROM mails WHERE mail_id = ?
			UNION ALL
			SELECT m.mail_id, m.parent_mail_id, up.depth + 1 FROM mails m JOIN up ON m.mail_id = up.parent_mail_id
			WHERE up.depth < 10000
		) SELECT mail_id FROM up ORDER BY depth DESC LIMIT 1`, mailID).Scan(&root)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return root, err
}

// TreeNodes answers the whole tree under rootID in conversation order
// (depth first, children by time), at most max nodes, marking which the
// viewer may see. Replies and forwards are both parent links, so the tree
// crosses sessions.
func (q *Q) TreeNodes(ctx context.Context, rootID, viewer string, max int) ([]TreeNodeRow, error) {
	rows, err := q.Query(ctx, `WITH RECURSIVE t(mail_id, depth, path) AS (
			SELECT mail_id, 0, mail_id FROM mails WHERE mail_id = ?
			UNION ALL
			SELECT m.mail_id, t.depth + 1, t.path || '/' || m.mail_id FROM mails m JOIN t ON m.parent_mail_id = t.mail_id
			WHERE t.depth < 10000
		)
		SELECT `+prefixed("m.", mailCols)+`, t.depth,
			CASE WHEN m.from_name = ? OR EXISTS (SELECT 1 FROM mail_recipients r WHERE r.mail_id = m.mail_id AND r.name = ?)
			THEN 1 ELSE 0 END
		FROM t JOIN mails m ON m.mail_id = t.mail_id ORDER BY t.path LIMIT ?`, rootID, viewer, viewer, max)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TreeNodeRow
	for rows.Next() {
		var n TreeNodeRow
		var vis int
		m, err := scanMail(rows, &n.Depth, &vis)
		if err != nil {
			return nil, err
		}
		n.MailRow, n.Visible = m, vis == 1
		out = append(out, n)
	}
	return out, rows.Err()
}
