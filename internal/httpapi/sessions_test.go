package httpapi_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

func TestSyncAliasIsDecidedByTheServer(t *testing.T) {
	e := newEnv(t)
	a := e.agent("pi")
	r1, _ := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "pi@/w.new", Subject: "one", Body: "x"})
	r2, _ := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "pi@/w.new", Subject: "two", Body: "x"})

	s, err := a.SyncSession(e.ctx(), r1.SessionID, client.SyncSessionRequest{Alias: "fix.leak@home/x", Title: "Fix the leak"})
	if err != nil || s.Alias != "fixleakhomex" || s.Subject != "Fix the leak" || s.AliasSource != "platform_slug" {
		t.Fatalf("W-7.1 = %+v, %v", s, err)
	}
	// A clash gets -2.
	s, err = a.SyncSession(e.ctx(), r2.SessionID, client.SyncSessionRequest{Alias: "fixleakhomex"})
	if err != nil || s.Alias != "fixleakhomex-2" {
		t.Fatalf("clash = %+v, %v", s, err)
	}
	// Placeholders are ignored (W-7.2).
	s, err = a.SyncSession(e.ctx(), r2.SessionID, client.SyncSessionRequest{Alias: "新会话", Title: "New session - 2026-09-02"})
	if err != nil || s.Alias != "fixleakhomex-2" || s.Subject != "two" {
		t.Fatalf("placeholder = %+v, %v", s, err)
	}
	// Chinese stays (W-7.3).
	r4, _ := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "pi@/w.new", Subject: "four", Body: "x"})
	s, err = a.SyncSession(e.ctx(), r4.SessionID, client.SyncSessionRequest{Alias: "重构导入"})
	if err != nil || s.Alias != "重构导入" {
		t.Fatalf("chinese = %+v, %v", s, err)
	}
	// A person's alias wins over every later sync.
	manual := "leak"
	if _, err := e.admin.MeUpdateSession(e.ctx(), r1.SessionID, client.UpdateSessionRequest{Alias: &manual}); err != nil {
		t.Fatal(err)
	}
	s, err = a.SyncSession(e.ctx(), r1.SessionID, client.SyncSessionRequest{Alias: "witty-planet"})
	if err != nil || s.Alias != "leak" || s.AliasSource != "manual" {
		t.Fatalf("manual wins = %+v, %v", s, err)
	}
	// The final alias addresses the session.
	r3, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "pi@/w.重构导入", Subject: "again", Body: "x"})
	if err != nil || r3.SessionID != r4.SessionID {
		t.Fatalf("send to synced alias = %+v, %v", r3, err)
	}
	// Another agent cannot sync a session it is not in.
	other := e.agent("dsh")
	_, err = other.SyncSession(e.ctx(), r1.SessionID, client.SyncSessionRequest{Alias: "x"})
	wantStatus(t, err, 404, "session_not_found")
}

func TestPlatformSessionBindingAndMirroredSlug(t *testing.T) {
	e := newEnv(t)
	a := e.agent("oc")
	r, _ := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "oc@/w.new", Subject: "task", Body: "x"})
	s, err := a.BindPlatformSession(e.ctx(), r.SessionID, client.BindPlatformSessionRequest{PlatformSessionID: "ses_abc"})
	if err != nil || s.PlatformSessionID != "ses_abc" {
		t.Fatalf("bind = %+v, %v", s, err)
	}
	got, err := a.GetSession(e.ctx(), r.SessionID)
	if err != nil || got.PlatformSessionID != "ses_abc" {
		t.Fatalf("GetSession = %+v, %v", got, err)
	}
	// A slug from the heartbeat mirror is a known alias: the first mail
	// opens the mail session bound to that platform session.
	ps := []client.PlatformSession{{PlatformID: "ses_ui", Workspace: "/w", Slug: "witty-planet", Title: "Refactor"}}
	if _, err := a.Heartbeat(e.ctx(), client.HeartbeatRequest{PlatformSessions: &ps}); err != nil {
		t.Fatal(err)
	}
	m, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "oc@/w.witty-planet", Subject: "join", Body: "x"})
	if err != nil || !m.NewSession || m.SessionAlias != "witty-planet" {
		t.Fatalf("send to mirrored slug = %+v, %v", m, err)
	}
	got, err = a.GetSession(e.ctx(), m.SessionID)
	if err != nil || got.PlatformSessionID != "ses_ui" || got.AliasSource != "platform_slug" {
		t.Fatalf("mirrored session = %+v, %v", got, err)
	}
}

func TestSessionListingAndMails(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	var last *client.SendMailResponse
	for i := 0; i < 3; i++ {
		r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w.new", Subject: fmt.Sprint("s", i), Body: "body text"})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
		last = r
	}
	if _, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: last.MailID, Body: "answer\nline two"}); err != nil {
		t.Fatal(err)
	}
	l, err := e.admin.MeSessions(e.ctx(), client.PageQuery{Limit: 2})
	if err != nil || len(l.Sessions) != 2 || l.NextCursor == "" {
		t.Fatalf("page 1 = %+v, %v", l, err)
	}
	top := l.Sessions[0]
	if top.SessionID != last.SessionID || top.Unread != 1 || top.MailCount != 2 || top.LastFrom != "dsh" ||
		top.LastSnippet != "answer line two" || len(top.Participants) != 2 || top.BudgetMax != 20 || top.UsedRounds != 1 {
		t.Fatalf("top session = %+v", top)
	}
	l2, err := e.admin.MeSessions(e.ctx(), client.PageQuery{Limit: 2, Cursor: l.NextCursor})
	if err != nil || len(l2.Sessions) != 1 || l2.Sessions[0].Subject != "s0" {
		t.Fatalf("page 2 = %+v, %v", l2, err)
	}
	ms, err := e.admin.MeSessionMails(e.ctx(), last.SessionID)
	if err != nil || len(ms.Mails) != 2 || ms.Mails[0].FromName != "admin" || ms.Mails[1].Subject != "Re: s2" {
		t.Fatalf("session mails = %+v, %v", ms, err)
	}
	th, err := a.Thread(e.ctx(), last.MailID)
	if err != nil || len(th.Mails) != 2 {
		t.Fatalf("thread = %+v, %v", th, err)
	}
	sent, err := e.admin.MeSent(e.ctx())
	if err != nil || len(sent.Mails) != 3 || sent.Mails[0].MailID != last.MailID {
		t.Fatalf("sent = %+v, %v", sent, err)
	}
	c, err := e.admin.MeCounts(e.ctx())
	if err != nil || c.Unread != 1 {
		t.Fatalf("counts = %+v, %v", c, err)
	}
	d, err := e.admin.Agent(e.ctx(), "dsh")
	if err != nil || len(d.Sessions) != 3 || !d.ModelsUnrestricted {
		t.Fatalf("agent detail = %+v, %v", d, err)
	}
	bad := -1
	_, err = e.admin.MeUpdateSession(e.ctx(), last.SessionID, client.UpdateSessionRequest{BudgetMax: &bad})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "budget_max" {
		t.Fatalf("field %q", ae.Body.Field)
	}
}

func TestForwardStartsANewThreadLinkedInTheTree(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	e.agent("pi")
	r, _ := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w.new", Subject: "bug", Body: "it crashes"})
	reply, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Body: "looking"})
	if err != nil {
		t.Fatal(err)
	}
	fw, err := e.admin.MeForward(e.ctx(), reply.MailID, client.ForwardRequest{To: "pi@/other.new", Body: "please help"})
	if err != nil || fw.SessionID == r.SessionID || !fw.NewSession {
		t.Fatalf("forward = %+v, %v", fw, err)
	}
	m, err := e.admin.MeGetMail(e.ctx(), fw.MailID)
	if err != nil || m.Subject != "Fwd: Re: bug" || m.ParentMailID != reply.MailID {
		t.Fatalf("forwarded mail = %+v, %v", m, err)
	}
	tr, err := e.admin.MeTree(e.ctx(), fw.MailID, client.TreeQuery{})
	if err != nil || tr.RootID != r.MailID || tr.Total != 3 || len(tr.Nodes) != 3 {
		t.Fatalf("tree = %+v, %v", tr, err)
	}
	if tr.Nodes[2].MailID != fw.MailID || tr.Nodes[2].Depth != 2 || tr.Nodes[2].SessionID == r.SessionID {
		t.Fatalf("the forward is not the cross-session leaf: %+v", tr.Nodes)
	}
	// dsh sees neither the forward nor pi's session.
	_, err = a.GetMail(e.ctx(), fw.MailID)
	wantStatus(t, err, 404, "")
}

func TestTreeLoadsInPagesBothWays(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	r, _ := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w.new", Subject: "chain", Body: "0"})
	ids := []string{r.MailID}
	for i := 1; i < 10; i++ {
		var resp *client.SendMailResponse
		var err error
		if i%2 == 1 {
			resp, err = a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: ids[i-1], Body: fmt.Sprint(i), Relay: "summary", RelayKey: fmt.Sprint("k", i)})
		} else {
			resp, err = e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", ReplyTo: ids[i-1], Body: fmt.Sprint(i)})
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.MailID)
	}
	tr, err := e.admin.MeTree(e.ctx(), ids[5], client.TreeQuery{Before: 2, After: 1})
	if err != nil || len(tr.Nodes) != 4 || tr.Nodes[0].MailID != ids[3] || tr.Nodes[3].MailID != ids[6] ||
		!tr.HasBefore || !tr.HasAfter || tr.Total != 10 || tr.Nodes[2].Depth != 5 {
		t.Fatalf("window = %+v, %v", tr, err)
	}
	up, err := e.admin.MeTree(e.ctx(), ids[5], client.TreeQuery{Before: 10, Cursor: tr.BeforeCursor})
	if err != nil || len(up.Nodes) != 3 || up.Nodes[0].MailID != ids[0] || up.HasBefore || !up.HasAfter {
		t.Fatalf("older page = %+v, %v", up, err)
	}
	down, err := e.admin.MeTree(e.ctx(), ids[5], client.TreeQuery{After: 10, Cursor: tr.AfterCursor})
	if err != nil || len(down.Nodes) != 3 || down.Nodes[2].MailID != ids[9] || down.HasAfter {
		t.Fatalf("newer page = %+v, %v", down, err)
	}
}

func TestRunsUpsertAndNotifyPeople(t *testing.T) {
	e := newEnv(t)
	a := e.agent("cc")
	r, _ := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "cc@/w.new", Subject: "task", Body: "x"})
	ps, err := e.admin.Stream(e.ctx(), client.StreamOptions{People: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	run := client.Run{RunID: "run-1", SessionID: r.SessionID, MailID: r.MailID, State: client.RunRunning, PID: 42, Attempt: 1}
	if _, err := a.PutRun(e.ctx(), run); err != nil {
		t.Fatal(err)
	}
	code := 0
	run.State, run.ExitCode = client.RunFinished, &code
	got, err := a.PutRun(e.ctx(), run)
	if err != nil || got.State != "finished" || got.AgentName != "cc" || *got.ExitCode != 0 {
		t.Fatalf("upsert = %+v, %v", got, err)
	}
	l, err := e.admin.MeSessionRuns(e.ctx(), r.SessionID)
	if err != nil || len(l.Runs) != 1 || l.Runs[0].State != "finished" {
		t.Fatalf("runs = %+v, %v", l, err)
	}
	for i, want := range []string{"running", "finished"} {
		ev := nextEvent(t, ps)
		for ev.Type == client.EventNewMail {
			// The person's own copy of the task mail (role "from") may
			// still be on its way from the hub when the stream opens.
			ev = nextEvent(t, ps)
		}
		var rv client.Run
		if ev.Type != client.EventRunUpdated || json.Unmarshal(ev.Data, &rv) != nil || rv.State != want {
			t.Fatalf("event %d = %s %s, want run_updated %s", i, ev.Type, ev.Data, want)
		}
	}
	s, _ := e.admin.MeSession(e.ctx(), r.SessionID)
	if s.RunState != "finished" {
		t.Fatalf("session run_state = %q", s.RunState)
	}
	run.State = "thinking"
	_, err = a.PutRun(e.ctx(), run)
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "state" {
		t.Fatalf("field %q", ae.Body.Field)
	}
}
