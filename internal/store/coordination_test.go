package store_test

import (
	"context"
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
