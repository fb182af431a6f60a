package gateway

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestRelayReachesOnlyTheRepliedSenderAndParticipants checks that the free
// relay channel (I-2) never reaches anyone new: a summary relay goes only to
// the replied mail's sender and the session's participants (to and cc),
// stays in the replied mail's session, and a refused one stores nothing.
func TestRelayReachesOnlyTheRepliedSenderAndParticipants(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session() // alice -> bot@/work/proj.new, cc bob
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "bot2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	other, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/other.new", Subject: "other work", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	answers := s.MailID
	relay := func(to, cc string) (*client.SendMailResponse, error) {
		n++
		return e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: to, Cc: cc, Subject: "Re: clean the build", Body: "done",
			ReplyTo: answers, Relay: client.RelaySummary, RelayKey: "turn-" + string(rune('a'+n))})
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
	// alias are fine; none uses a round. Each answers a mail of its own
	// (one summary per received mail, relayrules.go).
	for i, c := range []struct{ to, cc string }{{"alice", ""}, {"alice", "bob"}, {"bob", ""}, {"alice@." + s.SessionAlias, ""}} {
		if i > 0 {
			next, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj", Cc: "bob", ReplyTo: s.MailID, Body: "and one more thing"})
			if err != nil || next.SessionID != s.SessionID {
				t.Fatalf("follow-up: %+v, %v", next, err)
			}
			answers = next.MailID
		}
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
	e := newServiceEnv(t)
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

// TestRelayAnswersEachReceivedMailOnce checks the relay slots
// (relayrules.go): one summary and one failure report per received mail;
// a second distinct relay of the same kind is a 409 relay_already_answered
// storing nothing, the same relay_key again stays a duplicate_relay of the
// first, and another received mail has slots of its own.
func TestRelayAnswersEachReceivedMailOnce(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	send := func(replyTo, key, mailType string) (*client.SendMailResponse, error) {
		return e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice", Body: "done", ReplyTo: replyTo,
			Relay: client.RelaySummary, RelayKey: key, MailType: mailType})
	}
	first, err := send(s.MailID, "turn-1", "")
	if err != nil || first.Status != SendStatusSent {
		t.Fatalf("first summary: %+v, %v", first, err)
	}
	mails := e.countMails("1=1")
	_, err = send(s.MailID, "turn-2", "")
	wantCode(t, err, KindConflict, "relay_already_answered")
	if ae := AsError(err); !strings.Contains(ae.Message, first.MailID) || ae.Suggestion == "" {
		t.Fatalf("409 should name the mail that answered and say what to do: %+v", ae)
	}
	if got := e.countMails("1=1"); got != mails {
		t.Fatalf("a refused summary stored %d mails", got-mails)
	}
	dup, err := send(s.MailID, "turn-1", "")
	if err != nil || dup.Status != SendStatusDuplicate || dup.MailID != first.MailID {
		t.Fatalf("the same relay_key again: %+v, %v; want duplicate_relay of %s", dup, err, first.MailID)
	}

	// The failure report is a slot of its own, besides the summary.
	fail, err := send(s.MailID, "model-failure:"+s.MailID, client.MailTypeFailureReport)
	if err != nil || fail.Status != SendStatusSent {
		t.Fatalf("failure report: %+v, %v", fail, err)
	}
	_, err = send(s.MailID, "model-failure:again", client.MailTypeFailureReport)
	wantCode(t, err, KindConflict, "relay_already_answered")
	if again, err := send(s.MailID, "model-failure:"+s.MailID, client.MailTypeFailureReport); err != nil || again.Status != SendStatusDuplicate {
		t.Fatalf("the same failure report again: %+v, %v", again, err)
	}

	// Another received mail has its own slots.
	next, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj", ReplyTo: s.MailID, Body: "next"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := send(next.MailID, "turn-2", ""); err != nil || r.Status != SendStatusSent {
		t.Fatalf("summary of the next mail: %+v, %v", r, err)
	}
	if e.countMails("relay = 'summary'") != 3 {
		t.Fatalf("%d relay mails, want 3", e.countMails("relay = 'summary'"))
	}
}
