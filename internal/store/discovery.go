package store

import (
	"context"
	"database/sql"
	"time"
)

// SessionMemberRow is one participant of one of a viewer's sessions, with
// the session's alias, subject and last activity (address suggestions).
type SessionMemberRow struct {
	SessionID    string
	Alias        string
	Subject      string
	LastActivity time.Time
	Name         string
	Kind         string
	Workspace    string
}

// SessionMembersOf answers every participant of the viewer's most recently
// active sessions (at most sessions of them), most recent session first.
func (q *Q) SessionMembersOf(ctx context.Context, viewer string, sessions int) ([]SessionMemberRow, error) {
	rows, err := q.Query(ctx, `SELECT s.session_id, s.alias, s.subject, s.last_activity, m.name, m.kind, m.workspace
		FROM (SELECT ms.session_id, ms.alias, ms.subject, ms.last_activity FROM session_participants v
			JOIN mail_sessions ms ON ms.session_id = v.session_id WHERE v.name = ?
			ORDER BY ms.last_activity DESC, ms.session_id DESC LIMIT ?) s
		JOIN session_participants m ON m.session_id = s.session_id
		ORDER BY s.last_activity DESC, s.session_id DESC, m.joined_at`, viewer, sessions)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SessionMemberRow
	for rows.Next() {
		var r SessionMemberRow
		var last int64
		if err := rows.Scan(&r.SessionID, &r.Alias, &r.Subject, &last, &r.Name, &r.Kind, &r.Workspace); err != nil {
			return nil, err
		}
		r.LastActivity = FromMillis(last)
		out = append(out, r)
	}
	return out, rows.Err()
}

// RecentPlatformSessions answers mirrored platform sessions of every agent,
// most recently updated first, at most limit (W-3 mirror for suggestions).
func (q *Q) RecentPlatformSessions(ctx context.Context, limit int) ([]PlatformSessionRow, error) {
	rows, err := q.Query(ctx, `SELECT agent_name, platform_id, workspace, slug, title, mail_driven, updated_at
		FROM agent_platform_sessions WHERE slug <> ''
		ORDER BY COALESCE(updated_at, 0) DESC, agent_name, position LIMIT ?`, limit)
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
