package httpapi_test

import (
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// GET /me/export/sessions (issue 21 item 5): the sessions renamed, given a
// new subject or with an acknowledged mail after changed_after, only those
// the person takes part in (every one for an admin's all=true), in the
// order they changed, paged; changes_as_of lies a minute before the
// answer.
func TestExportSessionsListsTheViewersChangedSessions(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol, bob := e.person("carol"), e.person("bob")
	mine, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "first", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "second", Body: "x", AckRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	bobs, err := bob.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "bob's", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := carol.MeExport(e.ctx(), client.ExportQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if want := e.clock.Now().Add(-time.Minute); !page.ChangesAsOf.Equal(want) {
		t.Fatalf("changes_as_of %v, want a minute before now (%v)", page.ChangesAsOf, want)
	}
	since := e.clock.Now()
	if got, err := carol.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since}); err != nil || len(got.Sessions) != 0 {
		t.Fatalf("nothing changed yet: %+v, %v", got, err)
	}

	e.clock.Advance(time.Second)
	alias := "renamed-first"
	if _, err := carol.MeUpdateSession(e.ctx(), mine.SessionID, client.UpdateSessionRequest{Alias: &alias}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	if _, err := alpha.AckMail(e.ctx(), other.MailID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	bobAlias := "renamed-bobs"
	if _, err := bob.MeUpdateSession(e.ctx(), bobs.SessionID, client.UpdateSessionRequest{Alias: &bobAlias}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	if _, err := alpha.SyncSession(e.ctx(), mine.SessionID, client.SyncSessionRequest{Title: "First, retitled"}); err != nil {
		t.Fatal(err)
	}

	// carol: her two sessions in the order of their last change (the
	// acknowledged one first, the renamed and retitled one last), never bob's.
	got, err := carol.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 2 || got.Sessions[0].SessionID != other.SessionID || got.Sessions[1].SessionID != mine.SessionID {
		t.Fatalf("carol's changed sessions: %+v", got.Sessions)
	}
	s := got.Sessions[1]
	if s.Alias != alias || s.Subject != "First, retitled" || len(s.FormerAliases) != 1 || s.FormerAliases[0] != mine.SessionAlias || len(s.Participants) != 2 {
		t.Errorf("the renamed session as listed: %+v", s)
	}
	if !got.ChangesAsOf.Equal(e.clock.Now().Add(-time.Minute)) {
		t.Errorf("changes_as_of %v", got.ChangesAsOf)
	}
	// Paged one by one, the same order.
	first, err := carol.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since, Limit: 1})
	if err != nil || len(first.Sessions) != 1 || first.Sessions[0].SessionID != other.SessionID || first.NextCursor == "" {
		t.Fatalf("page 1: %+v, %v", first, err)
	}
	second, err := carol.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since, Limit: 1, Cursor: first.NextCursor})
	if err != nil || len(second.Sessions) != 1 || second.Sessions[0].SessionID != mine.SessionID {
		t.Fatalf("page 2: %+v, %v", second, err)
	}
	if third, err := carol.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since, Limit: 1, Cursor: second.NextCursor}); err != nil || len(third.Sessions) != 0 || third.NextCursor != "" {
		t.Fatalf("page 3: %+v, %v", third, err)
	}
	// A change before changed_after is not listed again.
	if later, err := carol.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since.Add(2500 * time.Millisecond)}); err != nil ||
		len(later.Sessions) != 1 || later.Sessions[0].SessionID != mine.SessionID {
		t.Fatalf("after the acknowledgement: %+v, %v", later, err)
	}
	// bob sees only his own; all=true is the admin's, who sees all three.
	if b, err := bob.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since}); err != nil || len(b.Sessions) != 1 || b.Sessions[0].SessionID != bobs.SessionID {
		t.Fatalf("bob's: %+v, %v", b, err)
	}
	_, err = carol.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since, All: true})
	wantStatus(t, err, 403, "export_all_admin_only")
	if a, err := e.admin.MeExportSessions(e.ctx(), client.ExportSessionsQuery{ChangedAfter: since, All: true}); err != nil || len(a.Sessions) != 3 {
		t.Fatalf("the admin's: %+v, %v", a, err)
	}
	for _, bad := range []string{"/api/v1/me/export/sessions", "/api/v1/me/export/sessions?changed_after=yesterday",
		"/api/v1/me/export/sessions?changed_after=2026-01-01T00:00:00Z&cursor=nope", "/api/v1/me/export/sessions?changed_after=2026-01-01T00:00:00Z&limit=0"} {
		key, err := carol.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "raw"})
		if err != nil {
			t.Fatal(err)
		}
		if status, body, _ := e.raw("GET", bad, key.KeyToken, ""); status != 400 {
			t.Errorf("GET %s: %d %s", bad, status, body)
		}
	}
}
