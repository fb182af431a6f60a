package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// Relevance ranks every match, however old, and pages through all of them
// with a cursor bound to its query; -word excludes; a filter without its
// value is refused; over the started binary on the database of the run
// (SQLite, or PostgreSQL with AGENTMAIL_TEST_DATABASE=postgres).
func TestSearchRanksAllMatchesAndBindsTheCursor(t *testing.T) {
	e := coSetup(t)
	_, claudeKey := e.agent("claude")
	to := "claude@" + e.repo + ".new"
	send := func(subject, body string) string {
		t.Helper()
		m, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: to, Subject: subject, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return m.MailID
	}
	// The best match is the oldest: its subject has the word; then more
	// newer mails than any window would rank, the word only in the body.
	runbook := send("Deploy runbook 部署手册", "how we deploy, step by step")
	const notes = 210
	for i := range notes {
		send(fmt.Sprintf("note %d", i), fmt.Sprintf("step %d: deploy the build, 服务部署 %d", i, i))
	}
	staging := send("note staging", "deploy to staging first")

	search := func(q client.SearchQuery) (*client.SearchResults, error) { return e.carol.MeSearch(e.ctx, q) }
	for _, q := range []string{"deploy", "部署"} {
		r, err := search(client.SearchQuery{Q: q, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) != 5 || r.Hits[0].Mail.MailID != runbook || r.Hits[0].Score != 3 || r.Hits[1].Score != 1 || r.NextCursor == "" {
			t.Fatalf("%q: first hit %s score %v (want the runbook %s, 3), cursor %q", q, r.Hits[0].Mail.Subject, r.Hits[0].Score, runbook, r.NextCursor)
		}
	}

	// Paging reaches every match once, the runbook first; the rest newest
	// first. A cursor is refused by another query, other filters or the
	// other order, and taken by the same query spelled with other spaces.
	seen := map[string]bool{}
	var order []string
	cursor, pages := "", 0
	for {
		r, err := search(client.SearchQuery{Q: "deploy", Limit: 50, Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		for _, h := range r.Hits {
			if seen[h.Mail.MailID] {
				t.Fatalf("page %d repeats %s", pages, h.Mail.Subject)
			}
			seen[h.Mail.MailID] = true
			order = append(order, h.Mail.MailID)
		}
		if pages == 1 {
			for _, other := range []client.SearchQuery{{Q: "build"}, {Q: "deploy from:carol"}, {Q: "deploy -staging"}, {Q: "deploy", Sort: client.SearchNewest}} {
				other.Cursor = r.NextCursor
				_, err := search(other)
				ae := client.AsAPIError(err)
				if ae == nil || ae.Status != 400 || ae.Field() != "cursor" || ae.Code() != "cursor_mismatch" || !strings.Contains(ae.Message(), "another search") {
					t.Fatalf("cursor of deploy with %+v: %v", other, err)
				}
			}
			if _, err := search(client.SearchQuery{Q: "  deploy ", Limit: 1, Cursor: r.NextCursor}); err != nil {
				t.Fatalf("the same query with other spaces: %v", err)
			}
		}
		if r.NextCursor == "" {
			break
		}
		cursor = r.NextCursor
	}
	if len(order) != notes+2 || order[0] != runbook || order[1] != staging || pages != 5 {
		t.Fatalf("%d hits in %d pages, first %s, second %s", len(order), pages, order[0], order[1])
	}

	// -word leaves out the mails holding it; a query of exclusions alone
	// and a filter without its value are refused, naming what to write.
	r, err := search(client.SearchQuery{Q: "deploy -staging -部署手册", Sort: client.SearchNewest, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range r.Hits {
		if h.Mail.MailID == staging || h.Mail.MailID == runbook {
			t.Fatalf("-staging -部署手册 found %s", h.Mail.Subject)
		}
	}
	if len(r.Hits) != 100 {
		t.Fatalf("deploy -staging: %d hits", len(r.Hits))
	}
	for q, want := range map[string]string{"deploy from:": "from:ann", "-deploy": "add a word", "deploy -from:carol": "drop the -"} {
		_, err := search(client.SearchQuery{Q: q})
		if ae := client.AsAPIError(err); ae == nil || ae.Status != 400 || ae.Field() != "q" || !strings.Contains(ae.Suggestion(), want) {
			t.Fatalf("%q: %v", q, err)
		}
	}
	cliEnv := e.userCLIEnv(e.carol, "cli.json")
	if out, code := e.run(e.repo, cliEnv, e.bin, "search", "deploy", "from:"); code == 0 || !strings.Contains(out, "from:ann") {
		t.Fatalf("agentmail search deploy from: exit %d\n%s", code, out)
	}
	if out, code := e.run(e.repo, cliEnv, e.bin, "search", "--newest", "--limit", "3", "--", "deploy", "-staging"); code != 0 || strings.Contains(out, "note staging") || !strings.Contains(out, "note 209") {
		t.Fatalf("agentmail search -- deploy -staging: exit %d\n%s", code, out)
	}
	// The agent's search_mail pages the same way.
	mc := e.mcp("claude", claudeKey)
	mc.mustCall("search_mail", map[string]any{"query": "deploy", "limit": 1}, runbook, "with cursor")
}
