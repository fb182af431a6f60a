package gateway

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// The candidates a page checks are bounded: with many mails that hold the
// pairs of 数据库 but not the word, a page stops after searchMaxChecked
// of them with the hits it has and a next_cursor, and following the
// cursors still finds the mail with the word, once. (On SQLite the index
// answers the phrase itself and one page finds it.)
func TestSearchBoundsTheCandidatesAPageChecks(t *testing.T) {
	e := newServiceEnv(t)
	defer func(n int) { searchMaxChecked = n }(searchMaxChecked)
	searchMaxChecked = 4
	send := func(body string) string {
		t.Helper()
		r, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "x", Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return r.MailID
	}
	word := send("数据库")
	for i := 0; i < 10; i++ {
		send("数据 据库")
	}
	var pages []string
	cursor := ""
	for len(pages) < 10 {
		res, err := e.svc.Search(e.ctx, e.bot, SearchRequest{Q: "数据库", Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.Mail.MailID)
		}
		pages = append(pages, strings.Join(ids, ","))
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	want := []string{word}
	if storetest.Postgres() {
		// Page 1 checks 3 (limit+1), 3 more, and stops at the bound with
		// none; page 2 checks the last 4 without the word and the word.
		want = []string{"", word}
	}
	if strings.Join(pages, "|") != strings.Join(want, "|") {
		t.Fatalf("pages %q, want %q", pages, want)
	}
}
