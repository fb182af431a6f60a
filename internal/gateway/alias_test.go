package gateway

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Issue 14: a session's alias is named once by the D-5 ladder and then
// changes only by a person; every alias it had keeps reaching it for its
// participants.

// sync is the bot's W-7 sync of session id, failing the test on an error.
func (e *serviceEnv) sync(id, alias string, level int, title string) *client.Session {
	e.t.Helper()
	s, err := e.svc.SyncSession(e.ctx, e.bot, id, client.SyncSessionRequest{Alias: alias, AliasLevel: level, Title: title})
	if err != nil {
		e.t.Fatalf("sync %q level %d: %v", alias, level, err)
	}
	return s
}

// relayAnswer is the bot's relayed answer to mailID (the end of its turn).
func (e *serviceEnv) relayAnswer(mailID string) {
	e.t.Helper()
	if _, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice", ReplyTo: mailID, Body: "done",
		Relay: client.RelaySummary, RelayKey: "turn:" + mailID}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *serviceEnv) alias(id string) (string, string, []string) {
	e.t.Helper()
	s, err := e.svc.GetSession(e.ctx, e.alice, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s.Alias, s.AliasSource, s.FormerAliases
}

func TestALaterSubjectNeverRenamesASession(t *testing.T) {
	e := newServiceEnv(t)
	first := e.session() // "clean the build"
	if first.SessionAlias != "clean-the-build" {
		t.Fatalf("first alias = %q", first.SessionAlias)
	}
	if _, src, _ := e.alias(first.SessionID); src != store.AliasSubject {
		t.Fatalf("alias source of a subject-derived alias = %q, want %q", src, store.AliasSubject)
	}
	// The bridge's first turn proposes the subject too (its own derivation).
	e.sync(first.SessionID, "clean-build", 3, "")
	e.relayAnswer(first.MailID)
	second, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj.clean-the-build", Subject: "and the docs", Body: "too"})
	if err != nil || second.SessionID != first.SessionID {
		t.Fatalf("second mail = %+v, %v", second, err)
	}
	s := e.sync(first.SessionID, "and-the-docs", 3, "")
	if s.Alias != "clean-the-build" || len(s.FormerAliases) != 0 {
		t.Fatalf("after a second subject: alias %q (former %v), want clean-the-build unchanged", s.Alias, s.FormerAliases)
	}
}

func TestAPlatformNameReplacesTheFirstAliasOnceInTheFirstTurn(t *testing.T) {
	e := newServiceEnv(t)
	r := e.session()
	// A title (level 2) is better than the subject, a slug (level 1) better still.
	if s := e.sync(r.SessionID, "Clean up the build", 2, "Clean up the build"); s.Alias != "clean-up-the-build" || s.AliasSource != store.AliasPlatformTitle {
		t.Fatalf("level 2 = %q %q", s.Alias, s.AliasSource)
	}
	s := e.sync(r.SessionID, "witty-planet", 1, "")
	if s.Alias != "witty-planet" || s.AliasSource != store.AliasPlatformSlug ||
		!reflect.DeepEqual(s.FormerAliases, []string{"clean-the-build", "clean-up-the-build"}) {
		t.Fatalf("level 1 = %q %q former %v", s.Alias, s.AliasSource, s.FormerAliases)
	}
	// No level beats a slug: another slug, a title or a subject change nothing.
	for _, p := range []struct {
		alias string
		level int
	}{{"other-planet", 1}, {"other-title", 2}, {"other-subject", 3}, {"legacy-bridge", 0}} {
		if s := e.sync(r.SessionID, p.alias, p.level, ""); s.Alias != "witty-planet" {
			t.Fatalf("level %d %q renamed the slug alias to %q", p.level, p.alias, s.Alias)
		}
	}
	// The title still follows.
	if s := e.sync(r.SessionID, "witty-planet", 1, "Build cleaned"); s.Subject != "Build cleaned" || s.Alias != "witty-planet" {
		t.Fatalf("title = %q alias %q", s.Subject, s.Alias)
	}
	if _, err := e.svc.SyncSession(e.ctx, e.bot, r.SessionID, client.SyncSessionRequest{Alias: "x", AliasLevel: 4}); err == nil {
		t.Fatal("alias_level 4 accepted")
	} else {
		wantCode(t, err, KindInvalid, "")
	}
}

func TestNoPlatformRenameAfterTheFirstTurnEnded(t *testing.T) {
	e := newServiceEnv(t)
	// Ended by the relayed answer.
	r := e.session()
	e.relayAnswer(r.MailID)
	if s := e.sync(r.SessionID, "witty-planet", 1, "Cleaned"); s.Alias != "clean-the-build" || s.Subject != "Cleaned" {
		t.Fatalf("slug after the relayed answer: alias %q subject %q, want the alias kept and the title followed", s.Alias, s.Subject)
	}
	// Ended by a run for a second mail (the model had answered by itself).
	r2, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "second job", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(mailID string) {
		t.Helper()
		if _, err := e.svc.PutRun(e.ctx, e.bot, store.NewID(), client.Run{SessionID: r2.SessionID, MailID: mailID, State: client.RunFinished}); err != nil {
			t.Fatal(err)
		}
	}
	run(r2.MailID)
	if _, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice", ReplyTo: r2.MailID, Subject: "Re: second job", Body: "did it"}); err != nil {
		t.Fatal(err)
	}
	if s := e.sync(r2.SessionID, "Second job done", 2, ""); s.Alias != "second-job-done" {
		t.Fatalf("the first turn's own sync after the model's mail: alias %q, want the title's", s.Alias)
	}
	more, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj.second-job-done", Subject: "more", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	run(more.MailID)
	if s := e.sync(r2.SessionID, "witty-planet", 1, ""); s.Alias != "second-job-done" {
		t.Fatalf("slug in the second turn renamed the session to %q", s.Alias)
	}
}

func TestAPersonsRenameWinsAndKeepsTheOldAlias(t *testing.T) {
	e := newServiceEnv(t)
	r := e.session()
	name := "build"
	s, err := e.svc.UpdateSession(e.ctx, e.alice, r.SessionID, client.UpdateSessionRequest{Alias: &name})
	if err != nil || s.Alias != "build" || s.AliasSource != store.AliasManual || !reflect.DeepEqual(s.FormerAliases, []string{"clean-the-build"}) {
		t.Fatalf("manual rename = %+v, %v", s, err)
	}
	if s := e.sync(r.SessionID, "witty-planet", 1, ""); s.Alias != "build" || s.AliasSource != store.AliasManual {
		t.Fatalf("a slug in the first turn after a manual rename: %q %q", s.Alias, s.AliasSource)
	}
	ev := e.events("bob", client.EventSessionUpdated)
	if len(ev) == 0 || !strings.Contains(string(ev[len(ev)-1].Data), `"former_aliases":["clean-the-build"]`) {
		t.Fatalf("session.updated events for bob: %d, last %s", len(ev), lastPayload(ev))
	}
	// A person may take a former alias back; the replaced one is kept.
	back := "clean-the-build"
	if s, err := e.svc.UpdateSession(e.ctx, e.alice, r.SessionID, client.UpdateSessionRequest{Alias: &back}); err != nil ||
		s.Alias != "clean-the-build" || !reflect.DeepEqual(s.FormerAliases, []string{"build"}) {
		t.Fatalf("taking the first alias back = %+v, %v", s, err)
	}
}

func lastPayload(ev []store.EventRow) string {
	if len(ev) == 0 {
		return ""
	}
	return string(ev[len(ev)-1].Data)
}

func TestEveryFormerAliasReachesTheSessionForItsPeople(t *testing.T) {
	e := newServiceEnv(t)
	r := e.session() // clean-the-build
	e.sync(r.SessionID, "witty-planet", 1, "")
	manual := "build"
	if _, err := e.svc.UpdateSession(e.ctx, e.alice, r.SessionID, client.UpdateSessionRequest{Alias: &manual}); err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{"clean-the-build", "witty-planet", "build"} {
		got, err := e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "bot@/work/proj." + old, Subject: "via " + old, Body: "x"})
		if err != nil || got.SessionID != r.SessionID || got.SessionAlias != "build" || got.NewSession {
			t.Errorf("bob's mail to %q = %+v, %v; want session %s answering alias build", old, got, err, r.SessionID)
		}
		res, err := e.svc.Resolve(e.ctx, e.bob, "bot@/work/proj."+old)
		if err != nil || !res.Exists || res.SessionID != r.SessionID || res.Alias != "build" {
			t.Errorf("bob resolves %q = %+v, %v", old, res, err)
		}
	}
	// A cc address may name the session by a former alias.
	if got, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj.build", Cc: "bob@.witty-planet", Subject: "cc", Body: "x"}); err != nil || got.SessionID != r.SessionID {
		t.Errorf("cc by a former alias = %+v, %v", got, err)
	}
	// So may the agent's relayed answer.
	if _, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice@.clean-the-build", ReplyTo: r.MailID, Body: "done",
		Relay: client.RelaySummary, RelayKey: "k1"}); err != nil {
		t.Errorf("relay addressed by a former alias: %v", err)
	}

	// Anyone else gets exactly what an unknown alias answers, and nothing is stored.
	mails, sessions := e.countMails("1 = 1"), e.countSessions()
	_, unknown := e.svc.Send(e.ctx, e.carol, client.SendMailRequest{To: "bot@/work/proj.never-was", Subject: "x", Body: "x"})
	wantCode(t, unknown, KindNotFound, "alias_not_found")
	for _, old := range []string{"clean-the-build", "witty-planet"} {
		_, err := e.svc.Send(e.ctx, e.carol, client.SendMailRequest{To: "bot@/work/proj." + old, Subject: "x", Body: "x"})
		wantCode(t, err, KindNotFound, "alias_not_found")
		if got, want := AsError(err), AsError(unknown); got.Field != want.Field || got.Suggestion != want.Suggestion ||
			got.Message != strings.ReplaceAll(want.Message, "never-was", old) {
			t.Errorf("carol to former alias %q = %+v; unknown alias = %+v", old, got, want)
		}
		_, err = e.svc.Resolve(e.ctx, e.carol, "bot@/work/proj."+old)
		wantCode(t, err, KindNotFound, "alias_not_found")
	}
	if e.countMails("1 = 1") != mails || e.countSessions() != sessions {
		t.Errorf("refused mails stored something: mails %d → %d, sessions %d → %d", mails, e.countMails("1 = 1"), sessions, e.countSessions())
	}
	// carol's own session via .new cannot take the former alias either.
	mine, err := e.svc.Send(e.ctx, e.carol, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "witty planet", Body: "x"})
	if err != nil || mine.SessionAlias != "witty-planet-2" {
		t.Fatalf("a new session named like a former alias = %+v, %v; want witty-planet-2", mine, err)
	}
}

func TestAFormerAliasIsNeverGivenToAnotherSession(t *testing.T) {
	e := newServiceEnv(t)
	r := e.session()
	e.sync(r.SessionID, "witty-planet", 1, "")
	other, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "other job", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if s := e.sync(other.SessionID, "clean-the-build", 1, ""); s.Alias != "clean-the-build-2" {
		t.Errorf("a platform proposing another session's former alias got %q, want clean-the-build-2", s.Alias)
	}
	// The collision suffix is a rename too: the replaced alias is kept.
	if _, _, former := e.alias(other.SessionID); !reflect.DeepEqual(former, []string{"other-job"}) {
		t.Errorf("former aliases of the other session = %v", former)
	}
	third, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "third job", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	taken := "clean-the-build"
	if s, err := e.svc.UpdateSession(e.ctx, e.alice, third.SessionID, client.UpdateSessionRequest{Alias: &taken}); err != nil ||
		s.Alias != "clean-the-build-3" || !reflect.DeepEqual(s.FormerAliases, []string{"third-job"}) {
		t.Errorf("a person naming a session like another's former alias got %+v, %v", s, err)
	}
}

// A mail to a mirrored platform session's name lands in the mail session
// bound to it, for its people, even when no alias of that session matches
// the name (the platform renamed its session itself); the thread does not
// split into a second mail session.
func TestAMirroredNameOfABoundSessionLandsInIt(t *testing.T) {
	e := newServiceEnv(t)
	r := e.session()
	if _, err := e.svc.BindPlatformSession(e.ctx, e.bot, r.SessionID, client.BindPlatformSessionRequest{PlatformSessionID: "p1"}); err != nil {
		t.Fatal(err)
	}
	mirror := []client.PlatformSession{{PlatformID: "p1", Workspace: "/work/proj", Slug: "renamed-in-the-platform", UpdatedAt: ts("2026-09-02T09:00:00Z")}}
	if _, err := e.svc.Heartbeat(e.ctx, e.bot, client.HeartbeatRequest{PlatformSessions: &mirror}); err != nil {
		t.Fatal(err)
	}
	admin := &Principal{Kind: PrincipalPerson, Name: "alice", Role: RoleAdmin, AuthKind: AuthUserKey}
	sessions := e.countSessions()
	for _, p := range []*Principal{e.alice, admin, e.bob} {
		got, err := e.svc.Send(e.ctx, p, client.SendMailRequest{To: "bot@/work/proj.renamed-in-the-platform", Subject: "x", Body: "x"})
		if err != nil || got.SessionID != r.SessionID || got.NewSession || got.SessionAlias != "clean-the-build" {
			t.Errorf("%s (admin %v) to the platform's name = %+v, %v; want the bound session", p.Name, p.IsAdmin(), got, err)
		}
	}
	_, err := e.svc.Send(e.ctx, e.carol, client.SendMailRequest{To: "bot@/work/proj.renamed-in-the-platform", Subject: "x", Body: "x"})
	wantCode(t, err, KindNotFound, "alias_not_found")
	if n := e.countSessions(); n != sessions {
		t.Errorf("mails to a bound platform name opened %d sessions", n-sessions)
	}
}

func (e *serviceEnv) countSessions() int {
	e.t.Helper()
	var n int
	if err := e.svc.Read().QueryRow(e.ctx, `SELECT COUNT(*) FROM mail_sessions`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}
