package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

func TestRegisterRefusesAStringWorkspaceNamingTheField(t *testing.T) {
	e := newEnv(t)
	k, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "dsh", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	status, body, _ := e.raw("POST", "/api/v1/agent/register", k.KeyToken, `{"name":"dsh","platform":"x","workspaces":["/tmp"]}`)
	if status != 400 || !strings.Contains(body, `"field":"workspaces"`) ||
		!strings.Contains(body, "expected object, got string") {
		t.Fatalf("W-2: %d %s", status, body)
	}
	status, body, _ = e.raw("POST", "/api/v1/agent/register", k.KeyToken, `{"name":"dsh","platform":"x","workspaces":[]}`)
	if status != 200 {
		t.Fatalf("register with []: %d %s", status, body)
	}
}

func TestHeartbeatOmittedFieldKeepsAndEmptyListClears(t *testing.T) {
	e := newEnv(t)
	a := e.agent("pi")
	sessions := []client.PlatformSession{{PlatformID: "ses_1", Workspace: "/w", Slug: "witty-planet"}, {PlatformID: "ses_2", Workspace: "/w", Slug: "calm-sea"}}
	models := []client.Model{{Provider: "p", Model: "m1"}}
	hb, err := a.Heartbeat(e.ctx(), client.HeartbeatRequest{PlatformSessions: &sessions, Models: &models})
	if err != nil || hb.PlatformSessionsSynced != 2 || hb.ModelsSynced != 1 || hb.Status != "ok" {
		t.Fatalf("first heartbeat = %+v, %v", hb, err)
	}
	if !hb.ModelsUnrestricted || hb.AllowedModels == nil || len(hb.AllowedModels) != 0 {
		t.Fatalf("no scope set: want unrestricted with [], got %+v", hb)
	}
	hb, err = a.Heartbeat(e.ctx(), client.HeartbeatRequest{})
	if err != nil || hb.PlatformSessionsSynced != 2 || hb.ModelsSynced != 1 {
		t.Fatalf("omitted fields must keep the mirror: %+v, %v", hb, err)
	}
	status, body, _ := e.raw("POST", "/api/v1/agent/heartbeat", "test-key-pi-0123456789abcdef", `{"platform_sessions":[]}`)
	if status != 200 || !strings.Contains(body, `"platform_sessions_synced":0`) || !strings.Contains(body, `"models_synced":1`) {
		t.Fatalf("[] must clear only that field: %d %s", status, body)
	}
	d, err := e.admin.Agent(e.ctx(), "pi")
	if err != nil || d.Status != "online" || len(d.Models) != 1 || len(d.PlatformSessions) != 0 {
		t.Fatalf("AgentDetail = %+v, %v", d, err)
	}
	e.clock.Advance(91 * time.Second)
	l, err := e.admin.Agents(e.ctx())
	if err != nil || len(l.Agents) != 1 || l.Agents[0].Status != "offline" {
		t.Fatalf("after 91 s without heartbeat: %+v, %v", l, err)
	}
}

func TestAddressingNewDefaultAndUnknownAlias(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	r1, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/tmp/x.new", Subject: "Fix the leak", Body: "a"})
	if err != nil || !r1.NewSession || r1.SessionAlias != "fix-the-leak" || r1.BudgetMax != 20 {
		t.Fatalf(".new = %+v, %v", r1, err)
	}
	// Default session: the most recent one of dsh at /tmp/x with admin in it.
	r2, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/tmp/x/", Subject: "more", Body: "b"})
	if err != nil || r2.NewSession || r2.SessionID != r1.SessionID {
		t.Fatalf("default = %+v, %v (want session %s)", r2, err, r1.SessionID)
	}
	// .new again with the same subject: a new session and alias -2.
	r3, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/tmp/x.new", Subject: "Fix the leak", Body: "c"})
	if err != nil || !r3.NewSession || r3.SessionAlias != "fix-the-leak-2" {
		t.Fatalf("second .new = %+v, %v", r3, err)
	}
	// The alias addresses its session.
	r4, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/tmp/x.fix-the-leak", Subject: "again", Body: "d"})
	if err != nil || r4.SessionID != r1.SessionID {
		t.Fatalf("alias = %+v, %v", r4, err)
	}
	// A typo alias is a 404 and nothing is created (N-8).
	sessions, mails := e.count("mail_sessions"), e.count("mails")
	_, err = e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/tmp/x.fix-teh-leak", Subject: "typo", Body: "e"})
	wantStatus(t, err, 404, "alias_not_found")
	if e.count("mail_sessions") != sessions || e.count("mails") != mails {
		t.Fatal("a typo alias created something")
	}
	// Unknown names and agents without a path.
	_, err = e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "nobody@/tmp.new", Subject: "x", Body: "x"})
	wantStatus(t, err, 404, "recipient_not_found")
	_, err = e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh", Subject: "x", Body: "x"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "to" {
		t.Fatalf("field = %q", ae.Body.Field)
	}
	_, err = e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/tmp/x.", Subject: "x", Body: "x"})
	wantStatus(t, err, 400, "")
}

func TestNewMailEventCarriesTheW4Fields(t *testing.T) {
	e := newEnv(t)
	a := e.agent("pi")
	e.agent("ops")
	s, err := a.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "pi@/home/program/agentmail.new", Cc: "ops@/srv，admin",
		Subject: "重构导入路径", Body: "go", SessionAlias: "refactor-imports"})
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, s)
	var got client.NewMailEvent
	if err := jsonUnmarshal(ev.Data, &got); err != nil || ev.Type != client.EventNewMail {
		t.Fatalf("event %s %s: %v", ev.Type, ev.Data, err)
	}
	want := client.NewMailEvent{MailID: r.MailID, SessionID: r.SessionID, FromName: "admin", FromKind: "person",
		Subject: "重构导入路径", MailType: "normal", Role: "to", ToWorkspace: "/home/program/agentmail",
		SessionAlias: "refactor-imports", ReplyAddress: "admin@.refactor-imports",
		SelfAddress: "pi@/home/program/agentmail.refactor-imports"}
	got.CreatedAt = time.Time{}
	if got != want {
		t.Fatalf("new_mail =\n %+v\nwant\n %+v", got, want)
	}
	// The cc'd agent sees its own path and role; the mail lists the cc.
	m, err := a.GetMail(e.ctx(), r.MailID)
	if err != nil || len(m.Recipients) != 3 || m.Recipients[1].Name != "ops" || m.Recipients[1].Role != "cc" ||
		m.Recipients[1].Workspace != "/srv" || m.Recipients[2].Name != "admin" {
		t.Fatalf("recipients = %+v, %v", m.Recipients, err)
	}
}

func TestAgentInboxMarksExactlyTheListedMails(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	for i := 0; i < 7; i++ {
		if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: fmt.Sprint("m", i), Body: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := a.Inbox(e.ctx(), client.InboxQuery{Status: "all", Limit: 50})
	if err != nil || len(all.Mails) != 7 || all.Unread != 7 {
		t.Fatalf("status=all = %d mails, unread %d, %v; want 7, 7 (all never marks)", len(all.Mails), all.Unread, err)
	}
	l, err := a.Inbox(e.ctx(), client.InboxQuery{})
	if err != nil || len(l.Mails) != 5 || l.Unread != 2 {
		t.Fatalf("default inbox = %d mails, unread %d, %v; want 5 listed and 2 left unread", len(l.Mails), l.Unread, err)
	}
	if l.Mails[0].Subject != "m6" {
		t.Fatalf("newest first: got %s", l.Mails[0].Subject)
	}
	l, err = a.Inbox(e.ctx(), client.InboxQuery{})
	if err != nil || len(l.Mails) != 2 || l.Unread != 0 || l.Mails[1].Subject != "m0" {
		t.Fatalf("second inbox = %+v, %v", l, err)
	}
	n, err := a.MarkRead(e.ctx(), client.MarkReadRequest{MailIDs: []string{l.Mails[0].MailID}, Unread: true})
	if err != nil || n.Marked != 1 {
		t.Fatalf("mark unread = %+v, %v", n, err)
	}
	c, err := e.admin.MeCounts(e.ctx())
	if err != nil || c.Unread != 0 {
		t.Fatalf("the sender's counts = %+v, %v", c, err)
	}
}

func TestAnotherPrincipalsMailIsNotFound(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	other := e.agent("pi")
	bob := e.person("bob")
	r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w.new", Subject: "secret", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.GetMail(e.ctx(), r.MailID)
	wantStatus(t, err, 404, "mail_not_found")
	_, err = bob.MeGetMail(e.ctx(), r.MailID)
	wantStatus(t, err, 404, "mail_not_found")
	_, err = other.Thread(e.ctx(), r.MailID)
	wantStatus(t, err, 404, "")
	_, err = other.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Subject: "x", Body: "x"})
	wantStatus(t, err, 404, "mail_not_found")
	_, err = bob.MeSession(e.ctx(), r.SessionID)
	wantStatus(t, err, 404, "session_not_found")
	// The admin reads it only through the explicit admin endpoint.
	bobAdmin := false
	m, err := e.admin.AdminGetMail(e.ctx(), r.MailID)
	if err != nil || m.Subject != "secret" || bobAdmin {
		t.Fatalf("AdminGetMail = %+v, %v", m, err)
	}
}

func TestBudgetRelaysAndDuplicates(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	budget := 2
	r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w.new", Subject: "task", Body: "x", RoundBudget: &budget})
	if err != nil || r.BudgetMax != 2 {
		t.Fatalf("send = %+v, %v", r, err)
	}
	// Two own mails use both rounds; the third is a 403.
	for i := 0; i < 2; i++ {
		s, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Body: "progress"})
		if err != nil || s.SessionID != r.SessionID || s.BudgetRemaining != 1-i {
			t.Fatalf("own mail %d = %+v, %v", i, s, err)
		}
	}
	_, err = a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Body: "one more"})
	wantStatus(t, err, 403, "budget_exhausted")
	// A summary relay still goes through and uses nothing.
	s, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Body: "summary", Relay: "summary", RelayKey: "msg_1"})
	if err != nil || s.Status != "sent" || s.SessionID != r.SessionID {
		t.Fatalf("relay = %+v, %v", s, err)
	}
	mails := e.count("mails")
	d, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Body: "summary again", Relay: "summary", RelayKey: "msg_1"})
	if err != nil || d.Status != "duplicate_relay" || d.MailID != s.MailID || e.count("mails") != mails {
		t.Fatalf("duplicate relay = %+v, %v (mails %d → %d)", d, err, mails, e.count("mails"))
	}
	sess, err := e.admin.MeSession(e.ctx(), r.SessionID)
	if err != nil || sess.UsedRounds != 2 {
		t.Fatalf("used rounds = %+v, %v; relays must not count", sess, err)
	}
	// Relay rules.
	_, err = a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Body: "x", Relay: "bulk", RelayKey: "k"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "relay" {
		t.Fatalf("field %q", ae.Body.Field)
	}
	_, err = a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Body: "x", Relay: "summary"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "relay_key" {
		t.Fatalf("field %q", ae.Body.Field)
	}
	_, err = a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", Body: "x", Subject: "s", Relay: "summary", RelayKey: "k2"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "reply_to" {
		t.Fatalf("field %q", ae.Body.Field)
	}
	_, err = a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: s.MailID, Body: "x", Relay: "summary", RelayKey: "k3"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "reply_to" {
		t.Fatalf("a summary relay answering the agent's own mail: field %q", ae.Body.Field)
	}
	// The person raises the budget; the agent may write again.
	nb := 3
	if _, err := e.admin.MeUpdateSession(e.ctx(), r.SessionID, client.UpdateSessionRequest{BudgetMax: &nb}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Body: "thanks"}); err != nil {
		t.Fatalf("after raising the budget: %v", err)
	}
	if _, err := e.admin.MeUpdateSession(e.ctx(), r.SessionID, client.UpdateSessionRequest{ResetUsed: true}); err != nil {
		t.Fatal(err)
	}
	sess, _ = e.admin.MeSession(e.ctx(), r.SessionID)
	if sess.UsedRounds != 0 || sess.BudgetMax != 3 {
		t.Fatalf("after reset: %+v", sess)
	}
}

func TestNewSessionRateLimitForAgents(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	e.agent("pi")
	for i := 0; i < 20; i++ {
		if _, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "pi@/w.new", Subject: fmt.Sprint("job ", i), Body: "x"}); err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
		e.clock.Advance(time.Minute)
	}
	sessions := e.count("mail_sessions")
	_, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "pi@/w.new", Subject: "job 21", Body: "x"})
	ae := wantStatus(t, err, 429, "new_session_rate_limited")
	// The oldest of the 20 was created 20 minutes ago: 40 minutes to wait.
	if ae.Body.RetryAfterSeconds != 40*60 || client.RetryAfterOf(err) != 40*time.Minute {
		t.Fatalf("retry after %d s (%v), want 2400", ae.Body.RetryAfterSeconds, client.RetryAfterOf(err))
	}
	if e.count("mail_sessions") != sessions {
		t.Fatal("a refused send created a session")
	}
	// Sending into an existing session is not limited, and people are exempt.
	if _, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "pi@/w", Subject: "more", Body: "x"}); err != nil {
		t.Fatalf("default session after the limit: %v", err)
	}
	for i := 0; i < 21; i++ {
		if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "pi@/w.new", Subject: "p", Body: "x"}); err != nil {
			t.Fatalf("a person's session %d: %v", i+1, err)
		}
	}
	e.clock.Advance(40 * time.Minute)
	if _, err := a.SendMail(e.ctx(), client.SendMailRequest{To: "pi@/w.new", Subject: "job 21", Body: "x"}); err != nil {
		t.Fatalf("after the window moved: %v", err)
	}
}
