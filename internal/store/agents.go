package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// AgentRow is an agent as stored.
type AgentRow struct {
	Name             string
	Platform         string
	Workspaces       string // JSON
	DefaultRounds    int
	RegisteredAt     *time.Time
	LastSeen         *time.Time
	SentTotal        int
	ModelsRestricted bool
	CreatedAt        time.Time
	// FailingCause and FailingReason are the bridge's last health report
	// (migration 0041): "" while its recent turns work.
	FailingCause  string
	FailingReason string
	FailingDetail string
	// BridgeVersion and PlatformVersion are the heartbeat's build
	// fingerprint (migration 0039); only SetAgentVersions writes them.
	BridgeVersion   string
	PlatformVersion string
}

const agentCols = `name, platform, workspaces, default_rounds, registered_at, last_seen, sent_total, models_restricted, created_at`

// agentReadCols are agentCols plus the health columns, which only
// SetAgentHealth writes.
const agentReadCols = agentCols + `, failing_cause, failing_reason, failing_detail, bridge_version, platform_version`

func scanAgent(sc interface{ Scan(...any) error }) (AgentRow, error) {
	var a AgentRow
	var reg, seen sql.NullInt64
	var created int64
	err := sc.Scan(&a.Name, &a.Platform, &a.Workspaces, &a.DefaultRounds, &reg, &seen, &a.SentTotal, &a.ModelsRestricted, &created,
		&a.FailingCause, &a.FailingReason, &a.FailingDetail, &a.BridgeVersion, &a.PlatformVersion)
	a.RegisteredAt, a.LastSeen, a.CreatedAt = TimePtr(reg), TimePtr(seen), FromMillis(created)
	return a, err
}

// InsertAgent stores a new agent row (the name must be claimed first).
func (q *Q) InsertAgent(ctx context.Context, a AgentRow) error {
	_, err := q.Exec(ctx, `INSERT INTO agents (`+agentCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.Name, a.Platform, a.Workspaces, a.DefaultRounds, NullMillis(a.RegisteredAt), NullMillis(a.LastSeen),
		a.SentTotal, a.ModelsRestricted, Millis(a.CreatedAt))
	return err
}

// GetAgent answers one agent or ErrNotFound.
func (q *Q) GetAgent(ctx context.Context, name string) (AgentRow, error) {
	a, err := scanAgent(q.QueryRow(ctx, `SELECT `+agentReadCols+` FROM agents WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNotFound
	}
	return a, err
}

// ListAgents answers every agent by name.
func (q *Q) ListAgents(ctx context.Context) ([]AgentRow, error) {
	rows, err := q.Query(ctx, `SELECT `+agentReadCols+` FROM agents ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AgentRow
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// RegisterAgent records platform and workspaces (W-2) and marks it seen.
func (q *Q) RegisterAgent(ctx context.Context, name, platform, workspacesJSON string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE agents SET platform = ?, workspaces = ?,
		registered_at = COALESCE(registered_at, ?), last_seen = ? WHERE name = ?`,
		platform, workspacesJSON, Millis(now), Millis(now), name)
	return err
}

// TouchAgent sets last_seen (heartbeat).
func (q *Q) TouchAgent(ctx context.Context, name string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE agents SET last_seen = ? WHERE name = ?`, Millis(now), name)
	return err
}

// SetAgentHealth stores the bridge's health report: cause "" clears it.
func (q *Q) SetAgentHealth(ctx context.Context, name, cause, reason, detail string) error {
	_, err := q.Exec(ctx, `UPDATE agents SET failing_cause = ?, failing_reason = ?, failing_detail = ? WHERE name = ?`, cause, reason, detail, name)
	return err
}

// SetAgentVersions stores the bridge's and the platform's versions from a
// heartbeat; an empty value keeps the stored one.
func (q *Q) SetAgentVersions(ctx context.Context, name, bridgeVersion, platformVersion string) error {
	_, err := q.Exec(ctx, `UPDATE agents SET
		bridge_version = CASE WHEN ? = '' THEN bridge_version ELSE ? END,
		platform_version = CASE WHEN ? = '' THEN platform_version ELSE ? END WHERE name = ?`,
		bridgeVersion, bridgeVersion, platformVersion, platformVersion, name)
	return err
}

// SetAgentDefaultRounds changes the round budget new sessions get.
func (q *Q) SetAgentDefaultRounds(ctx context.Context, name string, rounds int) error {
	_, err := q.Exec(ctx, `UPDATE agents SET default_rounds = ? WHERE name = ?`, rounds, name)
	return err
}

// IncAgentSent counts one more mail sent by the agent; queued as
// InsertMail is.
func (q *Q) IncAgentSent(ctx context.Context, name string) error {
	return q.execLater(ctx, `UPDATE agents SET sent_total = sent_total + 1 WHERE name = ?`, name)
}

// PlatformSessionRow is one mirrored platform session (W-3).
type PlatformSessionRow struct {
	AgentName  string
	PlatformID string
	Workspace  string
	Slug       string
	Title      string
	MailDriven bool
	UpdatedAt  *time.Time
}

// ReplacePlatformSessions replaces the agent's whole mirror (W-3: [] clears).
func (q *Q) ReplacePlatformSessions(ctx context.Context, agent string, list []PlatformSessionRow) error {
	if _, err := q.Exec(ctx, `DELETE FROM agent_platform_sessions WHERE agent_name = ?`, agent); err != nil {
		return err
	}
	for i, p := range list {
		_, err := q.Exec(ctx, `INSERT INTO agent_platform_sessions
			(agent_name, platform_id, workspace, slug, title, mail_driven, updated_at, position)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (agent_name, platform_id) DO UPDATE SET workspace = excluded.workspace,
			slug = excluded.slug, title = excluded.title, mail_driven = excluded.mail_driven,
			updated_at = excluded.updated_at, position = excluded.position`,
			agent, p.PlatformID, p.Workspace, p.Slug, p.Title, p.MailDriven, NullMillis(p.UpdatedAt), i)
		if err != nil {
			return err
		}
	}
	return nil
}

// PlatformSessions answers the agent's mirror in reported order.
func (q *Q) PlatformSessions(ctx context.Context, agent string) ([]PlatformSessionRow, error) {
	rows, err := q.Query(ctx, `SELECT agent_name, platform_id, workspace, slug, title, mail_driven, updated_at
		FROM agent_platform_sessions WHERE agent_name = ? ORDER BY position`, agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PlatformSessionRow
	for rows.Next() {
		var p PlatformSessionRow
		var up sql.NullInt64
		if err := rows.Scan(&p.AgentName, &p.PlatformID, &p.Workspace, &p.Slug, &p.Title, &p.MailDriven, &up); err != nil {
			return nil, err
		}
		p.UpdatedAt = TimePtr(up)
		out = append(out, p)
	}
	return out, rows.Err()
}

// PlatformSessionBySlug finds a mirrored platform session of the agent by
// slug (and workspace, unless workspace is ""), or ErrNotFound.
func (q *Q) PlatformSessionBySlug(ctx context.Context, agent, slug, workspace string) (PlatformSessionRow, error) {
	query := `SELECT agent_name, platform_id, workspace, slug, title, mail_driven, updated_at
		FROM agent_platform_sessions WHERE agent_name = ? AND slug = ?`
	args := []any{agent, slug}
	if workspace != "" {
		query += ` AND workspace = ?`
		args = append(args, workspace)
	}
	var p PlatformSessionRow
	var up sql.NullInt64
	err := q.QueryRow(ctx, query+` ORDER BY position LIMIT 1`, args...).Scan(&p.AgentName, &p.PlatformID, &p.Workspace, &p.Slug, &p.Title, &p.MailDriven, &up)
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	p.UpdatedAt = TimePtr(up)
	return p, err
}

// ModelRow is one catalogue entry or allowed model.
type ModelRow struct {
	Provider    string
	Model       string
	DisplayName string
}

// ReplaceModelCatalog replaces the agent's catalogue (W-3: [] clears).
func (q *Q) ReplaceModelCatalog(ctx context.Context, agent string, list []ModelRow) error {
	if _, err := q.Exec(ctx, `DELETE FROM agent_model_catalog WHERE agent_name = ?`, agent); err != nil {
		return err
	}
	for i, m := range list {
		_, err := q.Exec(ctx, `INSERT INTO agent_model_catalog (agent_name, provider, model, display_name, position)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_name, provider, model) DO UPDATE SET
			display_name = excluded.display_name, position = excluded.position`,
			agent, m.Provider, m.Model, m.DisplayName, i)
		if err != nil {
			return err
		}
	}
	return nil
}

// ModelCatalog answers the agent's catalogue in reported order.
func (q *Q) ModelCatalog(ctx context.Context, agent string) ([]ModelRow, error) {
	rows, err := q.Query(ctx, `SELECT provider, model, display_name FROM agent_model_catalog WHERE agent_name = ? ORDER BY position`, agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ModelRow
	for rows.Next() {
		var m ModelRow
		if err := rows.Scan(&m.Provider, &m.Model, &m.DisplayName); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// AllowedModels answers the agent's allowed models in priority order and
// whether a list is set at all (restricted false = unrestricted, W-3).
func (q *Q) AllowedModels(ctx context.Context, agent string) (list []ModelRow, restricted bool, err error) {
	err = q.QueryRow(ctx, `SELECT models_restricted FROM agents WHERE name = ?`, agent).Scan(&restricted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, ErrNotFound
	}
	if err != nil || !restricted {
		return nil, false, err
	}
	rows, err := q.Query(ctx, `SELECT provider, model FROM agent_allowed_models WHERE agent_name = ? ORDER BY position`, agent)
	if err != nil {
		return nil, true, err
	}
	defer rows.Close()
	for rows.Next() {
		var m ModelRow
		if err := rows.Scan(&m.Provider, &m.Model); err != nil {
			return nil, true, err
		}
		list = append(list, m)
	}
	return list, true, rows.Err()
}

// SetAllowedModels stores the allowed list in priority order; list nil makes
// the agent unrestricted again, an empty non-nil list allows nothing.
func (q *Q) SetAllowedModels(ctx context.Context, agent string, list []ModelRow) error {
	if _, err := q.Exec(ctx, `DELETE FROM agent_allowed_models WHERE agent_name = ?`, agent); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `UPDATE agents SET models_restricted = ? WHERE name = ?`, list != nil, agent); err != nil {
		return err
	}
	for i, m := range list {
		if _, err := q.Exec(ctx, `INSERT INTO agent_allowed_models (agent_name, position, provider, model) VALUES (?, ?, ?, ?)`,
			agent, i, m.Provider, m.Model); err != nil {
			return err
		}
	}
	return nil
}

// BridgeLease is an agent's bridge lease as stored (migration 0050):
// Instance "" when no bridge holds it.
type BridgeLease struct {
	Instance    string
	Host        string
	PID         int
	ConnectedAt *time.Time // when Instance took the lease
	SeenAt      *time.Time // its last registration or heartbeat
}

// GetBridgeLease answers agent's bridge lease, or ErrNotFound.
func (q *Q) GetBridgeLease(ctx context.Context, agent string) (BridgeLease, error) {
	var l BridgeLease
	var connected, seen sql.NullInt64
	var pid int64
	err := q.QueryRow(ctx, `SELECT bridge_instance, bridge_host, bridge_pid, bridge_connected_at, bridge_seen_at FROM agents WHERE name = ?`, agent).
		Scan(&l.Instance, &l.Host, &pid, &connected, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return l, ErrNotFound
	}
	l.PID, l.ConnectedAt, l.SeenAt = int(pid), TimePtr(connected), TimePtr(seen)
	return l, err
}

// SetBridgeLease stores agent's bridge lease.
func (q *Q) SetBridgeLease(ctx context.Context, agent string, l BridgeLease) error {
	_, err := q.Exec(ctx, `UPDATE agents SET bridge_instance = ?, bridge_host = ?, bridge_pid = ?, bridge_connected_at = ?, bridge_seen_at = ? WHERE name = ?`,
		l.Instance, l.Host, int64(l.PID), NullMillis(l.ConnectedAt), NullMillis(l.SeenAt), agent)
	return err
}
