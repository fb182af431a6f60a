package gateway

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// The rules that must hold across replicas, checked with two Services on
// two connection pools of one PostgreSQL database (what two `agentmail
// serve` processes are), racing each other. Only the database can make
// them hold: nothing is shared in memory.

// twoReplicas answers two services on one scratch PostgreSQL database with
// one manual clock.
func twoReplicas(t *testing.T) (*Service, *Service, *ManualClock) {
	t.Helper()
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: AGENTMAIL_TEST_DATABASE=postgres AGENTMAIL_TEST_POSTGRES_URL=...")
	}
	url := storetest.DatabaseURL(t)
	clock := NewManualClock(time.Date(2026, 9, 2, 10, 0, 0, 0, time.UTC))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var svcs [2]*Service
	for i := range svcs {
		st, err := store.Open(context.Background(), store.Options{DatabaseURL: url, DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		svcs[i] = New(st, clock, Config{BcryptCost: bcrypt.MinCost}, log)
	}
	return svcs[0], svcs[1], clock
}

// race runs n calls at once, alternating the two services, and answers
// their errors in call order.
func race(n int, a, b *Service, call func(i int, s *Service) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = call(i, s)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// tally counts nil errors and errors of the wanted kind and code; any
// other error fails the test.
func tally(t *testing.T, errs []error, kind Kind, code string) (ok, refused int) {
	t.Helper()
	for i, err := range errs {
		switch e := AsError(err); {
		case err == nil:
			ok++
		case e != nil && e.Kind == kind && e.Code == code:
			refused++
		default:
			t.Fatalf("call %d: %v, want nil or %s", i, err, code)
		}
	}
	return ok, refused
}

func TestReplicasStartingTogetherCreateOneAdmin(t *testing.T) {
	a, b, _ := twoReplicas(t)
	var created [2]bool
	errs := race(2, a, b, func(i int, s *Service) error {
		var err error
		created[i], _, err = s.BootstrapAdmin(context.Background(), "admin", "admin-password-1")
		return err
	})
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("BootstrapAdmin on two replicas at once: %v / %v; the second must find the first's admin", errs[0], errs[1])
	}
	if created[0] == created[1] {
		t.Fatalf("created = %v, want exactly one replica to create the admin", created)
	}
	if n, err := a.Read().CountUsers(context.Background()); err != nil || n != 1 {
		t.Fatalf("%d users (%v), want 1", n, err)
	}
}

func TestReplicasEnforceBudgetRateLimitRelaysDecisionsAndRemindersInTheDatabase(t *testing.T) {
	a, b, clock := twoReplicas(t)
	ctx := context.Background()
	alice, bot := aliceAndBot(t, a, b)

	// Round budget: 5 rounds, 12 answers at once through both replicas.
	five := 5
	start, err := a.Send(ctx, alice, client.SendMailRequest{To: "bot@/work/app.new", Subject: "five rounds", Body: "go", RoundBudget: &five})
	if err != nil {
		t.Fatal(err)
	}
	errs := race(12, a, b, func(i int, s *Service) error {
		_, err := s.Send(ctx, bot, client.SendMailRequest{To: "alice", ReplyTo: start.MailID, Body: "answer"})
		return err
	})
	if ok, refused := tally(t, errs, KindForbidden, "budget_exhausted"); ok != 5 || refused != 7 {
		t.Fatalf("%d answers went through and %d were refused, want 5 and 7", ok, refused)
	}

	// New-session rate limit: 21 at once, 20 per hour.
	errs = race(21, a, b, func(i int, s *Service) error {
		_, err := s.Send(ctx, bot, client.SendMailRequest{To: "alice@.new", Subject: "report", Body: "x"})
		return err
	})
	if ok, refused := tally(t, errs, KindRateLimited, "new_session_rate_limited"); ok != 20 || refused != 1 {
		t.Fatalf("%d new sessions opened and %d refused, want 20 and 1", ok, refused)
	}

	// A relay key sent 6 times at once stores one mail; the others are
	// answered as duplicates of it.
	resps := make([]*client.SendMailResponse, 6)
	errs = race(6, a, b, func(i int, s *Service) error {
		var err error
		resps[i], err = s.Send(ctx, bot, client.SendMailRequest{To: "alice", ReplyTo: start.MailID, Body: "summary",
			Relay: client.RelaySummary, RelayKey: "turn-7"})
		return err
	})
	sent := 0
	for i, r := range resps {
		if errs[i] != nil {
			t.Fatalf("relay %d: %v", i, errs[i])
		}
		if r.Status == SendStatusSent {
			sent++
		}
		if r.MailID != resps[0].MailID {
			t.Fatalf("relay answers name different mails: %s and %s", r.MailID, resps[0].MailID)
		}
	}
	if sent != 1 {
		t.Fatalf("%d of 6 copies of one relay key were stored, want 1", sent)
	}

	// First decision wins: approve through A and deny through B at once.
	perm, err := b.RequestPermission(ctx, bot, client.PermissionRequest{Question: "rm -rf build?", SessionID: start.SessionID,
		RelayKey: "perm-1", Tool: "Bash", ToolInput: map[string]any{"command": "rm -rf build"}})
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"approve", "deny"}
	errs = race(2, a, b, func(i int, s *Service) error {
		_, err := s.Decide(ctx, alice, perm.MailID, client.DecideRequest{Decision: words[i]})
		return err
	})
	if ok, refused := tally(t, errs, KindConflict, "already_decided"); ok != 1 || refused != 1 {
		t.Fatalf("%d decisions taken and %d refused, want 1 and 1", ok, refused)
	}
	if n := countMailsOfType(t, a, client.MailTypePermissionDecision); n != 1 {
		t.Fatalf("%d decision mails, want 1", n)
	}

	// A due reminder swept by both replicas at once is sent once.
	if _, err := a.CreateSchedule(ctx, alice, client.CreateScheduleRequest{Title: "standup",
		EventTime: clock.Now().Add(10 * time.Minute).Format(time.RFC3339)}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(11 * time.Minute)
	counts := make([]int, 2)
	errs = race(2, a, b, func(i int, s *Service) error {
		var err error
		counts[i], err = s.SendDueReminders(ctx)
		return err
	})
	if errs[0] != nil || errs[1] != nil || counts[0]+counts[1] != 1 {
		t.Fatalf("two sweeps sent %v reminders (%v / %v), want 1 in all", counts, errs[0], errs[1])
	}
}

func countMailsOfType(t *testing.T, s *Service, typ string) int {
	t.Helper()
	var n int
	if err := s.Read().QueryRow(context.Background(), `SELECT COUNT(*) FROM mails WHERE mail_type = ?`, typ).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
