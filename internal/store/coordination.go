package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// Importance ranks of a mail (migration 0035). Normal is 0 so that a mail
// stored without one (a reminder, a permission request) is normal.
const (
	ImportanceLow    = -1
	ImportanceNormal = 0
	ImportanceHigh   = 1
	ImportanceUrgent = 2
)

// ImportanceFilter narrows an importance listing: Ranks, when not empty,
// keeps only mails of those ranks; ByImportance orders by rank (highest
// first) before newest first, and then the cursor is (CursorRank,
// CursorID) of the last mail of the previous page.
type ImportanceFilter struct {
	Ranks        []int
	ByImportance bool
	CursorRank   int
}

// InboxFiltered answers the mails addressed to name like Inbox, narrowed
// and ordered by f, older than (or, sorted by importance, after) the cursor
// beforeID when given.
func (q *Q) InboxFiltered(ctx context.Context, name, status string, f ImportanceFilter, limit int, beforeID string) ([]ViewedMail, error) {
	query := `SELECT ` + prefixed("m.", mailCols) + `, r.role, r.is_read FROM mail_recipients r
		JOIN mails m ON m.mail_id = r.mail_id WHERE r.name = ?`
	args := []any{name}
	switch status {
	case InboxUnread:
		query += ` AND r.is_read = ?`
		args = append(args, false)
	case InboxRead:
		query += ` AND r.is_read = ?`
		args = append(args, true)
	}
	if len(f.Ranks) > 0 {
		query += ` AND r.importance IN (` + InPlaceholders(len(f.Ranks)) + `)`
		for _, r := range f.Ranks {
			args = append(args, r)
		}
	}
	if beforeID != "" {
		if f.ByImportance {
			query += ` AND (r.importance < ? OR (r.importance = ? AND r.mail_id < ?))`
			args = append(args, f.CursorRank, f.CursorRank, beforeID)
		} else {
			query += ` AND r.mail_id < ?`
			args = append(args, beforeID)
		}
	}
	if f.ByImportance {
		query += ` ORDER BY r.importance DESC, r.mail_id DESC LIMIT ?`
	} else {
		query += ` ORDER BY r.mail_id DESC LIMIT ?`
	}
	args = append(args, limit)
	return q.viewedMails(ctx, query, args...)
}

// ------------------------------------------------------------------ acks

// AckRow is one recipient's acknowledgement state of a mail sent with
// ack_required.
type AckRow struct {
	MailID  string
	Name    string
	Sender  string
	DueAt   time.Time
	AckedAt *time.Time
}

// InsertAcks stores an open acknowledgement for each name (the recipients
// of mailID, sent by sender), due at due.
func (q *Q) InsertAcks(ctx context.Context, mailID, sender string, names []string, due time.Time) error {
	for _, n := range names {
		if _, err := q.Exec(ctx, `INSERT INTO mail_acks (mail_id, name, sender, due_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (mail_id, name) DO NOTHING`, mailID, n, sender, Millis(due)); err != nil {
			return err
		}
	}
	return nil
}

// Acknowledge records name's acknowledgement of mailID at now, once: it
// answers the row as it is afterwards and whether this call set it (false
// when it was acknowledged before). ErrNotFound when name owes no
// acknowledgement of that mail.
func (q *Q) Acknowledge(ctx context.Context, mailID, name string, now time.Time) (AckRow, bool, error) {
	res, err := q.Exec(ctx, `UPDATE mail_acks SET acked_at = ? WHERE mail_id = ? AND name = ? AND acked_at IS NULL`,
		Millis(now), mailID, name)
	if err != nil {
		return AckRow{}, false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return AckRow{}, false, err
	}
	rows, err := q.ackRows(ctx, `SELECT mail_id, name, sender, due_at, acked_at FROM mail_acks WHERE mail_id = ? AND name = ?`, mailID, name)
	if err != nil {
		return AckRow{}, false, err
	}
	if len(rows) == 0 {
		return AckRow{}, false, ErrNotFound
	}
	return rows[0], n > 0, nil
}

// AcksOf answers the acknowledgement rows of each mail, by recipient name.
func (q *Q) AcksOf(ctx context.Context, mailIDs []string) (map[string][]AckRow, error) {
	out := map[string][]AckRow{}
	if len(mailIDs) == 0 {
		return out, nil
	}
	args := stringArgs(mailIDs)
	rows, err := q.ackRows(ctx, `SELECT mail_id, name, sender, due_at, acked_at FROM mail_acks WHERE mail_id IN (`+
		InPlaceholders(len(mailIDs))+`) ORDER BY mail_id, name`, args...)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.MailID] = append(out[r.MailID], r)
	}
	return out, nil
}

// OpenAcks answers acknowledgements not given yet, oldest due first, at
// most limit: those name owes (asSender false) or those owed to name as
// the sender (asSender true), only the ones due before dueBefore when it
// is not zero (overdue ones).
func (q *Q) OpenAcks(ctx context.Context, name string, asSender bool, dueBefore time.Time, limit int) ([]AckRow, error) {
	col := "name"
	if asSender {
		col = "sender"
	}
	query := `SELECT mail_id, name, sender, due_at, acked_at FROM mail_acks WHERE ` + col + ` = ? AND acked_at IS NULL`
	args := []any{name}
	if !dueBefore.IsZero() {
		query += ` AND due_at < ?`
		args = append(args, Millis(dueBefore))
	}
	query += ` ORDER BY due_at, mail_id, name LIMIT ?`
	args = append(args, limit)
	return q.ackRows(ctx, query, args...)
}

func (q *Q) ackRows(ctx context.Context, query string, args ...any) ([]AckRow, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AckRow
	for rows.Next() {
		var r AckRow
		var due int64
		var acked sql.NullInt64
		if err := rows.Scan(&r.MailID, &r.Name, &r.Sender, &due, &acked); err != nil {
			return nil, err
		}
		r.DueAt, r.AckedAt = FromMillis(due), TimePtr(acked)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ---------------------------------------------------------- reservations

// ReservationRow is a stored reservation (migration 0035). HolderSeen is
// the holder agent's last_seen, filled by the reads that join it (nil when
// the agent was never seen).
type ReservationRow struct {
	ReservationID string
	Workspace     string
	Pattern       string
	AgentName     string
	SessionID     string
	Exclusive     bool
	Reason        string
	TTL           time.Duration
	CreatedAt     time.Time
	RenewedAt     time.Time
	ExpiresAt     time.Time
	HolderSeen    *time.Time
}

const reservationCols = `r.reservation_id, r.workspace, r.pattern, r.agent_name, r.session_id, r.exclusive, r.reason, r.ttl_ms,
	r.created_at, r.renewed_at, r.expires_at, a.last_seen`

const reservationFrom = ` FROM reservations r LEFT JOIN agents a ON a.name = r.agent_name`

func (q *Q) reservationRows(ctx context.Context, where string, args ...any) ([]ReservationRow, error) {
	rows, err := q.Query(ctx, `SELECT `+reservationCols+reservationFrom+` WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ReservationRow
	for rows.Next() {
		var r ReservationRow
		var ttl, created, renewed, expires int64
		var seen sql.NullInt64
		if err := rows.Scan(&r.ReservationID, &r.Workspace, &r.Pattern, &r.AgentName, &r.SessionID, &r.Exclusive, &r.Reason,
			&ttl, &created, &renewed, &expires, &seen); err != nil {
			return nil, err
		}
		r.TTL = time.Duration(ttl) * time.Millisecond
		r.CreatedAt, r.RenewedAt, r.ExpiresAt, r.HolderSeen = FromMillis(created), FromMillis(renewed), FromMillis(expires), TimePtr(seen)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ReservationsNear answers every stored reservation (ended ones not yet
// removed included) whose workspace is ws, one of ws's ancestors, or lies
// under ws: the reservations that can touch a path of ws. ws is an
// absolute, cleaned path.
func (q *Q) ReservationsNear(ctx context.Context, ws string) ([]ReservationRow, error) {
	anc := ancestors(ws)
	args := make([]any, 0, len(anc)+2)
	for _, a := range anc {
		args = append(args, a)
	}
	// Under ws: starting with "ws/". SUBSTR rather than a range or LIKE:
	// PostgreSQL's collation may not order '/' bytewise, and a path may
	// hold LIKE's wildcards.
	prefix := strings.TrimSuffix(ws, "/") + "/"
	args = append(args, utf8.RuneCountInString(prefix), prefix)
	return q.reservationRows(ctx, `r.workspace IN (`+InPlaceholders(len(anc))+`) OR SUBSTR(r.workspace, 1, ?) = ?
		ORDER BY r.workspace, r.pattern, r.agent_name`, args...)
}

// ancestors answers ws and every directory above it, up to "/".
func ancestors(ws string) []string {
	out := []string{ws}
	for ws != "/" && ws != "" && ws != "." {
		i := strings.LastIndex(ws, "/")
		if i <= 0 {
			ws = "/"
		} else {
			ws = ws[:i]
		}
		out = append(out, ws)
	}
	return out
}

// ReservationsOf answers the agent's stored reservations, in sessionID
// only when it is not "".
func (q *Q) ReservationsOf(ctx context.Context, agent, sessionID string) ([]ReservationRow, error) {
	if sessionID != "" {
		return q.reservationRows(ctx, `r.agent_name = ? AND r.session_id = ? ORDER BY r.workspace, r.pattern`, agent, sessionID)
	}
	return q.reservationRows(ctx, `r.agent_name = ? ORDER BY r.workspace, r.pattern`, agent)
}

// GetReservation answers one reservation or ErrNotFound.
func (q *Q) GetReservation(ctx context.Context, id string) (ReservationRow, error) {
	rows, err := q.reservationRows(ctx, `r.reservation_id = ?`, id)
	if err != nil {
		return ReservationRow{}, err
	}
	if len(rows) == 0 {
		return ReservationRow{}, ErrNotFound
	}
	return rows[0], nil
}

// StaleReservations answers at most limit reservations that have ended
// without being removed: expired at or before now, or renewed before
// seenBefore by a holder not seen since seenBefore either.
func (q *Q) StaleReservations(ctx context.Context, now, seenBefore time.Time, limit int) ([]ReservationRow, error) {
	return q.reservationRows(ctx, `r.expires_at <= ? OR (r.renewed_at < ? AND COALESCE(a.last_seen, r.renewed_at) < ?)
		ORDER BY r.expires_at LIMIT ?`, Millis(now), Millis(seenBefore), Millis(seenBefore), limit)
}

// PutReservation stores r, or, when its agent already holds its pattern in
// its workspace, renews that one with r's fields (keeping its id and
// creation time). It answers the stored row's id.
func (q *Q) PutReservation(ctx context.Context, r ReservationRow) (string, error) {
	_, err := q.Exec(ctx, `INSERT INTO reservations (reservation_id, workspace, pattern, agent_name, session_id, exclusive, reason,
		ttl_ms, created_at, renewed_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_name, workspace, pattern) DO UPDATE SET session_id = excluded.session_id, exclusive = excluded.exclusive,
		reason = excluded.reason, ttl_ms = excluded.ttl_ms, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at`,
		r.ReservationID, r.Workspace, r.Pattern, r.AgentName, r.SessionID, r.Exclusive, r.Reason, r.TTL.Milliseconds(),
		Millis(r.CreatedAt), Millis(r.RenewedAt), Millis(r.ExpiresAt))
	if err != nil {
		return "", err
	}
	var id string
	err = q.QueryRow(ctx, `SELECT reservation_id FROM reservations WHERE agent_name = ? AND workspace = ? AND pattern = ?`,
		r.AgentName, r.Workspace, r.Pattern).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return id, err
}

// RenewReservation moves the expiry of reservation id to renewed + its
// TTL (ttl when not zero, which then becomes its TTL).
func (q *Q) RenewReservation(ctx context.Context, id string, ttl time.Duration, renewed time.Time) error {
	_, err := q.Exec(ctx, `UPDATE reservations SET ttl_ms = ?, renewed_at = ?, expires_at = ? WHERE reservation_id = ?`,
		ttl.Milliseconds(), Millis(renewed), Millis(renewed.Add(ttl)), id)
	return err
}

// DeleteReservations removes the reservations by id and answers how many
// there were.
func (q *Q) DeleteReservations(ctx context.Context, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := stringArgs(ids)
	res, err := q.Exec(ctx, `DELETE FROM reservations WHERE reservation_id IN (`+InPlaceholders(len(ids))+`)`, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// CountReservationsOf answers how many reservations the agent holds.
func (q *Q) CountReservationsOf(ctx context.Context, agent string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM reservations WHERE agent_name = ?`, agent).Scan(&n)
	return n, err
}

// WorkspacesOfParticipant answers the distinct paths at which name and the
// agents of name's sessions take part in them, and the sessions' own
// workspaces: the workspaces of the sessions name takes part in, at most
// limit. sessionID narrows it to that one session when not "".
func (q *Q) WorkspacesOfParticipant(ctx context.Context, name, sessionID string, limit int) ([]string, error) {
	query := `SELECT DISTINCT o.workspace FROM session_participants p
		JOIN session_participants o ON o.session_id = p.session_id
		WHERE p.name = ? AND o.kind = ? AND o.workspace <> ''`
	args := []any{name, KindAgent}
	if sessionID != "" {
		query += ` AND p.session_id = ?`
		args = append(args, sessionID)
	}
	query += ` UNION SELECT DISTINCT s.workspace FROM session_participants p JOIN mail_sessions s ON s.session_id = p.session_id
		WHERE p.name = ? AND s.workspace <> ''`
	args = append(args, name)
	if sessionID != "" {
		query += ` AND p.session_id = ?`
		args = append(args, sessionID)
	}
	query += ` LIMIT ?`
	args = append(args, limit)
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// TakesPartInWorkspace reports whether name takes part in a session (in
// sessionID only, when not "") whose workspace, or the path of one of
// whose agents, is one of workspaces.
func (q *Q) TakesPartInWorkspace(ctx context.Context, name, sessionID string, workspaces []string) (bool, error) {
	if len(workspaces) == 0 {
		return false, nil
	}
	in := InPlaceholders(len(workspaces))
	query := `SELECT 1 FROM session_participants p JOIN mail_sessions s ON s.session_id = p.session_id
		WHERE p.name = ?`
	args := []any{name}
	if sessionID != "" {
		query += ` AND p.session_id = ?`
		args = append(args, sessionID)
	}
	query += ` AND (s.workspace IN (` + in + `) OR EXISTS (SELECT 1 FROM session_participants o
		WHERE o.session_id = p.session_id AND o.kind = ? AND o.workspace IN (` + in + `))) LIMIT 1`
	for _, w := range workspaces {
		args = append(args, w)
	}
	args = append(args, KindAgent)
	for _, w := range workspaces {
		args = append(args, w)
	}
	var one int
	err := q.QueryRow(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// AgentAtWorkspace is an agent taking part in a session together with
// the directory that session was opened at for it (the session's
// workspace, or the path the agent was addressed at there).
type AgentAtWorkspace struct {
	Agent string
	Path  string
	// Worked: in that session the agent answered (a mail of its own other
	// than a failure report) or holds a reservation taken in it, so it
	// really works at Path.
	Worked bool
}

// AgentsAtWorkspaces answers, over the sessions name takes part in, each
// distinct agent participant whose path in that session, or the session's
// own workspace, is one of workspaces, with that path and whether the agent
// worked in the session (AgentAtWorkspace.Worked); at most limit rows.
func (q *Q) AgentsAtWorkspaces(ctx context.Context, name string, workspaces []string, limit int) ([]AgentAtWorkspace, error) {
	if len(workspaces) == 0 {
		return nil, nil
	}
	in := InPlaceholders(len(workspaces))
	worked := `(EXISTS (SELECT 1 FROM mails m WHERE m.session_id = p.session_id AND m.from_name = o.name
			AND m.from_kind = 'agent' AND m.mail_type <> 'failure_report')
		OR EXISTS (SELECT 1 FROM reservations r WHERE r.session_id = p.session_id AND r.agent_name = o.name))`
	query := `SELECT DISTINCT o.name, o.workspace, ` + worked + ` FROM session_participants p
		JOIN session_participants o ON o.session_id = p.session_id
		WHERE p.name = ? AND o.kind = ? AND o.workspace IN (` + in + `)
		UNION SELECT DISTINCT o.name, s.workspace, ` + worked + ` FROM session_participants p
		JOIN mail_sessions s ON s.session_id = p.session_id
		JOIN session_participants o ON o.session_id = p.session_id
		WHERE p.name = ? AND o.kind = ? AND s.workspace IN (` + in + `) LIMIT ?`
	args := []any{name, KindAgent}
	for _, w := range workspaces {
		args = append(args, w)
	}
	args = append(args, name, KindAgent)
	for _, w := range workspaces {
		args = append(args, w)
	}
	args = append(args, limit)
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AgentAtWorkspace
	for rows.Next() {
		var a AgentAtWorkspace
		if err := rows.Scan(&a.Agent, &a.Path, &a.Worked); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Ancestors answers ws (an absolute, cleaned path) and every directory
// above it, up to "/".
func Ancestors(ws string) []string { return ancestors(ws) }

// MailsByID answers the stored mails by id; unknown ids are absent.
func (q *Q) MailsByID(ctx context.Context, ids []string) (map[string]MailRow, error) {
	out := map[string]MailRow{}
	if len(ids) == 0 {
		return out, nil
	}
	args := stringArgs(ids)
	rows, err := q.Query(ctx, `SELECT `+mailCols+` FROM mails WHERE mail_id IN (`+InPlaceholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMail(rows)
		if err != nil {
			return nil, err
		}
		out[m.MailID] = m
	}
	return out, rows.Err()
}

// stringArgs turns ids into query arguments.
func stringArgs(ids []string) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}
