package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// Holes of the trust boundary (issue 12) that an attacker's second pass
// found, each against the real `agentmail serve`.

func TestTrustHoles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	t.Run("AgentSummaryPingPongUsesTheBudget", func(t *testing.T) { testSummaryPingPong(t) })
	t.Run("RunReportsNameOnlyReceivedMailsOfTheirSession", func(t *testing.T) { testRunMailID(t) })
	t.Run("ReminderToAPersonsAliasFollowsMembership", func(t *testing.T) { testReminderPersonAlias(t) })
	t.Run("ForwardsToAnotherSessionsAliasInEveryForm", func(t *testing.T) { testForwardByAlias(t) })
	t.Run("TurnTokensDieWhenTheirAgentGoesOffline", func(t *testing.T) { testTurnTokenOffline(t) })
	t.Run("LookAlikeAccentsAndSmallCapitals", func(t *testing.T) { testLookAlikeAccents(t) })
}

// testSummaryPingPong: two agents answering each other's mails with
// summary relays are charged a round per summary, so the session's budget
// ends the exchange with 403 budget_exhausted. A summary answering the
// person's mail and a failure report answering an agent's stay free.
func testSummaryPingPong(t *testing.T) {
	e := newPeopleAndAgents(t, startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t)))
	ctx := e.ctx
	const budget = 4
	b := budget
	start, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/pingpong.new", Cc: "helper@/work/pingpong",
		Subject: "work it out together", Body: "please", RoundBudget: &b})
	if err != nil {
		t.Fatal(err)
	}
	// bot writes to helper on its own: one round.
	last, err := e.bot.SendMail(ctx, client.SendMailRequest{To: "helper", ReplyTo: start.MailID, Body: "helper, your turn"})
	if err != nil {
		t.Fatal(err)
	}
	agents := []*client.Client{e.helper, e.bot}
	names := []string{"bot", "helper"}
	sent := 0
	var stopped *client.APIError
	for i := 0; i < 50 && stopped == nil; i++ {
		r, err := agents[i%2].SendMail(ctx, client.SendMailRequest{To: names[i%2], ReplyTo: last.MailID,
			Body: fmt.Sprintf("answer %d", i), Relay: client.RelaySummary, RelayKey: fmt.Sprintf("ping-%d", i)})
		if err != nil {
			stopped = wantStatus(t, err, http.StatusForbidden, "budget_exhausted")
			break
		}
		sent++
		last = r
	}
	if stopped == nil {
		t.Fatalf("%d summary relays between two agents were all sent with a budget of %d rounds; want 403 budget_exhausted", sent, budget)
	}
	if sent != budget-1 {
		t.Errorf("%d summaries between the agents were sent before the 403; want %d (the budget less bot's own mail)", sent, budget-1)
	}
	s, err := e.alice.MeSession(ctx, start.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if s.UsedRounds != budget {
		t.Errorf("the session used %d rounds, want %d", s.UsedRounds, budget)
	}

	// With the budget spent: the failure report on the agent's last mail
	// stays free, and so does the summary answering alice.
	replier := agents[sent%2]
	fr, err := replier.SendMail(ctx, client.SendMailRequest{To: names[sent%2], ReplyTo: last.MailID, Subject: "处理失败: x", Body: "failed",
		Relay: client.RelaySummary, RelayKey: "model-failure:" + last.MailID, MailType: client.MailTypeFailureReport})
	if err != nil || fr.Status != "sent" {
		t.Fatalf("failure report answering an agent's mail with the budget spent: %+v, %v", fr, err)
	}
	r, err := e.bot.SendMail(ctx, client.SendMailRequest{To: "alice", ReplyTo: start.MailID, Body: "done",
		Relay: client.RelaySummary, RelayKey: "summary-for-alice"})
	if err != nil || r.Status != "sent" {
		t.Fatalf("summary answering alice with the budget spent: %+v, %v", r, err)
	}
	// The one-summary-per-received-mail rule stays: a second summary of
	// alice's mail is 409.
	_, err = e.bot.SendMail(ctx, client.SendMailRequest{To: "alice", ReplyTo: start.MailID, Body: "done again",
		Relay: client.RelaySummary, RelayKey: "summary-for-alice-2"})
	wantStatus(t, err, http.StatusConflict, "relay_already_answered")
	if s, err := e.alice.MeSession(ctx, start.SessionID); err != nil || s.UsedRounds != budget {
		t.Errorf("after the free relays the session used %+v rounds (%v), want %d", s, err, budget)
	}
}

// testRunMailID: PUT /runs/{id} takes a mail_id only when it names a mail
// of the run's session that the agent received; another session's mail,
// a mail the agent only sent, a mail of the session addressed to someone
// else and an unknown id all answer the same 404, and store no run.
func testRunMailID(t *testing.T) {
	e := newPeopleAndAgents(t, startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t)))
	ctx := e.ctx
	start, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/runs.new", Cc: "bob", Subject: "build it", Body: "please"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.carol.MeSend(ctx, client.SendMailRequest{To: "bot@/work/elsewhere.new", Subject: "carol's work", Body: "private"})
	if err != nil {
		t.Fatal(err)
	}
	own, err := e.bot.SendMail(ctx, client.SendMailRequest{To: "alice", ReplyTo: start.MailID, Body: "on it"})
	if err != nil {
		t.Fatal(err)
	}
	aside, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bob", ReplyTo: start.MailID, Body: "between us"})
	if err != nil || aside.SessionID != start.SessionID {
		t.Fatalf("alice's aside to bob: %+v, %v", aside, err)
	}
	put := func(runID, mailID string) (*client.Run, error) {
		return e.bot.PutRun(ctx, client.Run{RunID: runID, SessionID: start.SessionID, MailID: mailID, State: client.RunRunning,
			StartedAt: time.Now().UTC()})
	}
	if r, err := put("run-ok", start.MailID); err != nil || r.MailID != start.MailID {
		t.Fatalf("run for the received mail: %+v, %v", r, err)
	}
	unknown := client.AsAPIError(func() error { _, err := put("run-unknown", "no-such-mail"); return err }())
	if unknown == nil || unknown.Status != http.StatusNotFound || unknown.Body.Code != "mail_not_found" || unknown.Body.Field != "mail_id" {
		t.Fatalf("unknown mail_id answered %+v", unknown)
	}
	for name, id := range map[string]string{"another session's mail": other.MailID, "a mail bot sent": own.MailID,
		"a mail to someone else": aside.MailID} {
		_, err := put("run-"+id, id)
		got := client.AsAPIError(err)
		if got == nil || got.Status != unknown.Status || got.Body != unknown.Body {
			t.Errorf("%s answered %v; an unknown mail answers %d %+v", name, err, unknown.Status, unknown.Body)
		}
	}
	runs, err := e.alice.MeSessionRuns(ctx, start.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Runs) != 1 || runs.Runs[0].RunID != "run-ok" {
		t.Errorf("the session's runs: %+v; want run-ok only", runs.Runs)
	}
	if runs, err := e.carol.MeSessionRuns(ctx, other.SessionID); err != nil || len(runs.Runs) != 0 {
		t.Errorf("carol's session has runs %+v (%v); want none", runs, err)
	}
}

// testReminderPersonAlias: a reminder to a person's alias address
// (carol@.alias) keeps the alias and goes into that session when the owner
// takes part in it; the alias of a session the owner does not take part in
// answers exactly what an unknown alias answers, and nothing is stored.
func testReminderPersonAlias(t *testing.T) {
	e := newPeopleAndAgents(t, startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t)))
	ctx := e.ctx
	mine, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/remind.new", Cc: "carol", Subject: "release", Body: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	mine2, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/other.new", Subject: "other work", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	bobs, err := e.bob.MeSend(ctx, client.SendMailRequest{To: "bot@/work/bob.new", Cc: "carol", Subject: "bob's plan", Body: "private"})
	if err != nil {
		t.Fatal(err)
	}
	soon := func() string { return time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339) }
	remind := func(recipients string) (*client.Schedule, error) {
		return e.alice.MeCreateSchedule(ctx, client.CreateScheduleRequest{Title: "check in", EventTime: soon(), Recipients: recipients})
	}

	// bob's session, which alice takes no part in: as an unknown alias.
	_, err = remind("carol@." + bobs.SessionAlias)
	got := client.AsAPIError(err)
	_, err = remind("carol@.no-such-alias")
	want := client.AsAPIError(err)
	if want == nil || want.Status != http.StatusNotFound || want.Body.Code != "alias_not_found" {
		t.Fatalf("reminder to an unknown alias answered %v", err)
	}
	wb := want.Body
	wb.Error = strings.ReplaceAll(wb.Error, "no-such-alias", bobs.SessionAlias)
	if got == nil || got.Status != want.Status || got.Body != wb {
		t.Fatalf("reminder to the alias of bob's session answered %+v; an unknown alias answers %d %+v", got, want.Status, wb)
	}
	// Two aliases of two different sessions: one reminder is one mail in one session.
	_, err = remind("carol@." + mine.SessionAlias + ", bot@/work/other." + mine2.SessionAlias)
	wantStatus(t, err, http.StatusNotFound, "alias_not_found")
	if l, err := e.alice.MeListSchedules(ctx); err != nil || len(l.Schedules) != 0 {
		t.Fatalf("refused reminders stored schedules: %+v, %v", l, err)
	}

	// alice's own session: the alias is kept and the reminder lands there.
	sch, err := remind("carol@." + mine.SessionAlias)
	if err != nil {
		t.Fatal(err)
	}
	if len(sch.Recipients) != 1 || sch.Recipients[0] != "carol@."+mine.SessionAlias {
		t.Fatalf("stored recipients %v; want the alias address kept", sch.Recipients)
	}
	poll(t, "the reminder reaches carol", func() bool {
		no := false
		inbox, err := e.carol.MeInbox(ctx, client.InboxQuery{Status: "all", Limit: 50, MarkRead: &no})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range inbox.Mails {
			if m.MailType == client.MailTypeReminder {
				if m.SessionID != mine.SessionID {
					t.Fatalf("the reminder went to session %s; want alice's session %s (%s)", m.SessionID, mine.SessionID, mine.SessionAlias)
				}
				return true
			}
		}
		return false
	})
}

// testForwardByAlias: a forward, by a person or by an agent, to carol's
// session's alias in any address form (agent or person address, to or cc)
// answers exactly what an unknown alias answers and creates nothing.
func testForwardByAlias(t *testing.T) {
	e := mbSetup(t)
	ctx := e.ctx
	own, err := e.bob.MeSend(ctx, client.SendMailRequest{To: "alpha@/work/bob.new", Subject: "bob's note", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	bobSessions, bobSent := e.sessionsOf(t, e.bob), 0
	if l, err := e.bob.MeSent(ctx); err == nil {
		bobSent = len(l.Mails)
	} else {
		t.Fatal(err)
	}
	forms := []struct{ name, to, cc string }{
		{"agent address", "beta@" + e.ws + ".", ""},
		{"person address", "carol@.", ""},
		{"cc", "carol", "beta@" + e.ws + "."},
		{"person cc", "alpha@/work/bob", "carol@."},
	}
	for _, f := range forms {
		req := func(alias string) client.ForwardRequest {
			r := client.ForwardRequest{To: f.to, Body: "see this"}
			if f.cc == "" {
				r.To += alias
			} else {
				r.Cc = f.cc + alias
			}
			return r
		}
		_, err := e.bob.MeForward(ctx, own.MailID, req(e.carolSess.SessionAlias))
		_, unknown := e.bob.MeForward(ctx, own.MailID, req("no-such-alias"))
		t.Run("person/"+f.name, func(t *testing.T) { e.sameAsUnknown(t, err, unknown) })
		_, err = e.alpha.Forward(ctx, own.MailID, req(e.carolSess.SessionAlias))
		_, unknown = e.alpha.Forward(ctx, own.MailID, req("no-such-alias"))
		t.Run("agent/"+f.name, func(t *testing.T) { e.sameAsUnknown(t, err, unknown) })
	}
	e.untouched(t)
	if n := e.sessionsOf(t, e.bob); n != bobSessions {
		t.Errorf("bob's sessions: %d → %d", bobSessions, n)
	}
	if l, err := e.bob.MeSent(ctx); err != nil || len(l.Mails) != bobSent {
		t.Errorf("bob's sent mails: %d → %+v (%v); the refused forwards stored mail", bobSent, l, err)
	}
	if _, err := e.alpha.GetSession(ctx, e.carolSess.SessionID); err == nil {
		t.Errorf("alpha can read carol's session after forwarding to it")
	}
}

// poll waits, checking cond every 50 ms, until it holds or waitLimit passed.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, waitLimit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testTurnTokenOffline: a turn token stays valid while its agent's bridge
// sends heartbeats, and is refused (401 turn_token_revoked) once the agent
// is shown offline, as a bridge that died mid-turn would leave it; another
// agent that stays online keeps its token, and the offline agent's key
// still gets new tokens when its bridge is back.
func testTurnTokenOffline(t *testing.T) {
	const offlineAfter = 2 * time.Second
	g := startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t), "AGENTMAIL_AGENT_OFFLINE_AFTER="+offlineAfter.String())
	e := newPeopleAndAgents(t, g)
	ctx := e.ctx
	start, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/turns.new", Cc: "helper@/work/turns", Subject: "a turn", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	beat := func(c *client.Client) {
		t.Helper()
		if _, err := c.Heartbeat(ctx, client.HeartbeatRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	// helper's bridge stays alive for the whole test.
	stopHelper := make(chan struct{})
	helperDone := make(chan struct{})
	go func() {
		defer close(helperDone)
		for {
			select {
			case <-stopHelper:
				return
			case <-time.After(200 * time.Millisecond):
				e.helper.Heartbeat(ctx, client.HeartbeatRequest{})
			}
		}
	}()
	defer func() { close(stopHelper); <-helperDone }()

	beat(e.bot)
	beat(e.helper)
	token := func(c *client.Client) *client.Client {
		t.Helper()
		tt, err := c.CreateTurnToken(ctx, start.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		return client.New(g.URL, client.WithHTTPClient(CheckedHTTPClient(t)), client.WithToken(tt.Token))
	}
	botTurn, helperTurn := token(e.bot), token(e.helper)
	works := func(c *client.Client) error {
		_, err := c.GetSession(ctx, start.SessionID)
		return err
	}
	// While bot's bridge beats, its token outlives the offline threshold.
	for until := time.Now().Add(offlineAfter + time.Second); time.Now().Before(until); time.Sleep(250 * time.Millisecond) {
		beat(e.bot)
		if err := works(botTurn); err != nil {
			t.Fatalf("bot's turn token refused while its bridge beats: %v\n%s", err, g.Log)
		}
	}
	// bot's bridge dies: no more heartbeats, no revocation of its own.
	poll(t, "bot is shown offline", func() bool {
		l, err := e.admin.AdminListAgents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range l.Agents {
			if a.Name == "bot" {
				return a.Status == "offline"
			}
		}
		t.Fatal("bot is not listed")
		return false
	})
	poll(t, "bot's turn token refused after bot went offline", func() bool {
		err := works(botTurn)
		if err == nil {
			return false
		}
		wantStatus(t, err, http.StatusUnauthorized, "turn_token_revoked")
		return true
	})
	if err := works(helperTurn); err != nil {
		t.Errorf("helper, online all along, lost its turn token: %v", err)
	}
	// The bridge comes back: its key works and gets a new token.
	beat(e.bot)
	if err := works(token(e.bot)); err != nil {
		t.Errorf("a new turn token after bot is back: %v", err)
	}
	if err := works(botTurn); err == nil {
		t.Errorf("the old turn token works again after bot came back")
	}
}

// testLookAlikeAccents: names that differ from an existing one only by
// accents or other combining marks, or by Latin small capitals, which
// Unicode's confusables table does not list, are 409 name_confusable
// naming the existing name (admín, like adrnin, is a reserved look-alike);
// 张san stays allowed. Skeletons stored by the earlier rule are recomputed
// at start (migration 0032), so an old name with an accent still blocks its
// plain look-alike.
func testLookAlikeAccents(t *testing.T) {
	dataDir := t.TempDir()
	g := startGatewayWithFlags(t, dataDir, "")
	e := newPeopleAndAgents(t, g)
	ctx := e.ctx
	if _, err := e.admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "zoë", Password: "zoe-password"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ field, name, existing string }{
		{"username", "ʙob", "bob"},     // U+0299 LATIN LETTER SMALL CAPITAL B
		{"username", "ᴀlice", "alice"}, // U+1D00 LATIN LETTER SMALL CAPITAL A
		{"username", "bób", "bob"},
		{"username", "cårol", "carol"},
		{"username", "zoe", "zoë"},
		{"agent_name", "ʙot", "bot"},
		{"agent_name", "hélper", "helper"},
	}
	for _, c := range cases {
		refuseLookAlike(t, ctx, e.admin, c.field, c.name, c.existing)
	}
	_, err := e.admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "admín", Password: "12345678"})
	wantStatus(t, err, http.StatusBadRequest, "reserved_name")
	if _, err := e.admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "张san", Password: "12345678"}); err != nil {
		t.Fatalf("create 张san: %v", err)
	}
	g.Shutdown(t)

	// As before migration 0032: skeletons of the earlier rule (stale here).
	st, err := store.Open(ctx, store.Options{DataDir: dataDir, DatabaseURL: e2eDatabaseURL(t, dataDir)})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Write(ctx, func(q *store.Q) error {
		if _, err := q.Exec(ctx, `UPDATE names SET skeleton = 'stale:' || name`); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `DELETE FROM schema_migrations WHERE version = 32`)
		return err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	g = startGatewayWithFlags(t, dataDir, "")
	admin := client.New(g.URL, client.WithHTTPClient(CheckedHTTPClient(t)), client.WithCookieJar())
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatalf("login after restart: %v\n%s", err, g.Log)
	}
	for _, c := range cases {
		refuseLookAlike(t, ctx, admin, c.field, c.name, c.existing)
	}
	if _, err := admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "dave", Password: "12345678"}); err != nil {
		t.Fatalf("a name unlike any other after the restart: %v", err)
	}
}
