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
		done := b.accept(ctx, incomingFromMail(m, b.AgentName()))
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
