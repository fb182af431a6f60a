package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/search"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// Mails stored without an index row (before migration 0040) are indexed
// when the store opens with search_state.backfilled false, once; the
// search then finds them for their parties only, on both databases.
func TestSearchBackfillsMailsStoredBeforeTheIndex(t *testing.T) {
	ctx := context.Background()
	opt := store.Options{DataDir: t.TempDir(), DatabaseURL: storetest.DatabaseURL(t)}
	st, err := store.Open(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sess := store.SessionRow{SessionID: store.NewID(), Alias: "old-one", AliasSource: "manual", CreatedBy: "ann", CreatedByKind: store.KindPerson, CreatedAt: now, LastActivity: now}
	old := store.MailRow{MailID: store.NewID(), SessionID: sess.SessionID, FromName: "ann", FromKind: store.KindPerson, FromAddress: "ann",
		Subject: "旧邮件 legacy", Body: "服务部署完成", MailType: "normal", CreatedAt: now}
	err = st.Write(ctx, func(q *store.Q) error {
		if err := q.InsertSession(ctx, sess); err != nil {
			return err
		}
		if err := q.InsertMail(ctx, old); err != nil {
			return err
		}
		if err := q.InsertRecipient(ctx, store.RecipientRow{MailID: old.MailID, Name: "claude", Kind: store.KindAgent, Role: "to", Address: "claude@/srv.old-one"}); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `UPDATE search_state SET backfilled = FALSE`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	find := func(st *store.Store, viewer, text string) int {
		t.Helper()
		q, err := search.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Read().SearchCandidates(ctx, search.Compile(q, viewer, nil, false).Tiers[0], viewer, store.SearchFilter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	if n := find(st, "claude", "部署"); n != 0 {
		t.Fatalf("found %d before the backfill", n)
	}
	st.Close()
	if st, err = store.Open(ctx, opt); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for viewer, want := range map[string]int{"claude": 1, "ann": 1, "bob": 0} {
		if n := find(st, viewer, "部署 legacy"); n != want {
			t.Errorf("%s finds %d, want %d", viewer, n, want)
		}
	}
	var done bool
	if err := st.Read().QueryRow(ctx, `SELECT backfilled FROM search_state`).Scan(&done); err != nil || !done {
		t.Fatalf("backfilled = %v, %v", done, err)
	}
}
