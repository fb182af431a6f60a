package store_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// ReservationsNear finds the reservations of a workspace, of the
// directories above it and of those below it, never of a sibling whose
// name merely starts the same.
func TestReservationsNearAncestorsAndDescendants(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	now := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	for i, ws := range []string{"/w/repo", "/w", "/w/repo/sub/deep", "/w/repository", "/w/repo_x", "/other"} {
		err := st.Write(ctx, func(q *store.Q) error {
			_, err := q.PutReservation(ctx, store.ReservationRow{ReservationID: store.NewID(), Workspace: ws, Pattern: "a",
				AgentName: "agent" + string(rune('a'+i)), Exclusive: true, TTL: time.Hour, CreatedAt: now, RenewedAt: now, ExpiresAt: now.Add(time.Hour)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rows, err := st.Read().ReservationsNear(ctx, "/w/repo")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Workspace)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "/w /w/repo /w/repo/sub/deep" {
		t.Fatalf("near /w/repo: %v", got)
	}
}

// Every query of coordination.go, run once on the test database (with
// AGENTMAIL_TEST_DATABASE=postgres, on PostgreSQL too), on the fixture of
// postgres_queries_test.go: ann → dsh, dsh → ann.
func TestQueriesCoordination(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.st.Read()
	// Importance and acknowledgements.
	urgent := store.NewID()
	due := at(60)
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		must(t, q.InsertMail(ctx, store.MailRow{MailID: urgent, SessionID: f.sess.SessionID, FromName: "ann", FromKind: store.KindPerson,
			FromAddress: "ann@.fix-leak", Subject: "Now", Body: "b", MailType: "normal", CreatedAt: at(3),
			Importance: store.ImportanceUrgent, AckRequired: true, AckDueAt: &due}))
		must(t, q.InsertRecipient(ctx, store.RecipientRow{MailID: urgent, Name: "dsh", Kind: store.KindAgent, Role: "to",
			Address: "dsh@/src/app.fix-leak", Workspace: "/src/app", Importance: store.ImportanceUrgent}))
		return q.InsertAcks(ctx, urgent, "ann", []string{"dsh"}, due)
	})
	got, err := r.InboxFiltered(ctx, "dsh", store.InboxAll, store.ImportanceFilter{Ranks: []int{store.ImportanceUrgent}, ByImportance: true}, 10, "")
	if err != nil || len(got) != 1 || got[0].MailID != urgent || !got[0].AckRequired || got[0].AckDueAt == nil || !got[0].AckDueAt.Equal(due) {
		t.Fatalf("InboxFiltered = %+v, %v", got, err)
	}
	all, err := r.InboxFiltered(ctx, "dsh", store.InboxAll, store.ImportanceFilter{ByImportance: true, CursorRank: store.ImportanceUrgent}, 10, urgent)
	if err != nil || len(all) != 1 || all[0].MailID != f.mail {
		t.Fatalf("InboxFiltered after the cursor = %+v, %v", all, err)
	}
	if open, err := r.OpenAcks(ctx, "ann", true, at(61), 10); err != nil || len(open) != 1 || open[0].Name != "dsh" {
		t.Fatalf("OpenAcks overdue = %+v, %v", open, err)
	}
	if open, err := r.OpenAcks(ctx, "dsh", false, time.Time{}, 10); err != nil || len(open) != 1 {
		t.Fatalf("OpenAcks owed = %+v, %v", open, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		row, first, err := q.Acknowledge(ctx, urgent, "dsh", at(5))
		if err != nil || !first || row.AckedAt == nil || !row.AckedAt.Equal(at(5)) {
			t.Fatalf("Acknowledge = %+v %v %v", row, first, err)
		}
		if _, first, err := q.Acknowledge(ctx, urgent, "dsh", at(6)); err != nil || first {
			t.Fatalf("second Acknowledge = %v %v", first, err)
		}
		if _, _, err := q.Acknowledge(ctx, urgent, "ann", at(6)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Acknowledge by a non-recipient = %v", err)
		}
		return nil
	})
	if acks, err := r.AcksOf(ctx, []string{urgent, f.mail}); err != nil || len(acks[urgent]) != 1 || len(acks[f.mail]) != 0 {
		t.Fatalf("AcksOf = %+v, %v", acks, err)
	}
	if ms, err := r.MailsByID(ctx, []string{urgent, "nope"}); err != nil || len(ms) != 1 || ms[urgent].Importance != store.ImportanceUrgent {
		t.Fatalf("MailsByID = %+v, %v", ms, err)
	}
	// Reservations.
	var id string
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		var err error
		id, err = q.PutReservation(ctx, store.ReservationRow{ReservationID: store.NewID(), Workspace: "/src/app", Pattern: "src/**",
			AgentName: "dsh", SessionID: f.sess.SessionID, Exclusive: true, Reason: "r", TTL: time.Hour, CreatedAt: at(0), RenewedAt: at(0), ExpiresAt: at(60)})
		must(t, err)
		again, err := q.PutReservation(ctx, store.ReservationRow{ReservationID: store.NewID(), Workspace: "/src/app", Pattern: "src/**",
			AgentName: "dsh", Exclusive: false, TTL: time.Hour, CreatedAt: at(1), RenewedAt: at(1), ExpiresAt: at(61)})
		if err != nil || again != id {
			t.Fatalf("PutReservation again = %q, %v; want the same id %q", again, err, id)
		}
		return q.RenewReservation(ctx, id, 2*time.Hour, at(2))
	})
	res, err := r.GetReservation(ctx, id)
	if err != nil || res.Exclusive || !res.ExpiresAt.Equal(at(122)) || res.TTL != 2*time.Hour || !res.CreatedAt.Equal(at(0)) {
		t.Fatalf("GetReservation = %+v, %v", res, err)
	}
	if l, err := r.ReservationsOf(ctx, "dsh", ""); err != nil || len(l) != 1 {
		t.Fatalf("ReservationsOf = %+v, %v", l, err)
	}
	if n, err := r.CountReservationsOf(ctx, "dsh"); err != nil || n != 1 {
		t.Fatalf("CountReservationsOf = %d, %v", n, err)
	}
	if l, err := r.StaleReservations(ctx, at(10), at(-5), 10); err != nil || len(l) != 0 {
		t.Fatalf("StaleReservations before the end = %+v, %v", l, err)
	}
	if l, err := r.StaleReservations(ctx, at(200), at(-5), 10); err != nil || len(l) != 1 {
		t.Fatalf("StaleReservations after the expiry = %+v, %v", l, err)
	}
	if ok, err := r.TakesPartInWorkspace(ctx, "ann", "", store.Ancestors("/src/app/sub")); err != nil || !ok {
		t.Fatalf("TakesPartInWorkspace(ann, below) = %v, %v", ok, err)
	}
	if ok, err := r.TakesPartInWorkspace(ctx, "ann", f.sess.SessionID, store.Ancestors("/src")); err != nil || ok {
		t.Fatalf("TakesPartInWorkspace(ann, above) = %v, %v", ok, err)
	}
	if ws, err := r.WorkspacesOfParticipant(ctx, "ann", "", 10); err != nil || len(ws) != 1 || ws[0] != "/src/app" {
		t.Fatalf("WorkspacesOfParticipant = %v, %v", ws, err)
	}
	write(t, f.st, func(ctx context.Context, q *store.Q) error {
		n, err := q.DeleteReservations(ctx, []string{id, "nope"})
		if err != nil || n != 1 {
			t.Fatalf("DeleteReservations = %d, %v", n, err)
		}
		return nil
	})
}
