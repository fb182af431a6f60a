package gateway

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestRelayReachesOnlyTheRepliedSenderAndParticipants checks that the free
// relay channel (I-2) never reaches anyone new: a summary relay goes only to
// the replied mail's sender and the session's participants (to and cc),
// stays in the replied mail's session, and a refused one stores nothing.
func TestRelayReachesOnlyTheRepliedSenderAndParticipants(t *testing.T) {
	e := newExtrasEnv(t)
	s := e.session() // alice -> bot@/work/proj.new, cc bob
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "bot2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	other, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/other.new", Subject: "other work", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	relay := func(to, cc string) (*client.SendMailResponse, error) {
		n++
		return e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: to, Cc: cc, Subject: "Re: clean the build", Body: "done",
			ReplyTo: s.MailID, Relay: client.RelaySummary, RelayKey: "turn-" + string(rune('a'+n))})
	}
	refused := []struct {
		name, to, cc string
		kind         Kind
		code, field  string
	}{
		{name: "new party in cc", to: "alice", cc: "carol", kind: KindInvalid, code: "relay_recipient", field: "cc"},
		{name: "new party in to", to: "carol", kind: KindInvalid, code: "relay_recipient", field: "to"},
		{name: "new agent in cc", to: "alice", cc: "bot2@/work/proj", kind: KindInvalid, code: "relay_recipient", field: "cc"},
		{name: "another session", to: "alice@." + other.SessionAlias, kind: KindInvalid, code: "relay_other_session", field: "to"},
		{name: "unknown alias", to: "alice@.no-such-alias", kind: KindNotFound, code: "alias_not_found", field: "to"},
		{name: "new session", to: "alice@.new", kind: KindInvalid, code: "invalid_field", field: "to"},
	}
	mails := e.countMails("1=1")
	parts, _ := e.svc.Read().Participants(e.ctx, s.SessionID)
	for _, c := range refused {
		_, err := relay(c.to, c.cc)
		wantCode(t, err, c.kind, c.code)
		if f := AsError(err).Field; f != c.field {
			t.Errorf("%s: field %q, want %q", c.name, f, c.field)
		}
	}
	if got := e.countMails("1=1"); got != mails {
		t.Fatalf("refused relays stored %d mails", got-mails)
	}
	if now, _ := e.svc.Read().Participants(e.ctx, s.SessionID); len(now) != len(parts) {
		t.Fatalf("refused relays changed the participants: %d -> %d", len(parts), len(now))
	}

	// The replied mail's sender, a cc participant, and the session's own
	// alias are fine; none uses a round.
	for _, c := range []struct{ to, cc string }{{"alice", ""}, {"alice", "bob"}, {"bob", ""}, {"alice@." + s.SessionAlias, ""}} {
		r, err := relay(c.to, c.cc)
		if err != nil {
			t.Fatalf("relay to %q cc %q: %v", c.to, c.cc, err)
		}
		if r.SessionID != s.SessionID || r.NewSession {
			t.Fatalf("relay to %q landed in %s, want %s", c.to, r.SessionID, s.SessionID)
		}
	}
	if row, _ := e.svc.Read().GetSession(e.ctx, s.SessionID); row.UsedRounds != 0 {
		t.Fatalf("relays used %d rounds", row.UsedRounds)
	}
}

// TestPermissionRelayIsNotAMail checks that relay "permission" is refused
// on a send (it belongs to POST /permission/request), with or without
// reply_to, and stores nothing.
func TestPermissionRelayIsNotAMail(t *testing.T) {
	e := newExtrasEnv(t)
	s := e.session()
	mails := e.countMails("1=1")
	for _, replyTo := range []string{"", s.MailID} {
		_, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice", Subject: "may I?", Body: "rm -rf /",
			ReplyTo: replyTo, Relay: client.RelayPermission, RelayKey: "perm-x"})
		wantCode(t, err, KindInvalid, "invalid_field")
		if ae := AsError(err); ae.Field != "relay" || ae.Suggestion == "" {
			t.Fatalf("relay permission: %+v", ae)
		}
	}
	if got := e.countMails("1=1"); got != mails {
		t.Fatalf("refused permission relays stored %d mails", got-mails)
	}
}
