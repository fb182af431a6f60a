package gateway

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// Suggestion kinds (GET /address/suggest).
const (
	SuggestPerson    = "person"
	SuggestAgent     = "agent"
	SuggestWorkspace = "workspace"
	SuggestSession   = "session"
)

// Discovery bounds.
const (
	DefaultSuggestLimit = 10
	MaxSuggestLimit     = 50
	// suggestSessions is how many of the viewer's recent sessions feed the
	// suggestions; suggestMirror how many mirrored platform sessions.
	suggestSessions = 300
	suggestMirror   = 1000
	// MaxPlatformSessions bounds a stored mirror (S-4 asks bridges for 200).
	MaxPlatformSessions = 1000
)

// NormalizePlatformSessions applies the snapshot rules the server enforces
// on a heartbeat's platform_sessions (W-3; S-1, S-3 are the bridge's job,
// the server keeps them too): entries without a slug are dropped, and of
// entries sharing a slug (or a platform_id) only the most recently updated
// one stays (a missing updated_at counts as oldest; on a tie the first
// reported). The reported order is kept otherwise, and at most
// MaxPlatformSessions entries stay. Slugs and ids are trimmed.
func NormalizePlatformSessions(list []client.PlatformSession) []client.PlatformSession {
	newer := func(a, b client.PlatformSession) bool { // a more recent than b
		switch {
		case a.UpdatedAt == nil:
			return false
		case b.UpdatedAt == nil:
			return true
		default:
			return a.UpdatedAt.After(*b.UpdatedAt)
		}
	}
	bestSlug := map[string]int{}
	bestID := map[string]int{}
	clean := make([]client.PlatformSession, len(list))
	for i, ps := range list {
		ps.Slug, ps.PlatformID = strings.TrimSpace(ps.Slug), strings.TrimSpace(ps.PlatformID)
		clean[i] = ps
		if ps.Slug == "" {
			continue
		}
		if j, ok := bestSlug[ps.Slug]; !ok || newer(ps, clean[j]) {
			bestSlug[ps.Slug] = i
		}
	}
	for _, i := range bestSlug {
		id := clean[i].PlatformID
		if j, ok := bestID[id]; !ok || newer(clean[i], clean[j]) || (!newer(clean[j], clean[i]) && i < j) {
			bestID[id] = i
		}
	}
	out := make([]client.PlatformSession, 0, len(bestID))
	for i, ps := range clean {
		if ps.Slug != "" && bestSlug[ps.Slug] == i && bestID[ps.PlatformID] == i {
			out = append(out, ps)
			if len(out) == MaxPlatformSessions {
				break
			}
		}
	}
	return out
}

// Contacts answers the people (not disabled) and agents (with platform,
// online status and last_seen) by name (GET /contacts).
func (s *Service) Contacts(ctx context.Context, p *Principal) (*client.ContactList, error) {
	q := s.Read()
	users, err := q.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	agents, err := q.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	out := &client.ContactList{Contacts: []client.Contact{}}
	for _, u := range users {
		if !u.Disabled {
			out.Contacts = append(out.Contacts, client.Contact{Name: u.Username, Kind: store.KindPerson})
		}
	}
	for _, a := range agents {
		v := s.AgentView(a)
		out.Contacts = append(out.Contacts, client.Contact{Name: a.Name, Kind: store.KindAgent, Platform: v.Platform,
			Status: v.Status, LastSeen: v.LastSeen})
	}
	sort.SliceStable(out.Contacts, func(i, j int) bool { return out.Contacts[i].Name < out.Contacts[j].Name })
	return out, nil
}

// SessionParticipants answers the members of a session the principal takes
// part in, each with the address that reaches them in it (GET
// /sessions/{id}/participants); any other session is a 404.
func (s *Service) SessionParticipants(ctx context.Context, p *Principal, id string) (*client.ParticipantList, error) {
	q := s.Read()
	sess, err := sessionFor(ctx, q, id, p.Name)
	if err != nil {
		return nil, err
	}
	parts, err := q.Participants(ctx, sess.SessionID)
	if err != nil {
		return nil, err
	}
	out := &client.ParticipantList{SessionID: sess.SessionID, Participants: []client.Participant{}}
	for _, pt := range parts {
		out.Participants = append(out.Participants, client.Participant{Name: pt.Name, Kind: pt.Kind,
			Address: address.Format(pt.Name, pt.Workspace, sess.Alias)})
	}
	return out, nil
}

// suggestion is a candidate with its ranking facts.
type suggestion struct {
	client.Suggestion
	order int // insertion order, the last tie-breaker
}

// Suggest answers address suggestions for what was typed so far (GET
// /address/suggest?q=): people, agents at their workspaces, and sessions by
// alias, from the caller's own mail sessions (never another's) and from the
// agents' platform-session mirror (W-3) as far as the caller may see it
// (visibleMirror: a bound platform session only to its mail session's
// people, an unbound one only to admins), ranked by match (prefix of the
// address, name or alias before a match anywhere, case-insensitive) and
// then by recent activity. An empty q lists the most recent. limit is
// 1..MaxSuggestLimit.
func (s *Service) Suggest(ctx context.Context, p *Principal, query string, limit int) (*client.SuggestionList, error) {
	if limit <= 0 {
		limit = DefaultSuggestLimit
	}
	if limit > MaxSuggestLimit {
		limit = MaxSuggestLimit
	}
	rd := s.Read()
	var cands []suggestion
	add := func(sg client.Suggestion) {
		cands = append(cands, suggestion{Suggestion: sg, order: len(cands)})
	}
	lastActive := map[string]time.Time{} // name → most recent activity seen
	touch := func(name string, t time.Time) {
		if t.After(lastActive[name]) {
			lastActive[name] = t
		}
	}
	members, err := rd.SessionMembersOf(ctx, p.Name, suggestSessions)
	if err != nil {
		return nil, err
	}
	type pathKey struct{ name, ws string }
	paths := map[pathKey]time.Time{}
	for _, m := range members {
		if in, err := inTurnScope(ctx, rd, p.Name, m.SessionID); err != nil { // visibility.go: a turn token sees its session only
			return nil, err
		} else if !in {
			continue
		}
		touch(m.Name, m.LastActivity)
		if m.Name == p.Name {
			continue
		}
		la := m.LastActivity
		add(client.Suggestion{Address: address.Format(m.Name, m.Workspace, m.Alias), Kind: SuggestSession, Name: m.Name,
			Workspace: m.Workspace, Alias: m.Alias, Title: m.Subject, LastActive: &la})
		if m.Kind == store.KindAgent && m.Workspace != "" {
			k := pathKey{m.Name, m.Workspace}
			if m.LastActivity.After(paths[k]) {
				paths[k] = m.LastActivity
			}
		}
	}
	mirror, err := rd.RecentPlatformSessions(ctx, suggestMirror)
	if err != nil {
		return nil, err
	}
	if mirror, err = visibleMirror(ctx, rd, p, mirror); err != nil { // visibility.go
		return nil, err
	}
	for _, ps := range mirror {
		var la *time.Time
		if ps.UpdatedAt != nil {
			t := *ps.UpdatedAt
			la = &t
			touch(ps.AgentName, t)
		}
		add(client.Suggestion{Address: address.Format(ps.AgentName, ps.Workspace, ps.Slug), Kind: SuggestSession,
			Name: ps.AgentName, Workspace: ps.Workspace, Alias: ps.Slug, Title: ps.Title, LastActive: la})
		if ps.Workspace != "" {
			k := pathKey{ps.AgentName, ps.Workspace}
			t, ok := paths[k]
			switch {
			case la != nil && la.After(t):
				paths[k] = *la
			case !ok:
				paths[k] = time.Time{}
			}
		}
	}
	agents, err := rd.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if a.LastSeen != nil {
			touch(a.Name, *a.LastSeen)
		}
		var ws []client.Workspace
		_ = json.Unmarshal([]byte(a.Workspaces), &ws)
		for _, w := range ws {
			if w.Path != "" {
				k := pathKey{a.Name, w.Path}
				if _, ok := paths[k]; !ok {
					paths[k] = time.Time{}
				}
			}
		}
	}
	// Agents: one entry at their most recent path, then every path.
	latest := map[string]pathKey{}
	for k, t := range paths {
		if cur, ok := latest[k.name]; !ok || t.After(paths[cur]) || (t.Equal(paths[cur]) && k.ws < cur.ws) {
			latest[k.name] = k
		}
	}
	for _, a := range agents {
		var la *time.Time
		if t, ok := lastActive[a.Name]; ok && !t.IsZero() {
			la = &t
		}
		sg := client.Suggestion{Address: a.Name + "@", Kind: SuggestAgent, Name: a.Name, LastActive: la}
		if k, ok := latest[a.Name]; ok {
			sg.Address, sg.Workspace = address.Format(a.Name, k.ws, ""), k.ws
		}
		add(sg)
	}
	for k, t := range paths {
		var la *time.Time
		if !t.IsZero() {
			tt := t
			la = &tt
		}
		add(client.Suggestion{Address: address.Format(k.name, k.ws, ""), Kind: SuggestWorkspace, Name: k.name, Workspace: k.ws, LastActive: la})
	}
	users, err := rd.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		if u.Disabled || u.Username == p.Name {
			continue
		}
		var la *time.Time
		if t, ok := lastActive[u.Username]; ok && !t.IsZero() {
			la = &t
		}
		add(client.Suggestion{Address: u.Username, Kind: SuggestPerson, Name: u.Username, LastActive: la})
	}
	return &client.SuggestionList{Suggestions: rankSuggestions(cands, query, limit)}, nil
}

// kindRank orders equally recent suggestions: the most specific first.
var kindRank = map[string]int{SuggestSession: 0, SuggestAgent: 1, SuggestWorkspace: 2, SuggestPerson: 3}

// rankSuggestions filters the candidates by q, keeps the first of each
// address, and orders them: prefix matches first, then by recent activity
// (none last), then sessions before agents, workspaces and people, then by
// address.
func rankSuggestions(cands []suggestion, q string, limit int) []client.Suggestion {
	q = strings.ToLower(strings.TrimSpace(q))
	type ranked struct {
		suggestion
		score int
	}
	var list []ranked
	for _, c := range cands {
		score := 0
		if q != "" {
			prefix := false
			for _, f := range []string{c.Address, c.Name, c.Alias} {
				if strings.HasPrefix(strings.ToLower(f), q) {
					prefix = true
				}
			}
			switch {
			case prefix:
				score = 0
			case strings.Contains(strings.ToLower(c.Address+"\x00"+c.Title+"\x00"+c.Workspace), q):
				score = 1
			default:
				continue
			}
		}
		list = append(list, ranked{c, score})
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.score != b.score {
			return a.score < b.score
		}
		switch {
		case a.LastActive != nil && b.LastActive == nil:
			return true
		case a.LastActive == nil && b.LastActive != nil:
			return false
		case a.LastActive != nil && !a.LastActive.Equal(*b.LastActive):
			return a.LastActive.After(*b.LastActive)
		}
		if ka, kb := kindRank[a.Kind], kindRank[b.Kind]; ka != kb {
			return ka < kb
		}
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		return a.order < b.order
	})
	out := []client.Suggestion{}
	seen := map[string]bool{}
	for _, r := range list {
		if seen[r.Address] {
			continue
		}
		seen[r.Address] = true
		out = append(out, r.suggestion.Suggestion)
		if len(out) == limit {
			break
		}
	}
	return out
}

// Resolve previews where a mail from the principal to raw would go, with
// the send's own rule (lookupSession) and without creating anything (GET
// /address/resolve): an unknown name is 404 recipient_not_found, an unknown
// alias 404 alias_not_found, and so is the alias of a session the caller
// may not see (aliasSessionFor); a former alias of a session the caller may
// see resolves to it, Alias being the current one (issue 14); a slug in the
// agent's platform-session mirror resolves when mirrorSession lets the
// caller reach it (bound: exists true with the bound session; unbound:
// exists false, the first mail opens the session), a path the send would
// refuse is the same 400 (checkRecipientPath: a person with a path, an
// agent with a relative or missing path); a default session that does not
// exist yet answers exists false.
func (s *Service) Resolve(ctx context.Context, p *Principal, raw string) (*client.Resolution, error) {
	a, err := address.Parse(raw)
	if err != nil {
		return nil, Invalid("address", err.Error(), "write name@path.session, name@path.new, or a bare person name")
	}
	q := s.Read()
	kind, err := s.resolveName(ctx, q, a, "address")
	if err != nil {
		return nil, err
	}
	if err := checkRecipientPath(a, kind, "address", false); err != nil { // the send's path rules
		return nil, err
	}
	out := &client.Resolution{Name: a.Name, Kind: kind, Workspace: a.Path, Session: a.Session.String()}
	senderKind := store.KindPerson
	if p.IsAgent() {
		senderKind = store.KindAgent
	}
	found, err := lookupSession(ctx, q, p, senderKind, a, kind, nil, "address") // sessionchoice.go: the send's rule
	if err != nil {
		return nil, err
	}
	if found.existing != nil {
		out.Exists, out.SessionID = true, found.existing.SessionID
	}
	switch {
	case a.Session == address.SessionAlias:
		out.Alias = a.Alias
		if found.mirror == nil {
			// A former alias resolves too; the answer carries the current one.
			out.Alias = found.existing.Alias
		}
		switch {
		case out.Workspace != "":
		case found.mirror != nil:
			out.Workspace = found.mirror.Workspace
		default:
			if pt, perr := q.Participant(ctx, found.existing.SessionID, a.Name); perr == nil {
				out.Workspace = pt.Workspace
			}
		}
	case found.existing != nil: // the default session
		out.Alias = found.existing.Alias
	}
	out.Address = a.String()
	return out, nil
}
