package store_test

// Every repository query, run once on the test database: with
// AGENTMAIL_TEST_DATABASE=postgres this is the check that the SQL written
// for SQLite also runs on PostgreSQL (placeholders, booleans, BIGINT
// comparisons, ON CONFLICT, RETURNING, recursive CTEs, LIMIT parameters,
// GROUP BY and COALESCE types) and answers the same.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

var t0 = time.Date(2026, 9, 2, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, st *store.Store, fn func(ctx context.Context, q *store.Q) error) {
	t.Helper()
	ctx := context.Background()
	must(t, st.Write(ctx, func(q *store.Q) error { return fn(ctx, q) }))
}

// fixture: person ann, agent dsh, one session with a mail ann → dsh and a
// reply dsh → ann.
type fixture struct {
	st          *store.Store
	sess        store.SessionRow
	mail, reply string
}

func newFixture(t *testing.T) *fixture {
	st := storetest.Open(t)
	f := &fixture{st: st, mail: store.NewID()}
	f.reply = store.NewID()
	f.sess = store.SessionRow{SessionID: store.NewID(), Alias: "fix-leak", AliasSource: store.AliasAuto, Subject: "Fix the leak",
		AgentName: "dsh", Workspace: "/src/app", BudgetMax: 2, CreatedBy: "ann", CreatedByKind: store.KindPerson,
		CreatedAt: at(0), LastActivity: at(0)}
	write(t, st, func(ctx context.Context, q *store.Q) error {
		for _, n := range []struct{ name, kind string }{{"ann", store.KindPerson}, {"dsh", store.KindAgent}} {
			ok, err := q.ClaimName(ctx, n.name, n.kind, at(0))
			if err != nil || !ok {
				t.Fatalf("ClaimName %s: %v %v", n.name, ok, err)
			}
		}
		must(t, q.InsertUser(ctx, store.UserRow{Username: "ann", PasswordHash: "h", Role: "admin", CreatedAt: at(0)}))
		must(t, q.InsertAgent(ctx, store.AgentRow{Name: "dsh", Workspaces: "[]", DefaultRounds: 20, CreatedAt: at(0)}))
		must(t, q.InsertSession(ctx, f.sess))
		must(t, q.AddParticipant(ctx, store.ParticipantRow{SessionID: f.sess.SessionID, Name: "ann", Kind: store.KindPerson, JoinedAt: at(0), LastActivity: at(0)}))
		must(t, q.AddParticipant(ctx, store.ParticipantRow{SessionID: f.sess.SessionID, Name: "dsh", Kind: store.KindAgent, Workspace: "/src/app", JoinedAt: at(0), LastActivity: at(0)}))
		must(t, q.InsertMail(ctx, store.MailRow{MailID: f.mail, SessionID: f.sess.SessionID, FromName: "ann", FromKind: store.KindPerson,
			FromAddress: "ann@.fix-leak", Subject: "Fix the leak", Body: "It drips.\n\nPlease   look.", MailType: "normal", CreatedAt: at(1)}))
		must(t, q.InsertRecipient(ctx, store.RecipientRow{MailID: f.mail, Name: "dsh", Kind: store.KindAgent, Role: "to",
			Address: "dsh@/src/app.fix-leak", Workspace: "/src/app"}))
		must(t, q.InsertMail(ctx, store.MailRow{MailID: f.reply, SessionID: f.sess.SessionID, ParentMailID: f.mail, FromName: "dsh",
			FromKind: store.KindAgent, FromAddress: "dsh@/src/app.fix-leak", Subject: "Re: Fix the leak", Body: "Fixed.",
			MailType: "normal", Relay: "summary", RelayKey: "turn-1", CreatedAt: at(2)}))
		must(t, q.InsertRecipient(ctx, store.RecipientRow{MailID: f.reply, Name: "ann", Kind: store.KindPerson, Role: "to", Address: "ann@.fix-leak"}))
		return q.TouchSession(ctx, f.sess.SessionID, at(2))
	})
	return f
}

func TestQueriesNamesUsersAndCookieSessions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	if k, err := r.NameKind(ctx, "dsh"); err != nil || k != store.KindAgent {
		t.Fatalf("NameKind = %q, %v", k, err)
	}
	if _, err := r.NameKind(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("NameKind(nobody) = %v", err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		// A clash is answered, and the transaction stays usable after it.
		ok, err := q.ClaimName(ctx, "ann", store.KindAgent, at(3))
		if err != nil || ok {
			t.Fatalf("second ClaimName = %v %v", ok, err)
		}
		u, err := q.GetUser(ctx, "ann")
		must(t, err)
		u.Disabled, u.Role = true, "user"
		must(t, q.UpdateUser(ctx, u))
		must(t, q.InsertAuthSession(ctx, store.AuthSessionRow{IDHash: "c1", Username: "ann", CSRFToken: "x", CreatedAt: at(0), ExpiresAt: at(10), LastUsedAt: at(0)}))
		must(t, q.InsertAuthSession(ctx, store.AuthSessionRow{IDHash: "c2", Username: "ann", CSRFToken: "y", CreatedAt: at(0), ExpiresAt: at(100), LastUsedAt: at(0)}))
		return q.TouchAuthSession(ctx, "c2", at(5), at(200))
	})
	u, err := r.GetUser(ctx, "ann")
	if err != nil || !u.Disabled || u.Role != "user" || !u.CreatedAt.Equal(at(0)) {
		t.Fatalf("GetUser = %+v, %v", u, err)
	}
	if l, err := r.ListUsers(ctx); err != nil || len(l) != 1 {
		t.Fatalf("ListUsers = %v, %v", l, err)
	}
	if n, err := r.CountUsers(ctx); err != nil || n != 1 {
		t.Fatalf("CountUsers = %d, %v", n, err)
	}
	s, su, err := r.GetAuthSession(ctx, "c2")
	if err != nil || su.Username != "ann" || !s.ExpiresAt.Equal(at(200)) || !su.Disabled {
		t.Fatalf("GetAuthSession = %+v %+v %v", s, su, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		n, err := q.DeleteExpiredAuthSessions(ctx, at(50))
		if err != nil || n != 1 {
			t.Fatalf("DeleteExpiredAuthSessions = %d, %v", n, err)
		}
		must(t, q.DeleteAuthSession(ctx, "c2"))
		return q.DeleteUserAuthSessions(ctx, "ann")
	})
	if _, _, err := r.GetAuthSession(ctx, "c2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted cookie session: %v", err)
	}
}

func TestQueriesAgentsMirrorsAndModels(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	up := at(4)
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		must(t, q.RegisterAgent(ctx, "dsh", "claude", `[{"name":"app","path":"/src/app"}]`, at(3)))
		must(t, q.RegisterAgent(ctx, "dsh", "claude", `[]`, at(9))) // registered_at keeps the first time
		must(t, q.TouchAgent(ctx, "dsh", at(10)))
		must(t, q.SetAgentDefaultRounds(ctx, "dsh", 7))
		must(t, q.IncAgentSent(ctx, "dsh"))
		must(t, q.ReplacePlatformSessions(ctx, "dsh", []store.PlatformSessionRow{
			{PlatformID: "p1", Workspace: "/src/app", Slug: "fix-leak", Title: "Fix", MailDriven: true, UpdatedAt: &up},
			{PlatformID: "p2", Workspace: "/src/web", Slug: "", Title: "Other"}}))
		must(t, q.ReplaceModelCatalog(ctx, "dsh", []store.ModelRow{{Provider: "anthropic", Model: "opus", DisplayName: "Opus"}, {Provider: "anthropic", Model: "haiku"}}))
		return q.SetAllowedModels(ctx, "dsh", []store.ModelRow{{Provider: "anthropic", Model: "haiku"}})
	})
	a, err := r.GetAgent(ctx, "dsh")
	if err != nil || a.Platform != "claude" || !a.RegisteredAt.Equal(at(3)) || !a.LastSeen.Equal(at(10)) || a.DefaultRounds != 7 || a.SentTotal != 1 || !a.ModelsRestricted {
		t.Fatalf("GetAgent = %+v, %v", a, err)
	}
	if l, err := r.ListAgents(ctx); err != nil || len(l) != 1 {
		t.Fatalf("ListAgents = %v, %v", l, err)
	}
	ps, err := r.PlatformSessions(ctx, "dsh")
	if err != nil || len(ps) != 2 || ps[0].PlatformID != "p1" || !ps[0].MailDriven || !ps[0].UpdatedAt.Equal(up) || ps[1].UpdatedAt != nil {
		t.Fatalf("PlatformSessions = %+v, %v", ps, err)
	}
	if p, err := r.PlatformSessionBySlug(ctx, "dsh", "fix-leak", "/src/app"); err != nil || p.PlatformID != "p1" {
		t.Fatalf("PlatformSessionBySlug = %+v, %v", p, err)
	}
	if _, err := r.PlatformSessionBySlug(ctx, "dsh", "fix-leak", "/elsewhere"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PlatformSessionBySlug elsewhere = %v", err)
	}
	if l, err := r.RecentPlatformSessions(ctx, 10); err != nil || len(l) != 1 || l[0].Slug != "fix-leak" {
		t.Fatalf("RecentPlatformSessions = %+v, %v", l, err)
	}
	if m, err := r.ModelCatalog(ctx, "dsh"); err != nil || len(m) != 2 || m[0].Model != "opus" {
		t.Fatalf("ModelCatalog = %+v, %v", m, err)
	}
	if m, restricted, err := r.AllowedModels(ctx, "dsh"); err != nil || !restricted || len(m) != 1 || m[0].Model != "haiku" {
		t.Fatalf("AllowedModels = %+v %v %v", m, restricted, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error { return q.SetAllowedModels(ctx, "dsh", nil) })
	if _, restricted, err := r.AllowedModels(ctx, "dsh"); err != nil || restricted {
		t.Fatalf("AllowedModels after clearing = %v %v", restricted, err)
	}
}

func TestQueriesKeys(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	exp := at(60)
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		must(t, q.InsertKey(ctx, store.KeyRow{KeyID: "k1", TokenHash: "h1", Kind: "agent", Owner: "dsh", Lifecycle: "one_time", Prefix: "am_", CreatedAt: at(0)}))
		return q.InsertKey(ctx, store.KeyRow{KeyID: "k2", TokenHash: "h2", Kind: "user", Owner: "ann", Lifecycle: "timed", Prefix: "am_", ExpiresAt: &exp, CreatedAt: at(1)})
	})
	// A unique violation ends the transaction on PostgreSQL; the caller
	// recognises it and rolls back.
	errDup := errors.New("duplicate")
	err := f.st.Write(ctx, func(q *store.Q) error {
		err := q.InsertKey(ctx, store.KeyRow{KeyID: "k3", TokenHash: "h1", Kind: "agent", Owner: "dsh", Lifecycle: "permanent", Prefix: "am_", CreatedAt: at(2)})
		if q.IsUniqueViolation(err) {
			return errDup
		}
		return err
	})
	if !errors.Is(err, errDup) {
		t.Fatalf("a token registered twice: %v, want a unique violation", err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		for i, want := range []bool{true, false} {
			ok, err := q.UseOneTimeKey(ctx, "k1", at(3))
			if err != nil || ok != want {
				t.Fatalf("UseOneTimeKey #%d = %v %v", i, ok, err)
			}
		}
		must(t, q.TouchKey(ctx, "k2", at(4)))
		ok, err := q.RevokeKey(ctx, "k2", "user", "someone-else", at(5))
		if err != nil || ok {
			t.Fatalf("RevokeKey by another owner = %v %v", ok, err)
		}
		ok, err = q.RevokeKey(ctx, "k2", "user", "", at(5))
		if err != nil || !ok {
			t.Fatalf("RevokeKey = %v %v", ok, err)
		}
		return nil
	})
	k, err := r.KeyByHash(ctx, "h2")
	if err != nil || k.KeyID != "k2" || !k.ExpiresAt.Equal(exp) || !k.LastUsedAt.Equal(at(4)) || !k.RevokedAt.Equal(at(5)) {
		t.Fatalf("KeyByHash = %+v, %v", k, err)
	}
	if k, err := r.GetKey(ctx, "k1"); err != nil || !k.UsedAt.Equal(at(3)) {
		t.Fatalf("GetKey = %+v, %v", k, err)
	}
	if l, err := r.ListKeys(ctx, "agent", ""); err != nil || len(l) != 1 {
		t.Fatalf("ListKeys agent = %v, %v", l, err)
	}
	if l, err := r.ListKeys(ctx, "user", "ann"); err != nil || len(l) != 1 {
		t.Fatalf("ListKeys user ann = %v, %v", l, err)
	}
}

func TestQueriesMailInboxAndTree(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	// A forward of the reply in another session: the tree crosses sessions.
	fwd := store.NewID()
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		must(t, q.InsertMail(ctx, store.MailRow{MailID: fwd, SessionID: f.sess.SessionID, ParentMailID: f.reply, FromName: "ann",
			FromKind: store.KindPerson, FromAddress: "ann@.fix-leak", Subject: "Fwd: Re: Fix the leak", Body: "fyi", MailType: "normal", CreatedAt: at(3)}))
		must(t, q.InsertRecipient(ctx, store.RecipientRow{MailID: fwd, Name: "dsh", Kind: store.KindAgent, Role: "cc", Address: "dsh@/src/app.fix-leak", Position: 1}))
		return q.LinkAttachments(ctx, fwd, []string{"att-2", "att-1"})
	})
	if n, err := r.Unread(ctx, "dsh"); err != nil || n != 2 {
		t.Fatalf("Unread(dsh) = %d, %v", n, err)
	}
	if m, err := r.GetMail(ctx, f.reply); err != nil || m.ParentMailID != f.mail || m.RelayKey != "turn-1" || !m.CreatedAt.Equal(at(2)) {
		t.Fatalf("GetMail = %+v, %v", m, err)
	}
	if v, err := r.ViewMail(ctx, f.mail, "dsh"); err != nil || v.Role != "to" || v.Read {
		t.Fatalf("ViewMail recipient = %+v, %v", v, err)
	}
	if v, err := r.ViewMail(ctx, f.mail, "ann"); err != nil || v.Role != "" {
		t.Fatalf("ViewMail sender = %+v, %v", v, err)
	}
	if _, err := r.ViewMail(ctx, f.mail, "stranger"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ViewMail stranger = %v", err)
	}
	rec, err := r.RecipientsOf(ctx, []string{f.mail, fwd})
	if err != nil || len(rec[f.mail]) != 1 || rec[fwd][0].Role != "cc" {
		t.Fatalf("RecipientsOf = %+v, %v", rec, err)
	}
	if a, err := r.AttachmentIDs(ctx, []string{fwd, f.mail}); err != nil || len(a[fwd]) != 2 || a[fwd][0] != "att-2" {
		t.Fatalf("AttachmentIDs = %v, %v", a, err)
	}
	in, err := r.Inbox(ctx, "dsh", store.InboxUnread, 10, "")
	if err != nil || len(in) != 2 || in[0].MailID != fwd || in[0].Role != "cc" {
		t.Fatalf("Inbox unread = %+v, %v", in, err)
	}
	if in, err := r.Inbox(ctx, "dsh", store.InboxAll, 1, fwd); err != nil || len(in) != 1 || in[0].MailID != f.mail {
		t.Fatalf("Inbox before cursor = %+v, %v", in, err)
	}
	sent, err := r.SentMails(ctx, "ann", 10, "")
	if err != nil || len(sent) != 2 || sent[0].MailID != fwd || sent[0].Role != "" {
		t.Fatalf("SentMails = %+v, %v", sent, err)
	}
	sm, err := r.SessionMails(ctx, f.sess.SessionID, "dsh", 10, "")
	if err != nil || len(sm) != 3 || sm[0].MailID != f.mail || sm[1].Role != "" {
		t.Fatalf("SessionMails = %+v, %v", sm, err)
	}
	if sm, err := r.SessionMails(ctx, f.sess.SessionID, "dsh", 10, f.reply); err != nil || len(sm) != 1 || sm[0].MailID != fwd {
		t.Fatalf("SessionMails after cursor = %+v, %v", sm, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		n, err := q.MarkRead(ctx, "dsh", []string{f.mail, fwd, f.reply}, false, at(4))
		if err != nil || n != 2 {
			t.Fatalf("MarkRead = %d, %v (the reply is not addressed to dsh)", n, err)
		}
		n, err = q.MarkRead(ctx, "dsh", []string{fwd}, true, at(5))
		if err != nil || n != 1 {
			t.Fatalf("MarkRead unread = %d, %v", n, err)
		}
		return nil
	})
	if n, err := r.Unread(ctx, "dsh"); err != nil || n != 1 {
		t.Fatalf("Unread after marking = %d, %v", n, err)
	}
	if in, err := r.Inbox(ctx, "dsh", store.InboxRead, 10, ""); err != nil || len(in) != 1 || in[0].MailID != f.mail || !in[0].Read {
		t.Fatalf("Inbox read = %+v, %v", in, err)
	}
	if root, err := r.TreeRoot(ctx, fwd); err != nil || root != f.mail {
		t.Fatalf("TreeRoot = %q, %v", root, err)
	}
	nodes, err := r.TreeNodes(ctx, f.mail, "dsh", 10)
	if err != nil || len(nodes) != 3 || nodes[2].MailID != fwd || nodes[2].Depth != 2 || !nodes[0].Visible || !nodes[1].Visible {
		t.Fatalf("TreeNodes = %+v, %v", nodes, err)
	}
	if nodes, err := r.TreeNodes(ctx, f.mail, "stranger", 10); err != nil || len(nodes) != 3 || nodes[0].Visible {
		t.Fatalf("TreeNodes for a stranger = %+v, %v", nodes, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error { return q.SetMailType(ctx, fwd, "permission_decision") })
	if m, _ := r.GetMail(ctx, fwd); m.MailType != "permission_decision" {
		t.Fatalf("SetMailType: %q", m.MailType)
	}
}

func TestQueriesRelaysAreClaimedOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		ok, err := q.InsertRelay(ctx, "dsh", "turn-1", "summary", f.reply, at(2))
		if err != nil || !ok {
			t.Fatalf("first InsertRelay = %v %v", ok, err)
		}
		ok, err = q.InsertRelay(ctx, "dsh", "turn-1", "summary", "another", at(3))
		if err != nil || ok {
			t.Fatalf("replayed InsertRelay = %v %v, want false", ok, err)
		}
		// The transaction is still usable after the refused claim.
		id, err := q.RelayedMail(ctx, "dsh", "turn-1")
		if err != nil || id != f.reply {
			t.Fatalf("RelayedMail = %q, %v", id, err)
		}
		return nil
	})
	if _, err := f.st.Read().RelayedMail(ctx, "dsh", "turn-2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RelayedMail unknown = %v", err)
	}
}

func TestQueriesSessions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	id := f.sess.SessionID
	if s, err := r.SessionByAlias(ctx, "fix-leak"); err != nil || s.SessionID != id {
		t.Fatalf("SessionByAlias = %+v, %v", s, err)
	}
	if taken, err := r.AliasTaken(ctx, "fix-leak", id); err != nil || taken {
		t.Fatalf("AliasTaken by itself = %v %v", taken, err)
	}
	if taken, err := r.AliasTaken(ctx, "fix-leak", "other"); err != nil || !taken {
		t.Fatalf("AliasTaken = %v %v", taken, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		for i, want := range []bool{true, true, false} { // budget_max 2
			at := time.UnixMilli(int64(5_000_000 + i)).UTC()
			ok, err := q.UseRound(ctx, id, at)
			if err != nil || ok != want {
				t.Fatalf("UseRound #%d = %v %v", i, ok, err)
			}
			// A used round moves the last activity; a refused one changes nothing.
			wantAt := at
			if !want {
				wantAt = time.UnixMilli(5_000_001).UTC()
			}
			if s, err := q.GetSession(ctx, id); err != nil || !s.LastActivity.Equal(wantAt) {
				t.Fatalf("after UseRound #%d: last activity %v, want %v (%v)", i, s.LastActivity, wantAt, err)
			}
		}
		must(t, q.SetSessionAlias(ctx, id, "leak", store.AliasManual))
		must(t, q.SetSessionSubject(ctx, id, "The leak", time.Now()))
		must(t, q.SetSessionBudget(ctx, id, 5, 1))
		must(t, q.SetPlatformSessionID(ctx, id, "plat-9"))
		// Joining again moves last activity and fills an empty path only.
		must(t, q.AddParticipant(ctx, store.ParticipantRow{SessionID: id, Name: "ann", Kind: store.KindPerson, Workspace: "/home/ann", JoinedAt: at(6), LastActivity: at(6)}))
		must(t, q.AddParticipant(ctx, store.ParticipantRow{SessionID: id, Name: "dsh", Kind: store.KindAgent, Workspace: "/other", JoinedAt: at(6), LastActivity: at(6)}))
		return nil
	})
	s, err := r.GetSession(ctx, id)
	if err != nil || s.Alias != "leak" || s.AliasSource != store.AliasManual || s.Subject != "The leak" || s.BudgetMax != 5 || s.UsedRounds != 1 || s.PlatformSessionID != "plat-9" {
		t.Fatalf("GetSession = %+v, %v", s, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		// JoinSession answers the path the participant has in the session:
		// its first one stays.
		ws, err := q.JoinSession(ctx, store.ParticipantRow{SessionID: id, Name: "dsh", Kind: store.KindAgent, Workspace: "/third", JoinedAt: at(7), LastActivity: at(7)})
		if err != nil || ws != "/src/app" {
			t.Fatalf("JoinSession existing = %q, %v", ws, err)
		}
		ws, err = q.JoinSession(ctx, store.ParticipantRow{SessionID: id, Name: "eve", Kind: store.KindPerson, Workspace: "", JoinedAt: at(7), LastActivity: at(7)})
		if err != nil || ws != "" {
			t.Fatalf("JoinSession new = %q, %v", ws, err)
		}
		return nil
	})
	if p, err := r.Participant(ctx, id, "dsh"); err != nil || p.Workspace != "/src/app" || !p.LastActivity.Equal(at(7)) {
		t.Fatalf("Participant dsh = %+v, %v", p, err)
	}
	if p, err := r.Participant(ctx, id, "ann"); err != nil || p.Workspace != "/home/ann" {
		t.Fatalf("Participant ann = %+v, %v", p, err)
	}
	if ps, err := r.Participants(ctx, id); err != nil || len(ps) != 3 || ps[0].Name != "ann" {
		t.Fatalf("Participants = %+v, %v", ps, err)
	}
	if n, oldest, err := r.SessionsCreatedSince(ctx, "ann", at(-60)); err != nil || n != 1 || !oldest.Equal(at(0)) {
		t.Fatalf("SessionsCreatedSince = %d %v %v", n, oldest, err)
	}
	if n, _, err := r.SessionsCreatedSince(ctx, "ann", at(1)); err != nil || n != 0 {
		t.Fatalf("SessionsCreatedSince later = %d %v", n, err)
	}
	if d, err := r.DefaultSession(ctx, "dsh", "/src/app", "ann"); err != nil || d.SessionID != id {
		t.Fatalf("DefaultSession = %+v, %v", d, err)
	}
	if _, err := r.DefaultSession(ctx, "dsh", "/elsewhere", "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DefaultSession elsewhere = %v", err)
	}
	l, err := r.SessionsOf(ctx, "ann", 10, 0, "")
	if err != nil || len(l) != 1 {
		t.Fatalf("SessionsOf = %+v, %v", l, err)
	}
	if l, err := r.SessionsOf(ctx, "ann", 10, store.Millis(l[0].LastActivity), l[0].SessionID); err != nil || len(l) != 0 {
		t.Fatalf("SessionsOf after cursor = %+v, %v", l, err)
	}
	st, err := r.SessionStatsFor(ctx, id, "dsh")
	if err != nil || st.MailCount != 2 || st.Unread != 1 || st.LastMailID != f.reply || st.LastSnippet != "Fixed." {
		t.Fatalf("SessionStatsFor = %+v, %v", st, err)
	}
	if ws, err := r.LatestWorkspace(ctx, "dsh"); err != nil || ws != "/src/app" {
		t.Fatalf("LatestWorkspace = %q, %v", ws, err)
	}
	members, err := r.SessionMembersOf(ctx, "ann", 5)
	if err != nil || len(members) != 3 || members[0].Alias != "leak" {
		t.Fatalf("SessionMembersOf = %+v, %v", members, err)
	}
}

func TestQueriesEvents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	var ids []int64
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		for _, who := range []string{"dsh", "ann", "dsh"} {
			id, err := q.InsertEvent(ctx, who, "new_mail", []byte(`{"to":"`+who+`"}`), at(1))
			must(t, err)
			ids = append(ids, id)
		}
		return q.SetEventData(ctx, ids[2], []byte(`{"rewritten":true}`))
	})
	if max, err := r.MaxEventID(ctx); err != nil || max != ids[2] {
		t.Fatalf("MaxEventID = %d, %v", max, err)
	}
	if evs, err := r.EventsAfter(ctx, ids[0], 10); err != nil || len(evs) != 2 || evs[0].Recipient != "ann" {
		t.Fatalf("EventsAfter = %+v, %v", evs, err)
	}
	evs, err := r.RecipientEvents(ctx, "dsh", 0, ids[2], 10)
	if err != nil || len(evs) != 2 || string(evs[1].Data) != `{"rewritten":true}` || !evs[0].CreatedAt.Equal(at(1)) {
		t.Fatalf("RecipientEvents = %+v, %v", evs, err)
	}
	if d, err := r.EventData(ctx, ids[1]); err != nil || string(d) != `{"to":"ann"}` {
		t.Fatalf("EventData = %s, %v", d, err)
	}
	if _, err := r.EventData(ctx, ids[2]+100); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("EventData unknown = %v", err)
	}
}

func TestQueriesPermissionsFirstDecisionWins(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	exp := at(30)
	req := store.PermissionRow{MailID: f.reply, SessionID: f.sess.SessionID, AgentName: "dsh", Question: "run rm?", Options: `["yes","no"]`,
		Tool: "run_command", ArgsHash: "abc", Scope: "rm", RelayKey: "perm-1", ExpiresAt: &exp, CreatedAt: at(2)}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		ok, err := q.InsertPermissionRequest(ctx, req)
		if err != nil || !ok {
			t.Fatalf("InsertPermissionRequest = %v %v", ok, err)
		}
		again := req
		again.MailID = "other"
		ok, err = q.InsertPermissionRequest(ctx, again)
		if err != nil || ok {
			t.Fatalf("replayed InsertPermissionRequest = %v %v", ok, err)
		}
		return nil
	})
	if n, err := r.CountPendingPermissionsFor(ctx, "ann"); err != nil || n != 1 {
		t.Fatalf("CountPendingPermissionsFor = %d, %v", n, err)
	}
	if n, err := r.CountPendingPermissions(ctx); err != nil || n != 1 {
		t.Fatalf("CountPendingPermissions = %d, %v", n, err)
	}
	if n, err := r.CountPendingPermissionsInSession(ctx, f.sess.SessionID); err != nil || n != 1 {
		t.Fatalf("CountPendingPermissionsInSession = %d, %v", n, err)
	}
	if l, err := r.PermissionsFor(ctx, "ann", store.PermissionPending, 10); err != nil || len(l) != 1 || l[0].Decided {
		t.Fatalf("PermissionsFor pending = %+v, %v", l, err)
	}
	if l, err := r.ExpiredPermissions(ctx, at(30), 10); err != nil || len(l) != 1 {
		t.Fatalf("ExpiredPermissions = %+v, %v", l, err)
	}
	if l, err := r.ExpiredPermissions(ctx, at(29), 10); err != nil || len(l) != 0 {
		t.Fatalf("ExpiredPermissions early = %+v, %v", l, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		for i, d := range []store.PermissionDecisionRow{
			{MailID: f.reply, Decision: "一直同意", Approved: true, Always: true, DecidedBy: "ann", DecidedVia: "api", DecisionMailID: "m-d1", DecidedAt: at(5)},
			{MailID: f.reply, Decision: "no", DecidedBy: "timeout", DecidedVia: "timeout", DecisionMailID: "m-d2", DecidedAt: at(30)},
		} {
			ok, err := q.InsertPermissionDecision(ctx, d)
			if err != nil || ok != (i == 0) {
				t.Fatalf("InsertPermissionDecision #%d = %v %v", i, ok, err)
			}
		}
		return nil
	})
	p, err := r.GetPermission(ctx, f.reply)
	if err != nil || !p.Decided || !p.Approved || !p.Always || p.DecidedBy != "ann" || !p.DecidedAt.Equal(at(5)) || !p.ExpiresAt.Equal(exp) {
		t.Fatalf("GetPermission = %+v, %v", p, err)
	}
	if p, err := r.PermissionByRelayKey(ctx, "dsh", "perm-1"); err != nil || p.MailID != f.reply {
		t.Fatalf("PermissionByRelayKey = %+v, %v", p, err)
	}
	if m, err := r.PermissionsByMail(ctx, []string{f.reply, f.mail}); err != nil || len(m) != 1 {
		t.Fatalf("PermissionsByMail = %+v, %v", m, err)
	}
	if l, err := r.PermissionsFor(ctx, "ann", store.PermissionDecided, 10); err != nil || len(l) != 1 {
		t.Fatalf("PermissionsFor decided = %+v, %v", l, err)
	}
	if n, err := r.CountPendingPermissionsFor(ctx, "ann"); err != nil || n != 0 {
		t.Fatalf("CountPendingPermissionsFor after decision = %d, %v", n, err)
	}
	if l, err := r.ExpiredPermissions(ctx, at(40), 10); err != nil || len(l) != 0 {
		t.Fatalf("ExpiredPermissions after decision = %+v, %v", l, err)
	}

	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		for i, g := range []store.GrantRow{
			{GrantID: "g1", AgentName: "dsh", Tool: "run_command", Scope: "rm", SessionID: f.sess.SessionID, GrantedBy: "ann", MailID: f.reply, CreatedAt: at(5)},
			{GrantID: "g2", AgentName: "dsh", Tool: "run_command", Scope: "rm", GrantedBy: "ann", CreatedAt: at(6)},
		} {
			ok, err := q.InsertGrant(ctx, g)
			if err != nil || ok != (i == 0) {
				t.Fatalf("InsertGrant #%d = %v %v", i, ok, err)
			}
		}
		return nil
	})
	if l, err := r.Grants(ctx, store.GrantFilter{AgentName: "dsh", Tool: "run_command", Scope: "rm", GrantedBy: "ann"}); err != nil || len(l) != 1 {
		t.Fatalf("Grants = %+v, %v", l, err)
	}
	if l, err := r.Grants(ctx, store.GrantFilter{GrantedBy: "stranger"}); err != nil || len(l) != 0 {
		t.Fatalf("Grants for a stranger = %+v, %v", l, err)
	}
	if g, err := r.GetGrant(ctx, "g1"); err != nil || !g.CreatedAt.Equal(at(5)) {
		t.Fatalf("GetGrant = %+v, %v", g, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		ok, err := q.DeleteGrant(ctx, "g1")
		if err != nil || !ok {
			t.Fatalf("DeleteGrant = %v %v", ok, err)
		}
		return nil
	})
}

func TestQueriesAttachments(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		for i, id := range []string{"a1", "a2"} {
			must(t, q.InsertAttachment(ctx, store.AttachmentRow{AttachmentID: id, SHA256: "sum", Size: int64(5 << 30), Filename: "x.log",
				ContentType: "text/plain", Uploader: "ann", UploaderKind: store.KindPerson, CreatedAt: at(i)}))
		}
		return q.LinkAttachments(ctx, f.mail, []string{"a1"})
	})
	if a, err := r.GetAttachment(ctx, "a1"); err != nil || a.Size != 5<<30 {
		t.Fatalf("GetAttachment = %+v, %v (sizes beyond 32 bits must survive)", a, err)
	}
	if m, err := r.AttachmentsByID(ctx, []string{"a1", "a2", "a3"}); err != nil || len(m) != 2 {
		t.Fatalf("AttachmentsByID = %+v, %v", m, err)
	}
	for who, want := range map[string]bool{"ann": true, "dsh": true, "stranger": false} {
		if ok, err := r.CanFetchAttachment(ctx, "a1", who); err != nil || ok != want {
			t.Fatalf("CanFetchAttachment(a1, %s) = %v %v", who, ok, err)
		}
	}
	if ok, err := r.CanFetchAttachment(ctx, "a2", "dsh"); err != nil || ok {
		t.Fatalf("CanFetchAttachment of an unsent upload by another = %v %v", ok, err)
	}
	if l, err := r.UnsentAttachmentsBefore(ctx, at(60), 10); err != nil || len(l) != 1 || l[0].AttachmentID != "a2" {
		t.Fatalf("UnsentAttachmentsBefore = %+v, %v", l, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		for id, want := range map[string]bool{"a1": false, "a2": true} {
			ok, err := q.DeleteUnsentAttachment(ctx, id)
			if err != nil || ok != want {
				t.Fatalf("DeleteUnsentAttachment(%s) = %v %v", id, ok, err)
			}
		}
		return nil
	})
	if ok, err := r.SHA256Referenced(ctx, "sum"); err != nil || !ok {
		t.Fatalf("SHA256Referenced = %v %v", ok, err)
	}
}

func TestQueriesRuns(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	code := 0
	end := at(9)
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		must(t, q.UpsertRun(ctx, store.RunRow{RunID: "r1", SessionID: f.sess.SessionID, AgentName: "dsh", State: "running", StartedAt: at(1), UpdatedAt: at(1)}))
		return q.UpsertRun(ctx, store.RunRow{RunID: "r1", SessionID: f.sess.SessionID, AgentName: "dsh", State: "finished", ExitCode: &code,
			StartedAt: at(1), EndedAt: &end, DurationMS: 480000, BytesRead: 1 << 40, UpdatedAt: at(9)})
	})
	run, err := r.GetRun(ctx, "r1")
	if err != nil || run.State != "finished" || run.ExitCode == nil || *run.ExitCode != 0 || run.BytesRead != 1<<40 || !run.EndedAt.Equal(end) {
		t.Fatalf("GetRun = %+v, %v", run, err)
	}
	if l, err := r.SessionRuns(ctx, f.sess.SessionID, 5); err != nil || len(l) != 1 {
		t.Fatalf("SessionRuns = %+v, %v", l, err)
	}
	if st, err := r.SessionStatsFor(ctx, f.sess.SessionID, "ann"); err != nil || st.RunState != "finished" {
		t.Fatalf("SessionStatsFor run state = %+v, %v", st, err)
	}
}

func TestQueriesSchedulesClaimOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	s := store.ScheduleRow{ScheduleID: "s1", Owner: "ann", OwnerKind: store.KindPerson, Title: "Standup", EventTime: at(30),
		RemindBeforeMinutes: 10, RemindAt: at(20), Recipients: `[]`, CreatedAt: at(0), UpdatedAt: at(0)}
	write(t, f.st, func(ctx context.Context, q *store.Q) error { return q.InsertSchedule(ctx, s) })
	if n, err := r.CountSchedulesOf(ctx, "ann"); err != nil || n != 1 {
		t.Fatalf("CountSchedulesOf = %d, %v", n, err)
	}
	if l, err := r.DueSchedules(ctx, at(19), 10); err != nil || len(l) != 0 {
		t.Fatalf("DueSchedules early = %+v, %v", l, err)
	}
	if l, err := r.DueSchedules(ctx, at(20), 10); err != nil || len(l) != 1 {
		t.Fatalf("DueSchedules = %+v, %v", l, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		for i, want := range []bool{true, false} {
			ok, err := q.ClaimSchedule(ctx, "s1", "m-rem", at(20))
			if err != nil || ok != want {
				t.Fatalf("ClaimSchedule #%d = %v %v", i, ok, err)
			}
		}
		return q.SetScheduleMail(ctx, "s1", "m-rem-2")
	})
	got, err := r.GetSchedule(ctx, "s1")
	if err != nil || got.SentAt == nil || got.MailID != "m-rem-2" {
		t.Fatalf("GetSchedule = %+v, %v", got, err)
	}
	s.Title, s.RemindAt, s.UpdatedAt = "Standup moved", at(40), at(21)
	write(t, f.st, func(ctx context.Context, q *store.Q) error { return q.UpdateSchedule(ctx, s, true) })
	if l, err := r.SchedulesOf(ctx, "ann"); err != nil || len(l) != 1 || l[0].SentAt != nil || l[0].Title != "Standup moved" {
		t.Fatalf("SchedulesOf after re-arming = %+v, %v", l, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		ok, err := q.DeleteSchedule(ctx, "s1")
		if err != nil || !ok {
			t.Fatalf("DeleteSchedule = %v %v", ok, err)
		}
		return nil
	})
}

func TestQueriesBulkInsertMailsCountsUnread(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var mails []store.MailRow
	var recips []store.RecipientRow
	for i := 0; i < 1203; i++ { // more than two multi-row statements
		id := store.NewID()
		mails = append(mails, store.MailRow{MailID: id, SessionID: f.sess.SessionID, FromName: "ann", FromKind: store.KindPerson,
			FromAddress: "ann@.fix-leak", Subject: "bulk", Body: "b", MailType: "normal", CreatedAt: at(10)})
		recips = append(recips, store.RecipientRow{MailID: id, Name: "dsh", Kind: store.KindAgent, Role: "to",
			Address: "dsh@/src/app.fix-leak", Workspace: "/src/app", Read: i%3 == 0})
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error { return q.BulkInsertMails(ctx, mails, recips) })
	// 1 unread from the fixture plus the 802 of 1203 not marked read.
	if n, err := f.st.Read().Unread(ctx, "dsh"); err != nil || n != 1+802 {
		t.Fatalf("Unread after the bulk insert = %d, %v; want 803", n, err)
	}
	if in, err := f.st.Read().Inbox(ctx, "dsh", store.InboxAll, 2000, ""); err != nil || len(in) != 1204 {
		t.Fatalf("Inbox after the bulk insert = %d mails, %v; want 1204", len(in), err)
	}
}
