package bridge

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/agentmail/agentmail/client"
)

// Runs across a bridge restart (issue 16, seed 004 section 1). A run lives
// in the bridge process that started it. When that process ends without
// reporting the run's end (a crash, a kill, a report the gateway never
// got), the gateway still holds the run as running or queued, and a stop
// asked meanwhile reached nobody: the event stream's first connection sends
// no Last-Event-ID (N-11), so nothing is replayed. So at every connection
// of the event stream the bridge lists its agent's runs that have not ended
// (GET /api/v1/runs, naming its bridge instance: the gateway refuses the
// listing while another bridge process of the agent holds the agent's
// bridge lease, lease.go) and ends every one it does not hold:
//
//   - a run a stop was asked for (through the API, recorded on the run, or
//     by a stop mail in the agent's unread inbox, sent after the run began)
//     ends finished with stop_reason "stopped" and that person as
//     stopped_by;
//   - any other running or queued run ends failed with lostRunError;
//   - both with quiescence "unproven" (the turn's processes belonged to the
//     earlier process: nothing can be checked), and a notice mail in the
//     thread, in the reader's language, that says so: the one summary
//     relay of the run's mail (relay_key "run-lost:<run_id>");
//   - an idle run (its turn had ended) is settled finished, without notice.
//
// A run of this process that the gateway lists in another state (a report
// that did not reach it) is reported again as it is. A run_stop event for a
// run this bridge does not hold does the same (handleRunStop).

// lostRunError is the Error of a run a bridge restart left: the turn ended
// without an answer and its processes could not be checked.
const lostRunError = "lost: the bridge restarted before the turn ended; the turn's processes could not be checked"

// lostRelayPrefix keys the notice of a lost run: "run-lost:<run_id>".
const lostRelayPrefix = "run-lost:"

// reconcileRuns ends the runs an earlier bridge process left open on the
// gateway and re-sends this process's reports the gateway did not get (see
// above). One runs at a time; a listing that fails is logged and tried
// again at the next connection.
func (b *Bridge) reconcileRuns(ctx context.Context) {
	b.reconcileMu.Lock()
	defer b.reconcileMu.Unlock()
	l, err := b.gw.OpenRuns(ctx, b.leaseInstanceID())
	if isLeaseConflict(err) {
		b.lostLease(err) // another bridge of the agent holds it: its runs are not ours to end
		return
	}
	if err != nil {
		b.log.Warn("listing the agent's unfinished runs failed; runs left by an earlier bridge stay open until the next connection", "err", err)
		return
	}
	var lost []client.Run
	for _, r := range l.Runs {
		if rep := b.ctl.ownRun(r.RunID); rep != nil {
			if v := rep.view(); v.State != "" && v.State != r.State {
				b.log.Info("the gateway missed a report of this run; sending it again", "run_id", r.RunID, "gateway_state", r.State, "state", v.State)
				rep.resend(context.WithoutCancel(ctx))
			}
			continue
		}
		if !b.lostEnded(r.RunID) {
			lost = append(lost, r)
		}
	}
	if len(lost) == 0 {
		return
	}
	var stopMails []client.Mail // unread stop mails, oldest first: read only when needed
	needMails := false
	for _, r := range lost {
		needMails = needMails || (r.StoppedBy == "" && r.State != client.RunIdle)
	}
	if needMails {
		stopMails = b.unreadStopMails(ctx)
	}
	for _, r := range lost {
		by, at := r.StoppedBy, time.Time{}
		if r.StopRequestedAt != nil {
			at = *r.StopRequestedAt
		}
		if by == "" && r.State != client.RunIdle {
			if m := firstStopMailFor(stopMails, r); m != nil {
				by, at = m.FromName, m.CreatedAt
				b.stopMailHandled(ctx, m.MailID, m.SessionID, "it stopped a run an earlier bridge left")
			}
		}
		b.endLostRun(ctx, r, by, at)
	}
}

// lostEnded reports whether this process ended run id as lost already.
func (b *Bridge) lostEnded(id string) bool {
	b.lostMu.Lock()
	defer b.lostMu.Unlock()
	return b.lost[id]
}

// endLostRun ends run r, which an earlier bridge process left open: see
// the rules at the top of this file. by is the person who asked to stop
// it ("" nobody), at when. A report the gateway refuses is logged and the
// run stays for the next connection; the notice follows a stored report
// only.
func (b *Bridge) endLostRun(ctx context.Context, r client.Run, by string, at time.Time) {
	b.lostMu.Lock()
	if b.lost[r.RunID] {
		b.lostMu.Unlock()
		return
	}
	b.lostMu.Unlock()
	log := b.log.With("run_id", r.RunID, "session_id", r.SessionID, "mail_id", r.MailID)
	now := b.now().UTC()
	was := r.State
	switch {
	case was == client.RunIdle:
		r.State = client.RunFinished
	case by != "":
		r.State, r.StopReason, r.StoppedBy, r.Error = client.RunFinished, client.StopReasonStopped, by, ""
		r.Quiescence = client.QuiescenceUnproven
		if r.StopRequestedAt == nil {
			if at.IsZero() {
				at = now
			}
			at = at.UTC()
			r.StopRequestedAt = &at
		}
	default:
		r.State, r.Error = client.RunFailed, lostRunError
		r.Quiescence = client.QuiescenceUnproven
	}
	if r.EndedAt == nil {
		r.EndedAt = &now
		if d := now.Sub(r.StartedAt); d > 0 && !r.StartedAt.IsZero() {
			r.DurationMS = d.Milliseconds()
		}
	}
	r.QueuePosition, r.MaxTurns = 0, 0
	r.UpdatedAt = now
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runReportTimeout)
	_, err := b.gw.PutRun(pctx, r)
	cancel()
	if err != nil {
		log.Warn("ending a run an earlier bridge left failed; trying again at the next connection", "state", r.State, "err", err)
		return
	}
	b.lostMu.Lock()
	b.lost[r.RunID] = true
	b.lostMu.Unlock()
	if was == client.RunIdle {
		log.Info("settled an idle run an earlier bridge left: finished")
		return
	}
	log.Warn("ended a run an earlier bridge left: its processes could not be checked", "was", was, "state", r.State, "stopped_by", by, "quiescence", r.Quiescence)
	b.lostNotice(ctx, r, was == client.RunQueued)
}

// lostNotice is the notice mail of a run ended by endLostRun: the one
// summary relay of the run's mail, to its sender, in English and Chinese.
func (b *Bridge) lostNotice(ctx context.Context, r client.Run, queued bool) {
	log := b.log.With("run_id", r.RunID, "mail_id", r.MailID)
	if r.MailID == "" {
		log.Info("no notice for the lost run: it names no mail")
		return
	}
	m, err := b.gw.GetMail(context.WithoutCancel(ctx), r.MailID)
	if err != nil {
		log.Warn("no notice for the lost run: its mail could not be read", "err", err)
		return
	}
	in := incomingFromMail(*m, b.AgentName())
	to, ok := noticeRecipient(in)
	if !ok {
		log.Info("no notice for the lost run: the sender is not a person or agent", "from", in.FromName)
		return
	}
	en, zh := LostRunNoticeText(r.StoppedBy, queued)
	resp, err := b.gw.SendMail(context.WithoutCancel(ctx), client.SendMailRequest{
		To: to, Subject: replySubject(in.Subject), Body: en, ReplyTo: in.MailID,
		Relay: client.RelaySummary, RelayKey: lostRelayPrefix + r.RunID,
		Translations: []client.MailTranslation{{Language: "en", Body: en}, {Language: "zh", Body: zh}},
	})
	if err != nil {
		log.Warn("the lost run's notice could not be sent", "err", err)
		return
	}
	log.Info("lost run's notice sent", "notice_mail_id", resp.MailID)
}

// LostRunNoticeText is the notice of a run a bridge restart left, in
// English and Chinese: who stopped it (by "" when nobody did), that the
// bridge restarted while the turn ran (or, queued, while the mail waited
// for a free turn), that nothing of the turn is answered and that its
// processes could not be checked, and what to do.
func LostRunNoticeText(by string, queued bool) (en, zh string) {
	whileEn, whileZh := "while this turn ran", "在本轮运行时"
	if queued {
		whileEn, whileZh = "while this mail waited for a free turn", "在这封邮件等待空闲轮次时"
	}
	if by != "" {
		en = fmt.Sprintf("Stopped by %s. The agent's bridge restarted %s, so the turn ended without an answer "+
			"and its processes could not be checked: something it started may still run on the agent's machine.", by, whileEn)
		zh = fmt.Sprintf("%s 停止了本轮。智能体的桥接程序%s重新启动，本轮没有结果，也无法检查它启动的进程："+
			"它启动的程序可能仍在智能体的机器上运行。", by, whileZh)
		return en, zh
	}
	en = fmt.Sprintf("This turn ended without an answer: the agent's bridge restarted %s, and the turn's processes "+
		"could not be checked (something it started may still run on the agent's machine). Send your mail again to start a new turn.", whileEn)
	zh = fmt.Sprintf("本轮没有结果就结束了：智能体的桥接程序%s重新启动，无法检查本轮启动的进程"+
		"（它启动的程序可能仍在智能体的机器上运行）。请再发一次邮件，开始新的一轮。", whileZh)
	return en, zh
}

// unreadStopMails lists the agent's unread stop mails from people, oldest
// first (client.IsStopWord); nil when the inbox cannot
// be read.
func (b *Bridge) unreadStopMails(ctx context.Context) []client.Mail {
	mails, err := b.unreadMails(ctx)
	if err != nil {
		b.log.Warn("reading the inbox for stop mails failed", "err", err)
		return nil
	}
	var out []client.Mail
	for _, m := range mails {
		if m.FromKind == "person" && m.MailType == client.MailTypeNormal && client.IsStopWord(m.Body) && !b.delivered.has(m.MailID) {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// firstStopMailFor answers the oldest stop mail of r's session sent after
// r began (nil when none).
func firstStopMailFor(mails []client.Mail, r client.Run) *client.Mail {
	for i := range mails {
		if mails[i].SessionID == r.SessionID && !mails[i].CreatedAt.Before(r.StartedAt) {
			return &mails[i]
		}
	}
	return nil
}

// stopMail is a person's mail whose whole text is the stop word.
type stopMail struct {
	mailID, sessionID, from string
	sentAt                  time.Time
}

// judgeStopMail decides a person's stop mail for which this bridge holds
// no running turn of the conversation (a catch-up, or a turn that ended
// meanwhile): it is a stop, and starts no turn, when a run of this agent
// in the mail's session was running or queued when the mail was sent
// (started at or before it and not ended before it, by the run's own
// times), as the gateway's runs record it. Such a run that is still live
// here is stopped; one an earlier bridge process left open is ended as
// stopped by the mail's sender (endLostRun). Otherwise, or when the runs
// cannot be read, the mail is an ordinary one (false). A stop mail is
// marked handled and read.
func (b *Bridge) judgeStopMail(ctx context.Context, sm stopMail) bool {
	rl, err := b.gw.SessionRuns(ctx, sm.sessionID)
	if err != nil || rl == nil {
		b.log.Warn("a stop mail could not be judged (the session's runs could not be read): it is delivered as an ordinary mail", "mail_id", sm.mailID, "err", err)
		return false
	}
	me := b.AgentName()
	stop := false
	for _, r := range rl.Runs {
		if r.AgentName != me || r.MailID == sm.mailID || !wasOpenAt(r, sm.sentAt) {
			continue
		}
		stop = true
		if l := b.ctl.get(r.RunID); l != nil {
			b.requestStop(l, sm.from)
			continue
		}
		if (r.State == client.RunRunning || r.State == client.RunQueued) && b.ctl.ownRun(r.RunID) == nil {
			b.reconcileMu.Lock()
			b.endLostRun(ctx, r, sm.from, sm.sentAt)
			b.reconcileMu.Unlock()
		}
	}
	if !stop {
		return false
	}
	b.stopMailHandled(ctx, sm.mailID, sm.sessionID, "a turn of the session was running when it was sent")
	return true
}

// wasOpenAt reports whether run r was running or queued at t, by its own
// start and end times (a run without an end is open still).
func wasOpenAt(r client.Run, t time.Time) bool {
	if r.StartedAt.IsZero() || r.StartedAt.After(t) {
		return false
	}
	return r.EndedAt == nil || !r.EndedAt.Before(t)
}

// stopMailHandled records a stop mail as delivered (no turn starts for it)
// and marks it read, since no model ever reads it.
func (b *Bridge) stopMailHandled(ctx context.Context, mailID, sessionID, why string) {
	b.delivered.add(mailID)
	if _, err := b.gw.MarkRead(context.WithoutCancel(ctx), client.MarkReadRequest{MailIDs: []string{mailID}}); err != nil {
		b.log.Warn("marking the stop mail read failed", "mail_id", mailID, "err", err)
	}
	b.log.Info("stop mail handled; no turn starts for it: "+why, "mail_id", mailID, "session_id", sessionID)
}
