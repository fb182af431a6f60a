package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentmail/agentmail/client"
)

// events holds the event stream (B-1.4): the first connection sends no
// Last-Event-ID (N-11); after a drop it reconnects with back-off and the id
// of the last event seen (D-7.2).
func (b *Bridge) events(ctx context.Context) {
	var last int64
	delay := b.cfg.ReconnectMin
	first := true
	lost := false        // the lost connection is logged once, and once regained
	var lostAt time.Time // when it was lost
	lose := func(msg string, args ...any) {
		if !lost {
			lost, lostAt = true, time.Now()
			b.log.Warn(fmt.Sprintf("lost the connection to the gateway at %s: %s; reconnecting until it answers (check that the gateway runs and AGENTMAIL_GATEWAY_URL)",
				b.cfg.Settings.GatewayURL, msg), args...)
			return
		}
		b.log.Debug("still no connection to the gateway: "+msg, args...)
	}
	for ctx.Err() == nil {
		s, err := b.cfg.Subscribe(ctx, last)
		if err == nil && lost {
			// Said once, at once (before the reconciliation's requests),
			// with how long the bridge was without the gateway.
			lost = false
			b.log.Info(fmt.Sprintf("connected to the gateway at %s again, after %s without a connection",
				b.cfg.Settings.GatewayURL, lostFor(time.Since(lostAt))), "last_event_id", last)
		}
		if err == nil {
			// Runs an earlier bridge process left open on the gateway end
			// now, before catch-up (reconcile.go); reports this process
			// could not send are sent again.
			b.reconcileRuns(ctx)
		}
		if first {
			first = false
			close(b.sseReady)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var ae *client.APIError
			if errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 403) {
				// W-9: a refused key does not heal by retrying fast.
				delay = b.cfg.ReconnectMax
				b.log.Error("the gateway refused the event stream: the agent key was revoked or expired; re-register it",
					"status", ae.Status, "in", delay)
			} else {
				lose("the event stream could not connect", "err", err, "in", delay, "last_event_id", last)
			}
		} else {
			delay = b.cfg.ReconnectMin
			for ev := range s.Events() {
				if ev.ID > 0 {
					last = ev.ID
				}
				b.handleEvent(ctx, ev)
			}
			if ctx.Err() != nil {
				return
			}
			lose("the event stream ended", "in", delay, "last_event_id", last)
		}
		select {
		case <-ctx.Done():
			return
		case <-b.after(delay):
		}
		delay = minDuration(delay*2, b.cfg.ReconnectMax)
	}
}

// lostFor is how long a connection was lost as a person reads it: whole
// seconds ("12s", "2m5s"), "less than a second" below one.
func lostFor(d time.Duration) string {
	if d < time.Second {
		return "less than a second"
	}
	return d.Round(time.Second).String()
}

// handleEvent dispatches one event; it never blocks on a turn.
func (b *Bridge) handleEvent(ctx context.Context, ev client.Event) {
	switch ev.Type {
	case client.EventNewMail:
		var nm client.NewMailEvent
		if err := json.Unmarshal(ev.Data, &nm); err != nil {
			b.log.Warn("unreadable new_mail event", "event_id", ev.ID, "err", err)
			return
		}
		if nm.Role == "from" {
			// A sender's own copy: the gateway gives these to people's
			// streams only, and the agent's own mail is never new work.
			b.log.Info("ignoring a new_mail event of the agent's own mail", "mail_id", nm.MailID, "event_id", ev.ID)
			return
		}
		if nm.StopWord && b.stopByMail(ctx, nm) {
			return
		}
		b.accept(ctx, incomingFromEvent(nm))
	case client.EventRunStop:
		var rs client.RunStopEvent
		if err := json.Unmarshal(ev.Data, &rs); err != nil {
			b.log.Warn("unreadable run_stop event", "event_id", ev.ID, "err", err)
			return
		}
		b.handleRunStop(ctx, rs)
	case client.EventPermissionDecision:
		var pd client.PermissionDecisionEvent
		if err := json.Unmarshal(ev.Data, &pd); err != nil {
			b.log.Warn("unreadable permission_decision event", "event_id", ev.ID, "err", err)
			return
		}
		b.handleDecision(ctx, pd)
	}
}

// stopByMail is the stop word (issue 16): a person's mail whose whole text
// is "stop" or "停止" (the gateway marks it) stops the running (else the
// first queued) turn of its conversation and starts no turn. When this
// bridge holds no such turn, judgeStopMail decides by the gateway's runs
// whether a turn was running when the mail was sent (a turn that ended
// meanwhile, or one an earlier bridge process left); it answers false
// when none was, and the mail is an ordinary one.
func (b *Bridge) stopByMail(ctx context.Context, nm client.NewMailEvent) bool {
	if nm.FromKind != "person" {
		return false
	}
	if b.delivered.has(nm.MailID) {
		return true
	}
	conv := b.conversationOf(ctx, nm.SessionID)
	l := b.ctl.ofSession(conv.sessionID)
	if l == nil {
		return b.judgeStopMail(ctx, stopMail{mailID: nm.MailID, sessionID: nm.SessionID, from: nm.FromName, sentAt: nm.CreatedAt})
	}
	if !b.delivered.add(nm.MailID) {
		return true
	}
	b.log.Info("stop mail: stopping the session's turn", "mail_id", nm.MailID, "session_id", nm.SessionID, "run_id", l.rep.id(), "from", nm.FromName)
	b.requestStop(l, nm.FromName)
	b.stopMailHandled(ctx, nm.MailID, nm.SessionID, "it stopped the running turn")
	return true
}

// incoming is one mail to deliver, from an SSE event or a catch-up listing.
type incoming struct {
	MailID       string
	SessionID    string
	FromName     string
	FromKind     string
	Subject      string
	MailType     string
	ToWorkspace  string
	ReplyAddress string
	SelfAddress  string
	SessionAlias string
	CaughtUp     bool
	Importance   string // issue 21: told in the prompt
	AckRequired  bool
}

func incomingFromEvent(e client.NewMailEvent) incoming {
	return incoming{MailID: e.MailID, SessionID: e.SessionID, FromName: e.FromName, FromKind: e.FromKind,
		Subject: e.Subject, MailType: e.MailType, ToWorkspace: e.ToWorkspace,
		ReplyAddress: e.ReplyAddress, SelfAddress: e.SelfAddress, SessionAlias: e.SessionAlias,
		Importance: e.Importance, AckRequired: e.AckRequired}
}

// incomingFromMail turns an inbox mail into a delivery; to_workspace is the
// path of this agent's own recipient entry (W-4).
func incomingFromMail(m client.Mail, agent string) incoming {
	in := incoming{MailID: m.MailID, SessionID: m.SessionID, FromName: m.FromName, FromKind: m.FromKind,
		Subject: m.Subject, MailType: m.MailType, ReplyAddress: m.FromAddress, CaughtUp: true,
		Importance: m.Importance, AckRequired: m.AckRequired}
	found := false
	for _, r := range m.Recipients {
		if r.Name != agent {
			continue
		}
		if !found || r.Role == "to" {
			in.ToWorkspace, in.SelfAddress = r.Workspace, r.Address
			found = true
		}
	}
	return in
}

// deliverable mail types: people's and agents' mail, and reminders. Failure
// reports and permission mails never start a turn.
func deliverableType(t string) bool {
	return t == "" || t == client.MailTypeNormal || t == client.MailTypeReminder
}

// accept is B-3 steps 1 and 2: de-duplicate (the shared set), choose the
// working directory (D-6) and queue the turn (never dropped). It returns a
// channel closed when the mail's handling ended, or nil when the mail is
// not delivered (duplicate, not deliverable).
func (b *Bridge) accept(ctx context.Context, in incoming) <-chan struct{} {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID)
	if in.FromName != "" && in.FromName == b.AgentName() {
		return nil
	}
	if !deliverableType(in.MailType) {
		log.Debug("mail type not delivered as a turn", "mail_type", in.MailType)
		return nil
	}
	if !b.delivered.add(in.MailID) {
		log.Info("mail already delivered; duplicate dropped")
		return nil
	}
	done := make(chan struct{})
	ws, err := ResolveWorkspace(in.ToWorkspace, b.cfg.Settings.FallbackDir)
	if err != nil {
		log.Error("no usable working directory; sending a failure report", "expected", in.ToWorkspace,
			"fallback", b.cfg.Settings.FallbackDir, "err", err)
		b.turns.Add(1)
		go func() {
			defer b.turns.Done()
			defer close(done)
			b.sendFailure(ctx, in, FailureReport{Stage: StageWorkspace, Workspace: ws, Detail: err.Error()})
		}()
		return done
	}
	if ws.FellBack {
		log.Warn("working directory not usable; using the fallback", "expected", ws.Expected, "actual", ws.Dir, "reason", ws.Reason)
	}
	// The turn slot follows the platform conversation (delegation.go): an
	// answer in a delegated session waits for its origin's running turn.
	conv := b.conversationOf(ctx, in.SessionID)
	t, st := b.slots.enqueue(conv.sessionID, ws.Dir)
	if st.Waiting {
		switch {
		case st.SessionBusy:
			log.Info("mail queued: a turn of the same session is running", "queued_ahead", st.Ahead)
		case st.DirBusy:
			log.Info("mail queued: another turn runs in the same directory", "dir", ws.Dir, "queued_ahead", st.Ahead)
		default:
			log.Info(fmt.Sprintf("mail queued: all %d turn slots are busy", st.Max), "running", st.Running, "queued_ahead", st.Ahead)
		}
	}
	// A mail that waits is a queued run with its place (seed 004 A6); a
	// stop takes it out of the queue.
	wctx, wcancel := context.WithCancelCause(ctx)
	var pre *liveRun
	if st.Waiting {
		rep := newRun(b.gw, b.log, b.now, b.AgentName(), in.SessionID, in.MailID, "", 1)
		pre = &liveRun{rep: rep, session: conv.sessionID, dir: ws.Dir, cancel: wcancel, queued: true, ticket: t}
		b.ctl.add(pre)
		if ahead, ok := b.slots.ahead(t); ok {
			rep.queue(ctx, ahead, st.Max)
		}
	}
	b.turns.Add(1)
	go func() {
		defer b.turns.Done()
		defer close(done)
		defer wcancel(nil)
		if !b.slots.wait(wctx, t) {
			b.requeue(ctx)
			if pre != nil {
				b.ctl.remove(pre)
				b.endQueued(ctx, in, pre)
			}
			return
		}
		defer func() {
			b.slots.release(t)
			b.requeue(ctx)
		}()
		if pre != nil {
			if by, _ := pre.stopRequested(); by != "" {
				b.ctl.remove(pre)
				b.endQueued(ctx, in, pre)
				return
			}
		}
		b.handleMail(ctx, in, ws, conv, pre)
	}()
	return done
}

// endQueued reports a queued run that never got its slot: stopped by a
// person (no process was started: quiescence proven, and the stop notice),
// or interrupted by the bridge's stop (catch-up delivers it again).
func (b *Bridge) endQueued(ctx context.Context, in incoming, l *liveRun) {
	by, at := l.stopRequested()
	if by == "" {
		l.rep.end(ctx, RunFacts{}, true, interruptedError, false, nil)
		return
	}
	r := l.rep.end(ctx, RunFacts{}, false, "", false, &stopFacts{by: by, at: at, quiescence: client.QuiescenceProven})
	b.stopNotice(ctx, in, r, "")
}
