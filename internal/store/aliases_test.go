package store_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/agentmail/agentmail/internal/store"
)

// Former aliases (migration 0031, issue 14): a rename keeps the old alias,
// which still finds the session and is never free for another one; taking
// a former alias back makes it current again, never both.
func TestQueriesFormerAliases(t *testing.T) {
	f := newFixture(t)
	id := f.sess.SessionID
	other := store.SessionRow{SessionID: store.NewID(), Alias: "other", AliasSource: store.AliasSubject, Subject: "Other",
		AgentName: "dsh", Workspace: "/src/app", CreatedBy: "ann", CreatedByKind: store.KindPerson, CreatedAt: at(0), LastActivity: at(0)}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		must(t, q.InsertSession(ctx, other))
		must(t, q.RenameSession(ctx, id, "fix-leak", "witty-planet", store.AliasPlatformSlug, at(3)))
		return q.RenameSession(ctx, id, "witty-planet", "leak", store.AliasManual, at(4))
	})
	ctx := context.Background()
	r := f.st.Read()
	if got, err := r.FormerAliases(ctx, id); err != nil || !reflect.DeepEqual(got, []string{"fix-leak", "witty-planet"}) {
		t.Fatalf("FormerAliases = %v, %v; want the two replaced aliases, oldest first", got, err)
	}
	if got, err := r.FormerAliases(ctx, other.SessionID); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("FormerAliases of a session never renamed = %#v, %v; want an empty list", got, err)
	}
	for alias, wantFormer := range map[string]bool{"leak": false, "fix-leak": true, "witty-planet": true} {
		s, former, err := r.SessionByAnyAlias(ctx, alias)
		if err != nil || s.SessionID != id || s.Alias != "leak" || s.AliasSource != store.AliasManual || former != wantFormer {
			t.Errorf("SessionByAnyAlias(%q) = %s %q %q former=%v, %v; want the session (alias leak), former=%v",
				alias, s.SessionID, s.Alias, s.AliasSource, former, err, wantFormer)
		}
	}
	if _, _, err := r.SessionByAnyAlias(ctx, "never-used"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SessionByAnyAlias(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := r.SessionByAlias(ctx, "fix-leak"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SessionByAlias(former) = %v; it answers current aliases only", err)
	}
	for _, c := range []struct {
		alias, except string
		taken         bool
	}{
		{"fix-leak", other.SessionID, true}, // a former alias is not free for another session
		{"leak", other.SessionID, true},
		{"fix-leak", id, false}, // the session itself may take it back
		{"leak", id, false},
		{"free", other.SessionID, false},
	} {
		if got, err := r.AliasTaken(ctx, c.alias, c.except); err != nil || got != c.taken {
			t.Errorf("AliasTaken(%q, except %s) = %v, %v; want %v", c.alias, c.except, got, err, c.taken)
		}
		// AliasesTaken answers the same for many candidates at once.
		got, err := r.AliasesTaken(ctx, []string{c.alias, "free-too"}, c.except)
		if err != nil || got[c.alias] != c.taken || got["free-too"] {
			t.Errorf("AliasesTaken([%q free-too], except %s) = %v, %v; want %q taken=%v only", c.alias, c.except, got, err, c.alias, c.taken)
		}
	}
	if got, err := r.AliasesTaken(ctx, []string{"leak", "fix-leak", "other", "witty-planet", "free"}, ""); err != nil ||
		!reflect.DeepEqual(got, map[string]bool{"leak": true, "fix-leak": true, "other": true, "witty-planet": true}) {
		t.Errorf("AliasesTaken(current and former, except none) = %v, %v", got, err)
	}
	// Taking a former alias back: it is current, the replaced one former.
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		return q.RenameSession(ctx, id, "leak", "fix-leak", store.AliasManual, at(5))
	})
	if got, err := r.FormerAliases(ctx, id); err != nil || !reflect.DeepEqual(got, []string{"witty-planet", "leak"}) {
		t.Fatalf("FormerAliases after taking fix-leak back = %v, %v", got, err)
	}
	if s, former, err := r.SessionByAnyAlias(ctx, "fix-leak"); err != nil || former || s.Alias != "fix-leak" {
		t.Fatalf("SessionByAnyAlias(fix-leak) = %q former=%v, %v; want it current", s.Alias, former, err)
	}
	// The same alias only changes the source and keeps no history entry.
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		return q.RenameSession(ctx, id, "fix-leak", "fix-leak", store.AliasPlatformSlug, at(6))
	})
	if s, err := r.GetSession(ctx, id); err != nil || s.Alias != "fix-leak" || s.AliasSource != store.AliasPlatformSlug {
		t.Fatalf("GetSession = %q %q, %v", s.Alias, s.AliasSource, err)
	}
	if got, _ := r.FormerAliases(ctx, id); len(got) != 2 {
		t.Fatalf("FormerAliases after a source change = %v, want unchanged", got)
	}
}

// The first turn of a session's agent ends with its relayed answer or
// failure report, or when a run for a second mail starts; the agent's own
// mails during the turn do not end it.
func TestQueriesFirstTurnEnded(t *testing.T) {
	f := newFixture(t) // holds a relayed answer of dsh
	ctx := context.Background()
	ended := func(sessionID string) bool {
		t.Helper()
		got, err := f.st.Read().FirstTurnEnded(ctx, sessionID, "dsh", "summary", "failure_report")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if !ended(f.sess.SessionID) {
		t.Fatal("a session with the agent's relayed answer: first turn not ended")
	}
	fresh := store.SessionRow{SessionID: store.NewID(), Alias: "fresh", AliasSource: store.AliasSubject, Subject: "Fresh",
		AgentName: "dsh", Workspace: "/src/app", CreatedBy: "ann", CreatedByKind: store.KindPerson, CreatedAt: at(0), LastActivity: at(0)}
	first, second := store.NewID(), store.NewID()
	run := func(mailID string, n int) store.RunRow {
		return store.RunRow{RunID: store.NewID(), SessionID: fresh.SessionID, MailID: mailID, AgentName: "dsh", State: "finished",
			Attempt: n, StartedAt: at(n), UpdatedAt: at(n)}
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		must(t, q.InsertSession(ctx, fresh))
		must(t, q.InsertMail(ctx, store.MailRow{MailID: first, SessionID: fresh.SessionID, FromName: "ann", FromKind: store.KindPerson,
			FromAddress: "ann@.fresh", Subject: "Fresh", Body: "go", MailType: "normal", CreatedAt: at(1)}))
		// Two attempts of the first mail, and a mail the model wrote itself.
		must(t, q.UpsertRun(ctx, run(first, 1)))
		must(t, q.UpsertRun(ctx, run(first, 2)))
		return q.InsertMail(ctx, store.MailRow{MailID: store.NewID(), SessionID: fresh.SessionID, ParentMailID: first, FromName: "dsh",
			FromKind: store.KindAgent, FromAddress: "dsh@/src/app.fresh", Subject: "Re: Fresh", Body: "on it", MailType: "normal", CreatedAt: at(2)})
	})
	if ended(fresh.SessionID) {
		t.Fatal("the first turn (two attempts of one mail, a mail the model wrote) counts as ended")
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		return q.UpsertRun(ctx, run(second, 3))
	})
	if !ended(fresh.SessionID) {
		t.Fatal("a run for a second mail started: the first turn must count as ended")
	}
	failed := store.SessionRow{SessionID: store.NewID(), Alias: "failed", AliasSource: store.AliasSubject, Subject: "Failed",
		AgentName: "dsh", Workspace: "/src/app", CreatedBy: "ann", CreatedByKind: store.KindPerson, CreatedAt: at(0), LastActivity: at(0)}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		must(t, q.InsertSession(ctx, failed))
		return q.InsertMail(ctx, store.MailRow{MailID: store.NewID(), SessionID: failed.SessionID, FromName: "dsh", FromKind: store.KindAgent,
			FromAddress: "dsh@/src/app.failed", Subject: "处理失败: Failed", Body: "no model", MailType: "failure_report", CreatedAt: at(1)})
	})
	if !ended(failed.SessionID) {
		t.Fatal("a failure report: the first turn must count as ended")
	}
}
