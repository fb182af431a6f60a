package httpapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/store"
)

// Stopping a run (issue 16): a person taking part in the run's session gets 202 and the
// run's agent a run_stop event; anyone else and an unknown run get the same 404; a run
// that ended is 409. The request is recorded once: the first asker stands in the run's
// stopped_by, even when the bridge reports another name, and the reservations the agent
// took in the session end.
func TestStopRunReachesTheAgentOnlyFromAParticipant(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	dave := e.person("dave")
	sent, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alpha.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"in-session.go"}, SessionID: sent.SessionID}); err != nil {
		t.Fatal(err)
	}
	run := client.Run{RunID: "run-stop-1", SessionID: sent.SessionID, MailID: sent.MailID, State: client.RunRunning,
		ToolCalls: 2, LastTool: "Bash", LastToolInput: "sleep 300"}
	if _, err := alpha.PutRun(e.ctx(), run); err != nil {
		t.Fatal(err)
	}
	stream, err := alpha.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	_, err = dave.MeStopRun(e.ctx(), run.RunID)
	wantStatus(t, err, 404, "run_not_found")
	_, err = carol.MeStopRun(e.ctx(), "no-such-run")
	wantStatus(t, err, 404, "run_not_found")

	resp, err := carol.MeStopRun(e.ctx(), run.RunID)
	if err != nil || resp.Status != "stopping" || resp.Run.StoppedBy != "carol" || resp.Run.StopRequestedAt == nil ||
		resp.Run.State != client.RunRunning || resp.Run.ToolCalls != 2 {
		t.Fatalf("stop = %+v, %v; want stopping, asked by carol, the run still running", resp, err)
	}
	for {
		ev := nextEvent(t, stream)
		if ev.Type != client.EventRunStop {
			continue
		}
		var rs client.RunStopEvent
		if err := json.Unmarshal(ev.Data, &rs); err != nil || rs != (client.RunStopEvent{RunID: run.RunID, SessionID: sent.SessionID, MailID: sent.MailID, StoppedBy: "carol"}) {
			t.Fatalf("run_stop event = %+v (%v)", rs, err)
		}
		break
	}
	own, err := alpha.Reservations(e.ctx(), "")
	if err != nil || len(own.Reservations) != 0 {
		t.Errorf("after the stop request alpha holds %+v, %v; want its reservation of the session ended", own, err)
	}
	active, err := carol.MeRuns(e.ctx(), false)
	if err != nil || len(active.Runs) != 1 || active.Runs[0].RunID != run.RunID {
		t.Errorf("carol's active runs = %+v, %v", active, err)
	}
	if other, err := dave.MeRuns(e.ctx(), true); err != nil || len(other.Runs) != 0 {
		t.Errorf("dave's runs = %+v, %v; want none: he takes part in no session", other, err)
	}

	// The bridge reports the end; a stopped run needs quiescence and keeps carol.
	run.State, run.StopReason, run.StoppedBy, run.Quiescence = client.RunFinished, client.StopReasonStopped, "carol", "maybe"
	_, err = alpha.PutRun(e.ctx(), run)
	wantStatus(t, err, 400, "")
	run.Quiescence = client.QuiescenceProven
	got, err := alpha.PutRun(e.ctx(), run)
	if err != nil || got.StoppedBy != "carol" || got.Quiescence != client.QuiescenceProven || got.StopRequestedAt == nil {
		t.Fatalf("stopped run = %+v, %v", got, err)
	}
	_, err = carol.MeStopRun(e.ctx(), run.RunID)
	wantStatus(t, err, 409, "run_not_running")
	if active, err := carol.MeRuns(e.ctx(), false); err != nil || len(active.Runs) != 0 {
		t.Errorf("carol's active runs after the end = %+v, %v", active, err)
	}
	if all, err := carol.MeRuns(e.ctx(), true); err != nil || len(all.Runs) != 1 || all.Runs[0].StopReason != client.StopReasonStopped {
		t.Errorf("carol's runs with all = %+v, %v", all, err)
	}
}

// A bridge's report of a stopped run names a person taking part in the session; an agent
// cannot put another name on it, and a queued run carries its place.
func TestRunReportsAreBounded(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	e.person("mallory")
	sent, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	base := client.Run{RunID: "run-b", SessionID: sent.SessionID, MailID: sent.MailID}
	bad := base
	bad.State, bad.StopReason, bad.StoppedBy, bad.Quiescence = client.RunFinished, client.StopReasonStopped, "mallory", client.QuiescenceProven
	_, err = alpha.PutRun(e.ctx(), bad)
	wantStatus(t, err, 400, "")
	bad.StoppedBy = ""
	_, err = alpha.PutRun(e.ctx(), bad)
	wantStatus(t, err, 400, "")
	long := base
	long.State, long.LastToolInput = client.RunRunning, string(make([]rune, client.MaxRunToolInputRunes+1))
	_, err = alpha.PutRun(e.ctx(), long)
	wantStatus(t, err, 400, "")
	q := base
	q.State, q.QueuePosition, q.MaxTurns = client.RunQueued, 2, 4
	got, err := alpha.PutRun(e.ctx(), q)
	if err != nil || got.State != client.RunQueued || got.QueuePosition != 2 || got.MaxTurns != 4 {
		t.Fatalf("queued run = %+v, %v", got, err)
	}
	s, err := carol.MeSession(e.ctx(), sent.SessionID)
	if err != nil || s.RunState != client.RunQueued {
		t.Errorf("session run_state = %q, %v; want queued", s.RunState, err)
	}
}

// A person's mail whose whole text is "stop" or "停止" is marked for the agent's bridge;
// other text, and the same word from an agent, is not.
func TestStopWordIsMarkedForTheAgent(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	stream, err := alpha.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	first, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "work", Body: "please stop the build"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{first.MailID: false}
	for _, body := range []string{"  Stop\n", "停止", "stop it"} {
		m, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha", ReplyTo: first.MailID, Subject: "Re: work", Body: body})
		if err != nil {
			t.Fatal(err)
		}
		want[m.MailID] = body != "stop it"
	}
	for len(want) > 0 {
		ev := nextEvent(t, stream)
		if ev.Type != client.EventNewMail {
			continue
		}
		var nm client.NewMailEvent
		if err := json.Unmarshal(ev.Data, &nm); err != nil {
			t.Fatal(err)
		}
		w, ok := want[nm.MailID]
		if !ok {
			continue
		}
		if nm.StopWord != w {
			t.Errorf("mail %s stop_word = %v, want %v", nm.MailID, nm.StopWord, w)
		}
		delete(want, nm.MailID)
	}
}

// A run's transcript is fetched by the people taking part in its session, and by nobody
// else, though no mail carries it; the sweep of unsent attachments keeps it.
func TestRunTranscriptIsReadInTheSession(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	e.person("dave")
	sent, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	const id = "transcript-1"
	if err := e.svc.Write(e.ctx(), func(tx *gateway.Tx) error {
		return tx.InsertAttachment(e.ctx(), store.AttachmentRow{AttachmentID: id, SHA256: "x", Size: 9, Filename: "run-t.md",
			ContentType: "text/markdown", Uploader: "alpha", UploaderKind: store.KindAgent, CreatedAt: time.Now().Add(-48 * time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	fetch := func(who string) error {
		_, err := e.svc.AttachmentForDownload(e.ctx(), &gateway.Principal{Kind: gateway.PrincipalPerson, Name: who}, id)
		return err
	}
	if err := fetch("carol"); err == nil {
		t.Fatal("carol fetched an attachment no mail and no run carries")
	}
	if _, err := alpha.PutRun(e.ctx(), client.Run{RunID: "run-t", SessionID: sent.SessionID, MailID: sent.MailID, State: client.RunFinished,
		TranscriptAttachmentID: id}); err != nil {
		t.Fatal(err)
	}
	if err := fetch("carol"); err != nil {
		t.Errorf("carol fetching the run's transcript: %v", err)
	}
	if err := fetch("dave"); err == nil {
		t.Error("dave, who takes part in no session, fetched the transcript")
	}
	old, err := e.st.Read().UnsentAttachmentsBefore(e.ctx(), time.Now(), 10)
	if err != nil || len(old) != 0 {
		t.Errorf("unsent attachments to sweep = %+v, %v; want none: the run names it", old, err)
	}
}

// The stopped_by of a stop report is the gateway's record, not the agent's
// word: without a stop through the API, the name must be that of a person
// whose stop mail the agent received in the conversation after the run's
// mail. Naming another person of the session, or leaning on a stop mail
// from before the run, is refused, and nothing of the run changes.
func TestAStopReportNamesOnlyAPersonWhoAskedToStop(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	e.person("dave")
	sent, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Cc: "dave", Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	run := client.Run{RunID: "run-s", SessionID: sent.SessionID, MailID: sent.MailID, State: client.RunRunning}
	if _, err := alpha.PutRun(e.ctx(), run); err != nil {
		t.Fatal(err)
	}
	stopped := run
	stopped.State, stopped.StopReason, stopped.Quiescence = client.RunFinished, client.StopReasonStopped, client.QuiescenceProven
	for _, who := range []string{"dave", "carol"} {
		stopped.StoppedBy = who
		_, err = alpha.PutRun(e.ctx(), stopped)
		wantStatus(t, err, 400, "")
	}
	reply := func(body string) *client.SendMailResponse {
		t.Helper()
		r, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo, ReplyTo: sent.MailID, Subject: "re", Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	reply(" STOP ")
	stopped.StoppedBy = "dave" // carol asked, not dave
	_, err = alpha.PutRun(e.ctx(), stopped)
	wantStatus(t, err, 400, "")
	if rs, err := carol.MeSessionRuns(e.ctx(), sent.SessionID); err != nil || len(rs.Runs) != 1 || rs.Runs[0].State != client.RunRunning || rs.Runs[0].StoppedBy != "" {
		t.Fatalf("after refused reports the run is %+v, %v; want it running, stopped by nobody", rs, err)
	}
	stopped.StoppedBy = "carol"
	if got, err := alpha.PutRun(e.ctx(), stopped); err != nil || got.StoppedBy != "carol" {
		t.Fatalf("report stopped by carol after her stop mail = %+v, %v", got, err)
	}

	// A later run: carol's stop mail came before its mail, so it does not count.
	next := reply("more work")
	later := client.Run{RunID: "run-s2", SessionID: sent.SessionID, MailID: next.MailID, State: client.RunFinished,
		StopReason: client.StopReasonStopped, Quiescence: client.QuiescenceProven, StoppedBy: "carol"}
	_, err = alpha.PutRun(e.ctx(), later)
	wantStatus(t, err, 400, "")
}

// GET /api/v1/runs (issue 16): a bridge that connects lists its agent's own unfinished
// runs (running, queued, idle), oldest first; ended runs and other agents' runs are not
// listed; a turn token (the platform's tools) and a person cannot ask.
func TestAgentOpenRunsListsOnlyTheAgentsUnfinishedRuns(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	beta := coAgent(e, "beta")
	carol := e.person("carol")
	sent, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Cc: "beta@" + coRepo, Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	for i, st := range []string{client.RunIdle, client.RunFinished, client.RunRunning, client.RunFailed, client.RunQueued} {
		run := client.Run{RunID: "alpha-" + st, SessionID: sent.SessionID, MailID: sent.MailID, State: st,
			StartedAt: start.Add(time.Duration(i) * time.Minute)}
		if _, err := alpha.PutRun(e.ctx(), run); err != nil {
			t.Fatalf("put %s: %v", st, err)
		}
	}
	if _, err := beta.PutRun(e.ctx(), client.Run{RunID: "beta-running", SessionID: sent.SessionID, State: client.RunRunning, StartedAt: start}); err != nil {
		t.Fatal(err)
	}
	l, err := alpha.OpenRuns(e.ctx(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range l.Runs {
		ids = append(ids, r.RunID)
	}
	if want := []string{"alpha-idle", "alpha-running", "alpha-queued"}; len(ids) != 3 || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
		t.Fatalf("alpha's open runs = %v, want %v (oldest first, no ended run, no run of beta)", ids, want)
	}
	if l, err := beta.OpenRuns(e.ctx(), ""); err != nil || len(l.Runs) != 1 || l.Runs[0].RunID != "beta-running" {
		t.Fatalf("beta's open runs = %+v, %v; want its own run only", l, err)
	}
	tok, err := alpha.CreateTurnToken(e.ctx(), sent.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.New(e.url, client.WithToken(tok.Token)).OpenRuns(e.ctx(), "")
	wantStatus(t, err, 403, "turn_token_not_allowed")
	_, err = carol.OpenRuns(e.ctx(), "")
	if err == nil {
		t.Fatal("a person listed an agent's open runs")
	}
}
