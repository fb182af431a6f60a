package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Alias sources (W-7, D-5): where a session's alias came from, best first.
// A person's choice ("manual") always wins; a platform's proposal replaces
// only a worse source, and only during the session's first turn (gateway
// SyncSession).
const (
	AliasManual        = "manual"         // a person named it (W-7)
	AliasPlatformSlug  = "platform_slug"  // the platform's own slug (D-5 level 1)
	AliasPlatformTitle = "platform_title" // derived from the platform's title (D-5 level 2)
	AliasSubject       = "subject"        // derived from a mail subject (D-5 level 3)
	AliasAuto          = "auto"           // the gateway's own name: generated, or an agent's session_alias
	// AliasPlatform is a platform name of unknown level, written before
	// migration 0031; it ranks as a slug.
	AliasPlatform = "platform"
)

// SessionRow is a mail session as stored.
type SessionRow struct {
	SessionID         string
	Alias             string
	AliasSource       string
	Subject           string
	AgentName         string
	Workspace         string
	BudgetMax         int
	UsedRounds        int
	PlatformSessionID string
	CreatedBy         string
	CreatedByKind     string
	CreatedAt         time.Time
	LastActivity      time.Time
	// OriginSessionID is the session whose turn opened this one (a
	// delegated session, issue 15), or "".
	OriginSessionID string
}

const sessionCols = `session_id, alias, alias_source, subject, agent_name, workspace, budget_max, used_rounds,
	platform_session_id, created_by, created_by_kind, created_at, last_activity, origin_session_id`

func scanSession(sc interface{ Scan(...any) error }) (SessionRow, error) {
	var s SessionRow
	var c, l int64
	err := sc.Scan(&s.SessionID, &s.Alias, &s.AliasSource, &s.Subject, &s.AgentName, &s.Workspace, &s.BudgetMax,
		&s.UsedRounds, &s.PlatformSessionID, &s.CreatedBy, &s.CreatedByKind, &c, &l, &s.OriginSessionID)
	s.CreatedAt, s.LastActivity = FromMillis(c), FromMillis(l)
	return s, err
}

// InsertSession stores a new session. An alias clash is a unique violation.
func (q *Q) InsertSession(ctx context.Context, s SessionRow) error {
	_, err := q.Exec(ctx, `INSERT INTO mail_sessions (`+sessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.SessionID, s.Alias, s.AliasSource, s.Subject, s.AgentName, s.Workspace, s.BudgetMax, s.UsedRounds,
		s.PlatformSessionID, s.CreatedBy, s.CreatedByKind, Millis(s.CreatedAt), Millis(s.LastActivity), s.OriginSessionID)
	return err
}

// GetSession answers one session or ErrNotFound.
func (q *Q) GetSession(ctx context.Context, id string) (SessionRow, error) {
	s, err := scanSession(q.QueryRow(ctx, `SELECT `+sessionCols+` FROM mail_sessions WHERE session_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, ErrNotFound
	}
	return s, err
}

// SessionsDelegatedFrom answers at most limit sessions whose origin is
// originID (issue 15), oldest first; none for an unknown id or "" (index
// mail_sessions_origin).
func (q *Q) SessionsDelegatedFrom(ctx context.Context, originID string, limit int) ([]SessionRow, error) {
	if originID == "" {
		return nil, nil
	}
	return q.sessionRows(ctx, `SELECT `+sessionCols+` FROM mail_sessions WHERE origin_session_id = ?
		ORDER BY created_at, session_id LIMIT ?`, originID, limit)
}

// SessionByAlias answers the session with that alias or ErrNotFound.
func (q *Q) SessionByAlias(ctx context.Context, alias string) (SessionRow, error) {
	s, err := scanSession(q.QueryRow(ctx, `SELECT `+sessionCols+` FROM mail_sessions WHERE alias = ?`, alias))
	if errors.Is(err, sql.ErrNoRows) {
		return s, ErrNotFound
	}
	return s, err
}

// SessionByAnyAlias answers the session that has or had alias: its
// current alias, else one of its former aliases (former true), or
// ErrNotFound. An alias names at most one session, current or former.
func (q *Q) SessionByAnyAlias(ctx context.Context, alias string) (s SessionRow, former bool, err error) {
	s, err = q.SessionByAlias(ctx, alias)
	if !errors.Is(err, ErrNotFound) {
		return s, false, err
	}
	s, err = q.oneSession(ctx, `SELECT `+prefixed("s.", sessionCols)+` FROM session_former_aliases f
		JOIN mail_sessions s ON s.session_id = f.session_id WHERE f.alias = ?`, alias)
	return s, err == nil, err
}

// AliasTaken reports whether a session other than exceptID has or had
// alias (current or former: an alias is never given to a second session).
func (q *Q) AliasTaken(ctx context.Context, alias, exceptID string) (bool, error) {
	var id string
	err := q.QueryRow(ctx, `SELECT session_id FROM mail_sessions WHERE alias = ?
		UNION ALL SELECT session_id FROM session_former_aliases WHERE alias = ? LIMIT 1`, alias, alias).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return id != exceptID, nil
}

// AliasesTaken answers which of the candidate aliases a session other than
// exceptID has or had (AliasTaken for many at once: one query, each
// candidate an index lookup in both tables). At most 32 candidates.
func (q *Q) AliasesTaken(ctx context.Context, candidates []string, exceptID string) (map[string]bool, error) {
	taken := map[string]bool{}
	if len(candidates) == 0 {
		return taken, nil
	}
	if len(candidates) > 32 {
		return nil, errors.New("store: AliasesTaken takes at most 32 candidates")
	}
	in := InPlaceholders(len(candidates))
	args := make([]any, 0, 2*len(candidates)+2)
	for _, c := range candidates {
		args = append(args, c)
	}
	args = append(args, exceptID)
	for _, c := range candidates {
		args = append(args, c)
	}
	args = append(args, exceptID)
	rows, err := q.Query(ctx, `SELECT alias FROM mail_sessions WHERE alias IN (`+in+`) AND session_id <> ?
		UNION ALL SELECT alias FROM session_former_aliases WHERE alias IN (`+in+`) AND session_id <> ?`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		taken[a] = true
	}
	return taken, rows.Err()
}

// SetSessionAlias writes the source of the session's alias, and the alias
// itself when it is the same one (a rename goes through RenameSession,
// which keeps the old alias).
func (q *Q) SetSessionAlias(ctx context.Context, id, alias, source string) error {
	_, err := q.Exec(ctx, `UPDATE mail_sessions SET alias = ?, alias_source = ? WHERE session_id = ?`, alias, source, id)
	return err
}

// RenameSession gives the session id the alias to (with its source) in
// place of from, keeping from as a former alias replaced at at; to stops
// being a former alias of the session if it was one, and the session's
// changed_at becomes at (ChangedSessions). The caller has made sure no
// other session has or had to (AliasTaken). from == to only changes the
// source.
func (q *Q) RenameSession(ctx context.Context, id, from, to, source string, at time.Time) error {
	if from != to {
		if _, err := q.Exec(ctx, `DELETE FROM session_former_aliases WHERE alias = ? AND session_id = ?`, to, id); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `INSERT INTO session_former_aliases (alias, session_id, replaced_at) VALUES (?, ?, ?)`,
			from, id, Millis(at)); err != nil {
			return err
		}
		if err := q.MarkSessionChanged(ctx, id, at); err != nil {
			return err
		}
	}
	return q.SetSessionAlias(ctx, id, to, source)
}

// FormerAliases answers the aliases the session had before its current
// one, oldest replacement first (an empty list when it was never renamed).
func (q *Q) FormerAliases(ctx context.Context, id string) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT alias FROM session_former_aliases WHERE session_id = ?
		ORDER BY replaced_at, alias`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// FirstTurnEnded reports whether the first turn of agent in the session
// has ended: agent sent a mail in it with relay endRelay or of mail type
// endMailType (the turn's relayed answer or failure report, sent after the
// turn), or agent's runs in it answer more than one mail (a later turn has
// started). Mails agent wrote itself during a turn do not end it.
func (q *Q) FirstTurnEnded(ctx context.Context, sessionID, agent, endRelay, endMailType string) (bool, error) {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM mails WHERE session_id = ? AND from_name = ? AND (relay = ? OR mail_type = ?) LIMIT 1`,
		sessionID, agent, endRelay, endMailType).Scan(&one)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	var n int
	if err := q.QueryRow(ctx, `SELECT COUNT(DISTINCT mail_id) FROM runs WHERE session_id = ? AND agent_name = ? AND mail_id <> ''`,
		sessionID, agent).Scan(&n); err != nil {
		return false, err
	}
	return n > 1, nil
}

// SetSessionSubject writes the session's subject (title), changed at at
// (the session's changed_at, ChangedSessions).
func (q *Q) SetSessionSubject(ctx context.Context, id, subject string, at time.Time) error {
	_, err := q.Exec(ctx, `UPDATE mail_sessions SET subject = ?, changed_at = ? WHERE session_id = ?`, subject, Millis(at), id)
	return err
}

// MarkSessionChanged sets the session's changed_at to at: something an
// archive shows of it other than a new mail changed (a rename, a new
// subject, an acknowledgement of one of its mails; migration 0051).
func (q *Q) MarkSessionChanged(ctx context.Context, id string, at time.Time) error {
	_, err := q.Exec(ctx, `UPDATE mail_sessions SET changed_at = ? WHERE session_id = ? AND changed_at < ?`, Millis(at), id, Millis(at))
	return err
}

// ChangedSessions answers at most limit sessions whose changed_at is after
// the unix millisecond afterMillis, ordered by (changed_at, session_id)
// and continuing after the pair (cursorMillis, cursorID) when cursorID is
// not "": those viewer takes part in, or every session when viewer is ""
// (an admin's export). Each row comes with its changed_at in milliseconds.
func (q *Q) ChangedSessions(ctx context.Context, viewer string, afterMillis, cursorMillis int64, cursorID string, limit int) ([]SessionRow, []int64, error) {
	where := `s.changed_at > ?`
	args := []any{afterMillis}
	if cursorID != "" {
		where += ` AND (s.changed_at > ? OR (s.changed_at = ? AND s.session_id > ?))`
		args = append(args, cursorMillis, cursorMillis, cursorID)
	}
	from := `mail_sessions s`
	if viewer != "" {
		from += ` JOIN session_participants p ON p.session_id = s.session_id AND p.name = ?`
		args = append([]any{viewer}, args...)
	}
	args = append(args, limit)
	rows, err := q.Query(ctx, `SELECT `+prefixed("s.", sessionCols)+`, s.changed_at FROM `+from+` WHERE `+where+
		` ORDER BY s.changed_at, s.session_id LIMIT ?`, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []SessionRow
	var at []int64
	for rows.Next() {
		var s SessionRow
		var c, l, ch int64
		if err := rows.Scan(&s.SessionID, &s.Alias, &s.AliasSource, &s.Subject, &s.AgentName, &s.Workspace, &s.BudgetMax,
			&s.UsedRounds, &s.PlatformSessionID, &s.CreatedBy, &s.CreatedByKind, &c, &l, &s.OriginSessionID, &ch); err != nil {
			return nil, nil, err
		}
		s.CreatedAt, s.LastActivity = FromMillis(c), FromMillis(l)
		out = append(out, s)
		at = append(at, ch)
	}
	return out, at, rows.Err()
}

// SetSessionBudget writes budget_max and used_rounds.
func (q *Q) SetSessionBudget(ctx context.Context, id string, max, used int) error {
	_, err := q.Exec(ctx, `UPDATE mail_sessions SET budget_max = ?, used_rounds = ? WHERE session_id = ?`, max, used, id)
	return err
}

// SetPlatformSessionID binds the platform's session id (B-3.3).
func (q *Q) SetPlatformSessionID(ctx context.Context, id, platformID string) error {
	_, err := q.Exec(ctx, `UPDATE mail_sessions SET platform_session_id = ? WHERE session_id = ?`, platformID, id)
	return err
}

// UseRound takes one round of the session's budget and moves its last
// activity to now (the mail that uses the round is the activity: one
// UPDATE instead of two, see TouchSession). It answers false, and changes
// nothing, when the budget is spent; the condition is in the UPDATE, so
// concurrent senders cannot overdraw it.
func (q *Q) UseRound(ctx context.Context, id string, now time.Time) (bool, error) {
	n, err := q.UseRoundLater(ctx, id, now).RowsAffected(ctx)
	return n == 1, err
}

// UseRoundLater is UseRound queued (ExecLater): its Later's RowsAffected
// is 1 when the round was taken, 0 when the budget is spent. A read right
// after it (ParticipantWorkspaces) goes in the same round trip.
func (q *Q) UseRoundLater(ctx context.Context, id string, now time.Time) *Later {
	return q.ExecLater(ctx, `UPDATE mail_sessions SET used_rounds = used_rounds + 1, last_activity = ?
		WHERE session_id = ? AND (budget_max = 0 OR used_rounds < budget_max)`, Millis(now), id)
}

// TouchSession moves the session's last activity (locking its row); queued
// as InsertMail is.
func (q *Q) TouchSession(ctx context.Context, id string, now time.Time) error {
	return q.execLater(ctx, `UPDATE mail_sessions SET last_activity = ? WHERE session_id = ?`, Millis(now), id)
}

// LockSession locks the session's row until the transaction ends (an
// update that changes nothing: both dialects lock a row they update),
// so that the writes of one session run one after the other.
func (q *Q) LockSession(ctx context.Context, id string) error {
	_, err := q.Exec(ctx, `UPDATE mail_sessions SET last_activity = last_activity WHERE session_id = ?`, id)
	return err
}

// SessionsCreatedBy counts every session a name created (the per-owner
// bound; the mail_sessions_creator index answers it).
func (q *Q) SessionsCreatedBy(ctx context.Context, creator string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM mail_sessions WHERE created_by = ?`, creator).Scan(&n)
	return n, err
}

// SessionsCreatedSince counts the sessions a name created strictly after
// since (a rolling window), and answers the oldest creation time among them
// (for Retry-After).
func (q *Q) SessionsCreatedSince(ctx context.Context, creator string, since time.Time) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	err := q.QueryRow(ctx, `SELECT COUNT(*), MIN(created_at) FROM mail_sessions WHERE created_by = ? AND created_at > ?`,
		creator, Millis(since)).Scan(&n, &oldest)
	if err != nil || !oldest.Valid {
		return n, time.Time{}, err
	}
	return n, FromMillis(oldest.Int64), nil
}

// ParticipantRow is one member of a session.
type ParticipantRow struct {
	SessionID    string
	Name         string
	Kind         string
	Workspace    string
	JoinedAt     time.Time
	LastActivity time.Time
}

// joinParticipant adds a member or, when already there, moves its last
// activity and fills its workspace if it had none.
const joinParticipant = `INSERT INTO session_participants (session_id, name, kind, workspace, joined_at, last_activity)
		VALUES (?, ?, ?, ?, ?, ?)` + joinParticipantConflict

// joinParticipantConflict is the ON CONFLICT clause of joinParticipant.
const joinParticipantConflict = `
		ON CONFLICT (session_id, name) DO UPDATE SET last_activity = excluded.last_activity,
		workspace = CASE WHEN session_participants.workspace = '' THEN excluded.workspace ELSE session_participants.workspace END`

// AddParticipant adds name to the session or, when already there, moves
// its last activity (and fills its workspace if it had none). Its path in
// the session afterwards is the stored one when that was not empty, else
// p.Workspace (see ParticipantWorkspaces).
func (q *Q) AddParticipant(ctx context.Context, p ParticipantRow) error {
	_, err := q.Exec(ctx, joinParticipant, p.SessionID, p.Name, p.Kind, p.Workspace, Millis(p.JoinedAt), Millis(p.LastActivity))
	return err
}

// addParticipantLater is AddParticipant queued as InsertMail is.
func (q *Q) addParticipantLater(ctx context.Context, p ParticipantRow) error {
	return q.execLater(ctx, joinParticipant, p.SessionID, p.Name, p.Kind, p.Workspace, Millis(p.JoinedAt), Millis(p.LastActivity))
}

// AddParticipants is AddParticipant for several rows of one mail, in one
// statement: a name given twice counts once (its first row, with the
// first non-empty workspace of its rows, which is what joining twice
// stores). Rows are written in name order. Queued as InsertMail is.
func (q *Q) AddParticipants(ctx context.Context, rows []ParticipantRow) error {
	byName := map[string]int{}
	merged := make([]ParticipantRow, 0, len(rows))
	for _, r := range rows {
		if i, ok := byName[r.SessionID+"\x00"+r.Name]; ok {
			if merged[i].Workspace == "" {
				merged[i].Workspace = r.Workspace
			}
			continue
		}
		byName[r.SessionID+"\x00"+r.Name] = len(merged)
		merged = append(merged, r)
	}
	switch len(merged) {
	case 0:
		return nil
	case 1:
		return q.addParticipantLater(ctx, merged[0])
	}
	sort.Slice(merged, func(i, j int) bool {
		if merged[i].SessionID != merged[j].SessionID {
			return merged[i].SessionID < merged[j].SessionID
		}
		return merged[i].Name < merged[j].Name
	})
	var b strings.Builder
	b.WriteString(`INSERT INTO session_participants (session_id, name, kind, workspace, joined_at, last_activity) VALUES `)
	args := make([]any, 0, 6*len(merged))
	for i, r := range merged {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, r.SessionID, r.Name, r.Kind, r.Workspace, Millis(r.JoinedAt), Millis(r.LastActivity))
	}
	b.WriteString(joinParticipantConflict)
	return q.execLater(ctx, b.String(), args...)
}

// JoinSession is AddParticipant answering the participant's workspace in
// the session after the change (its own path, which an earlier join may
// have set).
func (q *Q) JoinSession(ctx context.Context, p ParticipantRow) (string, error) {
	var ws string
	err := q.QueryRow(ctx, joinParticipant+` RETURNING workspace`,
		p.SessionID, p.Name, p.Kind, p.Workspace, Millis(p.JoinedAt), Millis(p.LastActivity)).Scan(&ws)
	return ws, err
}

// ParticipantWorkspaces answers the members of a session by name with
// their path in it ("" for one without a path). With it a writer joining
// several parties knows each one's path after AddParticipant without a
// RETURNING per join (on SQLite each RETURNING costs a temporary table).
// In a PostgreSQL write transaction it goes in one round trip with the
// statements queued before it (the session's lock, UseRoundLater or
// TouchSession).
func (q *Q) ParticipantWorkspaces(ctx context.Context, sessionID string) (map[string]string, error) {
	out := map[string]string{}
	err := q.queryPipelined(ctx, func(next func() bool, scan func(...any) error) error {
		for next() {
			var name, ws string
			if err := scan(&name, &ws); err != nil {
				return err
			}
			out[name] = ws
		}
		return nil
	}, `SELECT name, workspace FROM session_participants WHERE session_id = ?`, sessionID)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Participants answers a session's members in joining order.
func (q *Q) Participants(ctx context.Context, sessionID string) ([]ParticipantRow, error) {
	rows, err := q.Query(ctx, `SELECT session_id, name, kind, workspace, joined_at, last_activity
		FROM session_participants WHERE session_id = ? ORDER BY joined_at, name`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ParticipantRow
	for rows.Next() {
		var p ParticipantRow
		var j, l int64
		if err := rows.Scan(&p.SessionID, &p.Name, &p.Kind, &p.Workspace, &j, &l); err != nil {
			return nil, err
		}
		p.JoinedAt, p.LastActivity = FromMillis(j), FromMillis(l)
		out = append(out, p)
	}
	return out, rows.Err()
}

// Participant answers one member or ErrNotFound.
func (q *Q) Participant(ctx context.Context, sessionID, name string) (ParticipantRow, error) {
	var p ParticipantRow
	var j, l int64
	err := q.QueryRow(ctx, `SELECT session_id, name, kind, workspace, joined_at, last_activity
		FROM session_participants WHERE session_id = ? AND name = ?`, sessionID, name).
		Scan(&p.SessionID, &p.Name, &p.Kind, &p.Workspace, &j, &l)
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	p.JoinedAt, p.LastActivity = FromMillis(j), FromMillis(l)
	return p, err
}

// DefaultSession answers the default session of an agent address without
// a session part (seed 000 section 0): the most recently active session
// whose agent is agent at workspace (mail_sessions.agent_name = agent AND
// mail_sessions.workspace = workspace) in which sender takes part, or
// ErrNotFound (the send then opens a new one).
func (q *Q) DefaultSession(ctx context.Context, agent, workspace, sender string) (SessionRow, error) {
	return q.oneSession(ctx, `SELECT `+prefixed("s.", sessionCols)+` FROM mail_sessions s
		WHERE s.agent_name = ? AND s.workspace = ?
		AND EXISTS (SELECT 1 FROM session_participants p WHERE p.session_id = s.session_id AND p.name = ?)
		ORDER BY s.last_activity DESC, s.session_id DESC LIMIT 1`, agent, workspace, sender)
}

// DefaultAgentSessionWith answers the default session of an agent's mail
// to a person (a bare name, no reply_to): the most recently active session
// whose agent is agent, at any path, in which person takes part, or
// ErrNotFound.
func (q *Q) DefaultAgentSessionWith(ctx context.Context, agent, person string) (SessionRow, error) {
	return q.oneSession(ctx, `SELECT `+prefixed("s.", sessionCols)+` FROM mail_sessions s
		WHERE s.agent_name = ?
		AND EXISTS (SELECT 1 FROM session_participants p WHERE p.session_id = s.session_id AND p.name = ?)
		ORDER BY s.last_activity DESC, s.session_id DESC LIMIT 1`, agent, person)
}

// DefaultPeopleSession answers the default session of a person's mail to a
// person (a bare name, no reply_to): the most recently active people-only
// session (no agent: agent_name is empty and no agent takes part) in which
// both take part, or ErrNotFound.
func (q *Q) DefaultPeopleSession(ctx context.Context, sender, recipient string) (SessionRow, error) {
	return q.oneSession(ctx, `SELECT `+prefixed("s.", sessionCols)+`
		FROM session_participants a
		JOIN session_participants b ON b.session_id = a.session_id AND b.name = ?
		JOIN mail_sessions s ON s.session_id = a.session_id
		WHERE a.name = ? AND s.agent_name = ''
		AND NOT EXISTS (SELECT 1 FROM session_participants g WHERE g.session_id = s.session_id AND g.kind = ?)
		ORDER BY s.last_activity DESC, s.session_id DESC LIMIT 1`, recipient, sender, KindAgent)
}

// oneSession answers the first session a query selects, or ErrNotFound.
func (q *Q) oneSession(ctx context.Context, query string, args ...any) (SessionRow, error) {
	s, err := scanSession(q.QueryRow(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return s, ErrNotFound
	}
	return s, err
}

// SessionsOf answers sessions name takes part in, most recent activity
// first, older than the cursor (lastActivity millis, sessionID) when given.
func (q *Q) SessionsOf(ctx context.Context, name string, limit int, beforeActivity int64, beforeID string) ([]SessionRow, error) {
	query := `SELECT ` + prefixed("s.", sessionCols) + ` FROM session_participants p
		JOIN mail_sessions s ON s.session_id = p.session_id WHERE p.name = ?`
	args := []any{name}
	if beforeID != "" {
		query += ` AND (s.last_activity < ? OR (s.last_activity = ? AND s.session_id < ?))`
		args = append(args, beforeActivity, beforeActivity, beforeID)
	}
	query += ` ORDER BY s.last_activity DESC, s.session_id DESC LIMIT ?`
	args = append(args, limit)
	return q.sessionRows(ctx, query, args...)
}

// sessionRows runs a query selecting sessionCols and scans every row.
func (q *Q) sessionRows(ctx context.Context, query string, args ...any) ([]SessionRow, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SessionRow
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SessionStats is what a session listing shows a viewer beside the session.
type SessionStats struct {
	Unread      int
	MailCount   int
	LastMailID  string
	LastFrom    string
	LastSnippet string
	LastType    string // the last mail's mail_type
	RunState    string
	// RunningTurns counts the session's runs in state running (any run,
	// not only the latest).
	RunningTurns int
}

// SessionStatsFor answers the viewer's counts and the last mail the viewer
// can see in the session.
func (q *Q) SessionStatsFor(ctx context.Context, sessionID, viewer string) (SessionStats, error) {
	var st SessionStats
	err := q.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN r.is_read THEN 0 ELSE 1 END), 0)
		FROM mails m JOIN mail_recipients r ON r.mail_id = m.mail_id AND r.name = ?
		WHERE m.session_id = ?`, viewer, sessionID).Scan(&st.MailCount, &st.Unread)
	if err != nil {
		return st, err
	}
	var sent int
	if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM mails WHERE session_id = ? AND from_name = ?`, sessionID, viewer).Scan(&sent); err != nil {
		return st, err
	}
	st.MailCount += sent
	var body string
	err = q.QueryRow(ctx, `SELECT m.mail_id, m.from_name, m.body, m.mail_type FROM mails m WHERE m.session_id = ?
		AND (m.from_name = ? OR EXISTS (SELECT 1 FROM mail_recipients r WHERE r.mail_id = m.mail_id AND r.name = ?))
		ORDER BY m.mail_id DESC LIMIT 1`, sessionID, viewer, viewer).Scan(&st.LastMailID, &st.LastFrom, &body, &st.LastType)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, err
	}
	st.LastSnippet = Snippet(body, 140)
	err = q.QueryRow(ctx, `SELECT state FROM runs WHERE session_id = ? ORDER BY started_at DESC, run_id DESC LIMIT 1`, sessionID).Scan(&st.RunState)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, err
	}
	if st.RunState != "" {
		if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM runs WHERE session_id = ? AND state = 'running'`, sessionID).Scan(&st.RunningTurns); err != nil {
			return st, err
		}
	}
	return st, nil
}

// Snippet answers the first n characters of s as plain text: Markdown's
// markup is dropped (MarkdownToPlain) and whitespace runs are folded into
// one space, so that a list, card or tree shows "Stage: model" rather than
// "**Stage:** model" (issue 18 point 10). n counts runes.
func Snippet(s string, n int) string {
	// Only the start of a long body can reach the preview.
	if limit := 8*n + 256; len(s) > limit {
		for limit > 0 && !utf8.RuneStart(s[limit]) {
			limit--
		}
		s = s[:limit]
	}
	out := make([]rune, 0, n)
	space := false
	for _, r := range MarkdownToPlain(s) {
		if len(out) >= n {
			break
		}
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' {
			if !space && len(out) > 0 {
				out = append(out, ' ')
			}
			space = true
			continue
		}
		space = false
		out = append(out, r)
	}
	for len(out) > 0 && out[len(out)-1] == ' ' {
		out = out[:len(out)-1]
	}
	return string(out)
}

// MarkdownToPlain drops the Markdown markup that reads as noise in a
// one-line preview: at the start of a line headings (#), quotes (>), list
// bullets (-, *, +) and fence lines (```); anywhere strong emphasis and
// strike-through markers (**, __, ~~), backticks, and a link [text](url),
// which becomes its text. Single * and _ stay: they are as often part of a
// name (snake_case, a*b) as emphasis.
func MarkdownToPlain(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		t := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			continue
		}
		t = withoutLineMarkup(t)
		b.WriteString(plainInline(t))
	}
	return b.String()
}

// withoutLineMarkup drops a heading's #s, quote markers and one list
// bullet from the start of a line (already trimmed of leading spaces).
func withoutLineMarkup(t string) string {
	for strings.HasPrefix(t, ">") {
		t = strings.TrimLeft(t[1:], " ")
	}
	if h := strings.TrimLeft(t, "#"); len(t)-len(h) >= 1 && len(t)-len(h) <= 6 && (h == "" || h[0] == ' ') {
		return strings.TrimLeft(h, " ")
	}
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return strings.TrimLeft(t[2:], " ")
	}
	return t
}

// plainInline drops inline Markdown markers of one line (see MarkdownToPlain).
func plainInline(t string) string {
	var b strings.Builder
	for i := 0; i < len(t); {
		switch {
		case strings.HasPrefix(t[i:], "**"), strings.HasPrefix(t[i:], "__"), strings.HasPrefix(t[i:], "~~"):
			i += 2
			continue
		case t[i] == '`':
			i++
			continue
		case t[i] == '[':
			// [text](url) → text; anything else stays as written.
			if end := strings.IndexByte(t[i:], ']'); end > 0 && strings.HasPrefix(t[i+end:], "](") {
				if close := strings.IndexByte(t[i+end:], ')'); close > 0 {
					b.WriteString(plainInline(t[i+1 : i+end]))
					i += end + close + 1
					continue
				}
			}
		}
		b.WriteByte(t[i])
		i++
	}
	return b.String()
}

// prefixed qualifies a comma-separated column list with a table prefix.
func prefixed(prefix, cols string) string {
	var b []byte
	start := true
	for i := 0; i < len(cols); i++ {
		c := cols[i]
		if start && c != ' ' && c != '\n' && c != '\t' {
			b = append(b, prefix...)
			start = false
		}
		b = append(b, c)
		if c == ',' {
			start = true
		}
	}
	return string(b)
}

// SessionsWithParticipant answers which of the sessions ids name takes part
// in (a set of session ids; unknown ids are simply absent).
func (q *Q) SessionsWithParticipant(ctx context.Context, name string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{name}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := q.Query(ctx, `SELECT session_id FROM session_participants WHERE name = ? AND session_id IN (`+
		InPlaceholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// PlatformBinding is a mail session bound to a platform session of its
// agent (mail_sessions.platform_session_id, B-3.3).
type PlatformBinding struct {
	AgentName  string
	PlatformID string
	SessionID  string
}

// SessionsBoundTo answers the mail sessions bound to any of the platform
// session ids, most recently active first. Callers match AgentName too: a
// platform id names a session of one agent's platform only.
func (q *Q) SessionsBoundTo(ctx context.Context, platformIDs []string) ([]PlatformBinding, error) {
	var args []any
	for _, id := range platformIDs {
		if id != "" {
			args = append(args, id)
		}
	}
	if len(args) == 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, `SELECT agent_name, platform_session_id, session_id FROM mail_sessions
		WHERE platform_session_id <> '' AND platform_session_id IN (`+InPlaceholders(len(args))+`)
		ORDER BY last_activity DESC, session_id DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PlatformBinding
	for rows.Next() {
		var b PlatformBinding
		if err := rows.Scan(&b.AgentName, &b.PlatformID, &b.SessionID); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
