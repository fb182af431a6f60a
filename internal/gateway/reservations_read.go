package gateway

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// The read side of file reservations (reservations.go): listing what a
// principal may see, and checking paths against other agents'
// reservations (the pre-commit guard).

// ListReservations answers the active reservations p may see (GET
// /reservations, /me/reservations): for an agent, those that can touch ws
// (taken in ws or below it, or above it with a pattern reaching into ws;
// a workspace it may use, else 404 workspace_not_found), or its own when
// ws is "" (a turn token: those of its session); for a person, those of
// ws, or of every workspace of the sessions the person takes part in when
// ws is "", each only when the person takes part in a session in its
// workspace or a directory above it.
func (s *Service) ListReservations(ctx context.Context, p *Principal, ws string) (*client.ReservationList, error) {
	q := s.Read()
	now := s.Now()
	var rows []store.ReservationRow
	if strings.TrimSpace(ws) != "" {
		var err error
		if ws, err = cleanWorkspace(ws, "workspace"); err != nil {
			return nil, err
		}
	}
	switch {
	case p.IsAgent() && ws == "":
		session := ""
		if p.IsTurnToken() {
			session = p.TurnSession
		}
		all, err := q.ReservationsOf(ctx, p.Name, session)
		if err != nil {
			return nil, err
		}
		rows = all
	case p.IsAgent():
		if ok, err := mayUseWorkspace(ctx, q, p, ws); err != nil {
			return nil, err
		} else if !ok {
			return nil, errWorkspaceNotFound
		}
		near, err := q.ReservationsNear(ctx, ws)
		if err != nil {
			return nil, err
		}
		// One taken in a directory above ws is listed only when it can
		// touch a path of ws.
		all := absPattern(ws, "**")
		for _, r := range near {
			if r.Workspace == ws || strings.HasPrefix(r.Workspace, strings.TrimSuffix(ws, "/")+"/") ||
				patternsOverlap(absPattern(r.Workspace, r.Pattern), all) {
				rows = append(rows, r)
			}
		}
	default:
		var spaces []string
		if ws != "" {
			if ok, err := personMaySee(ctx, q, p.Name, ws, map[string]bool{}); err != nil {
				return nil, err
			} else if !ok {
				return nil, errWorkspaceNotFound
			}
			spaces = []string{ws}
		} else {
			var err error
			if spaces, err = q.WorkspacesOfParticipant(ctx, p.Name, "", 200); err != nil {
				return nil, err
			}
		}
		cache := map[string]bool{}
		seen := map[string]bool{}
		for _, w := range spaces {
			near, err := q.ReservationsNear(ctx, w)
			if err != nil {
				return nil, err
			}
			for _, r := range near {
				if seen[r.ReservationID] {
					continue
				}
				ok, err := personMaySee(ctx, q, p.Name, r.Workspace, cache)
				if err != nil {
					return nil, err
				}
				if ok {
					seen[r.ReservationID] = true
					rows = append(rows, r)
				}
			}
		}
	}
	active := rows[:0:0]
	for _, r := range rows {
		if s.ended(r, now) == "" {
			active = append(active, r)
		}
	}
	sort.SliceStable(active, func(i, j int) bool {
		a, b := active[i], active[j]
		if a.Workspace != b.Workspace {
			return a.Workspace < b.Workspace
		}
		if a.Pattern != b.Pattern {
			return a.Pattern < b.Pattern
		}
		return a.AgentName < b.AgentName
	})
	views, err := reservationViews(ctx, q, p.Name, active, true)
	if err != nil {
		return nil, err
	}
	return &client.ReservationList{Reservations: views}, nil
}

// CheckReservations answers which of the paths (relative to ws, at most
// client.MaxCheckPaths) active reservations of other agents cover (POST
// /reservations/check, /me/reservations/check; the pre-commit guard):
// exclusive ones in Blocking, shared ones in Shared; the caller's own
// never. A workspace p may not use (see ListReservations) answers empty
// lists, as one without reservations does.
func (s *Service) CheckReservations(ctx context.Context, p *Principal, req client.ReservationCheckRequest) (*client.ReservationCheck, error) {
	ws, err := cleanWorkspace(req.Workspace, "workspace")
	if err != nil {
		return nil, err
	}
	if len(req.Paths) > client.MaxCheckPaths {
		return nil, Invalid("paths", fmt.Sprintf("at most %d paths", client.MaxCheckPaths), "check the paths in batches")
	}
	var paths []string
	for i, raw := range req.Paths {
		c, err := cleanReservationPath(ws, raw, fmt.Sprintf("paths[%d]", i))
		if err != nil {
			return nil, err
		}
		paths = append(paths, c)
	}
	out := &client.ReservationCheck{Workspace: ws, Blocking: []client.ReservationConflict{}, Shared: []client.ReservationConflict{}}
	q := s.Read()
	var ok bool
	if p.IsPerson() {
		ok, err = personMaySee(ctx, q, p.Name, ws, map[string]bool{})
	} else {
		ok, err = mayUseWorkspace(ctx, q, p, ws)
	}
	if err != nil || !ok {
		return out, err
	}
	near, err := q.ReservationsNear(ctx, ws)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	cache := map[string]bool{}
	var hits []store.ReservationRow
	var hitPaths []string
	for _, r := range near {
		if r.AgentName == p.Name || s.ended(r, now) != "" {
			continue
		}
		if p.IsPerson() {
			if ok, err := personMaySee(ctx, q, p.Name, r.Workspace, cache); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
		}
		pat := absPattern(r.Workspace, r.Pattern)
		for _, pt := range paths {
			if patternCovers(pat, absPattern(ws, pt)) {
				hits = append(hits, r)
				hitPaths = append(hitPaths, pt)
			}
		}
	}
	views, err := reservationViews(ctx, q, p.Name, hits, true)
	if err != nil {
		return nil, err
	}
	for i, v := range views {
		c := client.ReservationConflict{Path: hitPaths[i], Refused: v.Exclusive, Held: v}
		if v.Exclusive {
			out.Blocking = append(out.Blocking, c)
		} else {
			out.Shared = append(out.Shared, c)
		}
	}
	return out, nil
}
