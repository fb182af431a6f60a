package gateway

import (
	"context"
	"sync"
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
	_, commit := holdOpenSend(t, a, alice, client.SendMailRequest{To: "bot@/work/one", ReplyTo: first.MailID, Body: "held"})
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
	if err := commit(); err != nil {
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

// Two bases whose candidates meet: with "deploy" taken, a new session from
// the subject "deploy" picks "deploy-2", which is also the first choice of
// a session from the subject "deploy-2". Replica a holds the first open
// (chosen, not committed) while replica b opens the second between other
// people: b waits for a's choice and then takes the next free alias
// instead of failing on the unique alias.
func TestNarrowLockKeepsAliasesOfMeetingBasesUniqueAcrossReplicas(t *testing.T) {
	a, b, _ := twoReplicas(t)
	ctx := context.Background()
	alice, _ := aliceAndBot(t, a, b)
	if _, err := a.CreateUser(ctx, client.CreateUserRequest{Username: "bob", Password: "password-123"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "bot2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	bob := &Principal{Kind: PrincipalPerson, Name: "bob", Role: RoleUser, AuthKind: AuthUserKey}
	if _, err := a.Send(ctx, alice, client.SendMailRequest{To: "bot@/work/app.new", Subject: "deploy", Body: "x"}); err != nil {
		t.Fatal(err)
	}
	heldResp, commit := holdOpenSend(t, a, alice, client.SendMailRequest{To: "bot@/work/app.new", Subject: "deploy", Body: "held"})
	if heldResp.SessionAlias != "deploy-2" {
		t.Fatalf("the held send chose %q, want deploy-2", heldResp.SessionAlias)
	}
	// Another sender to another agent: no lock of the held send is theirs
	// but the alias.
	sent := make(chan error, 1)
	var resp *client.SendMailResponse
	go func() {
		var err error
		resp, err = b.Send(ctx, bob, client.SendMailRequest{To: "bot2@/work/app.new", Subject: "deploy-2", Body: "x"})
		sent <- err
	}()
	// Once b's send waits for the held transaction (on the alias, or
	// without the fix on the held row of the unique index), a commits.
	waitForLockWaiter(t, a, sent)
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatalf("the send from the subject deploy-2 while deploy-2 was being taken: %v", err)
	}
	if resp.SessionAlias != "deploy-2-2" {
		t.Fatalf("the second session's alias is %q, want deploy-2-2", resp.SessionAlias)
	}
}

// holdOpenSend runs the send req from p through s in a shared write that
// stays open once the send is written, and answers the send's answer and
// commit, which lets the transaction commit and answers its outcome (also
// run when t ends, if the test did not).
func holdOpenSend(t *testing.T, s *Service, p *Principal, req client.SendMailRequest) (*client.SendMailResponse, func() error) {
	t.Helper()
	ctx := context.Background()
	held, release := make(chan *client.SendMailResponse, 1), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.WriteShared(ctx, func(tx *Tx) error {
			spec, err := s.parseSend(p, req)
			if err == nil {
				err = s.resolveRecipients(ctx, spec)
			}
			var out *client.SendMailResponse
			if err == nil {
				out, err = s.sendTx(ctx, tx, p, spec)
			}
			if err != nil {
				return err
			}
			held <- out
			<-release
			return nil
		})
	}()
	var resp *client.SendMailResponse
	select {
	case resp = <-held:
	case err := <-done:
		t.Fatalf("the held send: %v", err)
	}
	var once sync.Once
	var err error
	commit := func() error {
		once.Do(func() {
			close(release)
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { _ = commit() })
	return resp, commit
}

// waitForLockWaiter returns once some transaction on the database waits
// for a lock (pg_locks: a transaction id or an advisory key; the test
// cluster serves this test alone), failing t when sent answers first or after 30 s.
func waitForLockWaiter(t *testing.T, s *Service, sent <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := s.Read().QueryRow(context.Background(), `SELECT COUNT(*) FROM pg_locks WHERE NOT granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case err := <-sent:
			t.Fatalf("the racing send answered (%v) without waiting for the held one", err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no transaction waited for a lock within 30 s")
		}
	}
}
