package gateway

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// File reservations (issue 21 item 1; docs/API.md "Reservations").
//
// A reservation is an advisory lease an agent takes on paths or globs of a
// workspace (an absolute directory), exclusive (the default) or shared,
// for a TTL (default 60 minutes, at most 24 hours). Asking for a path that
// overlaps another agent's reservation names that conflict (holder,
// pattern, reason, expiry); it is refused when either side is exclusive
// and granted otherwise. Nothing is locked on disk: the pre-commit guard
// (`agentmail guard`) and the agents themselves honour them.
//
// Who may do what:
//   - an agent reserves, renews, releases and lists in a workspace it
//     registered or takes part in a session in (a turn token: its session's
//     workspaces only); another workspace is the 404 workspace_not_found of
//     one that has none;
//   - a conflict or listing names the session a reservation was taken in
//     only to a viewer who takes part in that session;
//   - a person sees the reservations of a workspace only while taking part
//     in a session in that workspace (or a directory above it at least two
//     levels deep: a session in "/" or "/home" covers only itself,
//     coveringWorkspaces) with an agent that registered that workspace or
//     one covering it (personMaySee), and may release any of them;
//   - workspaces, paths and reasons holding control or Unicode format
//     characters are refused (refuseHiddenRunes).
//
// A reservation ends on release, at its expiry, when the run of its
// session is stopped (ReleaseReservationsOfRun), and when its holder has
// not been seen (heartbeat, register or a reservation call) for
// Config.ReservationOfflineTTL. Every end and change is a
// reservation_changed event to every agent holding a reservation in that
// workspace. Ended reservations are removed lazily by the next write in
// the workspace and by the background sweep (SweepReservations).

// StopReasonStopped is the stop_reason of a run a person stopped: its
// agent's reservations in that session end with it.
const StopReasonStopped = "stopped"

// DefaultReservationOfflineTTL is how long a holder may go unseen before
// its reservations end.
const DefaultReservationOfflineTTL = 10 * time.Minute

var errWorkspaceNotFound = NotFound("workspace_not_found", "no such workspace",
	"use a workspace you registered or work in through a session (a turn token: its own session's directory)")

var errReservationNotFound = NotFound("reservation_not_found", "no such reservation",
	"list the reservations with GET /api/v1/reservations?workspace=...")

// ended tells why a stored reservation is no longer active at now, or "".
func (s *Service) ended(r store.ReservationRow, now time.Time) string {
	if !now.Before(r.ExpiresAt) {
		return client.ReservationExpired
	}
	seen := r.RenewedAt
	if r.HolderSeen != nil && r.HolderSeen.After(seen) {
		seen = *r.HolderSeen
	}
	if now.Sub(seen) > s.Config.ReservationOfflineTTL {
		return client.ReservationHolderOffline
	}
	return ""
}

// reservationViews converts rows for viewer: the session is named only
// when viewer may see it (visibility.go); withSession false names none.
func reservationViews(ctx context.Context, q *store.Q, viewer string, rows []store.ReservationRow, withSession bool) ([]client.Reservation, error) {
	out := make([]client.Reservation, 0, len(rows))
	var vis map[string]bool
	var names map[string]string
	if withSession {
		var ids []string
		for _, r := range rows {
			if r.SessionID != "" {
				ids = append(ids, r.SessionID)
			}
		}
		var err error
		if vis, err = visibleSessions(ctx, q, viewer, ids); err != nil {
			return nil, err
		}
		var shown []string
		for id := range vis {
			shown = append(shown, id)
		}
		if names, err = q.SessionAliases(ctx, shown); err != nil {
			return nil, err
		}
	}
	for _, r := range rows {
		v := client.Reservation{ReservationID: r.ReservationID, Workspace: r.Workspace, Path: r.Pattern, Exclusive: r.Exclusive,
			Reason: r.Reason, Holder: r.AgentName, TTLMinutes: int(r.TTL / time.Minute), CreatedAt: r.CreatedAt,
			RenewedAt: r.RenewedAt, ExpiresAt: r.ExpiresAt}
		if withSession && vis[r.SessionID] {
			v.SessionID, v.SessionAlias = r.SessionID, names[r.SessionID]
		}
		out = append(out, v)
	}
	return out, nil
}

// activeNear reads the reservations that can touch ws and ends, in tx,
// those that have ended (with their events); it answers the active ones.
func (s *Service) activeNear(ctx context.Context, tx *Tx, ws string) ([]store.ReservationRow, error) {
	rows, err := tx.ReservationsNear(ctx, ws)
	if err != nil {
		return nil, err
	}
	var active, stale []store.ReservationRow
	for _, r := range rows {
		if s.ended(r, tx.Now) != "" {
			stale = append(stale, r)
		} else {
			active = append(active, r)
		}
	}
	if err := s.endReservations(ctx, tx, stale, "", ""); err != nil {
		return nil, err
	}
	return active, nil
}

// endReservations removes rows in tx and tells every holder near each
// one's workspace, grouped by workspace and change. change "" takes each
// row's own reason (expired or holder_offline); by names who ended them.
func (s *Service) endReservations(ctx context.Context, tx *Tx, rows []store.ReservationRow, change, by string) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ReservationID
	}
	if _, err := tx.DeleteReservations(ctx, ids); err != nil {
		return err
	}
	type key struct{ ws, change string }
	groups := map[key][]store.ReservationRow{}
	var order []key
	for _, r := range rows {
		c := change
		if c == "" {
			c = s.ended(r, tx.Now)
			if c == "" {
				c = client.ReservationExpired
			}
		}
		k := key{r.Workspace, c}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		if err := s.emitReservations(ctx, tx, k.ws, k.change, by, groups[k]); err != nil {
			return err
		}
	}
	return nil
}

// emitReservations writes one reservation_changed event to every agent
// holding a reservation in ws or a directory above it after the change, to
// those holding one below ws that the changed reservations reach, and to
// the holders of the changed rows.
func (s *Service) emitReservations(ctx context.Context, tx *Tx, ws, change, by string, changed []store.ReservationRow) error {
	near, err := tx.ReservationsNear(ctx, ws)
	if err != nil {
		return err
	}
	// Holders in ws or above it; below it only those whose workspace the
	// changed reservations reach (what the holder could list itself).
	to := map[string]bool{}
	for _, r := range near {
		if to[r.AgentName] {
			continue
		}
		below := strings.HasPrefix(r.Workspace, strings.TrimSuffix(ws, "/")+"/")
		if !below {
			to[r.AgentName] = true
			continue
		}
		mine := absPattern(r.Workspace, "**")
		for _, c := range changed {
			if patternsOverlap(absPattern(c.Workspace, c.Pattern), mine) {
				to[r.AgentName] = true
				break
			}
		}
	}
	for _, r := range changed {
		to[r.AgentName] = true
	}
	views, err := reservationViews(ctx, tx.Q, "", changed, false)
	if err != nil {
		return err
	}
	ev := client.ReservationEvent{Workspace: ws, Change: change, By: by, Reservations: views}
	names := make([]string, 0, len(to))
	for n := range to {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := tx.Emit(ctx, n, client.EventReservationChanged, ev); err != nil {
			return err
		}
	}
	return nil
}

// reservationSession answers the session a reservation of p belongs to:
// the named one (which p must see, else 404 session_not_found), a turn
// token's own when none is named (another one is that 404 too), or "".
func reservationSession(ctx context.Context, q *store.Q, p *Principal, id string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		if p.IsTurnToken() {
			return p.TurnSession, nil
		}
		return "", nil
	}
	if _, err := sessionFor(ctx, q, id, p.Name); err != nil {
		return "", err
	}
	return id, nil
}

// ttlOf reads ttl_minutes: 0 is def, else 1 to client.MaxReservationTTLMinutes.
func ttlOf(minutes int, def time.Duration) (time.Duration, error) {
	if minutes == 0 {
		return def, nil
	}
	if minutes < 1 || minutes > client.MaxReservationTTLMinutes {
		return 0, Invalid("ttl_minutes", fmt.Sprintf("ttl_minutes must be 1 to %d, got %d", client.MaxReservationTTLMinutes, minutes), "")
	}
	return time.Duration(minutes) * time.Minute, nil
}

// Reserve takes reservations for the agent p (POST /reservations): each
// path that no other agent's active reservation overlaps is granted (a
// path the agent holds already is renewed with the new options); an
// overlap is named in Conflicts and refuses the path when either side is
// exclusive. Bounds: 1 to client.MaxReservationPaths paths of at most
// client.MaxReservationPathBytes, ttl_minutes 1 to 1440 (default 60), a
// reason of at most client.MaxReservationReasonRunes characters, at most
// client.MaxReservationsPerAgent held at once (409 too_many_reservations).
// A reservation call marks the agent seen.
func (s *Service) Reserve(ctx context.Context, p *Principal, req client.ReserveRequest) (*client.ReserveResponse, error) {
	if !p.IsAgent() {
		return nil, Forbidden("agents_only", "reservations are taken by agents", "")
	}
	ws, err := cleanWorkspace(req.Workspace, "workspace")
	if err != nil {
		return nil, err
	}
	if err := refuseHiddenRunes("workspace", ws); err != nil {
		return nil, err
	}
	if len(req.Paths) == 0 || len(req.Paths) > client.MaxReservationPaths {
		return nil, Invalid("paths", fmt.Sprintf("paths must hold 1 to %d paths", client.MaxReservationPaths), "")
	}
	var paths []string
	seen := map[string]bool{}
	for i, raw := range req.Paths {
		c, err := cleanReservationPath(ws, raw, fmt.Sprintf("paths[%d]", i))
		if err != nil {
			return nil, err
		}
		if err := refuseHiddenRunes(fmt.Sprintf("paths[%d]", i), c); err != nil {
			return nil, err
		}
		if !seen[c] {
			seen[c] = true
			paths = append(paths, c)
		}
	}
	ttl, err := ttlOf(req.TTLMinutes, client.DefaultReservationTTLMinutes*time.Minute)
	if err != nil {
		return nil, err
	}
	reason := strings.TrimSpace(req.Reason)
	if utf8.RuneCountInString(reason) > client.MaxReservationReasonRunes || !utf8.ValidString(reason) || strings.ContainsRune(reason, 0) {
		return nil, Invalid("reason", fmt.Sprintf("reason must be UTF-8 text of at most %d characters", client.MaxReservationReasonRunes), "")
	}
	if err := refuseHiddenRunes("reason", reason); err != nil {
		return nil, err
	}
	exclusive := req.Exclusive == nil || *req.Exclusive
	out := &client.ReserveResponse{Granted: []client.Reservation{}, Conflicts: []client.ReservationConflict{}, Refused: []string{}}
	err = s.Write(ctx, func(tx *Tx) error {
		session, err := reservationSession(ctx, tx.Q, p, req.SessionID)
		if err != nil {
			return err
		}
		if ok, err := mayUseWorkspace(ctx, tx.Q, p, ws); err != nil {
			return err
		} else if !ok {
			return errWorkspaceNotFound
		}
		if err := tx.TouchAgent(ctx, p.Name, tx.Now); err != nil {
			return err
		}
		active, err := s.activeNear(ctx, tx, ws)
		if err != nil {
			return err
		}
		held, err := tx.CountReservationsOf(ctx, p.Name)
		if err != nil {
			return err
		}
		mine := map[string]bool{}
		for _, r := range active {
			if r.AgentName == p.Name && r.Workspace == ws {
				mine[r.Pattern] = true
			}
		}
		var conflictRows []store.ReservationRow
		var conflictOf []string
		var refusedBy []bool
		var granted []string
		for _, pt := range paths {
			abs := absPattern(ws, pt)
			refused := false
			for _, r := range active {
				if r.AgentName == p.Name || !patternsOverlap(abs, absPattern(r.Workspace, r.Pattern)) {
					continue
				}
				hard := exclusive || r.Exclusive
				refused = refused || hard
				conflictRows = append(conflictRows, r)
				conflictOf = append(conflictOf, pt)
				refusedBy = append(refusedBy, hard)
			}
			if refused {
				out.Refused = append(out.Refused, pt)
				continue
			}
			if !mine[pt] {
				held++
			}
			granted = append(granted, pt)
		}
		if held > client.MaxReservationsPerAgent {
			return Conflict("too_many_reservations",
				fmt.Sprintf("an agent holds at most %d reservations at once", client.MaxReservationsPerAgent),
				"release the reservations you no longer need, or reserve a directory or a glob instead of many files")
		}
		var grantedRows []store.ReservationRow
		for _, pt := range granted {
			row := store.ReservationRow{ReservationID: store.NewID(), Workspace: ws, Pattern: pt, AgentName: p.Name, SessionID: session,
				Exclusive: exclusive, Reason: reason, TTL: ttl, CreatedAt: tx.Now, RenewedAt: tx.Now, ExpiresAt: tx.Now.Add(ttl)}
			id, err := tx.PutReservation(ctx, row)
			if err != nil {
				return err
			}
			stored, err := tx.GetReservation(ctx, id)
			if err != nil {
				return err
			}
			grantedRows = append(grantedRows, stored)
		}
		if out.Granted, err = reservationViews(ctx, tx.Q, p.Name, grantedRows, true); err != nil {
			return err
		}
		held2, err := reservationViews(ctx, tx.Q, p.Name, conflictRows, true)
		if err != nil {
			return err
		}
		for i, h := range held2 {
			out.Conflicts = append(out.Conflicts, client.ReservationConflict{Path: conflictOf[i], Refused: refusedBy[i], Held: h})
		}
		if len(grantedRows) == 0 {
			return nil
		}
		return s.emitReservations(ctx, tx, ws, client.ReservationReserved, p.Name, grantedRows)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ownSelection answers the agent's own active reservations that sel names
// (ids, or paths in sel.Workspace, or all in sel.Workspace, or all), in
// tx; under a turn token only those of its session. Ids of reservations
// that are not the agent's are ignored, as unknown ones are.
func (s *Service) ownSelection(ctx context.Context, tx *Tx, p *Principal, sel client.ReservationSelect) ([]store.ReservationRow, error) {
	session := ""
	if p.IsTurnToken() {
		session = p.TurnSession
	}
	ws := ""
	if strings.TrimSpace(sel.Workspace) != "" {
		var err error
		if ws, err = cleanWorkspace(sel.Workspace, "workspace"); err != nil {
			return nil, err
		}
	}
	if len(sel.Paths) > client.MaxReservationPaths || len(sel.ReservationIDs) > client.MaxReservationsPerAgent {
		return nil, Invalid("paths", fmt.Sprintf("at most %d paths and %d reservation_ids", client.MaxReservationPaths, client.MaxReservationsPerAgent), "")
	}
	if len(sel.Paths) > 0 && ws == "" {
		return nil, Invalid("workspace", "paths need the workspace they are relative to", "send workspace too")
	}
	want := map[string]bool{}
	for i, raw := range sel.Paths {
		c, err := cleanReservationPath(ws, raw, fmt.Sprintf("paths[%d]", i))
		if err != nil {
			return nil, err
		}
		want[c] = true
	}
	ids := map[string]bool{}
	for _, id := range sel.ReservationIDs {
		ids[strings.TrimSpace(id)] = true
	}
	rows, err := tx.ReservationsOf(ctx, p.Name, session)
	if err != nil {
		return nil, err
	}
	var out, stale []store.ReservationRow
	for _, r := range rows {
		if s.ended(r, tx.Now) != "" {
			stale = append(stale, r)
			continue
		}
		switch {
		case len(ids) > 0:
			if !ids[r.ReservationID] {
				continue
			}
		case ws != "" && r.Workspace != ws:
			continue
		case len(want) > 0 && !want[r.Pattern]:
			continue
		}
		out = append(out, r)
	}
	if err := s.endReservations(ctx, tx, stale, "", ""); err != nil {
		return nil, err
	}
	return out, nil
}

// RenewReservations extends the agent's own reservations that sel names
// (POST /reservations/renew) to now + ttl_minutes (1 to 1440; 0: each
// one's own TTL) and marks the agent seen. It answers the renewed ones;
// names nothing held is an empty list.
func (s *Service) RenewReservations(ctx context.Context, p *Principal, sel client.ReservationSelect) (*client.ReservationList, error) {
	if !p.IsAgent() {
		return nil, Forbidden("agents_only", "reservations are held by agents", "")
	}
	ttl, err := ttlOf(sel.TTLMinutes, 0)
	if err != nil {
		return nil, err
	}
	out := &client.ReservationList{Reservations: []client.Reservation{}}
	err = s.Write(ctx, func(tx *Tx) error {
		if err := tx.TouchAgent(ctx, p.Name, tx.Now); err != nil {
			return err
		}
		rows, err := s.ownSelection(ctx, tx, p, sel)
		if err != nil {
			return err
		}
		byWS := map[string][]store.ReservationRow{}
		var order []string
		for i := range rows {
			r := &rows[i]
			t := ttl
			if t == 0 {
				t = r.TTL
			}
			if err := tx.RenewReservation(ctx, r.ReservationID, t, tx.Now); err != nil {
				return err
			}
			r.TTL, r.RenewedAt, r.ExpiresAt = t, tx.Now, tx.Now.Add(t)
			if _, ok := byWS[r.Workspace]; !ok {
				order = append(order, r.Workspace)
			}
			byWS[r.Workspace] = append(byWS[r.Workspace], *r)
		}
		for _, ws := range order {
			if err := s.emitReservations(ctx, tx, ws, client.ReservationRenewed, p.Name, byWS[ws]); err != nil {
				return err
			}
		}
		out.Reservations, err = reservationViews(ctx, tx.Q, p.Name, rows, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReleaseReservations ends the agent's own reservations that sel names
// (POST /reservations/release) and answers them.
func (s *Service) ReleaseReservations(ctx context.Context, p *Principal, sel client.ReservationSelect) (*client.ReservationList, error) {
	if !p.IsAgent() {
		return nil, Forbidden("agents_only", "reservations are held by agents", "")
	}
	out := &client.ReservationList{Reservations: []client.Reservation{}}
	err := s.Write(ctx, func(tx *Tx) error {
		rows, err := s.ownSelection(ctx, tx, p, sel)
		if err != nil {
			return err
		}
		if out.Reservations, err = reservationViews(ctx, tx.Q, p.Name, rows, true); err != nil {
			return err
		}
		return s.endReservations(ctx, tx, rows, client.ReservationReleased, p.Name)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PersonReleaseReservation ends reservation id for the person p (DELETE
// /me/reservations/{id}): any reservation the person may see (see
// ListReservations); any other id is the 404 reservation_not_found of an
// unknown one.
func (s *Service) PersonReleaseReservation(ctx context.Context, p *Principal, id string) error {
	return s.Write(ctx, func(tx *Tx) error {
		r, err := tx.GetReservation(ctx, strings.TrimSpace(id))
		if errors.Is(err, store.ErrNotFound) {
			return errReservationNotFound
		}
		if err != nil {
			return err
		}
		if ok, err := personMaySee(ctx, tx.Q, p.Name, r.Workspace, map[string]bool{}); err != nil {
			return err
		} else if !ok || s.ended(r, tx.Now) != "" {
			return errReservationNotFound
		}
		return s.endReservations(ctx, tx, []store.ReservationRow{r}, client.ReservationReleased, p.Name)
	})
}

// SweepReservations ends the reservations that expired or whose holder has
// been offline past Config.ReservationOfflineTTL (at most 500 a call),
// with their events; it answers how many.
func (s *Service) SweepReservations(ctx context.Context) (int, error) {
	n := 0
	err := s.Write(ctx, func(tx *Tx) error {
		rows, err := tx.StaleReservations(ctx, tx.Now, tx.Now.Add(-s.Config.ReservationOfflineTTL), 500)
		if err != nil {
			return err
		}
		n = len(rows)
		return s.endReservations(ctx, tx, rows, "", "")
	})
	return n, err
}

// ReleaseReservationsOfRun ends the reservations the agent of run runID
// holds in that run's session, as change run_stopped (the run-control
// issue calls it when a person stops a run; PutRun calls it when a bridge
// reports a run finished with stop_reason "stopped"). An unknown run ends
// nothing. It answers how many ended.
func (s *Service) ReleaseReservationsOfRun(ctx context.Context, runID string) (int, error) {
	n := 0
	err := s.Write(ctx, func(tx *Tx) error {
		run, err := tx.GetRun(ctx, runID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		n, err = s.releaseOfSessionTx(ctx, tx, run.AgentName, run.SessionID)
		return err
	})
	return n, err
}

// releaseOfSessionTx ends, in tx, agent's reservations of sessionID as
// run_stopped.
func (s *Service) releaseOfSessionTx(ctx context.Context, tx *Tx, agent, sessionID string) (int, error) {
	if sessionID == "" {
		return 0, nil
	}
	rows, err := tx.ReservationsOf(ctx, agent, sessionID)
	if err != nil {
		return 0, err
	}
	return len(rows), s.endReservations(ctx, tx, rows, client.ReservationRunStopped, "")
}
