package bridge

import (
	"context"

	"github.com/agentmail/agentmail/client"
)

// heartbeats is B-1.3 and B-2: one heartbeat at once, then one per
// interval. Failures are silent (debug log only, B-2.1) and touch neither
// the event stream nor deliveries (B-2.5). The first good heartbeat's
// pending_mails goes to firstBeat once (B-1.6, B-7.1).
func (b *Bridge) heartbeats(ctx context.Context, firstBeat chan<- int) {
	// The first heartbeat follows the event stream's first connection
	// attempt, so a mail is either pushed or counted in pending_mails,
	// never neither (the B-7.3 window).
	select {
	case <-b.sseReady:
	case <-b.after(sseConnectWait):
	case <-ctx.Done():
		return
	}
	for {
		b.heartbeat(ctx, firstBeat)
		select {
		case <-ctx.Done():
			return
		case <-b.after(b.cfg.HeartbeatInterval):
		}
	}
}

// heartbeat sends one heartbeat and reads the model scope back (B-2.2).
func (b *Bridge) heartbeat(ctx context.Context, firstBeat chan<- int) {
	resp, err := b.gw.Heartbeat(ctx, b.heartbeatBody(ctx))
	if isLeaseConflict(err) {
		b.lostLease(err) // lease.go
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			b.log.Debug("heartbeat failed; the next one follows", "err", err)
		}
		return
	}
	b.mu.Lock()
	b.scope = ModelScope{Known: true, Allowed: append([]client.ModelRef(nil), resp.AllowedModels...), Unrestricted: resp.ModelsUnrestricted}
	first := !b.firstGood
	b.firstGood = true
	b.mu.Unlock()
	if first {
		firstBeat <- resp.PendingMails
	}
}

// heartbeatBody builds W-3's body: models and platform_sessions only when
// their listing succeeded (B-2.3, B-2.4); a failed or unsupported listing
// omits the field (N-7, D-4) and a really empty one sends [].
func (b *Bridge) heartbeatBody(ctx context.Context) client.HeartbeatRequest {
	health := b.health.report() // health.go
	req := client.HeartbeatRequest{Health: &health, BridgeVersion: versionText(b.cfg.Version), Instance: b.leaseInstance()}
	b.mu.Lock()
	req.PlatformVersion = b.platformVersion
	b.mu.Unlock()
	if b.caps.ListModels {
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		models, err := b.adapter.ListModels(lctx)
		cancel()
		if err == nil {
			m := CleanModels(models)
			req.Models = &m
		} else {
			b.log.Debug("model listing failed: models omitted from the heartbeat", "err", err)
		}
	}
	if b.caps.ListSessions {
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		listed, err := b.listSessions(lctx)
		cancel()
		if err == nil {
			s := ApplySnapshotRules(listed, b.isMailDriven)
			req.PlatformSessions = &s
		} else {
			b.log.Debug("session listing failed: platform_sessions omitted from the heartbeat", "err", err)
		}
	}
	return req
}

func (b *Bridge) listSessions(ctx context.Context) ([]ListedSession, error) {
	if d, ok := b.adapter.(DetailedSessionLister); ok {
		return d.ListSessionsDetailed(ctx)
	}
	ps, err := b.adapter.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ListedSession, len(ps))
	for i, p := range ps {
		out[i] = ListedSession{PlatformSession: p}
	}
	return out, nil
}

func (b *Bridge) isMailDriven(platformID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mailDriven[platformID]
}

// modelScope answers the admin's model scope (B-2.2). A mail pushed before
// the first heartbeat answered would otherwise run on the platform default
// whatever the admin chose, so an unknown scope is read once directly; if
// that fails too, the platform default is used and the next heartbeat
// corrects it.
func (b *Bridge) modelScope(ctx context.Context) ModelScope {
	b.mu.Lock()
	scope := b.scope
	b.mu.Unlock()
	if scope.Known {
		return scope
	}
	am, err := b.gw.AllowedModels(ctx)
	if err != nil {
		b.log.Warn("model scope unknown (no heartbeat yet, and reading it failed): the platform default is used", "err", err)
		return scope
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.scope.Known {
		b.scope = ModelScope{Known: true, Allowed: append([]client.ModelRef(nil), am.AllowedModels...), Unrestricted: am.ModelsUnrestricted}
	}
	return b.scope
}
