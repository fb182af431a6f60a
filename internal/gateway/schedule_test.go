package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

func TestScheduleCreateListPatchDelete(t *testing.T) {
	e := newServiceEnv(t)
	e.svc.Config.ScheduleZone = time.UTC
	sc, err := e.svc.CreateSchedule(e.ctx, e.alice, client.CreateScheduleRequest{Title: "standup", EventTime: "2026-09-03",
		RemindBeforeMinutes: "30", Recipients: "bob，alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !sc.EventTime.Equal(time.Date(2026, 9, 3, 9, 0, 0, 0, time.UTC)) || sc.RemindBeforeMinutes != 30 ||
		!sc.RemindAt.Equal(time.Date(2026, 9, 3, 8, 30, 0, 0, time.UTC)) || strings.Join(sc.Recipients, ",") != "bob,alice" || sc.Owner != "alice" {
		t.Fatalf("created = %+v", sc)
	}
	// PATCH changes only what is sent.
	newTitle := "daily standup"
	up, err := e.svc.UpdateSchedule(e.ctx, e.alice, sc.ScheduleID, client.UpdateScheduleRequest{Title: &newTitle})
	if err != nil {
		t.Fatal(err)
	}
	if up.Title != newTitle || !up.EventTime.Equal(sc.EventTime) || up.RemindBeforeMinutes != 30 || strings.Join(up.Recipients, ",") != "bob,alice" {
		t.Fatalf("after patching the title = %+v", up)
	}
	up, err = e.svc.UpdateSchedule(e.ctx, e.alice, sc.ScheduleID, client.UpdateScheduleRequest{RemindBeforeMinutes: float64(5)})
	if err != nil || up.RemindBeforeMinutes != 5 || !up.RemindAt.Equal(time.Date(2026, 9, 3, 8, 55, 0, 0, time.UTC)) || up.Title != newTitle {
		t.Fatalf("after patching minutes = %+v, %v", up, err)
	}
	// Another owner sees nothing and cannot touch it.
	if l, _ := e.svc.ListSchedules(e.ctx, e.bob); l.Count != 0 {
		t.Errorf("bob lists %d schedules", l.Count)
	}
	_, err = e.svc.UpdateSchedule(e.ctx, e.bob, sc.ScheduleID, client.UpdateScheduleRequest{Title: &newTitle})
	wantCode(t, err, KindNotFound, "schedule_not_found")
	wantCode(t, e.svc.DeleteSchedule(e.ctx, e.bob, sc.ScheduleID), KindNotFound, "schedule_not_found")
	l, _ := e.svc.ListSchedules(e.ctx, e.alice)
	if l.Count != 1 || l.Limit != DefaultScheduleLimit || l.Hint != "" {
		t.Errorf("list = %+v", l)
	}
	if err := e.svc.DeleteSchedule(e.ctx, e.alice, sc.ScheduleID); err != nil {
		t.Fatal(err)
	}
	if l, _ := e.svc.ListSchedules(e.ctx, e.alice); l.Count != 0 {
		t.Errorf("after delete: %d", l.Count)
	}
}

func TestScheduleBadInput(t *testing.T) {
	e := newServiceEnv(t)
	cases := []struct {
		req   client.CreateScheduleRequest
		kind  Kind
		field string
		in    string // part of the message
	}{
		{client.CreateScheduleRequest{EventTime: "2026-09-03"}, KindInvalid, "title", ""},
		{client.CreateScheduleRequest{Title: "x", EventTime: "tomorrow 9am"}, KindInvalid, "event_time", "2026-09-02T"},
		{client.CreateScheduleRequest{Title: "x", EventTime: "明天九点"}, KindInvalid, "event_time", "current time"},
		{client.CreateScheduleRequest{Title: "x", EventTime: "2026-09-01T10:00:00Z"}, KindInvalid, "event_time", "not in the future"},
		{client.CreateScheduleRequest{Title: "x", EventTime: "2026-09-03", RemindBeforeMinutes: "thirty"}, KindInvalid, "remind_before_minutes", ""},
		{client.CreateScheduleRequest{Title: "x", EventTime: "2026-09-03", RemindBeforeMinutes: float64(-1)}, KindInvalid, "remind_before_minutes", ""},
		{client.CreateScheduleRequest{Title: "x", EventTime: "2026-09-03", Recipients: "nobody"}, KindNotFound, "recipients", ""},
		{client.CreateScheduleRequest{Title: "x", EventTime: "2026-09-03", Recipients: "bot"}, KindInvalid, "recipients", "needs a path"},
		{client.CreateScheduleRequest{Title: "x", EventTime: "2026-09-03", Recipients: "bot@/w.no-such-alias"}, KindNotFound, "", "no-such-alias"},
		{client.CreateScheduleRequest{Title: "x", EventTime: "2026-09-03", Recipients: "a b"}, KindInvalid, "recipients", ""},
	}
	for _, c := range cases {
		_, err := e.svc.CreateSchedule(e.ctx, e.alice, c.req)
		ae := AsError(err)
		if ae == nil || ae.Kind != c.kind || (c.field != "" && ae.Field != c.field) || !strings.Contains(ae.Message, c.in) {
			t.Errorf("%+v: err = %v (%+v)", c.req, err, ae)
		}
	}
	if l, _ := e.svc.ListSchedules(e.ctx, e.alice); l.Count != 0 {
		t.Errorf("bad requests stored %d schedules", l.Count)
	}
}

func TestScheduleCapAndHint(t *testing.T) {
	e := newServiceEnv(t)
	e.svc.Config.ScheduleLimit = 4
	for i := 0; i < 3; i++ {
		if _, err := e.svc.CreateSchedule(e.ctx, e.alice, client.CreateScheduleRequest{Title: "t", EventTime: "2026-10-01T10:00:00Z"}); err != nil {
			t.Fatal(err)
		}
	}
	l, _ := e.svc.ListSchedules(e.ctx, e.alice)
	if l.Count != 3 || l.Hint == "" {
		t.Errorf("at 75%% of the limit: %+v, want a hint", l)
	}
	if _, err := e.svc.CreateSchedule(e.ctx, e.alice, client.CreateScheduleRequest{Title: "t", EventTime: "2026-10-01T10:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.CreateSchedule(e.ctx, e.alice, client.CreateScheduleRequest{Title: "t", EventTime: "2026-10-01T10:00:00Z"})
	wantCode(t, err, KindConflict, "schedule_limit")
	if l, _ := e.svc.ListSchedules(e.ctx, e.alice); l.Count != 4 {
		t.Errorf("count after the refused one = %d", l.Count)
	}
}

func TestReminderGoesOutOnceAtItsTime(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	sc, err := e.svc.CreateSchedule(e.ctx, e.alice, client.CreateScheduleRequest{Title: "deploy", Body: "check the logs",
		EventTime: "2026-09-02T11:00:00Z", RemindBeforeMinutes: 10, Recipients: "alice, bot@/work/proj"})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := e.svc.SendDueReminders(e.ctx); n != 0 {
		t.Fatalf("sent %d before the time", n)
	}
	e.clock.Set(time.Date(2026, 9, 2, 10, 50, 0, 0, time.UTC))
	// Two replicas that both read the row as due before either wrote: the
	// conditional claim lets only the first send.
	stale, err := e.svc.Read().DueSchedules(e.ctx, e.clock.Now(), 10)
	if err != nil || len(stale) != 1 {
		t.Fatalf("due = %d, %v", len(stale), err)
	}
	if n, err := e.svc.sendReminders(e.ctx, stale); err != nil || n != 1 {
		t.Fatalf("first replica sent %d, %v", n, err)
	}
	if n, err := e.svc.sendReminders(e.ctx, stale); err != nil || n != 0 {
		t.Fatalf("second replica with the same stale row sent %d, %v; want 0", n, err)
	}
	if n := e.countMails("mail_type = ?", client.MailTypeReminder); n != 1 {
		t.Fatalf("%d reminder mails stored", n)
	}
	e.clock.Advance(time.Hour)
	if n, _ := e.svc.SendDueReminders(e.ctx); n != 0 {
		t.Errorf("a later sweep sent %d again", n)
	}
	l, _ := e.svc.ListSchedules(e.ctx, e.alice)
	if l.Schedules[0].SentAt == nil {
		t.Errorf("schedule not marked sent: %+v", l.Schedules[0])
	}
	inbox, err := e.svc.Read().Inbox(e.ctx, "bot", "all", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	var rem *client.Mail
	for _, v := range inbox {
		if v.MailType == client.MailTypeReminder {
			m, _ := e.svc.GetMail(e.ctx, e.bot, v.MailID)
			rem = m
		}
	}
	if rem == nil || rem.Subject != "Reminder: deploy" || !strings.Contains(rem.Body, "check the logs") || rem.FromName != "alice" {
		t.Fatalf("reminder mail = %+v", rem)
	}
	// The agent at a path without session part continues its default
	// session with the owner.
	if rem.SessionID != s.SessionID {
		t.Errorf("reminder in session %s, want the default session %s", rem.SessionID, s.SessionID)
	}
	// Moving the time into the future arms it again.
	later := "2026-09-03T11:00:00Z"
	up, err := e.svc.UpdateSchedule(e.ctx, e.alice, sc.ScheduleID, client.UpdateScheduleRequest{EventTime: &later})
	if err != nil || up.SentAt != nil {
		t.Fatalf("re-armed = %+v, %v", up, err)
	}
}

func TestReminderForUnreachableRecipientGoesToTheOwner(t *testing.T) {
	e := newServiceEnv(t)
	if _, err := e.svc.CreateSchedule(e.ctx, e.alice, client.CreateScheduleRequest{Title: "x", EventTime: "2026-09-02T10:30:00Z",
		Recipients: "bob"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	// The stored recipient no longer names anyone.
	if err := e.svc.Write(e.ctx, func(tx *Tx) error {
		_, err := tx.Exec(e.ctx, `UPDATE schedules SET recipients = ?`, `["ghost"]`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	n, err := e.svc.SendDueReminders(e.ctx)
	if err != nil || n != 1 {
		t.Fatalf("sent %d, %v", n, err)
	}
	inbox, _ := e.svc.Read().Inbox(e.ctx, "alice", "all", 10, "")
	if len(inbox) != 1 || inbox[0].MailType != client.MailTypeReminder {
		t.Errorf("owner's inbox = %+v", inbox)
	}
}
