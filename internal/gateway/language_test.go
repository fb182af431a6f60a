package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// A person's language decides the words of the mails the gateway writes
// for them (issue 18 point 2): English by default, without the Chinese
// approval words; Chinese once the person chooses it, for the request, the
// decision mail and a bridge's translated failure report; an agent reading
// the same failure report gets the mail's own (seed) form.
func TestMailsForPeopleFollowTheirLanguage(t *testing.T) {
	e := newServiceEnv(t)
	ask := func(person *Principal, key string) *client.Mail {
		t.Helper()
		s := e.soloSession(person)
		p, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "ok?", SessionID: s.SessionID,
			RelayKey: key, Tool: "Edit", ToolInput: map[string]any{"file_path": "/work/proj/README.md"}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := e.svc.GetMail(e.ctx, person, p.MailID)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if lang, _ := e.svc.Language(e.ctx, "alice"); lang != LangEnglish {
		t.Fatalf("default language %q, want en", lang)
	}
	en := ask(e.alice, "en")
	if !strings.HasPrefix(en.Subject, "Permission request: ") || strings.Contains(en.Body, "同意") ||
		!strings.Contains(en.Body, "Reply with approve") {
		t.Errorf("English request mail: %q\n%s", en.Subject, en.Body)
	}

	if err := e.svc.SetLanguage(e.ctx, e.alice, "fr"); err == nil {
		t.Fatal("language fr was accepted")
	}
	if err := e.svc.SetLanguage(e.ctx, e.alice, LangChinese); err != nil {
		t.Fatal(err)
	}
	zh := ask(e.alice, "zh")
	if !strings.HasPrefix(zh.Subject, "权限请求: ") || !strings.Contains(zh.Body, "回复“同意”允许这一次") ||
		strings.Contains(zh.Body, "Reply with") {
		t.Errorf("Chinese request mail: %q\n%s", zh.Subject, zh.Body)
	}
	d, err := e.svc.Decide(e.ctx, e.alice, zh.MailID, client.DecideRequest{Decision: "同意"})
	if err != nil {
		t.Fatal(err)
	}
	dm, err := e.svc.GetMail(e.ctx, e.alice, d.DecisionMailID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(dm.Body, "已同意。") || strings.Contains(dm.Body, "Approved") {
		t.Errorf("Chinese decision mail:\n%s", dm.Body)
	}

	// A failure report with translations: alice (zh) gets the Chinese one,
	// an agent the mail's own form.
	s := e.soloSession(e.alice)
	tr := []client.MailTranslation{{Language: "en", Subject: "Failed: x", Body: "english"}, {Language: "zh", Subject: "处理失败: x", Body: "中文"}}
	r, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice", ReplyTo: s.MailID, Subject: "seed form", Body: "seed body",
		Relay: client.RelaySummary, RelayKey: "model-failure:" + s.MailID, MailType: client.MailTypeFailureReport, Translations: tr})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := e.svc.GetMail(e.ctx, e.alice, r.MailID); err != nil || m.Subject != "处理失败: x" || m.Body != "中文" {
		t.Errorf("alice's failure report: %+v, %v", m, err)
	}
	r, err = e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot@/work/proj", ReplyTo: s.MailID, Subject: "to the agent", Body: "b",
		Translations: tr})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := e.svc.GetMail(e.ctx, e.alice, r.MailID); err != nil || m.Subject != "to the agent" || m.Body != "b" {
		t.Errorf("a mail to an agent took a translation: %+v, %v", m, err)
	}
	_, err = e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bob", Subject: "s", Body: "b",
		Translations: []client.MailTranslation{{Language: "de", Body: "x"}}})
	wantCode(t, err, KindInvalid, "")
}

// A reminder a Chinese person gets from their own schedule is in Chinese;
// an English person's stays English (issue 18 point 2).
func TestReminderFollowsThePersonsLanguage(t *testing.T) {
	e := newServiceEnv(t)
	if err := e.svc.SetLanguage(e.ctx, e.alice, LangChinese); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Principal{e.alice, e.bob} {
		if _, err := e.svc.CreateSchedule(e.ctx, p, client.CreateScheduleRequest{Title: "deploy", Body: "check the logs",
			EventTime: "2026-09-02T11:00:00Z", RemindBeforeMinutes: 10, Recipients: p.Name}); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Set(time.Date(2026, 9, 2, 10, 50, 0, 0, time.UTC))
	if n, err := e.svc.SendDueReminders(e.ctx); err != nil || n != 2 {
		t.Fatalf("sent %d, %v", n, err)
	}
	for p, want := range map[*Principal]string{e.alice: "提醒：deploy", e.bob: "Reminder: deploy"} {
		inbox, err := e.svc.Read().Inbox(e.ctx, p.Name, "all", 10, "")
		if err != nil || len(inbox) != 1 || inbox[0].Subject != want {
			t.Errorf("%s's reminder: %+v, %v; want subject %q", p.Name, inbox, err, want)
		}
	}
}
