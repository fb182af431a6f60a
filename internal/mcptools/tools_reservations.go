package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/modeltext"
)

// CoordinationAPI is the part of the gateway the reservation and
// acknowledgement tools use (issue 21), as methods of client.Client.
type CoordinationAPI interface {
	Reserve(ctx context.Context, req client.ReserveRequest) (*client.ReserveResponse, error)
	Reservations(ctx context.Context, workspace string) (*client.ReservationList, error)
	RenewReservations(ctx context.Context, sel client.ReservationSelect) (*client.ReservationList, error)
	ReleaseReservations(ctx context.Context, sel client.ReservationSelect) (*client.ReservationList, error)
	AckMail(ctx context.Context, id string) (*client.AckResponse, error)
	Unacknowledged(ctx context.Context, q client.AckWaitingQuery) (*client.AckWaitingList, error)
}

func boolean(desc string) prop { return prop{"type": "boolean", "description": desc} }

// bounded is an integer property with its bounds in the schema.
func bounded(desc string, min, max int) prop {
	return prop{"type": "integer", "minimum": min, "maximum": max, "description": desc}
}

// registerReservationTools registers the file reservation tools (issue 21
// item 1): advisory leases on paths of the workspace, so that agents
// working in one repository do not edit the same files at once.
func (s *Server) registerReservationTools() {
	pathsProp := prop{"type": "array", "items": prop{"type": "string", "maxLength": client.MaxReservationPathBytes},
		"minItems": 1, "maxItems": client.MaxReservationPaths,
		"description": fmt.Sprintf("1 to %d files or globs relative to the workspace (src/api.go, src/**/*.ts, docs/**); * and ? stay within a directory, ** crosses them", client.MaxReservationPaths)}
	wsProp := str("absolute directory the paths are relative to (default: the session's directory)")
	s.add("reserve_paths",
		"Reserve files or globs of the workspace before you edit them, so that other agents know (an advisory lease; nothing is locked). "+
			"The answer names every conflict with another agent's reservation (holder, path, reason, expiry). "+
			"A path is refused when you or the holder asked for exclusive; write to the holder to agree on it, or work on something else. "+
			fmt.Sprintf("Reservations last ttl_minutes (1 to %d, default %d): renew them while you work and release them when done. ", client.MaxReservationTTLMinutes, client.DefaultReservationTTLMinutes)+
			"Asking again for a path you hold renews it.",
		object(map[string]prop{
			"paths":       pathsProp,
			"exclusive":   boolean("true (default): nobody else may reserve these paths; false: shared, others may reserve them shared too"),
			"ttl_minutes": bounded(fmt.Sprintf("how long the reservation lasts, 1 to %d minutes (default %d)", client.MaxReservationTTLMinutes, client.DefaultReservationTTLMinutes), 1, client.MaxReservationTTLMinutes),
			"reason":      prop{"type": "string", "maxLength": client.MaxReservationReasonRunes, "description": fmt.Sprintf("what you are doing, shown to the others (at most %d characters)", client.MaxReservationReasonRunes)},
			"workspace":   wsProp,
		}, "paths"),
		s.reservePaths)
	selProps := func(withTTL bool) map[string]prop {
		p := map[string]prop{
			"paths":           prop{"type": "array", "items": prop{"type": "string"}, "maxItems": client.MaxReservationPaths, "description": fmt.Sprintf("the reserved paths, as reserved (at most %d); default: all of yours in the workspace", client.MaxReservationPaths)},
			"reservation_ids": strList("reservation ids from reserve_paths or list_reservations (instead of paths)"),
			"workspace":       wsProp,
		}
		if withTTL {
			p["ttl_minutes"] = bounded(fmt.Sprintf("the new life from now, 1 to %d minutes (default: each reservation's own)", client.MaxReservationTTLMinutes), 1, client.MaxReservationTTLMinutes)
		}
		return p
	}
	s.add("renew_reservations",
		"Extend your reservations (by path, by id, or all of yours in the workspace) so they do not expire while you work.",
		object(selProps(true)),
		s.renewReservations)
	s.add("release_reservations",
		"Release your reservations (by path, by id, or all of yours in the workspace) when you are done with the files.",
		object(selProps(false)),
		s.releaseReservations)
	s.add("list_reservations",
		"List the active reservations that touch the workspace: who holds which paths, exclusive or shared, why and until when.",
		object(map[string]prop{
			"workspace": wsProp,
			"mine":      boolean("true: list only your own reservations, in every workspace"),
		}),
		s.listReservations)
}

// boolean returns the boolean argument name, or def when absent; "true"
// and "false" as strings are accepted.
func (a args) boolean(name string, def bool) (bool, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "1":
			return true, nil
		case "false", "no", "0":
			return false, nil
		case "":
			return def, nil
		}
	case json.Number:
		switch x.String() {
		case "1":
			return true, nil
		case "0":
			return false, nil
		}
	}
	return false, badArg("%s must be true or false, not %s", name, jsonKind(v))
}

// workspaceArg answers the workspace argument or the session's directory.
func (s *Server) workspaceArg(a args) (string, error) {
	ws, err := a.str("workspace")
	if err != nil {
		return "", err
	}
	if ws = strings.TrimSpace(ws); ws == "" {
		ws = s.cfg.Workspace
	}
	return ws, nil
}

func (s *Server) reservePaths(ctx context.Context, a args) (string, error) {
	paths, err := a.list("paths")
	if err != nil {
		return "", err
	}
	if len(paths) == 0 {
		return "", badArg("paths is required: the files or globs you are about to edit, relative to the workspace")
	}
	exclusive, err := a.boolean("exclusive", true)
	if err != nil {
		return "", err
	}
	ttl, err := a.integer("ttl_minutes", client.DefaultReservationTTLMinutes)
	if err != nil {
		return "", err
	}
	if ttl < 1 || ttl > client.MaxReservationTTLMinutes {
		return "", badArg("ttl_minutes must be between 1 and %d, got %d", client.MaxReservationTTLMinutes, ttl)
	}
	reason, err := a.str("reason")
	if err != nil {
		return "", err
	}
	ws, err := s.workspaceArg(a)
	if err != nil {
		return "", err
	}
	res, err := s.gateway().Reserve(ctx, client.ReserveRequest{Workspace: ws, Paths: paths, Exclusive: &exclusive,
		TTLMinutes: ttl, Reason: reason, SessionID: s.cfg.SessionID})
	if err != nil {
		return "", err
	}
	return RenderReserve(ws, res), nil
}

// selection reads the arguments of renew and release.
func (s *Server) selection(a args) (client.ReservationSelect, error) {
	var sel client.ReservationSelect
	var err error
	if sel.Paths, err = a.list("paths"); err != nil {
		return sel, err
	}
	if sel.ReservationIDs, err = a.list("reservation_ids"); err != nil {
		return sel, err
	}
	sel.Workspace, err = s.workspaceArg(a)
	return sel, err
}

func (s *Server) renewReservations(ctx context.Context, a args) (string, error) {
	sel, err := s.selection(a)
	if err != nil {
		return "", err
	}
	if sel.TTLMinutes, err = a.integer("ttl_minutes", 0); err != nil {
		return "", err
	}
	if a.has("ttl_minutes") && (sel.TTLMinutes < 1 || sel.TTLMinutes > client.MaxReservationTTLMinutes) {
		return "", badArg("ttl_minutes must be between 1 and %d, got %d", client.MaxReservationTTLMinutes, sel.TTLMinutes)
	}
	l, err := s.gateway().RenewReservations(ctx, sel)
	if err != nil {
		return "", err
	}
	return RenderReservations("Renewed", l.Reservations), nil
}

func (s *Server) releaseReservations(ctx context.Context, a args) (string, error) {
	sel, err := s.selection(a)
	if err != nil {
		return "", err
	}
	l, err := s.gateway().ReleaseReservations(ctx, sel)
	if err != nil {
		return "", err
	}
	return RenderReservations("Released", l.Reservations), nil
}

func (s *Server) listReservations(ctx context.Context, a args) (string, error) {
	mine, err := a.boolean("mine", false)
	if err != nil {
		return "", err
	}
	ws := ""
	if !mine {
		if ws, err = s.workspaceArg(a); err != nil {
			return "", err
		}
	}
	l, err := s.gateway().Reservations(ctx, ws)
	if err != nil {
		return "", err
	}
	title := "Reservations touching " + ws
	if mine {
		title = "Your reservations"
	}
	return RenderReservations(title, l.Reservations), nil
}

// untilText renders an expiry with the time left.
func untilText(t time.Time) string {
	left := time.Until(t).Round(time.Minute)
	if left < time.Minute {
		return FormatTime(t) + " (under a minute left)"
	}
	return fmt.Sprintf("%s (in %s)", FormatTime(t), strings.TrimSuffix(left.String(), "0s"))
}

// reservationLine renders one reservation on one line.
func reservationLine(r client.Reservation) string {
	kind := "shared"
	if r.Exclusive {
		kind = "exclusive"
	}
	// The path is another agent's text: on one line, so it cannot add
	// lines of this answer's own (modeltext.OneLine).
	line := fmt.Sprintf("%s — %s, held by %s until %s", modeltext.OneLine(r.Path), kind, r.Holder, untilText(r.ExpiresAt))
	if r.Reason != "" {
		line += fmt.Sprintf(", reason: %q", r.Reason)
	}
	if r.SessionAlias != "" {
		line += fmt.Sprintf(", session %s", r.SessionAlias)
	}
	return line + fmt.Sprintf(" [reservation_id %s, workspace %s]", r.ReservationID, modeltext.OneLine(r.Workspace))
}

// RenderReserve renders a reserve_paths answer: what was granted, every
// conflict, and what to do about a refused path.
func RenderReserve(ws string, r *client.ReserveResponse) string {
	var b strings.Builder
	if len(r.Granted) > 0 {
		fmt.Fprintf(&b, "Reserved in %s:\n", ws)
		for _, g := range r.Granted {
			fmt.Fprintf(&b, "  - %s\n", reservationLine(g))
		}
	}
	if len(r.Conflicts) > 0 {
		b.WriteString("Conflicts with other agents' reservations:\n")
		for _, c := range r.Conflicts {
			verdict := "granted anyway (both shared)"
			if c.Refused {
				verdict = "REFUSED"
			}
			fmt.Fprintf(&b, "  - %s: %s; %s\n", modeltext.OneLine(c.Path), verdict, reservationLine(c.Held))
		}
	}
	if len(r.Refused) > 0 {
		holders := map[string]bool{}
		var names []string
		for _, c := range r.Conflicts {
			if c.Refused && !holders[c.Held.Holder] {
				holders[c.Held.Holder] = true
				names = append(names, c.Held.Holder)
			}
		}
		fmt.Fprintf(&b, "Not reserved: %s. Do not edit them now: write to %s to agree on them, wait until the reservation ends, or work on other files.\n",
			modeltext.OneLine(strings.Join(r.Refused, ", ")), strings.Join(names, ", "))
	}
	if b.Len() == 0 {
		b.WriteString("Nothing reserved.\n")
	}
	return b.String()
}

// RenderReservations renders a list of reservations under a title.
func RenderReservations(title string, list []client.Reservation) string {
	if len(list) == 0 {
		return title + ": none.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d):\n", title, len(list))
	for _, r := range list {
		fmt.Fprintf(&b, "  - %s\n", reservationLine(r))
	}
	return b.String()
}
