package bridge

import (
	"context"
	"fmt"
	"sort"

	"github.com/agentmail/agentmail/client"
)

// MaxCatchUp is B-7.2's limit: at most five mails per catch-up.
const MaxCatchUp = 5

// SelectCatchUp chooses the mails a catch-up delivers (B-7): only
// mail_type normal (B-7.5), not already delivered (B-7.3, the shared
// de-duplication set), oldest first (B-7.4: the inbox answers newest first),
// at most max (B-7.2). The rest stays unread in the inbox for the next
// catch-up.
func SelectCatchUp(mails []client.Mail, delivered func(mailID string) bool, max int) []client.Mail {
	out := make([]client.Mail, 0, len(mails))
	seen := map[string]bool{}
	for _, m := range mails {
		if m.MailType != client.MailTypeNormal || seen[m.MailID] {
			continue
		}
		if delivered != nil && delivered(m.MailID) {
			continue
		}
		seen[m.MailID] = true
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	if max >= 0 && len(out) > max {
		out = out[:max]
	}
	return out
}

// catchUp is B-7: once, after the first good heartbeat reported pending
// mail and the event stream's first connection was tried (so no mail falls
// between the two). The unread inbox is listed without marking anything
// read; normal mails only, oldest first, de-duplicated against SSE in the
// shared set and checked again before each delivery, at most 5, delivered
// one after another. A mail the gateway already holds a run for is skipped
// (handled before a restart).
func (b *Bridge) catchUp(ctx context.Context, pending int) {
	select {
	case <-b.sseReady:
	case <-ctx.Done():
		return
	}
	mails, err := b.unreadMails(ctx)
	if err != nil {
		b.log.Warn("catch-up: listing the inbox failed", "err", err)
		return
	}
	candidates := SelectCatchUp(mails, b.delivered.has, -1)
	b.log.Info("catching up mails that arrived while the bridge was offline", "pending", pending, "candidates", len(candidates))
	n := 0
	for _, m := range candidates {
		if n >= MaxCatchUp || ctx.Err() != nil {
			break
		}
		if b.delivered.has(m.MailID) {
			continue // B-7.6: SSE delivered it meanwhile
		}
		if m.FromKind == "person" && client.IsStopWord(m.Body) &&
			b.judgeStopMail(ctx, stopMail{mailID: m.MailID, sessionID: m.SessionID, from: m.FromName, sentAt: m.CreatedAt}) {
			continue // a stop, not a turn (issue 16)
		}
		if b.alreadyRun(ctx, m) {
			b.log.Info("catch-up: mail already handled by an earlier run; skipped", "mail_id", m.MailID)
			continue
		}
		in := incomingFromMail(m, b.AgentName())
		// A mail answered with a failure report for want of a working
		// directory has no run (the turn never started) and stays unread,
		// since no model read it: without this check every restart sent
		// the same report again (refused as duplicate_relay) and logged an
		// error for a mail already answered.
		if _, err := ResolveWorkspace(in.ToWorkspace, b.cfg.Settings.FallbackDir); err != nil && b.failureReported(ctx, m.MailID) {
			b.delivered.add(m.MailID)
			b.log.Info("catch-up: mail already answered with a failure report; skipped", "mail_id", m.MailID, "reason", err)
			continue
		}
		done := b.accept(ctx, in)
		if done == nil {
			continue
		}
		n++
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	b.log.Info(fmt.Sprintf("caught up %d mails", n))
}

// unreadMails lists the unread inbox, newest first, without marking read.
func (b *Bridge) unreadMails(ctx context.Context) ([]client.Mail, error) {
	no := false
	var all []client.Mail
	cursor := ""
	for page := 0; page < catchUpMaxPages; page++ {
		l, err := b.gw.Inbox(ctx, client.InboxQuery{Status: "unread", Limit: catchUpPage, MarkRead: &no, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		all = append(all, l.Mails...)
		if l.NextCursor == "" || l.NextCursor == cursor {
			break
		}
		cursor = l.NextCursor
	}
	return all, nil
}

// alreadyRun reports whether the gateway holds a run for the mail that was
// not interrupted by a bridge stop.
func (b *Bridge) alreadyRun(ctx context.Context, m client.Mail) bool {
	rl, err := b.gw.SessionRuns(ctx, m.SessionID)
	if err != nil || rl == nil {
		return false
	}
	for _, r := range rl.Runs {
		if r.MailID == m.MailID && r.Error != interruptedError && r.State != client.RunQueued {
			return true
		}
	}
	return false
}

// failureReported reports whether this agent already answered the mail
// mailID with a failure report (B-6): a mail of type failure_report from
// the agent replying to it, found in the mail's thread (GET
// /api/v1/mail/{id}/thread). A failed lookup answers false, so the mail is
// handled as before (a second report is refused as duplicate_relay).
func (b *Bridge) failureReported(ctx context.Context, mailID string) bool {
	th, err := b.gw.Thread(ctx, mailID)
	if err != nil || th == nil {
		return false
	}
	for _, x := range th.Mails {
		if x.ParentMailID == mailID && x.FromName == b.AgentName() && x.MailType == client.MailTypeFailureReport {
			return true
		}
	}
	return false
}
