package gateway

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// serviceEnv is a service over a fresh database with a manual clock, two
// people (alice, bob), a third person (carol) outside every session, and an
// agent (bot).
type serviceEnv struct {
	t     *testing.T
	ctx   context.Context
	svc   *Service
	clock *ManualClock
	alice *Principal
	bob   *Principal
	carol *Principal
	bot   *Principal
}

func newServiceEnv(t *testing.T) *serviceEnv {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t) // SQLite, or PostgreSQL with AGENTMAIL_TEST_DATABASE=postgres
	clock := NewManualClock(time.Date(2026, 9, 2, 10, 0, 0, 0, time.UTC))
	svc := New(st, clock, Config{BcryptCost: bcrypt.MinCost}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	e := &serviceEnv{t: t, ctx: ctx, svc: svc, clock: clock}
	for _, name := range []string{"alice", "bob", "carol"} {
		if _, err := svc.CreateUser(ctx, client.CreateUserRequest{Username: name, Password: "password-123"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "bot", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	e.alice = &Principal{Kind: PrincipalPerson, Name: "alice", Role: RoleUser, AuthKind: AuthUserKey}
	e.bob = &Principal{Kind: PrincipalPerson, Name: "bob", Role: RoleUser, AuthKind: AuthUserKey}
	e.carol = &Principal{Kind: PrincipalPerson, Name: "carol", Role: RoleUser, AuthKind: AuthUserKey}
	e.bot = &Principal{Kind: PrincipalAgent, Name: "bot", AuthKind: AuthAgentKey}
	return e
}

// session has alice write to bot (cc bob) in a new session and answers it.
func (e *serviceEnv) session() *client.SendMailResponse {
	e.t.Helper()
	r, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj.new", Cc: "bob", Subject: "clean the build", Body: "please"})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *serviceEnv) countMails(where string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.svc.Read().QueryRow(e.ctx, `SELECT COUNT(*) FROM mails WHERE `+where, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *serviceEnv) events(recipient, typ string) []store.EventRow {
	e.t.Helper()
	rows, err := e.svc.Read().RecipientEvents(e.ctx, recipient, 0, 1<<62, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []store.EventRow
	for _, r := range rows {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

func wantCode(t *testing.T, err error, kind Kind, code string) {
	t.Helper()
	e := AsError(err)
	if e == nil || e.Kind != kind || (code != "" && e.Code != code) {
		t.Fatalf("err = %v (%+v), want kind %d code %q", err, e, kind, code)
	}
}
