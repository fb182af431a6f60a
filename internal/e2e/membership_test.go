package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// The membership attacks of issue 12, against the real binary: people admin,
// bob and carol, agents alpha and beta. carol opens a session with beta;
// nobody else takes part in it. Whoever is not a participant gets, for the
// session's alias in any address form and on any path, exactly what an
// unknown alias answers, and the session stays as it was.

// mbEnv is the started gateway with carol's session.
type mbEnv struct {
	*peopleAndAgents
	alpha, beta *client.Client
	carolSess   *client.SendMailResponse
	ws          string
}

func mbSetup(t *testing.T) *mbEnv {
	t.Helper()
	g := startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t))
	x := &peopleAndAgents{t: t, ctx: ctxT(t), g: g}
	x.admin = client.New(g.URL, client.WithHTTPClient(CheckedHTTPClient(t)), client.WithCookieJar())
	if _, err := x.admin.Login(x.ctx, client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatalf("admin login: %v\n%s", err, g.Log)
	}
	x.bob, x.carol = x.person("bob"), x.person("carol")
	e := &mbEnv{peopleAndAgents: x, ws: "/home/carol/proj"}
	e.alpha, _ = x.agent("alpha")
	e.beta, _ = x.agent("beta")
	sent, err := x.carol.MeSend(x.ctx, client.SendMailRequest{To: "beta@" + e.ws + ".new", Subject: "carol to beta", Body: "the deploy plan"})
	if err != nil {
		t.Fatal(err)
	}
	e.carolSess = sent
	return e
}

// sameAsUnknown fails unless err, the answer for carol's alias, is exactly
// unknownErr, the answer for the alias "no-such-alias" in the same address
// form (its message with the alias put back).
func (e *mbEnv) sameAsUnknown(t *testing.T, err error, unknownErr error) {
	t.Helper()
	sameAnswer(t, err, unknownErr, e.carolSess.SessionAlias)
}

// sameAnswer fails unless err, the answer for alias, is exactly
// unknownErr, the answer for the alias "no-such-alias" in the same address
// form: 404 alias_not_found, the same field and suggestion, the message
// with the alias put back.
func sameAnswer(t *testing.T, err, unknownErr error, alias string) {
	t.Helper()
	got, want := client.AsAPIError(err), client.AsAPIError(unknownErr)
	if got == nil || want == nil {
		t.Fatalf("want two API errors, got %v and (unknown alias) %v", err, unknownErr)
	}
	if want.Status != 404 || want.Body.Code != "alias_not_found" {
		t.Fatalf("the unknown alias answered %d %s", want.Status, want.Body.Code)
	}
	wb := want.Body
	wb.Error = strings.ReplaceAll(wb.Error, "no-such-alias", alias)
	if got.Status != want.Status || got.Body.Code != wb.Code || got.Body.Field != wb.Field ||
		got.Body.Error != wb.Error || got.Body.Suggestion != wb.Suggestion {
		t.Fatalf("alias %q answered %d %+v; an unknown alias answers %d %+v", alias, got.Status, got.Body, want.Status, wb)
	}
}

// untouched checks that carol's session still has only carol and beta, no
// round used and its one mail.
func (e *mbEnv) untouched(t *testing.T) {
	t.Helper()
	s, err := e.carol.MeSession(e.ctx, e.carolSess.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Participants, ",") != "beta,carol" && strings.Join(s.Participants, ",") != "carol,beta" {
		t.Errorf("carol's session has participants %v, want carol and beta only", s.Participants)
	}
	if s.UsedRounds != 0 || s.MailCount != 1 {
		t.Errorf("carol's session: %d rounds used, %d mails; want 0 and 1", s.UsedRounds, s.MailCount)
	}
}

func (e *mbEnv) sessionsOf(t *testing.T, c *client.Client) int {
	t.Helper()
	l, err := c.MeSessions(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Sessions)
}

func TestMembership(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	t.Run("PersonJoinsByAgentAlias", func(t *testing.T) { testJoinByAlias(t, "beta@/home/carol/proj.", "") })
	t.Run("PersonJoinsByPersonAlias", func(t *testing.T) { testJoinByAlias(t, "carol@.", "") })
	t.Run("PersonJoinsByCc", func(t *testing.T) { testJoinByAlias(t, "carol@.", "beta@/home/carol/proj.") })
	t.Run("AgentJoinsViaMailSend", func(t *testing.T) { testAgentJoinByAlias(t) })
	t.Run("ForwardAndReminderByAlias", func(t *testing.T) { testForwardReminderByAlias(t) })
	t.Run("ResolveConfirmsNoGuess", func(t *testing.T) { testResolveNoGuess(t) })
	t.Run("MirroredPlatformSession", func(t *testing.T) { testMirrorNotOffered(t) })
	t.Run("PermissionInAnotherPersonsSession", func(t *testing.T) { testPermissionOutsider(t) })
}

// bob writes into carol's session by its alias (to, or to and cc): 404 as
// for an unknown alias, nothing created.
func testJoinByAlias(t *testing.T, toPrefix, ccPrefix string) {
	e := mbSetup(t)
	before := e.sessionsOf(t, e.bob)
	send := func(alias string) error {
		req := client.SendMailRequest{To: toPrefix + alias, Subject: "bob joins", Body: "let me in"}
		if ccPrefix != "" {
			req.Cc = ccPrefix + alias
		}
		_, err := e.bob.MeSend(e.ctx, req)
		return err
	}
	err := send(e.carolSess.SessionAlias)
	e.sameAsUnknown(t, err, send("no-such-alias"))
	e.untouched(t)
	if after := e.sessionsOf(t, e.bob); after != before {
		t.Errorf("bob's sessions: %d → %d", before, after)
	}
	// carol, a participant, still writes into it by alias.
	r, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "beta@" + e.ws + "." + e.carolSess.SessionAlias, Subject: "more", Body: "x"})
	if err != nil || r.SessionID != e.carolSess.SessionID {
		t.Fatalf("carol's own mail by alias: %+v, %v", r, err)
	}
}

// Agent alpha writes into carol's session through /mail/send: 404, no round
// of carol's budget used.
func testAgentJoinByAlias(t *testing.T) {
	e := mbSetup(t)
	send := func(to string) error {
		_, err := e.alpha.SendMail(e.ctx, client.SendMailRequest{To: to, Subject: "alpha joins", Body: "x"})
		return err
	}
	e.sameAsUnknown(t, send("beta@"+e.ws+"."+e.carolSess.SessionAlias), send("beta@"+e.ws+".no-such-alias"))
	e.sameAsUnknown(t, send("carol@."+e.carolSess.SessionAlias), send("carol@.no-such-alias"))
	e.untouched(t)
	_, err := e.alpha.GetSession(e.ctx, e.carolSess.SessionID)
	wantStatus(t, err, 404, "session_not_found")
}

// A forward and a reminder to the alias are refused the same way.
func testForwardReminderByAlias(t *testing.T) {
	e := mbSetup(t)
	own, err := e.bob.MeSend(e.ctx, client.SendMailRequest{To: "carol", Subject: "hello", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	fwd := func(alias string) error {
		_, err := e.bob.MeForward(e.ctx, own.MailID, client.ForwardRequest{To: "beta@" + e.ws + "." + alias})
		return err
	}
	e.sameAsUnknown(t, fwd(e.carolSess.SessionAlias), fwd("no-such-alias"))
	remind := func(alias string) error {
		_, err := e.bob.MeCreateSchedule(e.ctx, client.CreateScheduleRequest{Title: "check in",
			EventTime: time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339), Recipients: "beta@" + e.ws + "." + alias})
		return err
	}
	err = remind(e.carolSess.SessionAlias)
	unknown := remind("no-such-alias")
	if got, want := client.AsAPIError(err), client.AsAPIError(unknown); got == nil || want == nil || got.Status != 404 ||
		got.Body.Code != "alias_not_found" || got.Body.Field != want.Body.Field || want.Body.Code != "alias_not_found" {
		t.Fatalf("reminder to carol's alias: %v; to an unknown alias: %v", err, unknown)
	}
	e.untouched(t)
}

// GET /address/resolve and /address/suggest confirm no guess.
func testResolveNoGuess(t *testing.T) {
	e := mbSetup(t)
	resolve := func(c *client.Client, alias string) (*client.Resolution, error) {
		return c.Resolve(e.ctx, "carol@."+alias)
	}
	res, err := resolve(e.bob, e.carolSess.SessionAlias)
	_, unknown := resolve(e.bob, "no-such-alias")
	if err == nil {
		t.Fatalf("bob resolves carol's alias: %+v", res)
	}
	e.sameAsUnknown(t, err, unknown)
	_, err = e.alpha.Resolve(e.ctx, "beta@"+e.ws+"."+e.carolSess.SessionAlias)
	wantStatus(t, err, 404, "alias_not_found")
	sl, err := e.bob.Suggest(e.ctx, e.carolSess.SessionAlias, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, sg := range sl.Suggestions {
		if sg.Alias == e.carolSess.SessionAlias {
			t.Errorf("bob is offered carol's session: %+v", sg)
		}
	}
	if res, err := resolve(e.carol, e.carolSess.SessionAlias); err != nil || !res.Exists || res.SessionID != e.carolSess.SessionID {
		t.Fatalf("carol resolves her own alias: %+v, %v", res, err)
	}
}

// A platform session beta's bridge mirrors, bound to no mail session, is
// neither offered to bob nor opened by his mail.
func testMirrorNotOffered(t *testing.T) {
	e := mbSetup(t)
	now := time.Now().UTC()
	mirror := []client.PlatformSession{{PlatformID: "pc-1", Workspace: e.ws, Slug: "carol-private-chat", Title: "carol's own chat", UpdatedAt: &now}}
	if _, err := e.beta.Heartbeat(e.ctx, client.HeartbeatRequest{PlatformSessions: &mirror}); err != nil {
		t.Fatal(err)
	}
	sl, err := e.bob.Suggest(e.ctx, "carol-private", 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(sl.Suggestions) != 0 {
		t.Errorf("bob is offered %+v", sl.Suggestions)
	}
	before := e.sessionsOf(t, e.bob)
	_, err = e.bob.MeSend(e.ctx, client.SendMailRequest{To: "beta@" + e.ws + ".carol-private-chat", Subject: "hijack", Body: "x"})
	wantStatus(t, err, 404, "alias_not_found")
	if after := e.sessionsOf(t, e.bob); after != before {
		t.Errorf("bob's mail to the mirrored slug opened a session: %d → %d", before, after)
	}
	// The admin is offered it.
	sl, err = e.admin.Suggest(e.ctx, "carol-private", 50)
	if err != nil || len(sl.Suggestions) != 1 {
		t.Errorf("the admin is offered %+v, %v; want the mirrored session", sl, err)
	}
}

// bob cannot list, read or decide beta's permission request in carol's
// session, even after trying to join it; carol can.
func testPermissionOutsider(t *testing.T) {
	e := mbSetup(t)
	_, _ = e.bob.MeSend(e.ctx, client.SendMailRequest{To: "beta@" + e.ws + "." + e.carolSess.SessionAlias, Subject: "join", Body: "x"})
	req, err := e.beta.RequestPermission(e.ctx, client.PermissionRequest{Question: "run rm -rf /srv/data?", SessionID: e.carolSess.SessionID,
		RelayKey: "perm-1", Tool: "run_command", ToolInput: map[string]any{"command": "rm -rf /srv/data"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range []string{"pending", "all"} {
		l, err := e.bob.MePermissions(e.ctx, status)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Permissions) != 0 {
			t.Errorf("bob's /me/permissions?status=%s lists %+v", status, l.Permissions)
		}
	}
	_, err = e.bob.MeGetMail(e.ctx, req.MailID)
	wantStatus(t, err, 404, "")
	_, err = e.bob.Decide(e.ctx, req.MailID, client.DecideRequest{Decision: "always"})
	wantStatus(t, err, 404, "permission_not_found")
	_, err = e.bob.MeSend(e.ctx, client.SendMailRequest{To: "beta@" + e.ws, ReplyTo: req.MailID, Body: "always"})
	wantStatus(t, err, 404, "")
	if p, err := e.beta.GetPermission(e.ctx, req.MailID); err != nil || p.Status != "pending" {
		t.Fatalf("after bob's attempts the request is %+v, %v; want pending", p, err)
	}
	if g, err := e.bob.MeGrants(e.ctx); err != nil || len(g.Grants) != 0 {
		t.Errorf("bob's grants: %+v, %v", g, err)
	}
	// carol, who takes part, sees and decides it.
	l, err := e.carol.MePermissions(e.ctx, "pending")
	if err != nil || len(l.Permissions) != 1 || l.Permissions[0].MailID != req.MailID {
		t.Fatalf("carol's pending requests: %+v, %v", l, err)
	}
	if p, err := e.carol.Decide(e.ctx, req.MailID, client.DecideRequest{Decision: "deny"}); err != nil || p.Status != "denied" {
		t.Fatalf("carol decides: %+v, %v", p, err)
	}
}
