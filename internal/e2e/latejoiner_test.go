package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// A person who joins a session later (cc'd into it) was never sent the
// permission requests asked before and never saw the mails the earlier
// runs read: those requests are for them, like for a stranger, 404 (read,
// decide, answer by reply, listed nowhere), and the transcripts of those
// runs are 404 too. What is asked and run after they joined reaches them.
func TestALateJoinerCannotDecideEarlierRequestsOrReadEarlierTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	e := newPeopleAndAgents(t, startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t)))
	ctx, alice, bob, bot := e.ctx, e.alice, e.bob, e.bot
	sent, err := alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/plan.new", Subject: "work", Body: "the secret plan"})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(key string) *client.Permission {
		t.Helper()
		p, err := bot.RequestPermission(ctx, client.PermissionRequest{SessionID: sent.SessionID, Question: "may I run make?",
			RelayKey: key, Tool: "Bash", ToolInput: map[string]any{"command": "make " + key}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	transcriptRun := func(runID, mailID string) string {
		t.Helper()
		att, err := bot.UploadAttachment(ctx, runID+".md", strings.NewReader("read_inbox: the secret plan\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bot.PutRun(ctx, client.Run{RunID: runID, SessionID: sent.SessionID, MailID: mailID, State: client.RunFinished,
			TranscriptAttachmentID: att.AttachmentID}); err != nil {
			t.Fatal(err)
		}
		return att.AttachmentID
	}
	early := ask("early")
	earlyTranscript := transcriptRun("run-early", sent.MailID)

	joined, err := alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/plan", Cc: "bob", ReplyTo: sent.MailID, Subject: "re", Body: "bob joins"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.MeSession(ctx, sent.SessionID); err != nil {
		t.Fatalf("bob takes part now: %v", err)
	}

	_, err = bob.Decide(ctx, early.MailID, client.DecideRequest{Decision: "approve"})
	wantStatus(t, err, http.StatusNotFound, "permission_not_found")
	_, err = bob.MeGetMail(ctx, early.MailID)
	wantStatus(t, err, http.StatusNotFound, "mail_not_found")
	if _, err := bob.MeSend(ctx, client.SendMailRequest{To: "bot@/work/plan", ReplyTo: early.MailID, Subject: "re", Body: "allow"}); err == nil {
		if m, err := alice.MeGetMail(ctx, early.MailID); err != nil || m.Permission == nil || m.Permission.Status != "pending" {
			t.Fatalf("bob's reply decided the request he was never sent: %+v, %v", m, err)
		}
	}
	if l, err := bob.MePermissions(ctx, "all"); err != nil || len(l.Permissions) != 0 {
		t.Errorf("bob's permission requests = %+v, %v; want none", l, err)
	}
	_, _, err = bob.MeDownloadAttachment(ctx, earlyTranscript)
	wantStatus(t, err, http.StatusNotFound, "attachment_not_found")
	if r, _, err := alice.MeDownloadAttachment(ctx, earlyTranscript); err != nil {
		t.Errorf("the early transcript for the person who was there: %v", err)
	} else {
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != "read_inbox: the secret plan\n" {
			t.Errorf("transcript bytes %q", b)
		}
	}

	late := ask("late")
	lateTranscript := transcriptRun("run-late", joined.MailID)
	if p, err := bob.Decide(ctx, late.MailID, client.DecideRequest{Decision: "approve"}); err != nil || !p.Approved || p.DecidedBy != "bob" {
		t.Fatalf("bob decides the request asked after he joined: %+v, %v", p, err)
	}
	if r, _, err := bob.MeDownloadAttachment(ctx, lateTranscript); err != nil {
		t.Errorf("the later transcript for bob: %v", err)
	} else {
		r.Close()
	}
	if p, err := alice.Decide(ctx, early.MailID, client.DecideRequest{Decision: "deny"}); err != nil || p.Approved || p.DecidedBy != "alice" {
		t.Fatalf("alice decides the early request: %+v, %v", p, err)
	}
}
