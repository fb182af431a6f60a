package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// Sends run as shared writes (WriteShared): on PostgreSQL they hold their
// count-then-insert rules through narrow locks instead of one lock for
// every write of every replica. These tests race two replicas of one
// database on each rule, and show that sends of different sessions no
// longer wait for each other.

func TestNarrowLockKeepsACapAcrossReplicas(t *testing.T) {
	a, b, _ := twoReplicas(t)
	ctx := context.Background()
	alice, bot := aliceAndBot(t, a, b)

	// The new-session rate limit (20 per hour): 40 sends that each open a
	// session, at once through both replicas.
	errs := race(40, a, b, func(i int, s *Service) error {
		_, err := s.Send(ctx, bot, client.SendMailRequest{To: "alice@.new", Subject: "report", Body: "x"})
		return err
	})
	if ok, refused := tally(t, errs, KindRateLimited, "new_session_rate_limited"); ok != 20 || refused != 20 {
		t.Fatalf("%d new sessions opened and %d refused, want 20 and 20", ok, refused)
	}
	// Those 20 sessions got 20 different aliases from one subject.
	var aliases int
	if err := a.Read().QueryRow(ctx, `SELECT COUNT(DISTINCT alias) FROM mail_sessions WHERE created_by = 'bot'`).Scan(&aliases); err != nil || aliases != 20 {
		t.Fatalf("%d distinct aliases (%v), want 20", aliases, err)
	}

	// The default session: 12 mails to the agent's address without a
	// session part, at once, open one session, and all land in it.
	resps := make([]*client.SendMailResponse, 12)
	errs = race(12, a, b, func(i int, s *Service) error {
		var err error
		resps[i], err = s.Send(ctx, alice, client.SendMailRequest{To: "bot@/work/app", Subject: "one thread", Body: "x"})
		return err
	})
	opened := 0
	for i, r := range resps {
		if errs[i] != nil {
			t.Fatalf("send %d: %v", i, errs[i])
		}
		if r.NewSession {
			opened++
		}
		if r.SessionID != resps[0].SessionID {
			t.Fatalf("default-address sends landed in sessions %s and %s, want one", r.SessionID, resps[0].SessionID)
		}
	}
	if opened != 1 {
		t.Fatalf("%d sends opened a session, want 1", opened)
	}
	// The unread counter the batches hold back until their commits counts
	// every one of those mails.
	if n, err := a.Read().Unread(ctx, "bot"); err != nil || n != 12 {
		t.Fatalf("bot's unread counter %d (%v), want 12", n, err)
	}
}

func TestSendsOfDifferentSessionsCommitWhileAnotherIsOpen(t *testing.T) {
	a, b, _ := twoReplicas(t)
	ctx := context.Background()
	for _, name := range []string{"alice", "bob"} {
		if _, err := a.CreateUser(ctx, client.CreateUserRequest{Username: name, Password: "password-123"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "bot", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	alice := &Principal{Kind: PrincipalPerson, Name: "alice", Role: RoleUser, AuthKind: AuthUserKey}
	bob := &Principal{Kind: PrincipalPerson, Name: "bob", Role: RoleUser, AuthKind: AuthUserKey}
	first, err := a.Send(ctx, alice, client.SendMailRequest{To: "bot@/work/one.new", Subject: "one", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// Replica a holds a send into alice's session open.
	held, release := make(chan struct{}), make(chan struct{})
	holdDone := make(chan error, 1)
	go func() {
		holdDone <- a.WriteShared(ctx, func(tx *Tx) error {
			spec, err := a.parseSend(alice, client.SendMailRequest{To: "bot@/work/one", ReplyTo: first.MailID, Body: "held"})
			if err == nil {
				err = a.resolveRecipients(ctx, spec)
			}
			if err == nil {
				_, err = a.sendTx(ctx, tx, alice, spec)
			}
			if err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-holdDone:
		t.Fatalf("the held send: %v", err)
	}
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	// Meanwhile bob's sends into another session commit, through the other
	// replica and through a itself.
	for i, s := range []*Service{b, a} {
		done := make(chan error, 1)
		go func() {
			_, err := s.Send(ctx, bob, client.SendMailRequest{To: "bot@/work/two", Subject: "two", Body: "x"})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("send %d into another session waited for the open transaction", i)
		}
	}
	released = true
	close(release)
	if err := <-holdDone; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.Read().QueryRow(ctx, `SELECT COUNT(*) FROM mails`).Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d mails (%v), want 4", n, err)
	}
	if n, err := a.Read().Unread(ctx, "bot"); err != nil || n != 4 {
		t.Fatalf("bot's unread counter %d (%v), want 4", n, err)
	}
}

// aliceAndBot creates the person alice through a and the agent bot
// through b, and answers their principals.
func aliceAndBot(t *testing.T, a, b *Service) (alice, bot *Principal) {
	t.Helper()
	ctx := context.Background()
	if _, err := a.CreateUser(ctx, client.CreateUserRequest{Username: "alice", Password: "password-123"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "bot", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	alice = &Principal{Kind: PrincipalPerson, Name: "alice", Role: RoleUser, AuthKind: AuthUserKey}
	bot = &Principal{Kind: PrincipalAgent, Name: "bot", AuthKind: AuthAgentKey}
	return alice, bot
}
