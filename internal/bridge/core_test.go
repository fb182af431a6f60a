package bridge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
)

// --- B-1 start-up, B-2 heartbeat, D-7 reconnection

func TestStartupRegistersHeartbeatsAtOnceAndSubscribesWithoutLastEventID(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Models = []client.Model{{Provider: "p", Model: "m1"}}
	h := startBridge(t, gw, fake, func(c *bridge.Config) {
		c.Settings.AgentName = "bot"
		c.MCPCommand = []string{"/bin/agentmail", "mcp"}
		c.Bin = "/usr/bin/fake"
	})
	h.waitGW("registration, a heartbeat and a subscription", func() bool {
		return len(gw.registers) == 1 && len(gw.beats) >= 1 && len(gw.subscribe) >= 1
	})
	gw.mu.Lock()
	reg := gw.registers[0]
	sub := gw.subscribe[0]
	beats := len(gw.beats)
	firstBeat := gw.beats[0]
	gw.mu.Unlock()
	// B-2.3: the model catalogue rides on the heartbeat.
	if firstBeat.Models == nil || len(*firstBeat.Models) != 1 || (*firstBeat.Models)[0].Model != "m1" {
		t.Fatalf("heartbeat models = %v, want the platform's catalogue", firstBeat.Models)
	}
	// B-1.2: workspaces [] (an empty array, not null).
	if reg.Workspaces == nil || len(reg.Workspaces) != 0 || reg.Platform != "fake" || reg.Name != "bot" {
		t.Fatalf("register request = %+v, want name bot, platform fake, workspaces []", reg)
	}
	// B-1.3: the first heartbeat did not wait for the 30 s timer.
	if beats != 1 {
		t.Fatalf("heartbeats before the timer fired = %d, want 1", beats)
	}
	// B-1.4 / N-11: the first connection carries no Last-Event-ID.
	if sub != 0 {
		t.Fatalf("first subscription Last-Event-ID = %d, want none (0)", sub)
	}
	// B-1.5: the next heartbeat comes when the 30 s timer fires.
	h.timers.waitFire(t, testBeat)
	h.waitGW("second heartbeat", func() bool { return len(gw.beats) == 2 })
	env := fake.Env()
	if env.AgentName != "bot" || env.Bin != "/usr/bin/fake" || strings.Join(env.MCPCommand, " ") != "/bin/agentmail mcp" {
		t.Fatalf("adapter Env = %+v", env)
	}
	if h.logs.CountLines("connected to http://gateway.test as bot") != 1 {
		t.Fatalf("missing connection line\n%s", h.logs)
	}
}

func TestRegistrationRefusedWith401StopsWithKeyHint(t *testing.T) {
	gw := newFakeGateway("bot", "") // no valid key: 401
	b, err := bridge.New(bridge.Config{Adapter: fakeadapter.New(), Gateway: gw, Subscribe: gw.Subscribe,
		Settings: bridge.Settings{GatewayURL: "http://gw", AgentName: "bot"}})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "agentmail keys register-agent") {
		t.Fatalf("Run = %v, want a 401 error telling how to register the key (agentmail keys register-agent)", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "start it again") || strings.Contains(msg, "waits") {
		t.Fatalf("Run = %v, want it to say the bridge stops and is started again, not that it waits", err)
	}
}

func TestMissingRequiredCapabilityRefusesToStart(t *testing.T) {
	fake := fakeadapter.New()
	fake.Caps.TurnEndSignal = false
	gw := newFakeGateway("bot", "k")
	_, err := bridge.New(bridge.Config{Adapter: fake, Gateway: gw, Subscribe: gw.Subscribe})
	if err == nil || !strings.Contains(err.Error(), "C-4") {
		t.Fatalf("New = %v, want an error naming C-4", err)
	}
}

func TestMissingOptionalCapabilitiesAreLoggedOnceAsDegradations(t *testing.T) {
	fake := fakeadapter.New()
	fake.Caps.PermissionHook, fake.Caps.AsyncPermission = false, false
	fake.Caps.PerTurnModel, fake.Caps.ListSessions, fake.Caps.ModelTitle = false, false, false
	fake.Caps.ListModels, fake.Caps.FileTools = false, false
	gw := newFakeGateway("bot", "k")
	h := startBridge(t, gw, fake, nil)
	for _, d := range []string{"D-1 C-8", "D-3 C-13", "D-4 C-10", "D-5 C-11", "C-12", "C-14"} {
		n := h.logs.CountLines(`rule="` + d + `"`) // quoted when it holds a space
		if !strings.Contains(d, " ") {
			n = h.logs.CountLines("rule=" + d)
		}
		if n != 1 {
			t.Errorf("degradation %s logged %d times, want once", d, n)
		}
	}
	if n := h.logs.CountLines("limited: no permission hook: permission questions"); n != 1 {
		t.Errorf("the degradation's words: %d lines", n)
	}
	// D-4 and C-12: the heartbeat omits both fields.
	h.waitGW("a heartbeat", func() bool { return len(gw.beats) >= 1 })
	gw.mu.Lock()
	beat := gw.beats[0]
	gw.mu.Unlock()
	if beat.Models != nil || beat.PlatformSessions != nil {
		t.Fatalf("heartbeat without C-10/C-12 = %+v, want both fields omitted", beat)
	}
}

func TestHeartbeatOmitsFailedListingsAndSendsEmptyListsWhenReallyEmpty(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.ModelsErr = errors.New("provider down")
	h := startBridge(t, gw, fake, nil)
	h.waitGW("first heartbeat", func() bool { return len(gw.beats) >= 1 })
	gw.mu.Lock()
	first := gw.beats[0]
	gw.mu.Unlock()
	// N-7: the failed model listing is omitted, not [].
	if first.Models != nil {
		t.Fatalf("models after a failed listing = %v, want omitted", *first.Models)
	}
	// The session listing worked and is really empty: [] (W-3).
	if first.PlatformSessions == nil || len(*first.PlatformSessions) != 0 {
		t.Fatalf("platform_sessions of an empty platform = %v, want []", first.PlatformSessions)
	}
	fake.ModelsErr = nil
	h.timers.waitFire(t, testBeat)
	h.waitGW("second heartbeat", func() bool { return len(gw.beats) >= 2 })
	gw.mu.Lock()
	second := gw.beats[1]
	gw.mu.Unlock()
	if second.Models == nil || len(*second.Models) != 0 {
		t.Fatalf("models of a platform with none = %v, want []", second.Models)
	}
}

func TestHeartbeatSnapshotAppliesSessionRulesAndMarksMailDrivenSessions(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.AddSession(fakeadapter.Session{ID: "ui_1", Cwd: "/w", Slug: "fix-leak", Updated: gw.base.Add(1)})
	fake.AddSession(fakeadapter.Session{ID: "ui_2", Cwd: "/w", Slug: "fix-leak", Updated: gw.base.Add(5)})               // S-3: newer wins
	fake.AddSession(fakeadapter.Session{ID: "ui_3", Cwd: "/w", Updated: gw.base.Add(9)})                                 // S-1: no slug, no title
	fake.AddSession(fakeadapter.Session{ID: "sub_1", Cwd: "/w", Slug: "audit", Parent: "ui_1", Updated: gw.base.Add(7)}) // S-2
	fake.AddSession(fakeadapter.Session{ID: "ui_4", Cwd: "/w", Title: "Refactor imports", Updated: gw.base.Add(3)})
	dir := workdir(t, "proj")
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "hello", workspace: dir, push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	h.timers.waitFire(t, testBeat)
	h.waitGW("a heartbeat after the turn", func() bool { return len(gw.beats) >= 2 })
	gw.mu.Lock()
	snap := *gw.beats[len(gw.beats)-1].PlatformSessions
	gw.mu.Unlock()
	var got []string
	mailDriven := map[string]bool{}
	for _, s := range snap {
		got = append(got, s.PlatformID+":"+s.Slug)
		mailDriven[s.PlatformID] = s.MailDriven
	}
	// Most recent first (S-4): the mail session (now) then ui_2, ui_4.
	want := []string{"fake_ses_1:hello", "ui_2:fix-leak", "ui_4:refactor-imports"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("snapshot = %v, want %v", got, want)
	}
	if !mailDriven["fake_ses_1"] || mailDriven["ui_2"] {
		t.Fatalf("mail_driven flags = %v, want only the mail session", mailDriven)
	}
}

func TestHeartbeatFailuresAreSilentAndDoNotStopDelivery(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	gw.failBeats = 100
	fake := fakeadapter.New()
	dir := workdir(t, "proj")
	h := startBridge(t, gw, fake, nil)
	h.waitGW("a failed heartbeat", func() bool { return len(gw.beats) >= 1 })
	gw.deliverMail(mailOpts{from: "alice", subject: "still there?", workspace: dir, push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	h.timers.waitFire(t, testBeat)
	h.waitGW("a second failed heartbeat", func() bool { return len(gw.beats) >= 2 })
	if n := strings.Count(h.logs.String(), "level=WARN msg=heartbeat") + strings.Count(h.logs.String(), "level=ERROR msg=heartbeat"); n != 0 {
		t.Fatalf("heartbeat failures were reported above debug level (%d lines)\n%s", n, h.logs)
	}
}

func TestEventStreamReconnectsWithLastEventID(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	dir := workdir(t, "proj")
	h := startBridge(t, gw, fake, nil)
	h.waitGW("subscription", func() bool { return len(gw.subscribe) == 1 })
	gw.deliverMail(mailOpts{from: "alice", subject: "one", workspace: dir, push: true})
	h.waitTurns("first turn", turnsDone(1))
	gw.mu.Lock()
	lastID := gw.events[len(gw.events)-1].ID
	gw.mu.Unlock()
	gw.dropStreams()
	// A mail published while the stream is down is replayed on reconnect.
	gw.deliverMail(mailOpts{from: "alice", subject: "two", workspace: dir, push: true})
	h.timers.waitFire(t, testRetry)
	h.waitGW("re-subscription", func() bool { return len(gw.subscribe) == 2 })
	gw.mu.Lock()
	got := gw.subscribe[1]
	gw.mu.Unlock()
	if got != lastID {
		t.Fatalf("reconnect Last-Event-ID = %d, want %d (D-7.2)", got, lastID)
	}
	h.waitTurns("the missed mail's turn", turnsDone(2))
	// The person at the terminal reads the loss and the return once each.
	h.waitLog("connected to the gateway at http://gateway.test again, after ", 1)
	if n := h.logs.CountLines("lost the connection to the gateway at http://gateway.test"); n != 1 {
		t.Errorf("the lost connection was logged %d times, want once", n)
	}
}

// --- B-7 catch-up

func TestCatchUpDeliversOldestFiveNormalMailsOnceWithoutMarkingRead(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	var ids []string
	for i := 0; i < 7; i++ {
		ids = append(ids, gw.deliverMail(mailOpts{from: "alice", subject: "m", workspace: workdir(t, "d"+string(rune('a'+i)))}))
	}
	reminder := gw.deliverMail(mailOpts{from: "system", fromKind: "system", subject: "r", workspace: workdir(t, "r"), mailType: client.MailTypeFailureReport})
	h := startBridge(t, gw, fake, nil)
	h.waitLog("caught up 5 mails", 1)
	turns := fake.Turns()
	if len(turns) != 5 {
		t.Fatalf("catch-up ran %d turns, want 5 (B-7.2)", len(turns))
	}
	for i, tr := range turns {
		if tr.Req.MailID != ids[i] {
			t.Fatalf("turn %d was mail %s, want %s: oldest first (B-7.4)", i, tr.Req.MailID, ids[i])
		}
		if tr.Req.MailID == reminder {
			t.Fatal("a non-normal mail was caught up (B-7.5)")
		}
	}
	gw.mu.Lock()
	for _, q := range gw.inboxQs {
		if q.MarkRead == nil || *q.MarkRead || q.Status != "unread" {
			t.Fatalf("catch-up listed the inbox with %+v, want status unread and mark_read=false", q)
		}
	}
	unread := gw.unread[ids[0]]
	gw.mu.Unlock()
	if !unread {
		t.Fatal("catch-up marked a mail read")
	}
	// B-7.1: later heartbeats do not catch up again.
	h.timers.waitFire(t, testBeat)
	h.waitGW("second heartbeat", func() bool { return len(gw.beats) >= 2 })
	h.timers.waitFire(t, testBeat)
	h.waitGW("third heartbeat", func() bool { return len(gw.beats) >= 3 })
	if n := h.logs.CountLines("caught up"); n != 1 || len(fake.Turns()) != 5 {
		t.Fatalf("catch-up ran %d times with %d turns, want once with 5", n, len(fake.Turns()))
	}
}

func TestCatchUpWaitsForTheFirstGoodHeartbeat(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	gw.failBeats = 1
	fake := fakeadapter.New()
	gw.deliverMail(mailOpts{from: "alice", subject: "offline", workspace: workdir(t, "p")})
	h := startBridge(t, gw, fake, nil)
	h.waitGW("the failed first heartbeat", func() bool { return len(gw.beats) == 1 })
	if len(fake.Turns()) != 0 {
		t.Fatal("catch-up ran before any good heartbeat")
	}
	h.timers.waitFire(t, testBeat)
	h.waitLog("caught up 1 mails", 1)
}

func TestCatchUpAndEventStreamShareOneDeduplicationSet(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	hold := make(chan struct{})
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step { return fakeadapter.Step{Hold: hold} }
	dir := workdir(t, "p")
	id := gw.deliverMail(mailOpts{from: "alice", subject: "both ways", workspace: dir})
	h := startBridge(t, gw, fake, nil)
	h.waitTurns("the caught-up turn", func(ts []fakeadapter.Turn) bool { return len(ts) == 1 })
	// The same mail also arrives over SSE (the B-7.3 window).
	gw.pushExisting(id)
	h.waitLog("duplicate dropped", 1)
	close(hold)
	h.waitLog("caught up 1 mails", 1)
	if n := len(fake.Turns()); n != 1 {
		t.Fatalf("mail ran %d turns, want 1", n)
	}
}

func TestCatchUpSkipsMailsAnEarlierRunHandled(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	dir := workdir(t, "p")
	gw.deliverMail(mailOpts{from: "alice", subject: "while down", workspace: dir})
	h := startBridge(t, gw, fake, nil)
	h.waitLog("caught up 1 mails", 1)
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	h.stop()
	// The model never called read_inbox, so the mail is still unread; a
	// second restart must not run it again.
	h2 := startBridge(t, gw, fake, nil)
	h2.waitLog("caught up 0 mails", 1)
	if h2.logs.CountLines("already handled by an earlier run") != 1 || len(fake.Turns()) != 1 {
		t.Fatalf("restart re-ran the mail: %d turns\n%s", len(fake.Turns()), h2.logs)
	}
}

// --- B-3 delivery, D-6 workspace

func TestDeliveryRunsInToWorkspaceWithPromptAndToolEnv(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	dir := workdir(t, "proj")
	h := startBridge(t, gw, fake, nil)
	id := gw.deliverMail(mailOpts{from: "alice", subject: "fix it", workspace: dir, push: true})
	h.waitTurns("the turn", turnsDone(1))
	tr := fake.Turns()[0]
	if tr.Req.Cwd != dir {
		t.Fatalf("turn cwd = %q, want to_workspace %q (B-3.1)", tr.Req.Cwd, dir)
	}
	for _, want := range []string{"read_inbox", id, "sent back to the sender automatically", "do not call send_mail"} {
		if !strings.Contains(tr.Req.Prompt, want) {
			t.Fatalf("prompt lacks %q (B-3.4/B-3.5):\n%s", want, tr.Req.Prompt)
		}
	}
	if tr.Req.ToolEnv["AGENTMAIL_SESSION_ID"] == "" || tr.Req.ToolEnv["AGENTMAIL_MAIL_ID"] != id || tr.Req.ToolEnv["AGENTMAIL_PERMISSION_MODE"] != "workspace" {
		t.Fatalf("tool env = %v", tr.Req.ToolEnv)
	}
}

func TestWorkspaceFallbackNeverCreatesDirectories(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fallback := workdir(t, "fallback")
	missing := filepath.Join(t.TempDir(), "porgram", "x")
	h := startBridge(t, gw, fake, func(c *bridge.Config) { c.Settings.FallbackDir = fallback })
	gw.deliverMail(mailOpts{from: "alice", subject: "typo", workspace: missing, push: true})
	gw.deliverMail(mailOpts{from: "alice", subject: "relative", workspace: "rel/dir", push: true})
	gw.deliverMail(mailOpts{from: "alice", subject: "none", workspace: "", push: true})
	h.waitTurns("three turns", turnsDone(3))
	for _, tr := range fake.Turns() {
		if tr.Req.Cwd != fallback {
			t.Fatalf("turn cwd = %q, want the fallback %q", tr.Req.Cwd, fallback)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the missing directory exists now (N-2): %v", err)
	}
	if _, err := os.Stat(filepath.Join(fallback, "rel")); !os.IsNotExist(err) {
		t.Fatal("a relative directory was created")
	}
	if h.logs.CountLines("expected="+missing) != 1 || h.logs.CountLines("actual="+fallback) < 3 {
		t.Fatalf("fallback log lines must name expected and actual (D-6.4)\n%s", h.logs)
	}
}

func TestNoUsableWorkspaceSendsAFailureReport(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	missing := filepath.Join(t.TempDir(), "nope")
	h := startBridge(t, gw, fake, nil) // no fallback
	id := gw.deliverMail(mailOpts{from: "alice", subject: "where", workspace: missing, push: true})
	h.waitGW("the failure report", func() bool { return len(gw.sends) == 1 })
	m := gw.sentMails()[0]
	if m.RelayKey != "model-failure:"+id || m.Relay != "summary" || m.MailType != client.MailTypeFailureReport ||
		m.Subject != "处理失败: where" || m.ReplyTo != id || !strings.Contains(m.Body, missing) {
		t.Fatalf("failure report = %+v", m)
	}
	if len(fake.Turns()) != 0 {
		t.Fatal("a turn ran without a working directory")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatal("the directory was created")
	}
}

// A mail answered with a failure report for want of a working directory
// stays unread (no model read it) and has no run; a restart's catch-up
// skips it quietly instead of logging an error and sending the report again.
func TestCatchUpSkipsAMailAlreadyAnsweredWithAFailureReport(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	missing := filepath.Join(t.TempDir(), "gone")
	id := gw.deliverMail(mailOpts{from: "alice", subject: "while down", workspace: missing})
	h := startBridge(t, gw, fake, nil) // no fallback
	h.waitLog("caught up 1 mails", 1)
	if n := h.logs.CountLines("no usable working directory; sending a failure report"); n != 1 || len(gw.sentMails()) != 1 {
		t.Fatalf("first catch-up: %d errors, %d sends\n%s", n, len(gw.sentMails()), h.logs)
	}
	h.stop()
	gw.mu.Lock()
	unread := gw.unread[id]
	gw.mu.Unlock()
	if !unread {
		t.Fatal("the fake gateway marked the mail read; the restart would not see it")
	}
	h2 := startBridge(t, gw, fake, nil)
	h2.waitLog("caught up 0 mails", 1)
	if n := h2.logs.CountLines("no usable working directory; sending a failure report"); n != 0 {
		t.Errorf("the restart logged the answered mail as one without a working directory %d times\n%s", n, h2.logs)
	}
	if n := h2.logs.CountLines("already answered with a failure report; skipped"); n != 1 {
		t.Errorf("the skip was logged %d times, want once\n%s", n, h2.logs)
	}
	if n := len(gw.sentMails()); n != 1 || len(fake.Turns()) != 0 {
		t.Errorf("after the restart: %d sends, %d turns; want the one report and no turn", n, len(fake.Turns()))
	}
	// The same mail arriving over the event stream is a duplicate now.
	gw.pushExisting(id)
	h2.waitLog("duplicate dropped", 1)
}

func TestSessionMapSurvivesABridgeRestart(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	dir := workdir(t, "p")
	h := startBridge(t, gw, fake, nil)
	first := gw.deliverMail(mailOpts{from: "alice", subject: "start", workspace: dir, push: true})
	h.waitTurns("first turn", turnsDone(1))
	h.waitGW("the bind", func() bool { return len(gw.binds) == 1 })
	h.stop()
	psid := fake.Turns()[0].PlatformSessionID
	sessionID := fake.Turns()[0].Req.MailSessionID
	if got := gw.session(sessionID).PlatformSessionID; got != psid {
		t.Fatalf("gateway session holds platform session %q, want %q (B-3.3)", got, psid)
	}
	h2 := startBridge(t, gw, fake, nil)
	h2.waitGW("subscription", func() bool { return len(gw.subscribe) == 2 })
	gw.deliverMail(mailOpts{from: "alice", subject: "Re: start", workspace: dir, session: sessionID, push: true})
	h2.waitTurns("second turn", turnsDone(2))
	tr := fake.Turns()[1]
	if tr.Req.PlatformSessionID != psid || tr.NewSession {
		t.Fatalf("follow-up ran in %q (new=%v), want the same platform session %q", tr.Req.PlatformSessionID, tr.NewSession, psid)
	}
	_ = first
}

func TestDeletedPlatformSessionIsReplacedAndRebound(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	dir := workdir(t, "p")
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "one", workspace: dir, push: true})
	h.waitTurns("first turn", turnsDone(1))
	tr := fake.Turns()[0]
	fake.DeleteSession(tr.PlatformSessionID)
	gw.deliverMail(mailOpts{from: "alice", subject: "two", workspace: dir, session: tr.Req.MailSessionID, push: true})
	h.waitGW("second reply", func() bool { return len(gw.sends) == 2 })
	turns := fake.Turns()
	last := turns[len(turns)-1]
	if !last.NewSession || gw.session(tr.Req.MailSessionID).PlatformSessionID != last.PlatformSessionID {
		t.Fatalf("after the platform lost the session: last turn new=%v in %s, bound %s", last.NewSession, last.PlatformSessionID,
			gw.session(tr.Req.MailSessionID).PlatformSessionID)
	}
}

// --- B-5 turn end

func TestTurnEndRelaysTheTextAsASummaryKeyedByTheMessageID(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{Text: "  Fixed.\n\nDetails follow.  ", MessageID: "msg_abc"}
	}
	h := startBridge(t, gw, fake, nil)
	id := gw.deliverMail(mailOpts{from: "alice", subject: "fix", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	m := gw.sentMails()[0]
	if m.Relay != client.RelaySummary || m.RelayKey != "msg_abc" || m.ReplyTo != id || m.To != "alice" || m.Subject != "Re: fix" {
		t.Fatalf("reply = %+v, want a summary relay keyed msg_abc replying to %s", m, id)
	}
	if m.Body != "  Fixed.\n\nDetails follow.  " {
		t.Fatalf("reply body = %q: the model's text must be relayed unaltered (N-10)", m.Body)
	}
}

func TestNoRelayWhenTheModelAlreadyMailedTheThread(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{Text: "done", Do: func(ctx context.Context, req bridge.TurnRequest) error {
			gw.modelSend(req.MailID, "my own answer")
			return nil
		}}
	}
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "q", workspace: workdir(t, "p"), push: true})
	h.waitLog("the model already mailed this thread", 1)
	for _, m := range gw.sentMails() {
		if m.Relay != "" {
			t.Fatalf("a relay was sent after the model mailed the thread itself: %+v", m)
		}
	}
}

func TestAnEarlierTurnsOwnMailDoesNotSuppressTheNextRelay(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	n := 0
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		n++
		if n == 1 {
			return fakeadapter.Step{Do: func(ctx context.Context, req bridge.TurnRequest) error { gw.modelSend(req.MailID, "mine"); return nil }}
		}
		return fakeadapter.Step{Text: "second answer"}
	}
	h := startBridge(t, gw, fake, nil)
	dir := workdir(t, "p")
	first := gw.deliverMail(mailOpts{from: "alice", subject: "q", workspace: dir, push: true})
	h.waitLog("the model already mailed this thread", 1)
	gw.mu.Lock()
	sessionID := gw.findMailLocked(first).SessionID
	gw.mu.Unlock()
	gw.deliverMail(mailOpts{from: "alice", subject: "q2", workspace: dir, session: sessionID, push: true})
	h.waitGW("the second turn's relay", func() bool {
		for _, s := range gw.sends {
			if s.Relay == client.RelaySummary && s.Body == "second answer" {
				return true
			}
		}
		return false
	})
}

func TestNoEmptyMailAndNoAutomaticReplyToAgents(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		if strings.Contains(req.Prompt, "empty") {
			return fakeadapter.Step{Empty: true}
		}
		return fakeadapter.Step{Text: "hello agent"}
	}
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "empty", workspace: workdir(t, "a"), push: true})
	gw.deliverMail(mailOpts{from: "peer", fromKind: "agent", subject: "from an agent", workspace: workdir(t, "b"), push: true})
	h.waitTurns("both turns", turnsDone(2))
	h.waitLog("no automatic reply: the turn ended without text", 1)
	h.waitLog("no automatic reply: the sender is not a person", 1)
	if s := gw.sentMails(); len(s) != 0 {
		t.Fatalf("mails sent: %+v, want none", s)
	}
	// The agent's prompt tells the model to answer explicitly.
	for _, tr := range fake.Turns() {
		if strings.Contains(tr.Req.Prompt, "from an agent") && !strings.Contains(tr.Req.Prompt, "nothing is sent back automatically") {
			t.Fatalf("agent mail prompt does not say replies are explicit:\n%s", tr.Req.Prompt)
		}
	}
}

// --- D-3 model fallback, B-6 failure reports

func TestModelFallbackTriesTheScopeInOrderWithAFreshSessionEach(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	gw.unrestricted = false
	gw.allowed = []client.ModelRef{{Provider: "p", Model: "bad"}, {Provider: "p", Model: "good"}}
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{ModelFailures: map[string]string{"p/bad": "NO_ADAPTER"}, Text: "answer"}
	}
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "go", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	turns := fake.Turns()
	if len(turns) != 2 || turns[0].Model != "p/bad" || turns[1].Model != "p/good" {
		t.Fatalf("attempts = %d (%v), want p/bad then p/good", len(turns), turns)
	}
	if !turns[0].Stopped {
		t.Fatal("the failed attempt's turn was not stopped (D-3.5)")
	}
	if turns[1].Req.PlatformSessionID != "" || turns[0].PlatformSessionID == turns[1].PlatformSessionID {
		t.Fatal("the retry did not get a fresh platform session (D-3.5)")
	}
	if h.logs.CountLines("p/good succeeded (after 1 failed: p/bad)") != 1 {
		t.Fatalf("missing fallback log line\n%s", h.logs)
	}
	if m := gw.sentMails()[0]; m.Body != "answer" || m.Relay != client.RelaySummary {
		t.Fatalf("reply = %+v", m)
	}
	runs := gw.allRuns()
	if len(runs) != 2 || runs[0].State != client.RunFailed || runs[0].Error != "NO_ADAPTER" || runs[0].Attempt != 1 ||
		runs[1].State != client.RunFinished || runs[1].Model != "p/good" || runs[1].Attempt != 2 {
		t.Fatalf("runs = %+v", runs)
	}
}

func TestAllModelsFailingSendsOneFailureReportListingEveryRoute(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	gw.unrestricted = false
	gw.allowed = []client.ModelRef{{Provider: "p", Model: "a"}, {Provider: "q", Model: "b"}}
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{ModelFailures: map[string]string{"p/a": "401 bad key", "q/b": "model not found"}}
	}
	h := startBridge(t, gw, fake, nil)
	id := gw.deliverMail(mailOpts{from: "alice", subject: "Re: 重构导入路径", workspace: workdir(t, "p"), push: true})
	h.waitGW("the failure report", func() bool { return len(gw.sends) == 1 })
	m := gw.sentMails()[0]
	if m.Subject != "处理失败: 重构导入路径" || m.RelayKey != "model-failure:"+id || m.Relay != "summary" || m.MailType != "failure_report" {
		t.Fatalf("failure report header = %+v", m)
	}
	for _, want := range []string{"p/a", "401 bad key", "q/b", "model not found", "Where to adjust", "/api/v1/admin/agents/bot/models"} {
		if !strings.Contains(m.Body, want) {
			t.Fatalf("failure report body lacks %q:\n%s", want, m.Body)
		}
	}
	h.waitLog("failure report sent", 1) // B-6.4: logged as well
}

func TestEmptyAllowedListMeansNothingIsAllowed(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	gw.unrestricted = false
	fake := fakeadapter.New()
	h := startBridge(t, gw, fake, nil)
	h.waitGW("first heartbeat", func() bool { return len(gw.beats) >= 1 })
	gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: workdir(t, "p"), push: true})
	h.waitGW("the failure report", func() bool { return len(gw.sends) == 1 })
	if len(fake.Turns()) != 0 || !strings.Contains(gw.sentMails()[0].Body, "allows no model") {
		t.Fatalf("turns %d, report %+v", len(fake.Turns()), gw.sentMails()[0])
	}
}

func TestWithoutPerTurnModelOnlyThePlatformDefaultIsTried(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	gw.unrestricted = false
	gw.allowed = []client.ModelRef{{Provider: "p", Model: "a"}, {Provider: "p", Model: "b"}}
	fake := fakeadapter.New()
	fake.Caps.PerTurnModel = false
	h := startBridge(t, gw, fake, nil)
	h.waitGW("first heartbeat", func() bool { return len(gw.beats) >= 1 })
	gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	if tr := fake.Turns(); len(tr) != 1 || tr[0].Req.Model != nil {
		t.Fatalf("turns = %+v, want one with the platform default", tr)
	}
}

func TestNoVerdictWithinTheTimeoutCountsAsSuccess(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	gw.unrestricted = false
	gw.allowed = []client.ModelRef{{Provider: "p", Model: "slow"}, {Provider: "p", Model: "other"}}
	fake := fakeadapter.New()
	hold := make(chan struct{})
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{NoVerdict: true, Hold: hold, Text: "slow answer"}
	}
	h := startBridge(t, gw, fake, nil)
	h.waitGW("first heartbeat", func() bool { return len(gw.beats) >= 1 })
	gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: workdir(t, "p"), push: true})
	h.waitTurns("the turn", func(ts []fakeadapter.Turn) bool { return len(ts) == 1 })
	h.timers.waitFire(t, testVerdict)
	h.waitLog("counted as success (D-3.4)", 1)
	close(hold)
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	if n := len(fake.Turns()); n != 1 {
		t.Fatalf("attempts = %d, want 1: a slow model is not replaced", n)
	}
}

func TestFailureSignalledOnlyAtTurnEndStillFallsBack(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	gw.unrestricted = false
	gw.allowed = []client.ModelRef{{Provider: "p", Model: "a"}, {Provider: "p", Model: "b"}}
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		if bridge.ModelLabel(req.Model) == "p/a" {
			return fakeadapter.Step{FailSilently: "stopReason error: 400 bad model"}
		}
		return fakeadapter.Step{Text: "from b"}
	}
	h := startBridge(t, gw, fake, nil)
	h.waitGW("first heartbeat", func() bool { return len(gw.beats) >= 1 })
	gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	if m := gw.sentMails()[0]; m.Body != "from b" {
		t.Fatalf("reply = %+v, want b's answer (C-4: a failed turn end is not an empty success)", m)
	}
}

func TestSessionCreationFailureIsReported(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{RunErr: errors.New("spawn claude: no such file")}
	}
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: workdir(t, "p"), push: true})
	h.waitGW("the failure report", func() bool { return len(gw.sends) == 1 })
	if b := gw.sentMails()[0].Body; !strings.Contains(b, "creating or running the platform session") || !strings.Contains(b, "spawn claude") {
		t.Fatalf("report body:\n%s", b)
	}
}

// --- B-8 permissions, B-4 decisions, B-9 shutdown

func askStep(id string) fakeadapter.Step {
	return fakeadapter.Step{Asks: []bridge.PermissionAsk{{PlatformID: id, ToolName: "Bash",
		Input: map[string]any{"command": "rm -rf build/"}}}}
}

func TestPermissionAskBecomesARequestAndTheDecisionAnswersIt(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step { return askStep("perm_1") }
	dir := workdir(t, "p")
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "clean", workspace: dir, push: true})
	h.waitGW("the permission request", func() bool { return gw.perms["perm_1"] != nil })
	p := gw.permission("perm_1")
	if p.Tool != "Bash" || !strings.Contains(p.Context, "rm -rf build/") {
		t.Fatalf("permission request = %+v, want tool and argument summary (B-8.4)", p)
	}
	gw.decide("perm_1", true, "approve", "alice")
	h.waitTurns("the answer", turnsDone(1))
	if a := fake.Turns()[0].Answers; len(a) != 1 || !a[0].Allow {
		t.Fatalf("answers = %+v, want allow", a)
	}
}

func TestDeniedDecisionDenies(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step { return askStep("perm_2") }
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "clean", workspace: workdir(t, "p"), push: true})
	h.waitGW("the permission request", func() bool { return gw.perms["perm_2"] != nil })
	gw.decide("perm_2", false, "deny", "alice")
	h.waitTurns("the answer", turnsDone(1))
	if a := fake.Turns()[0].Answers; len(a) != 1 || a[0].Allow || !strings.Contains(a[0].Message, "Denied") {
		t.Fatalf("answers = %+v, want deny", a)
	}
}

func TestTiersAndGrants(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tier      bridge.Tier
		grant     bool
		permErr   error
		wantAllow bool
		wantAsked bool
	}{
		{"plan refuses without asking", bridge.TierPlan, false, nil, false, false},
		{"full allows without asking", bridge.TierFull, false, nil, true, false},
		{"workspace with a grant allows without asking", bridge.TierWorkspace, true, nil, true, false},
		{"workspace forwarding failure fails closed", bridge.TierWorkspace, false,
			apiErr(409, "no_decider", "no person in this session can decide", "add a person"), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := newFakeGateway("bot", "k")
			gw.permErr = tc.permErr
			dir := workdir(t, "p")
			if tc.grant {
				gw.grants = []client.Grant{{GrantID: "g1", AgentName: "bot", Tool: "Bash", Scope: dir}}
			}
			fake := fakeadapter.New()
			fake.Script = func(req bridge.TurnRequest) fakeadapter.Step { return askStep("perm_t") }
			h := startBridge(t, gw, fake, func(c *bridge.Config) { c.Settings.Tier = tc.tier })
			gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: dir, push: true})
			h.waitTurns("the turn", turnsDone(1))
			a := fake.Turns()[0].Answers
			if len(a) != 1 || a[0].Allow != tc.wantAllow {
				t.Fatalf("answers = %+v, want allow=%v", a, tc.wantAllow)
			}
			if asked := gw.permission("perm_t") != nil; asked != tc.wantAsked {
				t.Fatalf("asked a person = %v, want %v", asked, tc.wantAsked)
			}
			if tc.permErr != nil && !strings.Contains(a[0].Message, "add a person") {
				t.Fatalf("deny message %q lacks the gateway's suggestion (D-7.3)", a[0].Message)
			}
		})
	}
}

func TestShutdownFailsPendingPermissionsClosedAndStopsTurnsWithoutMail(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step { return askStep("perm_s") }
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: workdir(t, "p"), push: true})
	h.waitGW("the permission request", func() bool { return gw.perms["perm_s"] != nil })
	h.stop()
	turns := fake.Turns()
	if len(turns) != 1 || !turns[0].Done || len(turns[0].Answers) != 1 || turns[0].Answers[0].Allow {
		t.Fatalf("turn after shutdown = %+v, want done with a deny answer (B-9.2)", turns)
	}
	if s := gw.sentMails(); len(s) != 0 {
		t.Fatalf("mails sent at shutdown: %+v (B-9.3)", s)
	}
	if fake.Closes() != 1 {
		t.Fatal("adapter not closed")
	}
	runs := gw.allRuns()
	if len(runs) != 1 || runs[0].State != client.RunFailed || !strings.Contains(runs[0].Error, "interrupted") {
		t.Fatalf("runs = %+v, want one failed run marked interrupted", runs)
	}
}

func TestDecisionAfterRestartGoesIntoTheOriginalPlatformSession(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	dir := workdir(t, "p")
	h := startBridge(t, gw, fake, nil)
	id := gw.deliverMail(mailOpts{from: "alice", subject: "deploy", workspace: dir, push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	h.stop()
	tr := fake.Turns()[0]
	sessions := fake.SessionCount()

	h2 := startBridge(t, gw, fake, nil)
	h2.waitGW("subscription", func() bool { return len(gw.subscribe) == 2 })
	gw.decideRaw(client.PermissionDecisionEvent{MailID: "mail_perm", DecisionMailID: id, Decision: "approve", Approved: true,
		DecidedBy: "alice", SessionID: tr.Req.MailSessionID, RelayKey: "perm_lost", RelayKind: "permission"})
	h2.waitTurns("the decision turn", turnsDone(2))
	d := fake.Turns()[1]
	if d.Req.PlatformSessionID != tr.PlatformSessionID || d.NewSession || fake.SessionCount() != sessions {
		t.Fatalf("decision ran in %q (new=%v), want the original %q and no new session (B-4.2/B-4.3)",
			d.Req.PlatformSessionID, d.NewSession, tr.PlatformSessionID)
	}
	if !strings.Contains(d.Req.Prompt, "approved") {
		t.Fatalf("decision prompt:\n%s", d.Req.Prompt)
	}
}

func TestDecisionWithoutABoundSessionStartsNothing(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	h := startBridge(t, gw, fake, nil)
	sessionID := gw.newSession(workdir(t, "p"), "s")
	gw.decideRaw(client.PermissionDecisionEvent{MailID: "m", DecisionMailID: "d", Approved: true, SessionID: sessionID, RelayKey: "r"})
	h.waitLog("not delivered (B-4.3", 1)
	if len(fake.Turns()) != 0 || fake.SessionCount() != 0 {
		t.Fatal("a decision without a platform session started a turn")
	}
}

// --- D-5 aliases

func TestAliasLadderSyncsAndWritesTheFinalAliasBack(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	n := 0
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		n++
		if n == 1 {
			return fakeadapter.Step{Title: "The user is asking me to generate a title for a coding-agent"}
		}
		return fakeadapter.Step{}
	}
	dir := workdir(t, "p")
	// Another session already holds the alias the subject derives to.
	other := gw.newSession(dir, "x")
	gw.mu.Lock()
	gw.sessions[other].Alias = "fix-the-leak"
	gw.mu.Unlock()
	h := startBridge(t, gw, fake, nil)
	id := gw.deliverMail(mailOpts{from: "alice", subject: "Re: Fix the leak", workspace: dir, push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	gw.mu.Lock()
	syncs := append([]client.SyncSessionRequest(nil), gw.syncs...)
	sessionID := gw.findMailLocked(id).SessionID
	gw.mu.Unlock()
	// The leaked title is unusable: level 3, from the subject; no title sent.
	if len(syncs) != 1 || syncs[0].Alias != "fix-the-leak" || syncs[0].Title != "" || syncs[0].AliasLevel != 3 {
		t.Fatalf("syncs = %+v, want alias fix-the-leak from the subject (level 3) and no title", syncs)
	}
	if got := gw.session(sessionID).Alias; got != "fix-the-leak-2" {
		t.Fatalf("gateway alias = %q", got)
	}
	r := fake.Renames()
	if len(r) != 1 || r[0][1] != "fix-the-leak-2" {
		t.Fatalf("renames = %v, want the gateway's final alias written back", r)
	}
	// A second turn with the same proposal submits nothing (fingerprint).
	gw.deliverMail(mailOpts{from: "alice", subject: "Re: Fix the leak", workspace: dir, session: sessionID, push: true})
	h.waitGW("second reply", func() bool { return len(gw.sends) == 2 })
	gw.mu.Lock()
	ns := len(gw.syncs)
	gw.mu.Unlock()
	if ns != 1 || len(fake.Renames()) != 1 {
		t.Fatalf("syncs %d renames %d after an unchanged second turn, want 1 and 1", ns, len(fake.Renames()))
	}
}

func TestAPlatformTitleIsNotOverwrittenWhenTheGatewayKeepsItsAlias(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step { return fakeadapter.Step{Title: "Refactor imports"} }
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	gw.mu.Lock()
	syncs := append([]client.SyncSessionRequest(nil), gw.syncs...)
	gw.mu.Unlock()
	if len(syncs) != 1 || syncs[0].Alias != "refactor-imports" || syncs[0].Title != "Refactor imports" || syncs[0].AliasLevel != 2 {
		t.Fatalf("syncs = %+v, want level 2 from the title", syncs)
	}
	if r := fake.Renames(); len(r) != 0 {
		t.Fatalf("renames = %v: the platform's title must stay when the gateway accepted its alias", r)
	}
}

func TestPlatformSlugIsLevelOne(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{Slug: "witty-planet", Title: "重构导入路径"}
	}
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "whatever", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	gw.mu.Lock()
	syncs := append([]client.SyncSessionRequest(nil), gw.syncs...)
	gw.mu.Unlock()
	if len(syncs) != 1 || syncs[0].Alias != "witty-planet" || syncs[0].Title != "重构导入路径" || syncs[0].AliasLevel != 1 {
		t.Fatalf("syncs = %+v", syncs)
	}
	if len(fake.Renames()) != 0 {
		t.Fatalf("renamed although the gateway kept the platform's slug: %v", fake.Renames())
	}
}

// --- concurrency and runs

func TestConcurrencyCapQueuesAndNeverDrops(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	hold := make(chan struct{})
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step { return fakeadapter.Step{Hold: hold} }
	h := startBridge(t, gw, fake, func(c *bridge.Config) { c.MaxTurns = 2 })
	shared := workdir(t, "shared")
	gw.deliverMail(mailOpts{from: "alice", subject: "a", workspace: workdir(t, "a"), push: true})
	gw.deliverMail(mailOpts{from: "alice", subject: "b", workspace: shared, push: true})
	gw.deliverMail(mailOpts{from: "alice", subject: "c", workspace: shared, push: true}) // same directory as b
	gw.deliverMail(mailOpts{from: "alice", subject: "d", workspace: workdir(t, "d"), push: true})
	h.waitTurns("two running turns", func(ts []fakeadapter.Turn) bool { return len(ts) == 2 })
	h.waitLog("mail queued", 2)
	if n := len(fake.Turns()); n != 2 {
		t.Fatalf("%d turns started with a cap of 2", n)
	}
	if h.logs.CountLines("another turn runs in the same directory") != 1 {
		t.Fatalf("no directory-busy line\n%s", h.logs)
	}
	close(hold)
	h.waitGW("four replies", func() bool { return len(gw.sends) == 4 })
}

func TestRunsCarryProcessFacts(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	h := startBridge(t, gw, fake, nil)
	id := gw.deliverMail(mailOpts{from: "alice", subject: "x", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	runs := gw.allRuns()
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	r := runs[0]
	if r.MailID != id || r.AgentName != "bot" || r.State != client.RunFinished || r.Model != "platform default" ||
		r.Attempt != 1 || r.EndedAt == nil || r.StopReason != "end_turn" || r.BytesRead == 0 {
		t.Fatalf("run = %+v", r)
	}
}

func TestCcIntoAnotherAgentsSessionNeitherBindsNorRenamesIt(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{Title: "Refactor imports"}
	}
	dir := workdir(t, "p")
	sessionID := gw.newSession(dir, "x")
	gw.mu.Lock()
	gw.sessions[sessionID].AgentName = "other-agent" // this agent was only cc'd
	alias := gw.sessions[sessionID].Alias
	gw.mu.Unlock()
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "Refactor", workspace: dir, session: sessionID, push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	gw.mu.Lock()
	defer gw.mu.Unlock()
	if len(gw.binds) != 0 || len(gw.syncs) != 0 {
		t.Fatalf("binds = %v, syncs = %+v: a cc'd agent must leave the other agent's session alone", gw.binds, gw.syncs)
	}
	if gw.sessions[sessionID].Alias != alias {
		t.Fatalf("alias changed to %q", gw.sessions[sessionID].Alias)
	}
}
