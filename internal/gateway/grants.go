package gateway

import (
	"context"
	"errors"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

func grantView(g store.GrantRow) client.Grant {
	return client.Grant{GrantID: g.GrantID, AgentName: g.AgentName, Tool: g.Tool, Scope: g.Scope,
		GrantedBy: g.GrantedBy, MailID: g.MailID, CreatedAt: g.CreatedAt}
}

// grantable tells whether an "always" decision on row can store a grant:
// the request names its tool and the agent has a workspace in the session,
// which becomes the grant's scope.
func grantable(row store.PermissionRow, agentWS string) bool {
	return row.Tool != "" && agentWS != ""
}

// SessionGrants answers the always-allow grants that apply to the agent's
// requests in one session (GET /grants?session_id=&tool=; tool optional),
// issue 12 point 3: a grant applies only where the person who gave it and
// this agent are the only participants of the session, and for the agent's
// workspace in that session. In a session with no person, with several, or
// with another agent (which may relay someone else's wishes), none apply
// and the people there are asked. session_id is required (400);
// a session the agent does not take part in answers 404 session_not_found.
func (s *Service) SessionGrants(ctx context.Context, p *Principal, sessionID, tool string) (*client.GrantList, error) {
	if !p.IsAgent() {
		return nil, Forbidden("agent_only", "grants are looked up by agents for their own requests", "people list their grants with GET /api/v1/me/grants")
	}
	sessionID = strings.TrimSpace(sessionID)
	if sessionID == "" {
		return nil, Invalid("session_id", "session_id is required", "send the session_id of the mail the agent is working on")
	}
	out := &client.GrantList{Grants: []client.Grant{}}
	q := s.Read()
	if _, err := sessionFor(ctx, q, sessionID, p.Name); err != nil {
		return nil, err
	}
	parts, err := q.Participants(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var people []string
	workspace, others := "", 0
	for _, pt := range parts {
		switch {
		case pt.Kind == store.KindPerson:
			people = append(people, pt.Name)
		case pt.Name == p.Name:
			workspace = pt.Workspace
		default:
			others++ // another agent, which may speak for someone else
		}
	}
	if len(people) != 1 || others > 0 || workspace == "" {
		return out, nil
	}
	rows, err := q.Grants(ctx, store.GrantFilter{AgentName: p.Name, Tool: tool, Scope: workspace, GrantedBy: people[0]})
	if err != nil {
		return nil, err
	}
	for _, g := range rows {
		out.Grants = append(out.Grants, grantView(g))
	}
	return out, nil
}

// PersonGrants answers the grants the person gave (admins: every grant)
// (GET /me/grants).
func (s *Service) PersonGrants(ctx context.Context, p *Principal) (*client.GrantList, error) {
	f := store.GrantFilter{}
	if !p.IsAdmin() {
		f.GrantedBy = p.Name
	}
	rows, err := s.Read().Grants(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &client.GrantList{Grants: []client.Grant{}}
	for _, g := range rows {
		out.Grants = append(out.Grants, grantView(g))
	}
	return out, nil
}

// RevokeGrant deletes a grant the person gave (admins: any grant)
// (DELETE /me/grants/{id}); any other id is a 404 grant_not_found.
func (s *Service) RevokeGrant(ctx context.Context, p *Principal, id string) error {
	return s.Write(ctx, func(tx *Tx) error {
		g, err := tx.GetGrant(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return grantNotFound()
		}
		if err != nil {
			return err
		}
		if !p.IsAdmin() && g.GrantedBy != p.Name {
			return grantNotFound()
		}
		_, err = tx.DeleteGrant(ctx, id)
		if err == nil {
			s.Log.Info("grant revoked", "grant_id", id, "agent", g.AgentName, "tool", g.Tool, "by", p.Name)
		}
		return err
	})
}

func grantNotFound() error {
	return NotFound("grant_not_found", "no such grant", "list grants with GET /api/v1/me/grants")
}
