package bridge

import (
	"context"

	"github.com/agentmail/agentmail/client"
)

// handleDecision is B-4: the decision answers the ask waiting under its
// relay_key (B-4.1). When none waits (the bridge restarted), the decision
// is delivered as a message into the ORIGINAL platform session bound to the
// mail session (B-4.2); without one it is logged and dropped, never a new
// session (B-4.3).
func (b *Bridge) handleDecision(ctx context.Context, ev client.PermissionDecisionEvent) {
	log := b.log.With("session_id", ev.SessionID, "relay_key", ev.RelayKey, "permission_mail_id", ev.MailID)
	if b.perms.decide(ev) {
		log.Info("permission decision answered the waiting ask", "approved", ev.Approved)
		return
	}
	key := "decision:" + nonEmpty(ev.DecisionMailID, ev.MailID+":"+ev.RelayKey)
	if !b.delivered.add(key) {
		return
	}
	psid := b.boundPlatformSession(ctx, ev.SessionID)
	if psid == "" {
		log.Warn("permission decision arrived with no waiting ask and no platform session bound; not delivered (B-4.3: no new session)")
		return
	}
	s, err := b.gw.GetSession(ctx, ev.SessionID)
	if err != nil {
		log.Warn("permission decision not delivered: reading the session failed", "err", err)
		return
	}
	ws, err := ResolveWorkspace(s.Workspace, b.cfg.Settings.FallbackDir)
	if err != nil {
		log.Warn("permission decision not delivered: no usable working directory", "err", err)
		return
	}
	in := incoming{MailID: nonEmpty(ev.DecisionMailID, ev.MailID), SessionID: ev.SessionID,
		FromName: ev.DecidedBy, FromKind: "person", Subject: s.Subject}
	if ev.DecidedBy == "" || ev.DecidedBy == "timeout" {
		in.FromKind = "system"
	}
	t, _ := b.slots.enqueue(ev.SessionID, ws.Dir)
	b.turns.Add(1)
	go func() {
		defer b.turns.Done()
		if !b.slots.wait(ctx, t) {
			return
		}
		defer b.slots.release(t)
		log.Info("permission decision delivered into the original platform session (B-4.2)", "platform_session", psid, "approved", ev.Approved)
		before, _ := b.agentMailIDs(ctx, in.MailID)
		turnStart := b.now()
		prompt := DecisionPrompt(DecisionInput{Approved: ev.Approved, Decision: ev.Decision, Note: ev.Note,
			DecidedBy: ev.DecidedBy, MailID: ev.MailID})
		var model *client.ModelRef
		if order := AttemptOrder(b.modelScope(ctx), b.caps.PerTurnModel); len(order) > 0 {
			model = order[0]
		}
		tok := b.turnToken(ctx, log, in.SessionID)
		defer b.revokeTurnToken(ctx, log, tok)
		out := b.attempt(ctx, in, conversation{sessionID: in.SessionID}, tok, ws.Dir, prompt, model, 1, psid, nil)
		switch {
		case out.stopped:
			b.stopNotice(ctx, in, out.stoppedRun, out.transcript)
			return
		case out.interrupted:
			return
		case out.sessionGone:
			log.Warn("permission decision not delivered: the original platform session no longer exists (B-4.3: no new session)")
			return
		case !out.ok:
			log.Error("permission decision turn failed", "reason", out.reason)
			return
		}
		b.noteTurnWorked() // health.go
		b.relaySummary(ctx, in, out.res, before, turnStart)
	}()
}
