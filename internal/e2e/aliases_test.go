package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// Issue 14 against the real binary, the agent's side played over HTTP with
// its key as its bridge would (runs, sync, relayed answers): the D-5
// ladder names a session once, in its first turn, and only by a better
// level; a person's rename wins; every alias a session had keeps reaching
// it for its participants, and answers anyone else what an unknown alias
// answers.

type aliasEnv struct {
	*peopleAndAgents
	ws string
}

func aliasSetup(t *testing.T) *aliasEnv {
	t.Helper()
	g := startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t))
	return &aliasEnv{peopleAndAgents: newPeopleAndAgents(t, g), ws: "/home/alice/proj"}
}

// open has alice write to bot (cc bob) in a new session.
func (e *aliasEnv) open(subject string) *client.SendMailResponse {
	e.t.Helper()
	r, err := e.alice.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + ".new", Cc: "bob", Subject: subject, Body: "please"})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// turnStarts is the bot's run for a mail it received (a turn begins).
func (e *aliasEnv) turnStarts(sessionID, mailID string) {
	e.t.Helper()
	if _, err := e.bot.PutRun(e.ctx, client.Run{RunID: store.NewID(), SessionID: sessionID, MailID: mailID, State: client.RunRunning,
		StartedAt: time.Now().UTC()}); err != nil {
		e.t.Fatal(err)
	}
}

// turnEnds is the bot's relayed answer to alice's mail.
func (e *aliasEnv) turnEnds(mailID string) {
	e.t.Helper()
	if _, err := e.bot.SendMail(e.ctx, client.SendMailRequest{To: "alice", ReplyTo: mailID, Body: "done",
		Relay: client.RelaySummary, RelayKey: "turn:" + mailID}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *aliasEnv) sync(sessionID, alias string, level int, title string) *client.Session {
	e.t.Helper()
	s, err := e.bot.SyncSession(e.ctx, sessionID, client.SyncSessionRequest{Alias: alias, AliasLevel: level, Title: title})
	if err != nil {
		e.t.Fatalf("sync %q level %d: %v", alias, level, err)
	}
	return s
}

func (e *aliasEnv) session(c *client.Client, id string) *client.Session {
	e.t.Helper()
	s, err := c.MeSession(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func TestAliasesOverTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	t.Run("ALaterSubjectNeverRenames", func(t *testing.T) { testLaterSubjectKeepsAlias(t) })
	t.Run("SlugReplacesTheFirstAliasOnce", func(t *testing.T) { testSlugOnce(t) })
	t.Run("ManualRenameWins", func(t *testing.T) { testManualWins(t) })
	t.Run("FormerAliasesReachTheSessionForItsPeopleOnly", func(t *testing.T) { testFormerAliases(t) })
	t.Run("BoundPlatformNameDoesNotSplitTheThread", func(t *testing.T) { testBoundMirror(t) })
}

// Two mails with different subjects, a turn each with the bridge's
// subject-derived proposal: the alias stays the first one.
func testLaterSubjectKeepsAlias(t *testing.T) {
	e := aliasSetup(t)
	first := e.open("Fix the parser")
	e.turnStarts(first.SessionID, first.MailID)
	e.sync(first.SessionID, "fix-the-parser", 3, "")
	e.turnEnds(first.MailID)
	second, err := e.alice.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + "." + first.SessionAlias, Subject: "And the lexer", Body: "x"})
	if err != nil || second.SessionID != first.SessionID {
		t.Fatalf("second mail by alias = %+v, %v", second, err)
	}
	e.turnStarts(first.SessionID, second.MailID)
	if s := e.sync(first.SessionID, "and-the-lexer", 3, ""); s.Alias != first.SessionAlias {
		t.Fatalf("the second subject renamed the session: %q → %q", first.SessionAlias, s.Alias)
	}
	e.turnEnds(second.MailID)
	s := e.session(e.alice, first.SessionID)
	if s.Alias != "fix-the-parser" || s.AliasSource != store.AliasSubject || len(s.FormerAliases) != 0 {
		t.Fatalf("session after two subjects = alias %q source %q former %v", s.Alias, s.AliasSource, s.FormerAliases)
	}
}

// The platform's slug replaces the subject-derived first alias in the
// first turn; after the turn ended, another slug renames nothing, while
// the title follows.
func testSlugOnce(t *testing.T) {
	e := aliasSetup(t)
	r := e.open("Refactor imports")
	e.turnStarts(r.SessionID, r.MailID)
	s := e.sync(r.SessionID, "witty-planet", 1, "")
	if s.Alias != "witty-planet" || s.AliasSource != store.AliasPlatformSlug || !reflect.DeepEqual(s.FormerAliases, []string{"refactor-imports"}) {
		t.Fatalf("slug in the first turn = alias %q source %q former %v", s.Alias, s.AliasSource, s.FormerAliases)
	}
	e.turnEnds(r.MailID)
	again, err := e.alice.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + ".refactor-imports", Subject: "One more import", Body: "x"})
	if err != nil || again.SessionID != r.SessionID || again.SessionAlias != "witty-planet" || again.NewSession {
		t.Fatalf("mail to the first alias = %+v, %v; want the session, answering witty-planet", again, err)
	}
	e.turnStarts(r.SessionID, again.MailID)
	s = e.sync(r.SessionID, "brave-comet", 1, "Imports refactored")
	if s.Alias != "witty-planet" || s.Subject != "Imports refactored" {
		t.Fatalf("slug after the first turn = alias %q subject %q; want the alias kept, the title followed", s.Alias, s.Subject)
	}
	_, err = e.bot.SyncSession(e.ctx, r.SessionID, client.SyncSessionRequest{Alias: "x", AliasLevel: 7})
	wantStatus(t, err, 400, "")
}

// A person's rename wins over the platform, also in the first turn, and
// the replaced alias keeps reaching the session.
func testManualWins(t *testing.T) {
	e := aliasSetup(t)
	r := e.open("Deploy the site")
	name := "deploy"
	s, err := e.alice.MeUpdateSession(e.ctx, r.SessionID, client.UpdateSessionRequest{Alias: &name})
	if err != nil || s.Alias != "deploy" || s.AliasSource != store.AliasManual || !reflect.DeepEqual(s.FormerAliases, []string{"deploy-the-site"}) {
		t.Fatalf("manual rename = %+v, %v", s, err)
	}
	e.turnStarts(r.SessionID, r.MailID)
	if s := e.sync(r.SessionID, "witty-planet", 1, ""); s.Alias != "deploy" {
		t.Fatalf("a slug after a manual rename: %q", s.Alias)
	}
	e.turnEnds(r.MailID)
	got, err := e.bob.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + ".deploy-the-site", Subject: "and the docs", Body: "x"})
	if err != nil || got.SessionID != r.SessionID || got.SessionAlias != "deploy" {
		t.Fatalf("bob's mail to the replaced alias = %+v, %v", got, err)
	}
}

// Mail to each former alias lands in the session and answers the current
// alias; address resolution too. carol, who takes no part, gets for a
// former alias exactly the answer of an unknown alias, and nothing is
// created; nor can her own session take the former alias.
func testFormerAliases(t *testing.T) {
	e := aliasSetup(t)
	r := e.open("Clean the build")
	e.turnStarts(r.SessionID, r.MailID)
	e.sync(r.SessionID, "witty-planet", 1, "")
	name := "build"
	if _, err := e.alice.MeUpdateSession(e.ctx, r.SessionID, client.UpdateSessionRequest{Alias: &name}); err != nil {
		t.Fatal(err)
	}
	s := e.session(e.bob, r.SessionID)
	if s.Alias != "build" || !reflect.DeepEqual(s.FormerAliases, []string{"clean-the-build", "witty-planet"}) {
		t.Fatalf("GET /me/sessions/{id} for bob = alias %q former %v", s.Alias, s.FormerAliases)
	}
	for _, old := range s.FormerAliases {
		for _, c := range []*client.Client{e.alice, e.bob} {
			got, err := c.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + "." + old, Subject: "via " + old, Body: "x"})
			if err != nil || got.SessionID != r.SessionID || got.SessionAlias != "build" || got.NewSession {
				t.Errorf("mail to former alias %q = %+v, %v", old, got, err)
			}
		}
		res, err := e.bob.Resolve(e.ctx, "bot@"+e.ws+"."+old)
		if err != nil || !res.Exists || res.SessionID != r.SessionID || res.Alias != "build" {
			t.Errorf("bob resolves %q = %+v, %v", old, res, err)
		}
	}
	before, err := e.carol.MeSessions(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	send := func(alias string) error {
		_, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + "." + alias, Subject: "let me in", Body: "x"})
		return err
	}
	resolve := func(alias string) error {
		_, err := e.carol.Resolve(e.ctx, "bot@"+e.ws+"."+alias)
		return err
	}
	for _, old := range s.FormerAliases {
		sameAnswer(t, send(old), send("no-such-alias"), old)
		sameAnswer(t, resolve(old), resolve("no-such-alias"), old)
	}
	after, err := e.carol.MeSessions(e.ctx)
	if err != nil || len(after.Sessions) != len(before.Sessions) {
		t.Fatalf("carol's sessions %d → %d (%v)", len(before.Sessions), len(after.Sessions), err)
	}
	if s := e.session(e.alice, r.SessionID); strings.Contains(strings.Join(s.Participants, ","), "carol") {
		t.Fatalf("carol joined the session: %v", s.Participants)
	}
	own, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + ".new", Subject: "Witty planet", Body: "x"})
	if err != nil || own.SessionAlias != "witty-planet-2" {
		t.Fatalf("carol's new session named like a former alias = %+v, %v", own, err)
	}
}

// The platform renamed its session itself and the heartbeat mirrors the new
// name: a mail from the session's person (an admin, who could open a
// session on an unbound platform session) lands in the bound mail session
// instead of opening a second one on the same platform session.
func testBoundMirror(t *testing.T) {
	e := aliasSetup(t)
	r, err := e.admin.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + ".new", Subject: "Tune the cache", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.bot.BindPlatformSession(e.ctx, r.SessionID, client.BindPlatformSessionRequest{PlatformSessionID: "ses_1"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	mirror := []client.PlatformSession{{PlatformID: "ses_1", Workspace: e.ws, Slug: "cache-tuning", Title: "Cache tuning", UpdatedAt: &now}}
	if _, err := e.bot.Heartbeat(context.Background(), client.HeartbeatRequest{PlatformSessions: &mirror}); err != nil {
		t.Fatal(err)
	}
	got, err := e.admin.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + ".cache-tuning", Subject: "more", Body: "x"})
	if err != nil || got.SessionID != r.SessionID || got.NewSession || got.SessionAlias != r.SessionAlias {
		t.Fatalf("mail to the platform's own name = %+v, %v; want the bound session %s", got, err, r.SessionID)
	}
	send := func(alias string) error {
		_, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "bot@" + e.ws + "." + alias, Subject: "x", Body: "x"})
		return err
	}
	sameAnswer(t, send("cache-tuning"), send("no-such-alias"), "cache-tuning")
}
