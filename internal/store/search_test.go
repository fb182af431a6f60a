package store_test

import (
	"context"
	"fmt"
	"strings"
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
		got, err := st.Read().SearchCandidates(ctx, search.Compile(q, viewer, nil, search.CompileOptions{}).Tiers[0], viewer, store.SearchFilter{}, 10)
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

// Index rows written before migration 0049 (without character pairs) are
// written again with them in the background when the store opens with
// search_state.pairs_done false; until then the search asks for the
// characters' phrase and finds the mail all along, then for the pairs
// (SearchPairs). SQLite needs no pairs and has them from the start.
func TestSearchIndexesPairsOfRowsWrittenBefore(t *testing.T) {
	ctx := context.Background()
	opt := store.Options{DataDir: t.TempDir(), DatabaseURL: storetest.DatabaseURL(t)}
	st, err := store.Open(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !st.SearchPairs() {
		t.Fatal("a new store does not search by pairs")
	}
	now := time.Now()
	sess := store.SessionRow{SessionID: store.NewID(), Alias: "pairs", AliasSource: "manual", CreatedBy: "ann", CreatedByKind: store.KindPerson, CreatedAt: now, LastActivity: now}
	var mails []store.MailRow
	for i, body := range []string{"数据库迁移完成", "数据和据库", "别的"} {
		mails = append(mails, store.MailRow{MailID: store.NewID(), SessionID: sess.SessionID, FromName: "ann", FromKind: store.KindPerson, FromAddress: "ann",
			Subject: []string{"第一", "第二", "第三"}[i], Body: body, MailType: "normal", CreatedAt: now})
	}
	err = st.Write(ctx, func(q *store.Q) error {
		if err := q.InsertSession(ctx, sess); err != nil {
			return err
		}
		for _, m := range mails {
			if err := q.InsertMail(ctx, m); err != nil {
				return err
			}
			if err := q.InsertRecipient(ctx, store.RecipientRow{MailID: m.MailID, Name: "claude", Kind: store.KindAgent, Role: "to", Address: "claude@/srv.pairs"}); err != nil {
				return err
			}
			if err := q.IndexMail(ctx, m.MailID, m.CreatedAt, search.Doc{Subject: m.Subject, Body: m.Body, Sender: "ann", From: "ann", To: []string{"claude"}, SessionID: sess.SessionID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	find := func(st *store.Store, text string) []string {
		t.Helper()
		q, err := search.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Read().SearchCandidates(ctx, search.Compile(q, "claude", nil, search.CompileOptions{Pairs: st.SearchPairs()}).Tiers[0], "claude", store.SearchFilter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.MailID)
		}
		return ids
	}
	// On PostgreSQL the index answers the conjunction of 数据库's pairs
	// (the second mail too, which the gateway's check drops); FTS5 the
	// phrase.
	want := []string{mails[0].MailID}
	if storetest.Postgres() {
		want = []string{mails[1].MailID, mails[0].MailID}
	}
	if got := find(st, "数据库"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("数据库: %v, want %v", got, want)
	}
	if !storetest.Postgres() {
		st.Close()
		return
	}
	// As an index written before the pairs: the pair lexemes removed, the
	// state as migration 0049 leaves it.
	err = st.Write(ctx, func(q *store.Q) error {
		if _, err := q.Exec(ctx, `UPDATE search_docs SET tsv = ts_delete(tsv, ARRAY(
			SELECT lexeme FROM unnest(tsv) u WHERE char_length(regexp_replace(u.lexeme, '^h:', '')) = 2 AND u.lexeme !~ '[a-z0-9]'))`); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `UPDATE search_state SET pairs_done = FALSE, pairs_through = 0`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var lexemes int
	if err := st.Read().QueryRow(ctx, `SELECT count(*) FROM search_docs d, unnest(d.tsv) u WHERE u.lexeme IN ('数据', '迁移', 'h:数据')`).Scan(&lexemes); err != nil || lexemes != 0 {
		t.Fatalf("pairs left: %d, %v", lexemes, err)
	}
	if got := find(st, "迁移"); len(got) != 0 {
		t.Fatalf("an index without pairs answers the pair: %v", got)
	}
	st.Close()
	defer store.SetPairsBatch(2)() // two batches and the last, empty one
	if st, err = store.Open(ctx, opt); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Meanwhile (and after) every mail is found.
	deadline := time.Now().Add(20 * time.Second)
	for {
		ready := st.SearchPairs()
		if got := find(st, "迁移"); len(got) != 1 || got[0] != mails[0].MailID {
			t.Fatalf("迁移 (pairs %v): %v", ready, got)
		}
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pairs are not indexed after 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var done bool
	if err := st.Read().QueryRow(ctx, `SELECT pairs_done FROM search_state`).Scan(&done); err != nil || !done {
		t.Fatalf("pairs_done = %v, %v", done, err)
	}
	if err := st.Read().QueryRow(ctx, `SELECT count(*) FROM search_docs d, unnest(d.tsv) u WHERE u.lexeme IN ('数据', '迁移', 'h:第一')`).Scan(&lexemes); err != nil || lexemes != 4 { // 数据 twice
		t.Fatalf("pair lexemes after the indexing: %d, %v", lexemes, err)
	}
}

// A search answers the same newest-first matches whether they lie in the
// rows PostgreSQL walks or in the older ones it asks the GIN index for:
// with a first walk of 3 rows, matches among the newest, only among older
// ones, across both, after a cursor, unread only, and none.
func TestSearchCandidatesWalkThenIndex(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	defer store.SetSearchWalkRows(3)()
	now := time.Now()
	sess := store.SessionRow{SessionID: store.NewID(), Alias: "walk", AliasSource: "manual", CreatedBy: "ann", CreatedByKind: store.KindPerson, CreatedAt: now, LastActivity: now}
	// Oldest first: which of 12 mails say what.
	bodies := []string{"common rare", "common", "common", "rare", "common", "common", "common", "common", "common rare", "common", "common rare", "common"}
	var ids []string
	err := st.Write(ctx, func(q *store.Q) error {
		ids = nil
		if err := q.InsertSession(ctx, sess); err != nil {
			return err
		}
		for i, body := range bodies {
			m := store.MailRow{MailID: store.NewID(), SessionID: sess.SessionID, FromName: "ann", FromKind: store.KindPerson, FromAddress: "ann",
				Subject: "s", Body: body, MailType: "normal", CreatedAt: now.Add(time.Duration(i) * time.Second)}
			if err := q.InsertMail(ctx, m); err != nil {
				return err
			}
			if err := q.InsertRecipient(ctx, store.RecipientRow{MailID: m.MailID, Name: "claude", Kind: store.KindAgent, Role: "to",
				Address: "claude@/srv.walk", Read: i%2 == 0}); err != nil {
				return err
			}
			if err := q.IndexMail(ctx, m.MailID, m.CreatedAt, search.Doc{Subject: m.Subject, Body: body, Sender: "ann", From: "ann", To: []string{"claude"}, SessionID: sess.SessionID}); err != nil {
				return err
			}
			ids = append(ids, m.MailID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	find := func(text string, f store.SearchFilter, limit int) string {
		t.Helper()
		q, err := search.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Read().SearchCandidates(ctx, search.Compile(q, "claude", nil, search.CompileOptions{Pairs: true}).Tiers[0], "claude", f, limit)
		if err != nil {
			t.Fatal(err)
		}
		var idx []string
		for _, c := range got {
			for i, id := range ids {
				if id == c.MailID {
					idx = append(idx, fmt.Sprint(i))
				}
			}
		}
		return strings.Join(idx, ",")
	}
	cursorOf := func(text string, limit int) int64 {
		t.Helper()
		q, _ := search.Parse(text)
		got, err := st.Read().SearchCandidates(ctx, search.Compile(q, "claude", nil, search.CompileOptions{}).Tiers[0], "claude", store.SearchFilter{}, limit)
		if err != nil || len(got) != limit {
			t.Fatalf("cursor of %q: %v, %v", text, got, err)
		}
		return got[limit-1].DocID
	}
	for _, c := range []struct {
		q     string
		f     store.SearchFilter
		limit int
		want  string
	}{
		{"common", store.SearchFilter{}, 2, "11,10"},                            // in the walk
		{"rare", store.SearchFilter{}, 10, "10,8,3,0"},                          // one in the first walk, then walking on
		{"common", store.SearchFilter{}, 5, "11,10,9,8,7"},                      // walking on
		{"rare", store.SearchFilter{BeforeDoc: cursorOf("rare", 2)}, 10, "3,0"}, // none in the walk: the index
		{"common", store.SearchFilter{Unread: true}, 4, "11,9,7,5"},             // odd ones unread
		{"rare", store.SearchFilter{Unread: true}, 4, "3"},
		{"nothing", store.SearchFilter{}, 4, ""},
	} {
		if got := find(c.q, c.f, c.limit); got != c.want {
			t.Errorf("%q %+v limit %d: %s, want %s", c.q, c.f, c.limit, got, c.want)
		}
	}
}
