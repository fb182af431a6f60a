package bridge

import (
	"context"
	"errors"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// Delegation (issue 15). A session this agent opened from inside one of
// its own sessions' turns is a delegated session: the gateway records the
// turn's session as its origin. A mail arriving in it (the delegate's
// answer) is a turn of the origin's platform conversation (B-3.3 extended:
// a delegated session maps to its origin's platform session): the turn
// slot, the platform session, the turn token and the bind all follow the
// origin, and the turn's final text goes to the origin's people as a
// delegation relay instead of nowhere. The mapping is read from the
// gateway (origin_session_id), so it survives a restart.

// conversation is the mail session whose platform conversation a mail's
// turn continues: the mail's own session, or, for a mail in a session
// delegated from one of this agent's sessions, that origin session.
type conversation struct {
	sessionID string          // the mail session the platform conversation is bound to
	origin    *client.Session // the origin session when the mail's session is delegated from it, else nil
}

// delegated reports whether the conversation is the origin of the mail's
// delegated session.
func (c conversation) delegated() bool { return c.origin != nil }

// conversationOf answers the conversation of a mail in sessionID. Any
// error reading the sessions falls back to the mail's own session (the
// turn then runs as before this rule, and the log says why).
func (b *Bridge) conversationOf(ctx context.Context, sessionID string) conversation {
	own := conversation{sessionID: sessionID}
	if v, ok := b.origins.Load(sessionID); ok {
		if v.(string) == "" {
			return own
		}
	}
	s, err := b.gw.GetSession(ctx, sessionID)
	if err != nil {
		b.log.Warn("reading the mail's session failed; the turn runs in its own conversation", "session_id", sessionID, "err", err)
		return own
	}
	if s.OriginSessionID == "" || strings.EqualFold(s.AgentName, b.AgentName()) {
		b.origins.Store(sessionID, "")
		return own
	}
	o, err := b.gw.GetSession(ctx, s.OriginSessionID)
	if err != nil {
		b.log.Warn("reading the delegated session's origin failed; the turn runs in its own conversation",
			"session_id", sessionID, "origin_session_id", s.OriginSessionID, "err", err)
		return own
	}
	if !strings.EqualFold(o.AgentName, b.AgentName()) {
		b.origins.Store(sessionID, "") // delegated by another agent: not our conversation
		return own
	}
	b.origins.Store(sessionID, o.SessionID)
	return conversation{sessionID: o.SessionID, origin: o}
}

// relayDelegation is rule (b) of the relay rules: the final text of a
// turn started by an answer in a delegated session goes into the origin
// session, as a relay bound to the received mail (relay_key as B-5.2; the
// gateway keeps it to one per received mail and charges no round), to
// whoever opened the origin: its person, or, when the origin is itself a
// delegated session (person -> A -> B -> C, this agent being B), the agent
// that delegated it (A), whose bridge runs it as a turn of A's own origin
// and relays in turn. So each level relays into its own origin and the
// result climbs back to the person. Nothing is relayed into the delegated
// session itself.
func (b *Bridge) relayDelegation(ctx context.Context, in incoming, conv conversation, res TurnResult) {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID, "origin_session_id", conv.origin.SessionID)
	if strings.TrimSpace(res.Text) == "" {
		log.Info("no delegation relay: the turn ended without text (B-5.4)")
		return
	}
	opener := conv.origin.CreatedBy
	if opener == "" || strings.EqualFold(opener, b.AgentName()) {
		log.Info("no delegation relay: the origin session was opened by this agent itself", "created_by", opener)
		return
	}
	key := res.MessageID
	if key == "" {
		key = "turn:" + res.PlatformSessionID + ":" + in.MailID
	}
	resp, err := b.gw.SendMail(ctx, client.SendMailRequest{
		To:       opener + "@." + conv.origin.Alias,
		Subject:  replySubject(conv.origin.Subject),
		Body:     res.Text,
		ReplyTo:  in.MailID,
		Relay:    client.RelaySummary,
		RelayKey: key,
	})
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Body.Code == "relay_recipient" {
		// The origin was opened by an agent outside any delegation: agents
		// never auto-reply to agents.
		log.Info("no delegation relay: the origin session was opened by an agent outside any delegation", "created_by", opener)
		return
	}
	if err != nil {
		log.Error("sending the delegation relay failed", "err", err)
		return
	}
	log.Info("delegation relay sent", "reply_mail_id", resp.MailID, "status", resp.Status, "relay_key", key)
}
