package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Membership and visibility (issue 12, docs/SECURITY.md "Principals").
//
// A session's participants are who the gateway put there: its creator, the
// recipients of the mail that opened it, and whoever a participant writes
// to in it (to and cc). Nobody joins a session by naming its alias: a mail
// to an alias from someone who takes no part in that session answers what
// an unknown alias answers (404 alias_not_found, nothing created), and so
// do address resolution, suggestions and every other read.
//
// visibleSessions is the one place that decides which sessions a principal
// may see, write into and decide in. Every other rule (sessionFor, the
// alias lookup of a send, address resolution, the platform-session mirror,
// permission requests) asks it, and it is where delegated sessions are
// visible to the people of their origin session without making them
// participants (delegation.go).

// visibleSessions answers which of the session ids the principal named
// viewer (a person's username or an agent's name) may see: the sessions
// viewer takes part in, and the delegated sessions whose origin chain holds
// a session viewer takes part in as a person (delegation.go), narrowed to
// the turn's session and the sessions delegated from it when the request
// authenticated with viewer's turn token (inTurnScope). Unknown ids are
// absent from the set, so "unknown" and "not yours" cannot be told apart.
func visibleSessions(ctx context.Context, q *store.Q, viewer string, ids []string) (map[string]bool, error) {
	set, err := q.SessionsWithParticipant(ctx, viewer, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if set[id] {
			continue
		}
		ok, err := originPeopleSees(ctx, q, id, viewer)
		if err != nil {
			return nil, err
		}
		if ok {
			set[id] = true
		}
	}
	for id := range set {
		in, err := inTurnScope(ctx, q, viewer, id)
		if err != nil {
			return nil, err
		}
		if !in {
			delete(set, id)
		}
	}
	return set, nil
}

// inTurnScope is the rule of turn tokens (turntokens.go): when ctx carries
// a turn token of viewer (WithPrincipal), viewer may act in that token's
// session and in the sessions delegated from it (delegation.go) only;
// otherwise nothing is narrowed. Questions about others (may this person
// see the session the turn runs in?) are not narrowed either.
func inTurnScope(ctx context.Context, q *store.Q, viewer, sessionID string) (bool, error) {
	sc, ok := ctx.Value(turnScopeKey{}).(turnScope)
	if !ok || sc.agent != viewer || sessionID == sc.session {
		return true, nil
	}
	return delegatedFrom(ctx, q, sessionID, sc.session)
}

// turnRestricted reports whether ctx carries viewer's turn token.
func turnRestricted(ctx context.Context, viewer string) bool {
	sc, ok := ctx.Value(turnScopeKey{}).(turnScope)
	return ok && sc.agent == viewer
}

// viewMail answers mail id as viewer sees it (a mail viewer sent or
// received, store ViewMail) when its session is within viewer's turn scope
// (inTurnScope); otherwise store.ErrNotFound, what an unknown id answers.
func viewMail(ctx context.Context, q *store.Q, id, viewer string) (store.ViewedMail, error) {
	v, err := q.ViewMail(ctx, id, viewer)
	if err != nil {
		return v, err
	}
	if in, err := inTurnScope(ctx, q, viewer, v.SessionID); err != nil {
		return store.ViewedMail{}, err
	} else if !in {
		return store.ViewedMail{}, store.ErrNotFound
	}
	return v, nil
}

// mayViewSession reports whether viewer may see the session id (see
// visibleSessions); an unknown id is false.
func mayViewSession(ctx context.Context, q *store.Q, id, viewer string) (bool, error) {
	set, err := visibleSessions(ctx, q, viewer, []string{id})
	if err != nil {
		return false, err
	}
	return set[id], nil
}

// mayUseUnboundPlatformSession reports whether p may see and address a
// mirrored platform session of agent that no mail session is bound to (a
// conversation someone started in the platform's own interface): admins
// only. People an admin allows for an agent are to be added here.
func mayUseUnboundPlatformSession(p *Principal, agent string) bool {
	_ = agent
	return p.IsAdmin()
}

// mirrorSession decides what a mail from p to the mirrored platform
// session ps (W-3) reaches. Bound to mail sessions: the most recently
// active one p may see (bound set), else ErrNotFound (not p's). Unbound:
// bound is nil when p may open a mail session on it
// (mayUseUnboundPlatformSession), else ErrNotFound.
func mirrorSession(ctx context.Context, q *store.Q, p *Principal, ps store.PlatformSessionRow) (bound *store.SessionRow, err error) {
	binds, err := q.SessionsBoundTo(ctx, []string{ps.PlatformID})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, b := range binds {
		if b.AgentName == ps.AgentName {
			ids = append(ids, b.SessionID)
		}
	}
	if len(ids) == 0 {
		if !mayUseUnboundPlatformSession(p, ps.AgentName) {
			return nil, store.ErrNotFound
		}
		return nil, nil
	}
	vis, err := visibleSessions(ctx, q, p.Name, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids { // most recently active first
		if vis[id] {
			sess, err := q.GetSession(ctx, id)
			if err != nil {
				return nil, err
			}
			return &sess, nil
		}
	}
	return nil, store.ErrNotFound
}

// visibleMirror filters mirrored platform sessions to those p may see: a
// bound one when p may see one of its mail sessions, an unbound one when
// mayUseUnboundPlatformSession allows it.
func visibleMirror(ctx context.Context, q *store.Q, p *Principal, list []store.PlatformSessionRow) ([]store.PlatformSessionRow, error) {
	if len(list) == 0 {
		return list, nil
	}
	pids := make([]string, 0, len(list))
	for _, ps := range list {
		pids = append(pids, ps.PlatformID)
	}
	binds, err := q.SessionsBoundTo(ctx, pids)
	if err != nil {
		return nil, err
	}
	type key struct{ agent, pid string }
	boundTo := map[key][]string{}
	var ids []string
	for _, b := range binds {
		k := key{b.AgentName, b.PlatformID}
		boundTo[k] = append(boundTo[k], b.SessionID)
		ids = append(ids, b.SessionID)
	}
	vis, err := visibleSessions(ctx, q, p.Name, ids)
	if err != nil {
		return nil, err
	}
	out := list[:0:0]
	for _, ps := range list {
		sessions, isBound := boundTo[key{ps.AgentName, ps.PlatformID}]
		ok := !isBound && mayUseUnboundPlatformSession(p, ps.AgentName)
		for _, id := range sessions {
			ok = ok || vis[id]
		}
		if ok {
			out = append(out, ps)
		}
	}
	return out, nil
}

// Workspaces of reservations (reservations.go): who may use and see the
// reservations of a workspace follows from the sessions a principal takes
// part in, as every other read here does. A reservation names its session
// only to viewers of that session (visibleSessions).

// coveringWorkspaces answers the directories a session in which covers ws
// for reservations: ws itself and each directory above it that is at
// least two levels deep ("/home/alice" covers "/home/alice/repo"; "/" and
// "/home" do not). Anybody may open a session in any directory (an address
// names one), and the root and the directories right under it hold
// everybody's work, so a session there covers its own directory only:
// otherwise one mail to agent@/.new would show and release every
// reservation of the gateway.
func coveringWorkspaces(ws string) []string {
	var out []string
	for _, a := range store.Ancestors(ws) {
		if a == ws || strings.Count(a, "/") >= 2 {
			out = append(out, a)
		}
	}
	return out
}

// mayUseWorkspace reports whether p may reserve and list in ws: a person
// or a turn token through a session (a turn token: its own) in ws or a
// directory above it that covers it (coveringWorkspaces); an agent key also
// through its registered workspaces, under the same depth rule (a
// registered "/" or "/home" covers only itself; Register refuses both).
func mayUseWorkspace(ctx context.Context, q *store.Q, p *Principal, ws string) (bool, error) {
	session := ""
	if p.IsTurnToken() {
		session = p.TurnSession
	}
	ok, err := q.TakesPartInWorkspace(ctx, p.Name, session, coveringWorkspaces(ws))
	if err != nil || ok || !p.IsAgent() || p.IsTurnToken() {
		return ok, err
	}
	reg, err := registeredWorkspaces(ctx, q, p.Name)
	if err != nil {
		return false, err
	}
	for _, c := range coveringWorkspaces(ws) {
		if reg[c] {
			return true, nil
		}
	}
	return false, nil
}

// registeredWorkspaces answers the cleaned absolute paths agent registered
// as its workspaces (W-2); an unknown agent has none. Paths that are not
// absolute are left out.
func registeredWorkspaces(ctx context.Context, q *store.Q, agent string) (map[string]bool, error) {
	a, err := q.GetAgent(ctx, agent)
	if errors.Is(err, store.ErrNotFound) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	var reg []client.Workspace
	_ = json.Unmarshal([]byte(a.Workspaces), &reg)
	out := map[string]bool{}
	for _, w := range reg {
		if c, err := cleanWorkspace(w.Path, "workspace"); err == nil {
			out[c] = true
		}
	}
	return out, nil
}

// maxPersonWorkspaceAgents bounds how many (agent, directory) pairs of a
// person's sessions personMaySee weighs for one workspace.
const maxPersonWorkspaceAgents = 1000

// personMaySee reports whether the person name may see, check and release
// reservations taken in ws (issue 21: "a person who takes part in a
// session in that workspace"). A session counts only when it was opened
// at a directory that covers ws (coveringWorkspaces) for an agent that
// works there: one of that agent's registered workspaces covers ws too and
// holds the session's directory, or the agent worked in that very session
// (it answered there, or holds a reservation taken in it: how an agent run
// by a bridge, which registers no workspace, shows it works there). Anybody
// may address any agent at any directory, so a session opened at a path its
// agent does not work in (mail to beta@/w/repo.new that beta never
// answered, when beta never registered /w/repo) grants nothing. cache
// memoises per workspace.
func personMaySee(ctx context.Context, q *store.Q, name, ws string, cache map[string]bool) (bool, error) {
	if v, ok := cache[ws]; ok {
		return v, nil
	}
	cover := coveringWorkspaces(ws)
	covers := map[string]bool{}
	for _, c := range cover {
		covers[c] = true
	}
	pairs, err := q.AgentsAtWorkspaces(ctx, name, cover, maxPersonWorkspaceAgents)
	if err != nil {
		return false, err
	}
	regs := map[string]map[string]bool{}
	ok := false
	for _, at := range pairs {
		if at.Worked {
			ok = true // the agent answered or reserved in that session
			break
		}
		reg, seen := regs[at.Agent]
		if !seen {
			if reg, err = registeredWorkspaces(ctx, q, at.Agent); err != nil {
				return false, err
			}
			regs[at.Agent] = reg
		}
		for r := range reg {
			if covers[r] && (r == at.Path || strings.HasPrefix(at.Path, strings.TrimSuffix(r, "/")+"/")) {
				ok = true
				break
			}
		}
		if ok {
			break
		}
	}
	cache[ws] = ok
	return ok, nil
}
