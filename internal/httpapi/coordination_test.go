package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// Reservations, acknowledgements and importance over HTTP (issue 21 items
// 1-3), with the manual clock for expiry and the offline limit.

const coRepo = "/w/repo"

// coAgent is e.agent(name) registered with the workspace coRepo.
func coAgent(e *env, name string) *client.Client {
	c := e.agent(name)
	if _, err := c.Register(e.ctx(), client.RegisterRequest{Name: name, Platform: "test",
		Workspaces: []client.Workspace{{Name: "repo", Path: coRepo}}}); err != nil {
		e.t.Fatal(err)
	}
	return c
}

func reserve(t *testing.T, e *env, c *client.Client, exclusive bool, reason string, paths ...string) *client.ReserveResponse {
	t.Helper()
	res, err := c.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: paths, Exclusive: &exclusive, Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestReservationsConflictsAndVisibility(t *testing.T) {
	e := newEnv(t)
	alpha, beta := coAgent(e, "alpha"), coAgent(e, "beta")
	carol, bob := e.person("carol"), e.person("bob")
	// carol works with alpha in the repository; bob takes part in nothing there.
	sent, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "refactor", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := alpha.CreateTurnToken(e.ctx(), sent.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	turn := client.New(e.url, client.WithToken(tok.Token))
	stream, err := alpha.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	// alpha, in its turn, takes src/** exclusively: the session is named to alpha.
	excl := true
	got, err := turn.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"src/**"}, Exclusive: &excl, Reason: "refactor the API"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Granted) != 1 || got.Granted[0].SessionID != sent.SessionID || got.Granted[0].TTLMinutes != 60 {
		t.Fatalf("alpha's grant = %+v", got.Granted)
	}
	// beta wants src/main.go: refused, naming alpha, the reason and the
	// expiry, never alpha's session.
	res := reserve(t, e, beta, true, "fix a typo", "src/main.go", "docs/readme.md")
	if len(res.Refused) != 1 || res.Refused[0] != "src/main.go" || len(res.Granted) != 1 || res.Granted[0].Path != "docs/readme.md" {
		t.Fatalf("beta: %+v", res)
	}
	c := res.Conflicts[0]
	if len(res.Conflicts) != 1 || !c.Refused || c.Held.Holder != "alpha" || c.Held.Reason != "refactor the API" ||
		c.Held.Path != "src/**" || c.Held.ExpiresAt.IsZero() || c.Held.SessionID != "" || c.Held.SessionAlias != "" {
		t.Fatalf("beta's conflict = %+v", res.Conflicts)
	}
	// A shared request beside a shared holding is granted and still named.
	reserve(t, e, beta, false, "reading", "notes/*.md")
	shared := reserve(t, e, alpha, false, "also reading", "notes/todo.md")
	if len(shared.Granted) != 1 || len(shared.Conflicts) != 1 || shared.Conflicts[0].Refused || shared.Conflicts[0].Held.Holder != "beta" {
		t.Fatalf("shared beside shared = %+v", shared)
	}
	// Globs that cannot meet do not conflict.
	if r := reserve(t, e, beta, true, "", "src/*.md"); len(r.Refused) != 1 {
		t.Fatalf("src/*.md against src/** = %+v", r)
	}
	if r := reserve(t, e, beta, true, "", "notes/*.txt"); len(r.Refused) != 0 || len(r.Conflicts) != 0 {
		t.Fatalf("notes/*.txt against notes/*.md = %+v", r)
	}

	// The turn token reaches no other workspace; an agent key none it
	// neither registered nor works in. Bounds are 400s.
	_, err = turn.Reserve(e.ctx(), client.ReserveRequest{Workspace: "/elsewhere", Paths: []string{"a"}})
	wantStatus(t, err, 404, "workspace_not_found")
	_, err = beta.Reserve(e.ctx(), client.ReserveRequest{Workspace: "/elsewhere", Paths: []string{"a"}})
	wantStatus(t, err, 404, "workspace_not_found")
	_, err = beta.Reservations(e.ctx(), "/elsewhere")
	wantStatus(t, err, 404, "workspace_not_found")
	for _, bad := range []client.ReserveRequest{
		{Workspace: coRepo, Paths: []string{"../x"}},
		{Workspace: coRepo, Paths: []string{"/etc/passwd"}},
		{Workspace: coRepo, Paths: []string{"src/[a"}},
		{Workspace: coRepo, Paths: []string{"a"}, TTLMinutes: 1441},
		{Workspace: "relative", Paths: []string{"a"}},
		{Workspace: coRepo},
		{Workspace: coRepo, Paths: []string{"a"}, Reason: strings.Repeat("x", 501)},
	} {
		_, err := beta.Reserve(e.ctx(), bad)
		wantStatus(t, err, 400, "")
	}
	_, err = carol.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"a"}})
	wantStatus(t, err, 403, "")

	// The guard's check: beta may not commit src/main.go; alpha may.
	chk, err := beta.CheckReservations(e.ctx(), client.ReservationCheckRequest{Workspace: coRepo, Paths: []string{"src/main.go", "README.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(chk.Blocking) != 1 || chk.Blocking[0].Path != "src/main.go" || chk.Blocking[0].Held.Holder != "alpha" {
		t.Fatalf("beta's check = %+v", chk)
	}
	if chk, _ := alpha.CheckReservations(e.ctx(), client.ReservationCheckRequest{Workspace: coRepo, Paths: []string{"src/main.go"}}); len(chk.Blocking) != 0 {
		t.Fatalf("alpha's own reservation blocks alpha: %+v", chk)
	}
	// A person's check sees agents' reservations only where the person works.
	if chk, _ := carol.MeCheckReservations(e.ctx(), client.ReservationCheckRequest{Workspace: coRepo, Paths: []string{"src/x.go"}}); len(chk.Blocking) != 1 {
		t.Fatalf("carol's check = %+v", chk)
	}
	if chk, err := bob.MeCheckReservations(e.ctx(), client.ReservationCheckRequest{Workspace: coRepo, Paths: []string{"src/x.go"}}); err != nil || len(chk.Blocking)+len(chk.Shared) != 0 {
		t.Fatalf("bob's check = %+v, %v", chk, err)
	}

	// People: carol sees the repository's reservations (with her session
	// named), bob nothing, and neither can tell bob's 404 from an unknown one.
	list, err := carol.MeReservations(e.ctx(), "")
	if err != nil {
		t.Fatal(err)
	}
	var alphaRes client.Reservation
	for _, r := range list.Reservations {
		if r.Holder == "alpha" && r.Path == "src/**" {
			alphaRes = r
		}
	}
	if alphaRes.ReservationID == "" || alphaRes.SessionID != sent.SessionID || len(list.Reservations) < 4 {
		t.Fatalf("carol's list = %+v", list.Reservations)
	}
	if l, err := bob.MeReservations(e.ctx(), ""); err != nil || len(l.Reservations) != 0 {
		t.Fatalf("bob's list = %+v, %v", l, err)
	}
	_, err = bob.MeReservations(e.ctx(), coRepo)
	wantStatus(t, err, 404, "workspace_not_found")
	wantStatus(t, bob.MeReleaseReservation(e.ctx(), alphaRes.ReservationID), 404, "reservation_not_found")
	wantStatus(t, bob.MeReleaseReservation(e.ctx(), "no-such-id"), 404, "reservation_not_found")

	// carol releases alpha's reservation; alpha's stream hears of it and
	// beta now gets src/main.go.
	if err := carol.MeReleaseReservation(e.ctx(), alphaRes.ReservationID); err != nil {
		t.Fatal(err)
	}
	for {
		ev := nextEvent(t, stream)
		if ev.Type != client.EventReservationChanged {
			continue
		}
		var re client.ReservationEvent
		if err := json.Unmarshal(ev.Data, &re); err != nil {
			t.Fatal(err)
		}
		if re.Change == client.ReservationReleased && re.By == "carol" {
			if len(re.Reservations) != 1 || re.Reservations[0].Path != "src/**" || re.Reservations[0].SessionID != "" {
				t.Fatalf("release event = %+v", re)
			}
			break
		}
	}
	if r := reserve(t, e, beta, true, "", "src/main.go"); len(r.Granted) != 1 {
		t.Fatalf("after carol's release: %+v", r)
	}

	// Renew and release by the holder itself.
	ren, err := beta.RenewReservations(e.ctx(), client.ReservationSelect{Workspace: coRepo, Paths: []string{"src/main.go"}, TTLMinutes: 120})
	if err != nil || len(ren.Reservations) != 1 || ren.Reservations[0].TTLMinutes != 120 {
		t.Fatalf("renew = %+v, %v", ren, err)
	}
	rel, err := beta.ReleaseReservations(e.ctx(), client.ReservationSelect{Workspace: coRepo})
	if err != nil || len(rel.Reservations) != 4 {
		t.Fatalf("release all = %+v, %v", rel, err)
	}
	if own, _ := beta.Reservations(e.ctx(), ""); len(own.Reservations) != 0 {
		t.Fatalf("beta still holds %+v", own.Reservations)
	}
}

func TestReservationsEndAtExpiryAndWhenTheHolderIsOffline(t *testing.T) {
	e := newEnv(t)
	alpha, beta := coAgent(e, "alpha"), coAgent(e, "beta")
	one := 1
	if _, err := alpha.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"a.go"}, TTLMinutes: one}); err != nil {
		t.Fatal(err)
	}
	if r := reserve(t, e, beta, true, "", "a.go"); len(r.Refused) != 1 {
		t.Fatalf("before expiry: %+v", r)
	}
	e.clock.Advance(time.Minute)
	if r := reserve(t, e, beta, true, "", "a.go"); len(r.Granted) != 1 {
		t.Fatalf("after expiry: %+v", r)
	}

	// beta goes silent: 10 minutes later (the default offline limit) its
	// 60-minute reservation ends, and the sweep tells the holder why.
	stream, err := beta.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	e.clock.Advance(10*time.Minute + time.Second)
	if _, err := alpha.Heartbeat(e.ctx(), client.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.SweepReservations(e.ctx()); err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v", n, err)
	}
	for {
		ev := nextEvent(t, stream)
		var re client.ReservationEvent
		if ev.Type == client.EventReservationChanged && json.Unmarshal(ev.Data, &re) == nil && re.Change == client.ReservationHolderOffline {
			break
		}
	}
	if r := reserve(t, e, alpha, true, "", "a.go"); len(r.Granted) != 1 || len(r.Conflicts) != 0 {
		t.Fatalf("after beta went offline: %+v", r)
	}
}

func TestAcknowledgementsAndImportance(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol, bob := e.person("carol"), e.person("bob")

	sent, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "deploy freeze",
		Body: "confirm", Importance: "urgent", AckRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	inbox, err := alpha.Inbox(e.ctx(), client.InboxQuery{Status: "all"})
	if err != nil {
		t.Fatal(err)
	}
	m := inbox.Mails[0]
	if m.Importance != "urgent" || !m.AckRequired || m.AckDueAt == nil || m.AckedAt != nil ||
		!m.AckDueAt.Equal(e.clock.Now().Add(24*time.Hour).Truncate(time.Millisecond)) {
		t.Fatalf("alpha's copy = %+v", m)
	}
	// Reading is not acknowledging.
	if got, _ := alpha.GetMail(e.ctx(), sent.MailID); got.AckedAt != nil || got.Acks[0].AckedAt != nil {
		t.Fatalf("read counts as ack: %+v", got)
	}
	w, err := carol.MeUnacknowledged(e.ctx(), client.AckWaitingQuery{})
	if err != nil || len(w.Mails) != 1 || w.Mails[0].Role != "sender" || strings.Join(w.Mails[0].Pending, ",") != "alpha" || w.Mails[0].Overdue {
		t.Fatalf("carol waits for %+v, %v", w, err)
	}
	if w, _ := alpha.Unacknowledged(e.ctx(), client.AckWaitingQuery{Role: "recipient"}); len(w.Mails) != 1 {
		t.Fatalf("alpha owes %+v", w)
	}
	// Overdue after 24 hours.
	e.clock.Advance(24*time.Hour + time.Second)
	if w, _ := carol.MeUnacknowledged(e.ctx(), client.AckWaitingQuery{Overdue: true}); len(w.Mails) != 1 || !w.Mails[0].Overdue {
		t.Fatalf("overdue view = %+v", w)
	}
	ack, err := alpha.AckMail(e.ctx(), sent.MailID)
	if err != nil || ack.Already {
		t.Fatalf("ack = %+v, %v", ack, err)
	}
	again, err := alpha.AckMail(e.ctx(), sent.MailID)
	if err != nil || !again.Already || !again.AckedAt.Equal(ack.AckedAt) {
		t.Fatalf("second ack = %+v, %v", again, err)
	}
	view, _ := carol.MeGetMail(e.ctx(), sent.MailID)
	if len(view.Acks) != 1 || view.Acks[0].Name != "alpha" || view.Acks[0].AckedAt == nil {
		t.Fatalf("carol sees acks %+v", view.Acks)
	}
	if w, _ := carol.MeUnacknowledged(e.ctx(), client.AckWaitingQuery{}); len(w.Mails) != 0 {
		t.Fatalf("still waiting: %+v", w)
	}
	_, err = bob.MeAckMail(e.ctx(), sent.MailID)
	wantStatus(t, err, 404, "mail_not_found")
	_, err = carol.MeAckMail(e.ctx(), sent.MailID)
	wantStatus(t, err, 409, "ack_not_required")
	// ack_required never widens who may write to whom.
	_, err = bob.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + "." + sent.SessionAlias, Subject: "x", Body: "y", AckRequired: true})
	wantStatus(t, err, 404, "alias_not_found")
	for _, bad := range []client.SendMailRequest{
		{To: "bob", Subject: "x", Body: "y", AckRequired: true, AckWithinMinutes: client.MaxAckWithinMinutes + 1},
		{To: "bob", Subject: "x", Body: "y", AckWithinMinutes: 5},
		{To: "bob", Subject: "x", Body: "y", Importance: "critical"},
	} {
		_, err := carol.MeSend(e.ctx(), bad)
		wantStatus(t, err, 400, "")
	}

	// Importance: filter and sort, paged.
	for _, lvl := range []string{"low", "urgent", "", "high", "urgent"} {
		if _, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "bob", Subject: "level " + lvl, Body: "b", Importance: lvl}); err != nil {
			t.Fatal(err)
		}
	}
	var order []string
	cursor := ""
	for {
		page, err := bob.MeInbox(e.ctx(), client.InboxQuery{Sort: "importance", Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Mails {
			order = append(order, m.Importance)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if strings.Join(order, ",") != "urgent,urgent,high,normal,low" {
		t.Fatalf("sorted by importance: %v", order)
	}
	urgent, err := bob.MeInbox(e.ctx(), client.InboxQuery{Importance: "urgent,high"})
	if err != nil || len(urgent.Mails) != 3 {
		t.Fatalf("filtered = %+v, %v", urgent, err)
	}
	_, err = bob.MeInbox(e.ctx(), client.InboxQuery{Sort: "size"})
	wantStatus(t, err, 400, "")
	_, err = bob.MeInbox(e.ctx(), client.InboxQuery{Sort: "importance", Cursor: "x:y"})
	wantStatus(t, err, 400, "")
}

// A run reported finished with stop_reason "stopped" ends the reservations
// its agent took in that run's session, and only those.
func TestReservationsEndWithTheStoppedRun(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	sent, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alpha.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"in-session.go"}, SessionID: sent.SessionID}); err != nil {
		t.Fatal(err)
	}
	if _, err := alpha.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"elsewhere.go"}}); err != nil {
		t.Fatal(err)
	}
	stream, err := alpha.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	// carol's stop mail is what the report's stopped_by rests on.
	if _, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo, ReplyTo: sent.MailID, Subject: "re", Body: "stop"}); err != nil {
		t.Fatal(err)
	}
	if _, err := alpha.PutRun(e.ctx(), client.Run{RunID: "run-1", SessionID: sent.SessionID, MailID: sent.MailID, State: client.RunFinished, StopReason: "stopped", StoppedBy: "carol", Quiescence: client.QuiescenceProven}); err != nil {
		t.Fatal(err)
	}
	for {
		ev := nextEvent(t, stream)
		var re client.ReservationEvent
		if ev.Type == client.EventReservationChanged && json.Unmarshal(ev.Data, &re) == nil && re.Change == client.ReservationRunStopped {
			if len(re.Reservations) != 1 || re.Reservations[0].Path != "in-session.go" {
				t.Fatalf("run_stopped event = %+v", re)
			}
			break
		}
	}
	own, err := alpha.Reservations(e.ctx(), "")
	if err != nil || len(own.Reservations) != 1 || own.Reservations[0].Path != "elsewhere.go" {
		t.Fatalf("after the stop alpha holds %+v, %v", own, err)
	}
	if n, err := e.svc.ReleaseReservationsOfRun(e.ctx(), "no-such-run"); err != nil || n != 0 {
		t.Fatalf("an unknown run ended %d: %v", n, err)
	}
}

// An agent listing its workspace sees a reservation taken in a directory
// above it only when its pattern reaches into the workspace.
func TestReservationsListedFromAboveOnlyWhenTheyReachIn(t *testing.T) {
	e := newEnv(t)
	top := coAgent(e, "top")
	sub := coRepo + "/sub"
	alpha := e.agent("alpha")
	if _, err := alpha.Register(e.ctx(), client.RegisterRequest{Name: "alpha", Platform: "test", Workspaces: []client.Workspace{{Name: "sub", Path: sub}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := top.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"sub/src/**", "other/**"}, Reason: "big move"}); err != nil {
		t.Fatal(err)
	}
	l, err := alpha.Reservations(e.ctx(), sub)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Reservations) != 1 || l.Reservations[0].Path != "sub/src/**" || l.Reservations[0].Workspace != coRepo {
		t.Fatalf("alpha sees %+v", l.Reservations)
	}
	// And a path of the directory under it is refused by it.
	ex := true
	r, err := alpha.Reserve(e.ctx(), client.ReserveRequest{Workspace: sub, Paths: []string{"src/a.go"}, Exclusive: &ex})
	if err != nil || len(r.Refused) != 1 || r.Conflicts[0].Held.Holder != "top" {
		t.Fatalf("reserve under a parent's reservation: %+v, %v", r, err)
	}
}
