package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// PermissionRow is one permission request (W-6) with its decision, when
// there is one (Decided false: pending).
type PermissionRow struct {
	MailID    string
	SessionID string
	AgentName string
	Question  string
	Options   string // JSON array of strings
	Context   string
	Tool      string
	ArgsHash  string
	// ToolSummary is the one-line summary of the tool call (migration 0013;
	// "" for requests stored before it).
	ToolSummary string
	Scope       string
	RelayKey    string
	ExpiresAt   *time.Time
	CreatedAt   time.Time
	// RunID is the run the request was asked in (migration 0042): the
	// agent's running run of the session when it arrived, "" when none ran.
	RunID string

	Decided        bool
	Decision       string
	Approved       bool
	Always         bool
	Note           string
	DecidedBy      string
	DecidedVia     string
	DecisionMailID string
	DecidedAt      *time.Time
}

// PermissionDecisionRow is the decision of one request.
type PermissionDecisionRow struct {
	MailID         string
	Decision       string
	Approved       bool
	Always         bool
	Note           string
	DecidedBy      string
	DecidedVia     string
	DecisionMailID string
	DecidedAt      time.Time
}

const permissionSelect = `SELECT p.mail_id, p.session_id, p.agent_name, p.question, p.options, p.context, p.tool,
	p.args_hash, p.tool_summary, p.scope, p.relay_key, p.expires_at, p.created_at, p.run_id,
	d.mail_id, COALESCE(d.decision, ''), COALESCE(d.approved, ?), COALESCE(d.always_allow, ?), COALESCE(d.note, ''),
	COALESCE(d.decided_by, ''), COALESCE(d.decided_via, ''), COALESCE(d.decision_mail_id, ''), d.decided_at
	FROM permission_requests p LEFT JOIN permission_decisions d ON d.mail_id = p.mail_id`

func scanPermission(sc interface{ Scan(...any) error }) (PermissionRow, error) {
	var p PermissionRow
	var exp, decAt sql.NullInt64
	var created int64
	var decided sql.NullString
	err := sc.Scan(&p.MailID, &p.SessionID, &p.AgentName, &p.Question, &p.Options, &p.Context, &p.Tool,
		&p.ArgsHash, &p.ToolSummary, &p.Scope, &p.RelayKey, &exp, &created, &p.RunID,
		&decided, &p.Decision, &p.Approved, &p.Always, &p.Note, &p.DecidedBy, &p.DecidedVia, &p.DecisionMailID, &decAt)
	p.ExpiresAt, p.CreatedAt, p.DecidedAt = TimePtr(exp), FromMillis(created), TimePtr(decAt)
	p.Decided = decided.Valid
	return p, err
}

func (q *Q) permissions(ctx context.Context, where string, args ...any) ([]PermissionRow, error) {
	rows, err := q.Query(ctx, permissionSelect+" "+where, append([]any{false, false}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PermissionRow
	for rows.Next() {
		p, err := scanPermission(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// InsertPermissionRequest stores a request. It answers false, and stores
// nothing, when the agent used the relay key before (B-8.3: one request,
// one mail; a unique constraint, never a count).
func (q *Q) InsertPermissionRequest(ctx context.Context, p PermissionRow) (bool, error) {
	res, err := q.Exec(ctx, `INSERT INTO permission_requests (mail_id, session_id, agent_name, question, options, context,
		tool, args_hash, tool_summary, scope, relay_key, expires_at, created_at, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_name, relay_key) DO NOTHING`,
		p.MailID, p.SessionID, p.AgentName, p.Question, p.Options, p.Context, p.Tool, p.ArgsHash, p.ToolSummary, p.Scope, p.RelayKey,
		NullMillis(p.ExpiresAt), Millis(p.CreatedAt), p.RunID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GetPermission answers the request stored under mailID, or ErrNotFound.
func (q *Q) GetPermission(ctx context.Context, mailID string) (PermissionRow, error) {
	list, err := q.permissions(ctx, `WHERE p.mail_id = ?`, mailID)
	if err != nil {
		return PermissionRow{}, err
	}
	if len(list) == 0 {
		return PermissionRow{}, ErrNotFound
	}
	return list[0], nil
}

// PermissionByRelayKey answers the agent's request with that relay key, or
// ErrNotFound.
func (q *Q) PermissionByRelayKey(ctx context.Context, agent, relayKey string) (PermissionRow, error) {
	list, err := q.permissions(ctx, `WHERE p.agent_name = ? AND p.relay_key = ?`, agent, relayKey)
	if err != nil {
		return PermissionRow{}, err
	}
	if len(list) == 0 {
		return PermissionRow{}, ErrNotFound
	}
	return list[0], nil
}

// PermissionsByMail answers the requests among mailIDs, keyed by mail id.
func (q *Q) PermissionsByMail(ctx context.Context, mailIDs []string) (map[string]PermissionRow, error) {
	out := map[string]PermissionRow{}
	if len(mailIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(mailIDs))
	for i, id := range mailIDs {
		args[i] = id
	}
	list, err := q.permissions(ctx, `WHERE p.mail_id IN (`+InPlaceholders(len(mailIDs))+`)`, args...)
	for _, p := range list {
		out[p.MailID] = p
	}
	return out, err
}

// Permission listing statuses.
const (
	PermissionPending = "pending"
	PermissionDecided = "decided"
	PermissionAll     = "all"
)

// PermissionsFor answers the requests a person may decide: those whose
// request mail was addressed to person, newest first, filtered by status
// ("pending", "decided" or "all"), at most limit.
func (q *Q) PermissionsFor(ctx context.Context, person, status string, limit int) ([]PermissionRow, error) {
	where := `WHERE EXISTS (SELECT 1 FROM mail_recipients r WHERE r.mail_id = p.mail_id AND r.name = ?)`
	switch status {
	case PermissionPending:
		where += ` AND d.mail_id IS NULL`
	case PermissionDecided:
		where += ` AND d.mail_id IS NOT NULL`
	}
	return q.permissions(ctx, where+` ORDER BY p.mail_id DESC LIMIT ?`, person, limit)
}

// CountPendingPermissionsFor counts the undecided requests addressed to person.
func (q *Q) CountPendingPermissionsFor(ctx context.Context, person string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM permission_requests p
		JOIN mail_recipients r ON r.mail_id = p.mail_id AND r.name = ?
		WHERE NOT EXISTS (SELECT 1 FROM permission_decisions d WHERE d.mail_id = p.mail_id)`, person).Scan(&n)
	return n, err
}

// CountPendingPermissions counts every undecided request (the
// agentmail_permission_requests_pending metric).
func (q *Q) CountPendingPermissions(ctx context.Context) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM permission_requests p
		WHERE NOT EXISTS (SELECT 1 FROM permission_decisions d WHERE d.mail_id = p.mail_id)`).Scan(&n)
	return n, err
}

// CountPendingPermissionsInSession counts the undecided requests of a session.
func (q *Q) CountPendingPermissionsInSession(ctx context.Context, sessionID string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM permission_requests p WHERE p.session_id = ?
		AND NOT EXISTS (SELECT 1 FROM permission_decisions d WHERE d.mail_id = p.mail_id)`, sessionID).Scan(&n)
	return n, err
}

// CountOpenPermissionsInSession counts the session's permission requests
// that still hold a place under the pending cap: the undecided ones, and
// those that timed out without a decision and were created after since (a
// request asked with a short expiry would otherwise free its place at
// once).
func (q *Q) CountOpenPermissionsInSession(ctx context.Context, sessionID string, since time.Time) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM permission_requests p
		LEFT JOIN permission_decisions d ON d.mail_id = p.mail_id
		WHERE p.session_id = ? AND (d.mail_id IS NULL OR (d.decided_via = 'timeout' AND p.created_at > ?))`,
		sessionID, Millis(since)).Scan(&n)
	return n, err
}

// PendingPermissionsOfRun answers the undecided requests asked in the run,
// oldest first (at most 200: the per-session pending cap is lower).
func (q *Q) PendingPermissionsOfRun(ctx context.Context, runID string) ([]PermissionRow, error) {
	if runID == "" {
		return nil, nil
	}
	return q.permissions(ctx, `WHERE p.run_id = ? AND d.mail_id IS NULL ORDER BY p.mail_id LIMIT 200`, runID)
}

// ExpiredPermissions answers up to limit undecided requests whose
// expires_at is at or before now, oldest expiry first.
func (q *Q) ExpiredPermissions(ctx context.Context, now time.Time, limit int) ([]PermissionRow, error) {
	return q.permissions(ctx, `WHERE p.expires_at IS NOT NULL AND p.expires_at <= ? AND d.mail_id IS NULL
		ORDER BY p.expires_at LIMIT ?`, Millis(now), limit)
}

// InsertPermissionDecision records the decision of a request. It answers
// false, and stores nothing, when the request was decided before: the
// primary key makes the first decision win.
func (q *Q) InsertPermissionDecision(ctx context.Context, d PermissionDecisionRow) (bool, error) {
	res, err := q.Exec(ctx, `INSERT INTO permission_decisions (mail_id, decision, approved, always_allow, note,
		decided_by, decided_via, decision_mail_id, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (mail_id) DO NOTHING`,
		d.MailID, d.Decision, d.Approved, d.Always, d.Note, d.DecidedBy, d.DecidedVia, d.DecisionMailID, Millis(d.DecidedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GrantRow is one stored "always allow" (agent + tool + scope).
type GrantRow struct {
	GrantID   string
	AgentName string
	Tool      string
	Scope     string
	SessionID string
	GrantedBy string
	MailID    string
	CreatedAt time.Time
}

const grantCols = `grant_id, agent_name, tool, scope, session_id, granted_by, mail_id, created_at`

// InsertGrant stores a grant; when the same person granted the same agent +
// tool + scope already it keeps the earlier one and answers false.
func (q *Q) InsertGrant(ctx context.Context, g GrantRow) (bool, error) {
	res, err := q.Exec(ctx, `INSERT INTO permission_grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_name, tool, scope, granted_by) DO NOTHING`,
		g.GrantID, g.AgentName, g.Tool, g.Scope, g.SessionID, g.GrantedBy, g.MailID, Millis(g.CreatedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GrantFilter selects grants; empty fields do not filter. GrantedBy keeps
// the grants one person gave.
type GrantFilter struct {
	AgentName string
	Tool      string
	Scope     string
	GrantedBy string
}

// Grants answers the grants matching f, newest first.
func (q *Q) Grants(ctx context.Context, f GrantFilter) ([]GrantRow, error) {
	var conds []string
	var args []any
	if f.AgentName != "" {
		conds, args = append(conds, "g.agent_name = ?"), append(args, f.AgentName)
	}
	if f.Tool != "" {
		conds, args = append(conds, "g.tool = ?"), append(args, f.Tool)
	}
	if f.Scope != "" {
		conds, args = append(conds, "g.scope = ?"), append(args, f.Scope)
	}
	if f.GrantedBy != "" {
		conds, args = append(conds, "g.granted_by = ?"), append(args, f.GrantedBy)
	}
	query := `SELECT ` + prefixed("g.", grantCols) + ` FROM permission_grants g`
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := q.Query(ctx, query+` ORDER BY g.created_at DESC, g.grant_id DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []GrantRow
	for rows.Next() {
		var g GrantRow
		var created int64
		if err := rows.Scan(&g.GrantID, &g.AgentName, &g.Tool, &g.Scope, &g.SessionID, &g.GrantedBy, &g.MailID, &created); err != nil {
			return nil, err
		}
		g.CreatedAt = FromMillis(created)
		out = append(out, g)
	}
	return out, rows.Err()
}

// GetGrant answers one grant or ErrNotFound.
func (q *Q) GetGrant(ctx context.Context, id string) (GrantRow, error) {
	var g GrantRow
	var created int64
	err := q.QueryRow(ctx, `SELECT `+grantCols+` FROM permission_grants WHERE grant_id = ?`, id).Scan(
		&g.GrantID, &g.AgentName, &g.Tool, &g.Scope, &g.SessionID, &g.GrantedBy, &g.MailID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return g, ErrNotFound
	}
	g.CreatedAt = FromMillis(created)
	return g, err
}

// DeleteGrant removes a grant; it answers false when there was none.
func (q *Q) DeleteGrant(ctx context.Context, id string) (bool, error) {
	res, err := q.Exec(ctx, `DELETE FROM permission_grants WHERE grant_id = ?`, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SetMailType changes a stored mail's type (a person's reply that decides a
// permission request becomes its permission_decision mail).
func (q *Q) SetMailType(ctx context.Context, mailID, mailType string) error {
	_, err := q.Exec(ctx, `UPDATE mails SET mail_type = ? WHERE mail_id = ?`, mailType, mailID)
	return err
}

// SetMailBody rewrites the body of a mail written in the same transaction
// (a reply that became a permission decision gets the gateway's reading of
// it appended).
func (q *Q) SetMailBody(ctx context.Context, mailID, body string) error {
	_, err := q.Exec(ctx, `UPDATE mails SET body = ? WHERE mail_id = ?`, body, mailID)
	return err
}

// EventData answers the JSON payload of one event, or ErrNotFound.
func (q *Q) EventData(ctx context.Context, id int64) ([]byte, error) {
	var data string
	err := q.QueryRow(ctx, `SELECT data FROM events WHERE event_id = ?`, id).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return []byte(data), err
}

// SetEventData rewrites the payload of an event written in the same
// transaction (before the commit makes it visible to any stream).
func (q *Q) SetEventData(ctx context.Context, id int64, data []byte) error {
	_, err := q.Exec(ctx, `UPDATE events SET data = ? WHERE event_id = ?`, string(data), id)
	return err
}
