package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// Three details of issue 21 over the started binary: a reservation ends
// when its holder's run is stopped (a person's `agentmail stop`, and a
// bridge reporting its turn stopped after a stop mail), and only the
// reservations of that run's session; an acknowledgement becomes overdue
// at its due time and is listed so by the CLI, the agent's
// list_unacknowledged tool and the API; GET /api/v1/me/export/sessions
// pages every changed session exactly once under its page bound.

// TestReservationEndsWhenItsRunIsStopped: alpha works in two sessions of
// carol's, holding src/** in the first and docs/** in the second. carol
// stops the first run with `agentmail stop`: alpha is told (run_stop),
// src/** ends as run_stopped and beta gets it, docs/** stays. Then carol
// writes "stop" in the second session and alpha's bridge reports that
// turn stopped: docs/** ends too.
func TestReservationEndsWhenItsRunIsStopped(t *testing.T) {
	e := coSetup(t)
	alpha, _ := e.agent("alpha")
	_, betaKey := e.agent("beta")
	mb := e.mcp("beta", betaKey)
	stream, err := alpha.Stream(e.ctx, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	type turn struct {
		opened *client.SendMailResponse
		mcp    *coMCP
		runID  string
	}
	var turns []turn
	for i, paths := range []string{"src/**", "docs/**"} {
		opened, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "alpha@" + e.repo + ".new", Subject: "work " + paths, Body: "go"})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := alpha.CreateTurnToken(e.ctx, opened.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		m := e.mcpWith("AGENTMAIL_TURN_TOKEN="+tok.Token, "AGENTMAIL_SESSION_ID="+opened.SessionID)
		m.mustCall("reserve_paths", map[string]any{"paths": []string{paths}, "reason": "turn " + fmt.Sprint(i+1)}, "Reserved")
		runID := fmt.Sprintf("run-%d-%d", i+1, time.Now().UnixNano())
		if _, err := alpha.PutRun(e.ctx, client.Run{RunID: runID, SessionID: opened.SessionID, MailID: opened.MailID, State: client.RunRunning}); err != nil {
			t.Fatal(err)
		}
		turns = append(turns, turn{opened, m, runID})
	}
	mb.mustCall("reserve_paths", map[string]any{"paths": []string{"src/main.go"}}, "REFUSED", "held by alpha")

	cliEnv := e.userCLIEnv(e.carol, "cli.json")
	out, code := e.run(e.repo, cliEnv, e.bin, "stop", turns[0].runID)
	if code != 0 || !strings.Contains(out, "Stopping run "+turns[0].runID) {
		t.Fatalf("agentmail stop: exit %d\n%s", code, out)
	}
	waitEvent(t, stream, client.EventRunStop, func(b []byte) bool {
		var ev client.RunStopEvent
		return json.Unmarshal(b, &ev) == nil && ev.RunID == turns[0].runID && ev.StoppedBy == "carol"
	})
	waitEvent(t, stream, client.EventReservationChanged, func(b []byte) bool {
		var ev client.ReservationEvent
		return json.Unmarshal(b, &ev) == nil && ev.Change == client.ReservationRunStopped && ev.Workspace == e.repo &&
			len(ev.Reservations) == 1 && ev.Reservations[0].Path == "src/**" && ev.Reservations[0].Holder == "alpha"
	})
	mb.mustCall("reserve_paths", map[string]any{"paths": []string{"src/main.go"}, "reason": "after the stop"}, "Reserved in "+e.repo)
	mb.mustCall("reserve_paths", map[string]any{"paths": []string{"docs/intro.md"}}, "REFUSED", "held by alpha")
	turns[0].mcp.mustCall("list_reservations", map[string]any{}, "docs/** — exclusive, held by alpha", "src/main.go — exclusive, held by beta")
	held := func() []string {
		t.Helper()
		l, err := e.carol.MeReservations(e.ctx, e.repo)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range l.Reservations {
			out = append(out, r.Holder+" "+r.Path)
		}
		return out
	}
	if got := strings.Join(held(), ", "); got != "alpha docs/**, beta src/main.go" && got != "beta src/main.go, alpha docs/**" {
		t.Fatalf("reservations after the first stop: %s", got)
	}

	// The second turn: carol's stop mail, and the bridge's report of the
	// turn it stopped.
	if _, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "alpha@" + e.repo + "." + turns[1].opened.SessionAlias, Subject: "stop", Body: "stop"}); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	if _, err := alpha.PutRun(e.ctx, client.Run{RunID: turns[1].runID, SessionID: turns[1].opened.SessionID, MailID: turns[1].opened.MailID,
		State: client.RunFinished, StopReason: client.StopReasonStopped, StoppedBy: "carol", EndedAt: &ended}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, stream, client.EventReservationChanged, func(b []byte) bool {
		var ev client.ReservationEvent
		return json.Unmarshal(b, &ev) == nil && ev.Change == client.ReservationRunStopped &&
			len(ev.Reservations) == 1 && ev.Reservations[0].Path == "docs/**"
	})
	if got := strings.Join(held(), ", "); got != "beta src/main.go" {
		t.Fatalf("reservations after the second stop: %s", got)
	}
	mb.mustCall("reserve_paths", map[string]any{"paths": []string{"docs/intro.md"}}, "Reserved in "+e.repo)
}

// TestAckOverdueListedOverTheBinary: alpha asks carol to acknowledge
// within a minute (and another mail within the default day). Before the
// minute is out neither is overdue; once it is, carol's `agentmail acks
// --overdue`, alpha's list_unacknowledged with overdue_only and the API's
// overdue=true list that one mail (not the other) as overdue; carol's
// acknowledgement takes it off every list. This waits a real minute: the
// shortest deadline a send may ask for.
func TestAckOverdueListedOverTheBinary(t *testing.T) {
	e := coSetup(t)
	_, alphaKey := e.agent("alpha")
	ma := e.mcp("alpha", alphaKey)
	opened, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "alpha@" + e.repo + ".new", Subject: "release", Body: "ready?"})
	if err != nil {
		t.Fatal(err)
	}
	sentAt := time.Now() // before the gateway stamps the mail: its due time is at least a minute after this
	ma.mustCall("send_mail", map[string]any{"to": "carol", "reply_to": opened.MailID, "subject": "confirm the freeze",
		"body": "confirm within a minute", "ack_required": true, "ack_within_minutes": 1}, "Sent")
	ma.mustCall("send_mail", map[string]any{"to": "carol", "reply_to": opened.MailID, "subject": "confirm the date",
		"body": "no hurry", "ack_required": true}, "Sent")
	waiting, err := e.carol.MeUnacknowledged(e.ctx, client.AckWaitingQuery{})
	if err != nil || len(waiting.Mails) != 2 {
		t.Fatalf("carol's waiting list: %+v, %v", waiting, err)
	}
	var soon, later string
	for _, w := range waiting.Mails {
		if w.Subject == "confirm the freeze" {
			soon = w.MailID
		} else {
			later = w.MailID
		}
	}
	if soon == "" || later == "" {
		t.Fatalf("waiting list: %+v", waiting.Mails)
	}
	cliEnv := e.userCLIEnv(e.carol, "cli.json")
	acks := func(args ...string) string {
		t.Helper()
		out, code := e.run(e.repo, cliEnv, e.bin, append([]string{"acks"}, args...)...)
		if code != 0 {
			t.Fatalf("agentmail acks %q: exit %d\n%s", args, code, out)
		}
		return out
	}
	if out := acks("--overdue"); time.Since(sentAt) < 50*time.Second && strings.Contains(out, soon) {
		t.Fatalf("overdue at once:\n%s", out)
	}
	if text := ma.mustCall("list_unacknowledged", map[string]any{"overdue_only": true}); time.Since(sentAt) < 50*time.Second && strings.Contains(text, soon) {
		t.Fatalf("the tool lists it overdue at once:\n%s", text)
	}

	// Past the minute: overdue everywhere, the day-long one nowhere.
	deadline := sentAt.Add(2 * time.Minute)
	var out string
	for {
		if out = acks("--overdue"); strings.Contains(out, soon) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listed overdue 2 minutes after a 1-minute deadline:\n%s", out)
		}
		time.Sleep(time.Second) // polling interval of a condition with a deadline
	}
	if since := time.Since(sentAt); since < time.Minute {
		t.Fatalf("listed overdue after %s, before its minute", since)
	}
	wantContains(t, "agentmail acks --overdue", out, "OVERDUE", "confirm the freeze")
	if strings.Contains(out, later) {
		t.Fatalf("the mail due in a day is listed overdue:\n%s", out)
	}
	if all := acks(); !strings.Contains(all, soon) || !strings.Contains(all, later) {
		t.Fatalf("agentmail acks lacks a waiting mail:\n%s", all)
	}
	text := ma.mustCall("list_unacknowledged", map[string]any{"overdue_only": true}, soon, "OVERDUE since", "carol")
	if strings.Contains(text, later) {
		t.Fatalf("the tool lists the day-long mail overdue:\n%s", text)
	}
	over, err := e.carol.MeUnacknowledged(e.ctx, client.AckWaitingQuery{Overdue: true})
	if err != nil || len(over.Mails) != 1 || over.Mails[0].MailID != soon || !over.Mails[0].Overdue || over.Mails[0].Role != "recipient" {
		t.Fatalf("the API's overdue list: %+v, %v", over, err)
	}

	// Acknowledged, it is off every list.
	if out, code := e.run(e.repo, cliEnv, e.bin, "ack", soon); code != 0 {
		t.Fatalf("agentmail ack: exit %d\n%s", code, out)
	}
	if out := acks("--overdue"); strings.Contains(out, soon) {
		t.Fatalf("still overdue after the acknowledgement:\n%s", out)
	}
	if text := ma.mustCall("list_unacknowledged", map[string]any{"overdue_only": true}); strings.Contains(text, soon) {
		t.Fatalf("the tool still lists it:\n%s", text)
	}
}

// TestExportSessionsPagesEverySessionOnce: carol renames five sessions
// and acknowledges a mail of a sixth; dave renames his own. Pages of two
// from GET /api/v1/me/export/sessions hold each of carol's six exactly
// once, never dave's, the last page no next_cursor; a limit beyond the
// bound is 400 field limit, a cursor it did not give 400 field cursor,
// and one page at the bound holds them all.
func TestExportSessionsPagesEverySessionOnce(t *testing.T) {
	e := coSetup(t)
	alpha, _ := e.agent("alpha")
	dave := (&peopleAndAgents{t: t, ctx: e.ctx, g: e.g, admin: e.admin}).person("dave")
	first, err := e.carol.MeExportSessions(e.ctx, client.ExportSessionsQuery{ChangedAfter: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	since := first.ChangesAsOf
	want := map[string]bool{}
	for i := 0; i < 5; i++ {
		s, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "alpha@" + e.repo + ".new", Subject: fmt.Sprintf("topic %d", i), Body: "b"})
		if err != nil {
			t.Fatal(err)
		}
		alias := fmt.Sprintf("renamed-%d", i)
		if _, err := e.carol.MeUpdateSession(e.ctx, s.SessionID, client.UpdateSessionRequest{Alias: &alias}); err != nil {
			t.Fatal(err)
		}
		want[s.SessionID] = true
	}
	acked, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "alpha@" + e.repo + ".new", Subject: "ack me", Body: "b", AckRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alpha.AckMail(e.ctx, acked.MailID); err != nil {
		t.Fatal(err)
	}
	want[acked.SessionID] = true
	ds, err := dave.MeSend(e.ctx, client.SendMailRequest{To: "alpha@" + e.repo + ".new", Subject: "dave's", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	daveAlias := "daves-renamed"
	if _, err := dave.MeUpdateSession(e.ctx, ds.SessionID, client.UpdateSessionRequest{Alias: &daveAlias}); err != nil {
		t.Fatal(err)
	}

	seen := map[string]int{}
	cursor := ""
	pages := 0
	for {
		pages++
		if pages > 10 {
			t.Fatal("more than 10 pages for 6 sessions")
		}
		p, err := e.carol.MeExportSessions(e.ctx, client.ExportSessionsQuery{ChangedAfter: since, Cursor: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sessions) > 2 {
			t.Fatalf("page %d holds %d sessions, limit 2", pages, len(p.Sessions))
		}
		for _, s := range p.Sessions {
			seen[s.SessionID]++
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("session %s listed %d times", id, seen[id])
		}
	}
	if seen[ds.SessionID] != 0 {
		t.Errorf("dave's session is in carol's listing")
	}
	if len(seen) != len(want) {
		t.Errorf("listed %d sessions, want %d: %v", len(seen), len(want), seen)
	}
	if pages != 3 && pages != 4 { // 2+2+2, and an empty last page when the third was full
		t.Errorf("%d pages", pages)
	}
	// The bounds of a page, and a cursor of its own only.
	_, err = e.carol.MeExportSessions(e.ctx, client.ExportSessionsQuery{ChangedAfter: since, Limit: 1001})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "limit" {
		t.Errorf("limit 1001: %+v", ae.Body)
	}
	_, err = e.carol.MeExportSessions(e.ctx, client.ExportSessionsQuery{ChangedAfter: since, Cursor: "1:not-a-session"})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "cursor" {
		t.Errorf("a foreign cursor: %+v", ae.Body)
	}
	full, err := e.carol.MeExportSessions(e.ctx, client.ExportSessionsQuery{ChangedAfter: since, Limit: 1000})
	if err != nil || len(full.Sessions) != len(want) || full.NextCursor != "" {
		t.Fatalf("one page of 1000: %d sessions, cursor %q, %v", len(full.Sessions), full.NextCursor, err)
	}
}
