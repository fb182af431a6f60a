package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// sessionLookup is what the address rule (lookupSession) finds before
// anything is written: an existing session, or a mirrored platform
// session (W-3) that a new mail session is to be bound to, or neither (the
// send opens a new session). When a mirrored platform session is bound to
// a mail session, both are set.
type sessionLookup struct {
	existing *store.SessionRow
	mirror   *store.PlatformSessionRow
}

// lookupSession is the address rule of a mail from p (senderKind) to `to`
// (a name of kind toKind), without writing anything (seed 000 section 0,
// W-5, N-8):
//   - `.alias`: the session that has or had that alias (a former alias
//     reaches it as the current one does, issue 14) when p may see it and
//     the addressed name takes part in it (aliasSessionFor); current and
//     former aliases are looked up before the mirror. Else, to an
//     agent, a slug of its platform-session mirror that mirrorSession lets
//     p reach: the mail session bound to it, or, unbound, the mirror entry
//     itself. Anything else is 404 alias_not_found, the same answer for an
//     alias that does not exist and for one p may not see.
//   - no session part: the replied mail's session when parent is set, else
//     the default session (defaultSession), or none;
//   - `.new`: none (the send opens a session).
//
// to has passed checkRecipientPath (addressrules.go), so an agent's address
// has a path wherever the rule needs one. Errors name field ("to" for a
// send).
func lookupSession(ctx context.Context, q *store.Q, p *Principal, senderKind string, to address.Address, toKind string,
	parent *store.ViewedMail, field string) (sessionLookup, error) {
	switch {
	case to.Session == address.SessionAlias:
		// Only the session's own people reach it by alias; to anyone else
		// it answers exactly what an unknown alias answers (visibility.go).
		sess, err := aliasSessionFor(ctx, q, to, p.Name)
		if err == nil {
			return sessionLookup{existing: &sess}, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return sessionLookup{}, err
		}
		if toKind == store.KindAgent {
			// A session the platform reported in its heartbeat mirror
			// (W-3) is known too, to those mirrorSession lets reach it:
			// bound to a mail session, the mail goes there; unbound, the
			// first mail to its slug opens the mail session bound to it.
			ps, err := q.PlatformSessionBySlug(ctx, to.Name, to.Alias, to.Path)
			var bound *store.SessionRow
			if err == nil {
				bound, err = mirrorSession(ctx, q, p, ps)
			}
			switch {
			case err == nil:
				return sessionLookup{existing: bound, mirror: &ps}, nil
			case !errors.Is(err, store.ErrNotFound):
				return sessionLookup{}, err
			}
		}
		return sessionLookup{}, aliasNotFoundIn(to, field)
	case to.Session == address.SessionDefault && parent != nil:
		sess, err := q.GetSession(ctx, parent.SessionID)
		if err != nil {
			return sessionLookup{}, err
		}
		return sessionLookup{existing: &sess}, nil
	case to.Session == address.SessionDefault:
		sess, err := defaultSession(ctx, q, to, toKind, p.Name, senderKind)
		if errors.Is(err, store.ErrNotFound) {
			return sessionLookup{}, nil
		}
		if err != nil {
			return sessionLookup{}, err
		}
		return sessionLookup{existing: &sess}, nil
	default: // .new
		return sessionLookup{}, nil
	}
}

// chooseSession is the session rule of a send: the session the mail from
// p (senderKind) lands in, and whether this send opened it. A relay mail
// (W-5) stays in the replied mail's session (relaySession: it never opens
// one). Any other mail follows the address rule (lookupSession); when that
// finds no session, one is opened (openSessionTx: the agents' new-session
// rate limit applies): bound to the mirrored platform session the address
// named, with its slug as alias (alias_source "platform_slug", D-5 level
// 1) and, when the address has no path, the mirror's workspace as the
// recipient's path; else with the requested alias, "manual" when a person
// asked for one, "auto" otherwise (without a usable alias, CreateSessionTx
// derives one from the subject, "subject", or generates one, "auto").
// targets are the send's recipients (sendTargets).
func (s *Service) chooseSession(ctx context.Context, tx *Tx, p *Principal, senderKind string, spec *sendSpec,
	parent *store.ViewedMail, targets []target) (sess store.SessionRow, opened bool, err error) {
	if spec.relay != "" {
		// The free channel (I-2) stays in the replied mail's session.
		sess, err = s.relaySession(ctx, tx, p, spec, parent)
		return sess, false, err
	}
	found, err := lookupSession(ctx, tx.Q, p, senderKind, spec.to, spec.toKind, parent, "to")
	if err == nil && found.existing == nil {
		// This send may open a session: the default session found once
		// and the new-session rate limit hold with the sender and the
		// addressee locked (every send that opens a session locks both,
		// sorted), and the lookup runs again under the lock, seeing what
		// a send that held it committed.
		if err := tx.LockKeys(ctx, "open-session", p.Name, spec.to.Name); err != nil {
			return store.SessionRow{}, false, err
		}
		found, err = lookupSession(ctx, tx.Q, p, senderKind, spec.to, spec.toKind, parent, "to")
	}
	switch {
	case err != nil:
		return store.SessionRow{}, false, err
	case found.existing != nil:
		return *found.existing, false, nil
	case found.mirror != nil:
		ps := found.mirror
		spec.sessionAlias = ps.Slug
		if spec.to.Path == "" {
			targets[0].addr.Path = ps.Workspace
		}
		sess, err = s.openSessionTx(ctx, tx, p, senderKind, spec, spec.toKind, store.AliasPlatformSlug, ps.PlatformID)
		return sess, err == nil, err
	}
	src := store.AliasAuto
	if p.IsPerson() && strings.TrimSpace(spec.sessionAlias) != "" {
		src = store.AliasManual
	}
	sess, err = s.openSessionTx(ctx, tx, p, senderKind, spec, spec.toKind, src, "")
	return sess, err == nil, err
}

// defaultSession answers the default session of an address without a
// session part, for a send without reply_to (seed 000 section 0), or
// store.ErrNotFound (the send opens a new session):
//   - to an agent: the most recently active session whose agent is that
//     agent at that path and in which the sender takes part;
//   - from an agent to a person: the most recently active session whose
//     agent is the sender and in which the person takes part;
//   - from a person to a person: the most recently active people-only
//     session (no agent) in which both take part.
//
// A session outside the sender's turn scope (visibility.go inTurnScope) is
// store.ErrNotFound too.
func defaultSession(ctx context.Context, q *store.Q, to address.Address, toKind, sender, senderKind string) (store.SessionRow, error) {
	sess, err := defaultSessionAny(ctx, q, to, toKind, sender, senderKind)
	if err != nil {
		return sess, err
	}
	if in, err := inTurnScope(ctx, q, sender, sess.SessionID); err != nil {
		return store.SessionRow{}, err
	} else if !in {
		return store.SessionRow{}, store.ErrNotFound
	}
	return sess, nil
}

func defaultSessionAny(ctx context.Context, q *store.Q, to address.Address, toKind, sender, senderKind string) (store.SessionRow, error) {
	switch {
	case toKind == store.KindAgent:
		return q.DefaultSession(ctx, to.Name, to.Path, sender)
	case senderKind == store.KindAgent:
		return q.DefaultAgentSessionWith(ctx, sender, to.Name)
	default:
		return q.DefaultPeopleSession(ctx, sender, to.Name)
	}
}

func aliasNotFound(a address.Address) error { return aliasNotFoundIn(a, "to") }

// aliasSessionFor answers the session an alias address names for the
// principal named viewer: the session that has or had that alias (a former
// alias reaches it as the current one does, issue 14), when viewer may see
// it (mayViewSession) and the address's name takes part in it (or is its
// agent). Anything else is store.ErrNotFound, the answer of an unknown
// alias, so a session's existence leaks nothing to others (issue 12).
func aliasSessionFor(ctx context.Context, q *store.Q, a address.Address, viewer string) (store.SessionRow, error) {
	sess, _, err := q.SessionByAnyAlias(ctx, a.Alias)
	if err != nil {
		return sess, err
	}
	if ok, err := mayViewSession(ctx, q, sess.SessionID, viewer); err != nil {
		return sess, err
	} else if !ok {
		return store.SessionRow{}, store.ErrNotFound
	}
	if sess.AgentName != a.Name {
		if _, err := q.Participant(ctx, sess.SessionID, a.Name); err != nil {
			return store.SessionRow{}, err
		}
	}
	return sess, nil
}

// sessionHasAlias reports whether alias is the session's alias or one of
// its former aliases.
func sessionHasAlias(ctx context.Context, q *store.Q, sess store.SessionRow, alias string) (bool, error) {
	if alias == sess.Alias {
		return true, nil
	}
	other, _, err := q.SessionByAnyAlias(ctx, alias)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil && other.SessionID == sess.SessionID, err
}

// aliasNotFoundIn is the 404 alias_not_found of an address in the request
// field named.
func aliasNotFoundIn(a address.Address, field string) error {
	return &Error{Kind: KindNotFound, Code: "alias_not_found", Field: field,
		Message:    fmt.Sprintf("no session with alias %q for %s; nothing was created", a.Alias, a.Name),
		Suggestion: "check the alias (GET /api/v1/address/suggest); do not retry with .new, which would open an empty session (N-8)"}
}

// openSessionTx creates the session of a send, after the bound on the
// sessions one owner opens (Config.MaxSessionsPerOwner: 409 session_limit)
// and the new-session rate limit for agents (counted in the database under the sender's narrow lock,
// chooseSession, so it holds across replicas).
// A send made with a turn token opens a delegated session (delegation.go
// delegationOrigin: its errors come first): its origin is the turn's
// session and the sender's path in it that session's workspace
// (spec.fromWorkspace).
func (s *Service) openSessionTx(ctx context.Context, tx *Tx, p *Principal, senderKind string, spec *sendSpec, toKind, aliasSource, platformID string) (store.SessionRow, error) {
	origin, err := s.delegationOrigin(ctx, tx.Q, p)
	if err != nil {
		return store.SessionRow{}, err
	}
	if n, err := tx.SessionsCreatedBy(ctx, p.Name); err != nil {
		return store.SessionRow{}, err
	} else if n >= s.Config.MaxSessionsPerOwner {
		return store.SessionRow{}, Conflict("session_limit",
			fmt.Sprintf("%s has opened %d sessions, the limit is %d", p.Name, n, s.Config.MaxSessionsPerOwner),
			"continue an existing conversation (reply to it, or address it by its alias), or ask the administrator to raise AGENTMAIL_MAX_SESSIONS_PER_OWNER")
	}
	if p.IsAgent() {
		n, oldest, err := tx.SessionsCreatedSince(ctx, p.Name, tx.Now.Add(-s.Config.NewSessionWindow))
		if err != nil {
			return store.SessionRow{}, err
		}
		if n >= s.Config.NewSessionLimit {
			wait := oldest.Add(s.Config.NewSessionWindow).Sub(tx.Now)
			return store.SessionRow{}, RateLimited("new_session_rate_limited",
				fmt.Sprintf("agent %s opened %d new sessions in the last %s; the limit is %d", p.Name, n,
					s.Config.NewSessionWindow, s.Config.NewSessionLimit), wait)
		}
	}
	budget := 0
	agentName, workspace := "", ""
	if toKind == store.KindAgent {
		agentName, workspace = spec.to.Name, spec.to.Path
	} else if p.IsAgent() {
		agentName = p.Name
	}
	switch {
	case spec.roundBudget != nil:
		budget = *spec.roundBudget
	case agentName != "":
		a, err := tx.GetAgent(ctx, agentName)
		if err != nil {
			return store.SessionRow{}, err
		}
		budget = a.DefaultRounds
	}
	subject := spec.subject
	originID := ""
	if origin != nil {
		originID, spec.fromWorkspace = origin.SessionID, origin.Workspace
	}
	return s.CreateSessionTx(ctx, tx, SessionSpec{Alias: spec.sessionAlias, AliasSource: aliasSource, Subject: subject,
		AgentName: agentName, Workspace: workspace, BudgetMax: budget, PlatformSessionID: platformID,
		CreatedBy: p.Name, CreatedByKind: senderKind, OriginSessionID: originID})
}
