package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Delegated sessions (issue 15; issue 12 point 1 and 4(b)).
//
// A session an agent opens from inside another session's turn (a send made
// with the turn's token that opens a session) is a delegated session: it
// records the turn's session as its origin (mail_sessions.origin_session_id,
// derived by the gateway from the token, never from the request). The
// sending agent must be the origin session's own agent (else 403
// delegation_not_agent), and its path in the new session is the origin
// session's workspace, so replies reach it in the directory it works in.
// A chain of origins is at most Config.DelegationDepth deep (400
// delegation_too_deep). The people of the origin chain see a delegated
// session (visibleSessions), decide its permission requests, and receive
// the delegation relay that answers a received mail of it (relaySession).
// The turn token of a session covers the sessions delegated from it.

// DefaultDelegationDepth is the default of Config.DelegationDepth.
const DefaultDelegationDepth = 4

// maxOriginWalk bounds a walk up the origin chain, whatever the setting
// was when the sessions were opened.
const maxOriginWalk = 32

// originChain answers the origins of session id, nearest first (its
// origin, that one's origin, ...); empty for a session opened outside any
// turn or an unknown id.
func originChain(ctx context.Context, q *store.Q, id string) ([]string, error) {
	var chain []string
	for i := 0; i < maxOriginWalk; i++ {
		sess, err := q.GetSession(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return chain, nil
		}
		if err != nil {
			return nil, err
		}
		if sess.OriginSessionID == "" {
			return chain, nil
		}
		id = sess.OriginSessionID
		chain = append(chain, id)
	}
	return chain, nil
}

// delegatedFrom reports whether session id was delegated, directly or
// along its origin chain, from session origin.
func delegatedFrom(ctx context.Context, q *store.Q, id, origin string) (bool, error) {
	chain, err := originChain(ctx, q, id)
	if err != nil {
		return false, err
	}
	for _, o := range chain {
		if o == origin {
			return true, nil
		}
	}
	return false, nil
}

// originPeopleSees reports whether viewer is a person taking part in a
// session of id's origin chain (issue 12 point 1: the origin's people see
// a delegated session without being its participants).
func originPeopleSees(ctx context.Context, q *store.Q, id, viewer string) (bool, error) {
	chain, err := originChain(ctx, q, id)
	if err != nil || len(chain) == 0 {
		return false, err
	}
	for _, o := range chain {
		pt, err := q.Participant(ctx, o, viewer)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, err
		}
		if pt.Kind == store.KindPerson {
			return true, nil
		}
	}
	return false, nil
}

// originPeople lists the people of session id's origin chain, each once,
// nearest origin first: those a permission request in a delegated session
// goes to besides its own people.
func originPeople(ctx context.Context, q *store.Q, id string) ([]string, error) {
	chain, err := originChain(ctx, q, id)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, o := range chain {
		parts, err := q.Participants(ctx, o)
		if err != nil {
			return nil, err
		}
		for _, pt := range parts {
			if pt.Kind == store.KindPerson && !seen[pt.Name] {
				seen[pt.Name] = true
				out = append(out, pt.Name)
			}
		}
	}
	return out, nil
}

// delegationOrigin answers the origin of a session that p opens with the
// send being made: the turn's session when ctx carries p's turn token,
// nil otherwise (a send outside any turn opens an ordinary session). The
// turn's session must have p as its agent (403 delegation_not_agent) and
// be less than Config.DelegationDepth delegations deep (400
// delegation_too_deep, field to).
func (s *Service) delegationOrigin(ctx context.Context, q *store.Q, p *Principal) (*store.SessionRow, error) {
	sc, ok := ctx.Value(turnScopeKey{}).(turnScope)
	if !ok || sc.agent != p.Name {
		return nil, nil
	}
	origin, err := q.GetSession(ctx, sc.session)
	if err != nil {
		return nil, err
	}
	if origin.AgentName != p.Name {
		return nil, Forbidden("delegation_not_agent",
			fmt.Sprintf("%s is not the agent of session %q, so a turn there cannot open sessions", p.Name, origin.Alias),
			"reply in the turn's session; only the session's own agent delegates from it")
	}
	chain, err := originChain(ctx, q, origin.SessionID)
	if err != nil {
		return nil, err
	}
	if len(chain)+1 > s.Config.DelegationDepth {
		return nil, InvalidCode("delegation_too_deep", "to",
			fmt.Sprintf("session %q is already %d delegations deep; a chain of delegated sessions is at most %d deep",
				origin.Alias, len(chain), s.Config.DelegationDepth),
			"answer in this session instead of delegating further, or ask a person to start a new conversation")
	}
	return &origin, nil
}

// maxDelegationsShown bounds Session.Delegations.
const maxDelegationsShown = 100

// sessionRef is the short form of a session beside another one.
func sessionRef(row store.SessionRow) client.SessionRef {
	return client.SessionRef{SessionID: row.SessionID, Alias: row.Alias, Subject: row.Subject, AgentName: row.AgentName,
		UsedRounds: row.UsedRounds, BudgetMax: row.BudgetMax}
}

// delegationLinks answers the links of session row for viewer (issue 15
// points 5 and 6): its origin, when viewer may see it, and the sessions
// delegated from it that viewer may see, oldest first (at most
// maxDelegationsShown). What viewer may not see is left out, so the links
// reveal no session beyond visibleSessions.
func delegationLinks(ctx context.Context, q *store.Q, row store.SessionRow, viewer string) (*client.SessionRef, []client.SessionRef, error) {
	var origin *client.SessionRef
	if row.OriginSessionID != "" {
		o, err := q.GetSession(ctx, row.OriginSessionID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, err
		}
		if err == nil {
			if ok, err := mayViewSession(ctx, q, o.SessionID, viewer); err != nil {
				return nil, nil, err
			} else if ok {
				ref := sessionRef(o)
				origin = &ref
			}
		}
	}
	rows, err := q.SessionsDelegatedFrom(ctx, row.SessionID, maxDelegationsShown)
	if err != nil || len(rows) == 0 {
		return origin, nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.SessionID
	}
	vis, err := visibleSessions(ctx, q, viewer, ids)
	if err != nil {
		return nil, nil, err
	}
	var out []client.SessionRef
	for _, r := range rows {
		if vis[r.SessionID] {
			out = append(out, sessionRef(r))
		}
	}
	return origin, out, nil
}

// hasParty reports whether parties holds one named name.
func hasParty(parties []Party, name string) bool {
	for _, p := range parties {
		if p.Name == name {
			return true
		}
	}
	return false
}
