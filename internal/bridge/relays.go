package bridge

import (
	"context"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
)

// agentMailIDs lists the ids of mails this agent has in the mail's thread,
// from the gateway's record (B-5.3).
func (b *Bridge) agentMailIDs(ctx context.Context, mailID string) (map[string]bool, error) {
	l, err := b.gw.Thread(ctx, mailID)
	if err != nil {
		return nil, err
	}
	me := b.AgentName()
	ids := map[string]bool{}
	for _, m := range l.Mails {
		if m.FromName == me {
			ids[m.MailID] = true
		}
	}
	return ids, nil
}

// ModelMailedThread is B-5.3's test on the gateway's record: does the
// thread hold a mail from agent, not a relay, that is not in before (the
// agent's mails when the turn started)? When before is nil (it could not be
// read) a mail created at or after turnStart (less one second for stored
// time precision) counts.
func ModelMailedThread(thread []client.Mail, agent string, before map[string]bool, turnStart time.Time) bool {
	for _, m := range thread {
		if m.FromName != agent || m.Relay != "" {
			continue
		}
		if before != nil {
			if !before[m.MailID] {
				return true
			}
			continue
		}
		if !m.CreatedAt.Before(turnStart.Add(-time.Second)) {
			return true
		}
	}
	return false
}

// relaySummary is B-5: the turn's text (text blocks only, unaltered: B-5.1,
// N-6, N-10) goes back as a relay summary with relay_key = the platform's
// message id (B-5.2), replying to the mail. It is not sent when the sender
// is not a person (agents mail each other explicitly), when the text is
// empty (B-5.4), or when the model already mailed this thread during the
// turn (B-5.3, judged from the gateway's record). Every session the core
// drives is mail-driven (B-5.5): sessions people open in the platform's own
// UI never reach it.
func (b *Bridge) relaySummary(ctx context.Context, in incoming, res TurnResult, before map[string]bool, turnStart time.Time) {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID)
	if in.FromKind != "person" {
		log.Info("no automatic reply: the sender is not a person", "from", in.FromName, "from_kind", in.FromKind)
		return
	}
	if strings.TrimSpace(res.Text) == "" {
		log.Info("no automatic reply: the turn ended without text (B-5.4)")
		return
	}
	if l, err := b.gw.Thread(ctx, in.MailID); err != nil {
		log.Warn("reading the thread failed; relaying anyway", "err", err)
	} else if ModelMailedThread(l.Mails, b.AgentName(), before, turnStart) {
		log.Info("no automatic reply: the model already mailed this thread during the turn (B-5.3)")
		return
	}
	key := res.MessageID
	if key == "" {
		key = "turn:" + res.PlatformSessionID + ":" + in.MailID
	}
	resp, err := b.gw.SendMail(ctx, client.SendMailRequest{
		To:       in.FromName,
		Subject:  replySubject(in.Subject),
		Body:     res.Text,
		ReplyTo:  in.MailID,
		Relay:    client.RelaySummary,
		RelayKey: key,
		// The platform's own translations (the demo platform), if any.
		Translations: res.Translations,
	})
	if err != nil {
		log.Error("sending the reply failed", "err", err)
		return
	}
	if resp.Status == "duplicate_relay" {
		log.Info("reply already relayed (duplicate relay_key)", "relay_key", key)
		return
	}
	log.Info("reply relayed", "reply_mail_id", resp.MailID, "relay_key", key)
}

func replySubject(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(strings.ToLower(s), "re:") {
		return s
	}
	if s == "" {
		return "Re: (no subject)"
	}
	return "Re: " + s
}

// sendFailure is B-6: a failure report to the sender, subject
// "处理失败: <subject>" (people read FailureTranslations in their language),
// listing every route tried and where to adjust, as a
// relay summary with relay_key "model-failure:<mail_id>" and mail_type
// failure_report. The failure is logged as well (B-6.4). A sender that is
// neither a person nor an agent (a reminder) gets no mail; the log remains.
func (b *Bridge) sendFailure(ctx context.Context, in incoming, r FailureReport) {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID)
	r.AgentName, r.MailID = b.AgentName(), in.MailID
	b.noteTurnFailed(r) // health.go
	to, ok := noticeRecipient(in)
	if !ok {
		log.Error("handling failed; no failure report: the sender is not a person or agent", "stage", r.Stage, "from", in.FromName)
		return
	}
	if ctx.Err() != nil {
		return
	}
	resp, err := b.gw.SendMail(ctx, client.SendMailRequest{
		To:       to,
		Subject:  FailureSubject(in.Subject),
		Body:     FailureBody(r),
		ReplyTo:  in.MailID,
		Relay:    client.RelaySummary,
		RelayKey: FailureRelayKey(in.MailID),
		MailType: client.MailTypeFailureReport,

		// People read it in their language (failuretext.go); agents the seed's form.
		Translations: FailureTranslations(in.Subject, r),
	})
	if err != nil {
		log.Error("handling failed and the failure report could not be sent", "stage", r.Stage, "err", err)
		return
	}
	log.Error("handling failed; failure report sent", "stage", r.Stage, "report_mail_id", resp.MailID, "status", resp.Status)
}

// noticeRecipient is where a failure report or stop notice about mail in
// goes: the person who sent it, or the sending agent's reply address; false
// for a sender that is neither (a reminder).
func noticeRecipient(in incoming) (string, bool) {
	switch in.FromKind {
	case "person", "":
		return in.FromName, true
	case "agent":
		if in.ReplyAddress != "" {
			return in.ReplyAddress, true
		}
		return in.FromName, true
	}
	return "", false
}
