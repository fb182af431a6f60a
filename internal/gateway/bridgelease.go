package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// The agent's bridge lease (one bridge process per agent). A bridge that
// registers presents client.BridgeInstance; the gateway gives that
// instance the agent's lease when nobody holds it, when the holder was
// not heard for Config.OnlineWithin (its lease expired), or when the
// request's Replaces names the holder (an ended process of the same
// host). Every heartbeat of the holder renews it; a heartbeat with
// release ends it (the bridge stops). While the lease is live,
// another instance is refused with 409 bridge_instance_conflict on
// register, heartbeat and GET /api/v1/runs, whose message names the
// holder's host, process and connection time and says what to do. So a
// second bridge of the agent, started by mistake, stops before it lists
// the runs it does not hold and ends them as lost (reconcile.go), and a
// bridge silent longer than the lease learns that another took over.
//
// A request without an instance (a bridge older than the lease) takes and
// renews nothing: its heartbeat is answered as before; its registration
// and its runs listing are refused while an instance's lease is live, so
// an older bridge cannot end a live newer bridge's runs either.

// validInstance checks a presented instance: the id of at most
// client.MaxInstanceID letters, digits, '-' and '_'; the host at most
// client.MaxInstanceHost characters without control or format characters
// (direction controls, zero-width characters); the
// pid not negative (400 naming the field).
func validInstance(in *client.BridgeInstance) error {
	if in == nil {
		return nil
	}
	if in.ID == "" || len(in.ID) > client.MaxInstanceID || strings.IndexFunc(in.ID, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) >= 0 {
		return Invalid("instance.id", fmt.Sprintf("instance.id must be 1 to %d letters, digits, '-' or '_'", client.MaxInstanceID),
			"send a random id made when the bridge process starts")
	}
	if utf8.RuneCountInString(in.Host) > client.MaxInstanceHost || strings.IndexFunc(in.Host, func(r rune) bool {
		return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) // the host is printed to a person: no direction controls
	}) >= 0 {
		return Invalid("instance.host", fmt.Sprintf("instance.host must be one line of at most %d characters", client.MaxInstanceHost),
			"send the host name")
	}
	if in.PID < 0 {
		return Invalid("instance.pid", "instance.pid must not be negative", "send the process id, or 0")
	}
	return nil
}

// leaseLive reports whether l is held and was renewed within
// Config.OnlineWithin of now.
func (s *Service) leaseLive(l store.BridgeLease, now time.Time) bool {
	return l.Instance != "" && l.SeenAt != nil && now.Sub(*l.SeenAt) <= s.Config.OnlineWithin
}

// leaseConflict is the 409 for a bridge that is not the live holder of
// agent's lease l.
func (s *Service) leaseConflict(agent string, l store.BridgeLease) error {
	where := "another host"
	if l.Host != "" {
		where = fmt.Sprintf("host %q", l.Host)
	}
	if l.PID > 0 {
		where += fmt.Sprintf(" (process %d)", l.PID)
	}
	connected, seen, until := "", "", ""
	if l.ConnectedAt != nil {
		connected = " at " + l.ConnectedAt.UTC().Format(time.RFC3339)
	}
	if l.SeenAt != nil {
		seen = l.SeenAt.UTC().Format(time.RFC3339)
		until = l.SeenAt.Add(s.Config.OnlineWithin).UTC().Format(time.RFC3339)
	}
	return Conflict(client.CodeBridgeInstanceConflict,
		fmt.Sprintf("another bridge of agent %q is running: it connected from %s%s and was last heard at %s. "+
			"Two bridges of one agent would take each other's mail and end each other's turns", agent, where, connected, seen),
		fmt.Sprintf("stop the other bridge first, or run this one with another agent key; "+
			"if the other bridge has ended, start this one again after %s, when its lease ends", until))
}

// takeLease gives instance in agent's lease, or answers leaseConflict
// (see the top of this file). in nil (an older bridge) takes nothing and
// is refused while a lease is live when refuseLegacy is set. replaces may
// name the holder, an ended process of the caller's host.
func (s *Service) takeLease(ctx context.Context, tx *Tx, agent string, in *client.BridgeInstance, replaces string, refuseLegacy bool) error {
	l, err := tx.GetBridgeLease(ctx, agent)
	if errors.Is(err, store.ErrNotFound) {
		return agentNotFound(agent)
	}
	if err != nil {
		return err
	}
	now := tx.Now
	live := s.leaseLive(l, now)
	if in == nil {
		if live && refuseLegacy {
			return s.leaseConflict(agent, l)
		}
		return nil
	}
	if l.Instance != in.ID {
		if live && (replaces == "" || replaces != l.Instance) {
			return s.leaseConflict(agent, l)
		}
		l = store.BridgeLease{Instance: in.ID, ConnectedAt: &now}
	}
	l.Host, l.PID, l.SeenAt = in.Host, in.PID, &now
	return tx.SetBridgeLease(ctx, agent, l)
}

// checkLeaseHolder answers leaseConflict when a live lease of agent is
// held by an instance other than instanceID ("" an older bridge).
func (s *Service) checkLeaseHolder(ctx context.Context, q *store.Q, agent, instanceID string) error {
	l, err := q.GetBridgeLease(ctx, agent)
	if err != nil {
		return err
	}
	if l.Instance != instanceID && s.leaseLive(l, s.Now()) {
		return s.leaseConflict(agent, l)
	}
	return nil
}

// releaseLease ends in's lease of agent (a heartbeat with release: the
// bridge stops); a lease in does not hold is left alone. in nil is a 400.
func (s *Service) releaseLease(ctx context.Context, agent string, in *client.BridgeInstance) (*client.HeartbeatResponse, error) {
	if in == nil {
		return nil, Invalid("release", "release needs the instance whose lease ends", "send instance with release")
	}
	err := s.Write(ctx, func(tx *Tx) error {
		l, err := tx.GetBridgeLease(ctx, agent)
		if err != nil || l.Instance != in.ID {
			return err
		}
		return tx.SetBridgeLease(ctx, agent, store.BridgeLease{})
	})
	if err != nil {
		return nil, err
	}
	return &client.HeartbeatResponse{Status: "ok", AllowedModels: []client.ModelRef{}}, nil
}
