package bridge_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
)

// Run control (issue 16) against the started gateway with the bridge core on the fake
// platform: what a stop does to the stopped turn's permission requests (B-9.2).

// waitPending waits for the admin's first pending permission request.
func waitPending(t *testing.T, g *realGateway) client.Permission {
	t.Helper()
	var perm client.Permission
	g.WaitFor("a pending permission request", func() bool {
		l, err := g.Admin.MePermissions(context.Background(), "pending")
		if err != nil || len(l.Permissions) == 0 {
			return false
		}
		perm = l.Permissions[0]
		return true
	})
	return perm
}

// runOf answers the session's run of mail mailID once it is in state (any state when
// state is "").
func runOf(t *testing.T, g *realGateway, sessionID, mailID, state string) client.Run {
	t.Helper()
	var run client.Run
	g.WaitFor("the run of "+mailID+" "+state, func() bool {
		for _, r := range g.Runs(sessionID) {
			if r.MailID == mailID && (state == "" || r.State == state) {
				run = r
				return true
			}
		}
		return false
	})
	return run
}

// A person stops a turn that waits for a permission decision: the request is closed at
// once (denied, decided via the stop, by the person who stopped it) with a decision mail
// in the thread, in the language of the people asked; nothing offers a decision any more
// (the pending list and count are empty); no new turn starts from the closed request;
// and a late answer, by the API or by a reply mail, is refused with words that say the
// turn was stopped, in the person's language.
func TestE2EStopClosesTheStoppedTurnsPermissionRequests(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	fake := fakeadapter.New()
	release := make(chan struct{})
	defer close(release)
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		if strings.Contains(req.Prompt, "next mail") {
			return fakeadapter.Step{Text: "a normal turn"}
		}
		s := askStep("perm_stop_1")
		s.Hold = release
		return s
	}
	b := startE2EBridge(t, g, fake, nil, nil)
	sent := g.send(t, addr(workdir(t, "p")), "needs approval, then stopped")
	perm := waitPending(t, g)
	run := runOf(t, g, sent.SessionID, sent.MailID, client.RunRunning)
	if perm.RunID != run.RunID {
		t.Fatalf("permission run_id = %q, want the running run %q", perm.RunID, run.RunID)
	}

	if _, err := g.Admin.MeStopRun(ctx, run.RunID); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// Closed by the stop itself, before the bridge reports the run's end.
	got, err := g.Admin.Decide(ctx, perm.MailID, client.DecideRequest{Decision: "approve"})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 409 || !strings.Contains(ae.Body.Error, "closed because admin stopped the turn") ||
		!strings.Contains(ae.Body.Suggestion, "write it a new mail") {
		t.Fatalf("approving after the stop = %+v, %v; want 409 saying admin stopped the turn", got, err)
	}
	var p client.Permission
	if l, err := g.Admin.MePermissions(ctx, "decided"); err == nil && len(l.Permissions) == 1 {
		p = l.Permissions[0]
	}
	if p.MailID != perm.MailID || p.Status != "denied" || p.DecidedVia != "stop" || p.DecidedBy != "admin" || p.Approved {
		t.Fatalf("permission after the stop = %+v; want denied via stop by admin", p)
	}
	if l, err := g.Admin.MePermissions(ctx, "pending"); err != nil || len(l.Permissions) != 0 {
		t.Fatalf("pending permissions after the stop = %+v, %v; want none", l, err)
	}
	if c, err := g.Admin.MeCounts(ctx); err != nil || c.PendingPermissions != 0 {
		t.Fatalf("counts after the stop = %+v, %v; want no pending permission", c, err)
	}
	// The conversation shows the request closed, and the agent's decision mail says why.
	var shown *client.Permission
	if l, err := g.Admin.MeSessionMails(ctx, sent.SessionID); err == nil {
		for _, m := range l.Mails {
			if m.MailID == perm.MailID {
				shown = m.Permission
			}
		}
	}
	if shown == nil || shown.Status != "denied" || shown.DecidedVia != "stop" {
		t.Errorf("the request in the conversation = %+v; want it closed by the stop", shown)
	}
	var decision *client.Mail
	no := false
	if l, err := b.gw.Inbox(ctx, client.InboxQuery{MarkRead: &no}); err == nil {
		for i, m := range l.Mails {
			if m.ParentMailID == perm.MailID && m.MailType == client.MailTypePermissionDecision {
				decision = &l.Mails[i]
			}
		}
	}
	if decision == nil || decision.FromKind != "system" || !strings.Contains(decision.Body, "Closed: admin stopped the turn this request belongs to") {
		t.Errorf("decision mail = %+v; want the system's closing words", decision)
	}

	stopped := runOf(t, g, sent.SessionID, sent.MailID, client.RunFinished)
	if stopped.StopReason != client.StopReasonStopped || stopped.StoppedBy != "admin" {
		t.Errorf("stopped run = %+v", stopped)
	}
	if tr := fake.Turns(); len(tr) != 1 || len(tr[0].Answers) != 1 || tr[0].Answers[0].Allow || !tr[0].Stopped {
		t.Fatalf("turns = %+v; want the one turn, its ask answered deny, stopped", tr)
	}

	// A late answer by reply mail, from a person who reads Chinese.
	zh := "zh"
	if _, err := g.Admin.UpdateMe(ctx, client.UpdateMeRequest{Language: &zh}); err != nil {
		t.Fatalf("language: %v", err)
	}
	_, err = g.Admin.MeSend(ctx, client.SendMailRequest{To: "bot", ReplyTo: perm.MailID, Subject: "Re: approval", Body: "同意"})
	if !errors.As(err, &ae) || ae.Status != 409 || !strings.Contains(ae.Body.Error, "已关闭，因为 admin 停止了它所在的一轮") {
		t.Fatalf("a late approval by reply = %v; want 409 in Chinese saying admin stopped the turn", err)
	}
	// Nothing became a new turn: not the closed request, not the refused reply. The
	// next mail's turn is the second one (events reach the bridge in order).
	g.send(t, addr(workdir(t, "q")), "next mail")
	fake.WaitFor(wait, func(ts []fakeadapter.Turn) bool { return len(ts) >= 2 && ts[len(ts)-1].Done })
	if tr := fake.Turns(); len(tr) != 2 || !strings.Contains(tr[1].Req.Prompt, "next mail") {
		t.Fatalf("turns after the stop = %d (%+v); want only the next mail's: a closed request starts no turn\n%s", len(tr), tr, b.logs)
	}
}
