package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// sessionBase converts a stored session without viewer-specific fields.
func sessionBase(row store.SessionRow, parts []store.ParticipantRow) client.Session {
	names := make([]string, 0, len(parts))
	for _, p := range parts {
		names = append(names, p.Name)
	}
	return client.Session{SessionID: row.SessionID, Alias: row.Alias, AliasSource: row.AliasSource, Subject: row.Subject,
		AgentName: row.AgentName, Workspace: row.Workspace, BudgetMax: row.BudgetMax, UsedRounds: row.UsedRounds,
		PlatformSessionID: row.PlatformSessionID, Participants: names, CreatedBy: row.CreatedBy,
		OriginSessionID: row.OriginSessionID, CreatedAt: row.CreatedAt, LastActivity: row.LastActivity}
}

// sessionView converts a stored session for a viewer: participants, the
// viewer's unread count and mail count, the last mail the viewer can see,
// the pending permission count and the latest run state. viewer "" skips
// the viewer-specific fields.
func (s *Service) sessionView(ctx context.Context, q *store.Q, row store.SessionRow, viewer string) (*client.Session, error) {
	parts, err := q.Participants(ctx, row.SessionID)
	if err != nil {
		return nil, err
	}
	v := sessionBase(row, parts)
	if viewer != "" {
		st, err := q.SessionStatsFor(ctx, row.SessionID, viewer)
		if err != nil {
			return nil, err
		}
		v.Unread, v.MailCount, v.LastMailID, v.LastFrom, v.LastSnippet, v.LastMailType, v.RunState, v.RunningTurns =
			st.Unread, st.MailCount, st.LastMailID, st.LastFrom, st.LastSnippet, st.LastType, st.RunState, st.RunningTurns
	}
	if v.PendingPermits, err = q.CountPendingPermissionsInSession(ctx, row.SessionID); err != nil {
		return nil, err
	}
	return &v, nil
}

// sessionFor answers the session if name may see it (mayViewSession: it
// takes part in it), else the same 404 as an unknown id.
func sessionFor(ctx context.Context, q *store.Q, id, name string) (store.SessionRow, error) {
	row, err := q.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return row, ErrSessionNotFound
	}
	if err != nil {
		return row, err
	}
	if ok, err := mayViewSession(ctx, q, id, name); err != nil {
		return row, err
	} else if !ok {
		return row, ErrSessionNotFound
	}
	return row, nil
}

// ownSessionFor answers the session if name is its agent (the session's
// agent_name), else the same 404 as an unknown id: only that agent's bridge
// names the session (W-7) or binds its platform session (B-3.3); an agent
// that merely takes part (cc) cannot.
func ownSessionFor(ctx context.Context, q *store.Q, id, name string) (store.SessionRow, error) {
	row, err := sessionFor(ctx, q, id, name)
	if err != nil {
		return row, err
	}
	if row.AgentName != name {
		return row, ErrSessionNotFound
	}
	return row, nil
}

// oneSessionView is sessionView with the session's former aliases, for
// the answers about one session.
func (s *Service) oneSessionView(ctx context.Context, q *store.Q, row store.SessionRow, viewer string) (*client.Session, error) {
	v, err := s.sessionView(ctx, q, row, viewer)
	if err != nil {
		return nil, err
	}
	if v.FormerAliases, err = formerAliases(ctx, q, row.SessionID); err != nil {
		return nil, err
	}
	if v.Origin, v.Delegations, err = delegationLinks(ctx, q, row, viewer); err != nil {
		return nil, err
	}
	return v, nil
}

// formerAliases answers the session's former aliases, nil when it has none.
func formerAliases(ctx context.Context, q *store.Q, id string) ([]string, error) {
	list, err := q.FormerAliases(ctx, id)
	if len(list) == 0 {
		return nil, err
	}
	return list, err
}

// GetSession answers a session the principal takes part in, with its
// former aliases.
func (s *Service) GetSession(ctx context.Context, p *Principal, id string) (*client.Session, error) {
	q := s.Read()
	row, err := sessionFor(ctx, q, id, p.Name)
	if err != nil {
		return nil, err
	}
	return s.oneSessionView(ctx, q, row, p.Name)
}

// ListSessions answers the sessions the principal takes part in, most
// recent activity first, limit per page; cursor is NextCursor-style
// "<last_activity_ms>:<session_id>" of the previous page's last session.
func (s *Service) ListSessions(ctx context.Context, p *Principal, limit int, cursor string) (*client.SessionList, string, error) {
	var beforeMS int64
	var beforeID string
	if cursor != "" {
		ms, id, ok := strings.Cut(cursor, ":")
		n, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil || !isID(id) {
			return nil, "", Invalid("cursor", "cursor is not one this endpoint gave", "pass next_cursor back unchanged")
		}
		beforeMS, beforeID = n, id
	}
	q := s.Read()
	rows, err := q.SessionsOf(ctx, p.Name, limit, beforeMS, beforeID)
	if err != nil {
		return nil, "", err
	}
	out := &client.SessionList{Sessions: []client.Session{}}
	for _, row := range rows {
		v, err := s.sessionView(ctx, q, row, p.Name)
		if err != nil {
			return nil, "", err
		}
		out.Sessions = append(out.Sessions, *v)
	}
	next := ""
	if len(rows) == limit {
		last := rows[len(rows)-1]
		next = strconv.FormatInt(store.Millis(last.LastActivity), 10) + ":" + last.SessionID
	}
	return out, next, nil
}

// UpdateSession lets a person who takes part change the alias (it becomes
// alias_source "manual", which platform syncs never override, W-7; the old
// alias stays a former alias of the session, a taken one gets -2, -3), the
// budget (0 = unlimited), or reset the used rounds.
func (s *Service) UpdateSession(ctx context.Context, p *Principal, id string, req client.UpdateSessionRequest) (*client.Session, error) {
	if req.BudgetMax != nil && *req.BudgetMax < 0 {
		return nil, Invalid("budget_max", "budget_max must be 0 (unlimited) or more", "")
	}
	var alias string
	if req.Alias != nil {
		if err := tooLong("alias", *req.Alias, MaxAliasInputRunes); err != nil { // textbounds.go
			return nil, err
		}
		alias = address.SanitizeAlias(*req.Alias)
		if alias == "" {
			return nil, Invalid("alias", fmt.Sprintf("alias %q has nothing left after removing '.', '@', '/' and punctuation", *req.Alias),
				"use letters, digits and '-'")
		}
	}
	var out *client.Session
	err := s.Write(ctx, func(tx *Tx) error {
		row, err := sessionFor(ctx, tx.Q, id, p.Name)
		if err != nil {
			return err
		}
		if req.Alias != nil {
			final := row.Alias
			if alias != row.Alias {
				if final, err = s.uniqueAlias(ctx, tx.Q, alias, row.SessionID); err != nil {
					return err
				}
			}
			if err := renameSession(ctx, tx, &row, final, store.AliasManual); err != nil {
				return err
			}
		}
		if req.BudgetMax != nil || req.ResetUsed {
			if req.BudgetMax != nil {
				row.BudgetMax = *req.BudgetMax
			}
			if req.ResetUsed {
				row.UsedRounds = 0
			}
			if err := tx.SetSessionBudget(ctx, row.SessionID, row.BudgetMax, row.UsedRounds); err != nil {
				return err
			}
		}
		out, err = s.oneSessionView(ctx, tx.Q, row, p.Name)
		if err != nil {
			return err
		}
		return s.emitSessionUpdated(ctx, tx, row)
	})
	return out, err
}

// renameSession gives the session the alias to, from source, keeping its
// old alias as a former one that still reaches it (issue 14); to must be
// free (uniqueAlias) or the session's own. The same alias only changes the
// source.
func renameSession(ctx context.Context, tx *Tx, row *store.SessionRow, to, source string) error {
	if err := tx.RenameSession(ctx, row.SessionID, row.Alias, to, source, tx.Now); err != nil {
		return err
	}
	row.Alias, row.AliasSource = to, source
	return nil
}

// emitSessionUpdated tells the people of a session that it changed.
func (s *Service) emitSessionUpdated(ctx context.Context, tx *Tx, row store.SessionRow) error {
	parts, err := tx.Participants(ctx, row.SessionID)
	if err != nil {
		return err
	}
	v := sessionBase(row, parts)
	if v.FormerAliases, err = formerAliases(ctx, tx.Q, row.SessionID); err != nil {
		return err
	}
	for _, pt := range parts {
		if pt.Kind != store.KindPerson {
			continue
		}
		if _, err := tx.Emit(ctx, pt.Name, client.EventSessionUpdated, v); err != nil {
			return err
		}
	}
	return nil
}

// SyncSession is W-7: the bridge proposes the platform's alias and title;
// the server decides and answers the final alias, which the bridge writes
// back (D-5). The alias loses '.', '@' and '/' (W-7.1), a placeholder alias
// or title is ignored (W-7.2), and a clash gets -2, -3.
//
// The ladder names a session once (issue 14): the proposal is taken only
// when its level (req.AliasLevel) is better than the source of the
// session's alias (aliasRank: a platform slug over a platform title over a
// mail subject over the gateway's own name) and the session's first turn
// has not ended (store FirstTurnEnded: the agent's relayed answer or
// failure report is not sent and no later turn has started). So a later
// mail's subject, a title regenerated after more turns, or the bridge's own
// write-back never renames a session, and a person's manual alias is kept
// whatever is proposed. The old alias stays a former alias of the session.
// The title follows whenever it is usable. Sync never fails for a valid
// session; an alias_level other than 0-3 is a 400. Only the session's agent
// may sync it; any other caller gets 404 session_not_found.
func (s *Service) SyncSession(ctx context.Context, p *Principal, id string, req client.SyncSessionRequest) (*client.Session, error) {
	source, ok := syncSources[req.AliasLevel]
	if !ok {
		return nil, Invalid("alias_level", fmt.Sprintf("alias_level %d is not one of 1 (the platform's slug), 2 (its title), 3 (the mail subject)", req.AliasLevel),
			"send the D-5 level the alias came from, or leave alias_level out for a slug")
	}
	var out *client.Session
	err := s.Write(ctx, func(tx *Tx) error {
		row, err := ownSessionFor(ctx, tx.Q, id, p.Name)
		if err != nil {
			return err
		}
		changed := false
		if title := strings.TrimSpace(req.Title); title != "" && !address.IsPlaceholder(title) && title != row.Subject {
			row.Subject = truncateRunes(firstLine(title), 200)
			if err := tx.SetSessionSubject(ctx, row.SessionID, row.Subject, tx.Now); err != nil {
				return err
			}
			changed = true
		}
		proposed := truncateRunes(address.SanitizeAlias(req.Alias), 48)
		if proposed != "" && !address.IsPlaceholder(proposed) && aliasRank(source) < aliasRank(row.AliasSource) {
			ended, err := tx.FirstTurnEnded(ctx, row.SessionID, row.AgentName, client.RelaySummary, client.MailTypeFailureReport)
			if err != nil {
				return err
			}
			if ended {
				s.Log.Debug("alias proposal refused: the session's first turn has ended", "session_id", row.SessionID,
					"alias", row.Alias, "proposed", proposed, "level", req.AliasLevel)
			} else {
				final := row.Alias
				if proposed != row.Alias {
					if final, err = s.uniqueAlias(ctx, tx.Q, proposed, row.SessionID); err != nil {
						return err
					}
				}
				if err := renameSession(ctx, tx, &row, final, source); err != nil {
					return err
				}
				changed = true
			}
		}
		if out, err = s.oneSessionView(ctx, tx.Q, row, p.Name); err != nil {
			return err
		}
		if changed {
			return s.emitSessionUpdated(ctx, tx, row)
		}
		return nil
	})
	return out, err
}

// syncSources maps SyncSessionRequest.AliasLevel to the alias source it
// stores (0, absent, is the platform's slug).
var syncSources = map[int]string{
	0: store.AliasPlatformSlug,
	1: store.AliasPlatformSlug,
	2: store.AliasPlatformTitle,
	3: store.AliasSubject,
}

// aliasRank orders alias sources, best (lowest) first: a person's alias
// (never replaced by a sync), the platform's slug (and a platform name
// stored before the levels were kept), a platform title, a mail subject,
// then the gateway's own name and anything unknown.
func aliasRank(source string) int {
	switch source {
	case store.AliasManual:
		return 0
	case store.AliasPlatformSlug, store.AliasPlatform:
		return 1
	case store.AliasPlatformTitle:
		return 2
	case store.AliasSubject:
		return 3
	default:
		return 4
	}
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// BindPlatformSession stores the platform's session id on the mail session
// (B-3.3), so the map survives a bridge restart. Only the session's agent
// may bind it; any other caller gets 404 session_not_found.
func (s *Service) BindPlatformSession(ctx context.Context, p *Principal, id string, req client.BindPlatformSessionRequest) (*client.Session, error) {
	pid := strings.TrimSpace(req.PlatformSessionID)
	if len(pid) > 512 {
		return nil, Invalid("platform_session_id", "platform_session_id is longer than 512 characters", "")
	}
	var out *client.Session
	err := s.Write(ctx, func(tx *Tx) error {
		row, err := ownSessionFor(ctx, tx.Q, id, p.Name)
		if err != nil {
			return err
		}
		row.PlatformSessionID = pid
		if err := tx.SetPlatformSessionID(ctx, row.SessionID, pid); err != nil {
			return err
		}
		out, err = s.oneSessionView(ctx, tx.Q, row, p.Name)
		return err
	})
	return out, err
}
