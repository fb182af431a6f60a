package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestRunTranscriptIsNotReadByTheOtherAgentsOfItsSession: a run's
// transcript holds everything its agent read in the turn, the mails of the
// session addressed to that agent only included. It is read by the people
// of the session and by its own agent (the uploader); another agent that
// takes part in the session, here one copied in later, gets what an
// unknown attachment answers, although the session's run list names the
// transcript's id to it. Before, any participant could fetch it and so
// read a mail it could never open.
func TestRunTranscriptIsNotReadByTheOtherAgentsOfItsSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	e := newPeopleAndAgents(t, startGatewayWithFlags(t, t.TempDir(), ""))
	ctx := e.ctx
	sent, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/launch.new", Subject: "launch", Body: "the launch code is 1234"})
	if err != nil {
		t.Fatal(err)
	}
	att, err := e.bot.UploadAttachment(ctx, "run.md", strings.NewReader("read_inbox: the launch code is 1234"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.bot.PutRun(ctx, client.Run{RunID: "run-launch", SessionID: sent.SessionID, MailID: sent.MailID,
		State: client.RunFinished, TranscriptAttachmentID: att.AttachmentID}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.bot.SendMail(ctx, client.SendMailRequest{To: "alice", Cc: "helper@/work/launch", ReplyTo: sent.MailID,
		Subject: "help", Body: "helper, join us"}); err != nil {
		t.Fatal(err)
	}
	runs, err := e.helper.SessionRuns(ctx, sent.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Runs) != 1 || runs.Runs[0].TranscriptAttachmentID != att.AttachmentID {
		t.Fatalf("helper's run list = %+v, want the run naming its transcript", runs.Runs)
	}
	_, err = e.helper.GetMail(ctx, sent.MailID)
	wantStatus(t, err, http.StatusNotFound, "mail_not_found")

	_, _, err = e.helper.DownloadAttachment(ctx, att.AttachmentID)
	got := wantStatus(t, err, http.StatusNotFound, "attachment_not_found")
	_, _, err = e.helper.DownloadAttachment(ctx, "01a23640-4711-755c-9057-c4c87976fc26")
	unknown := wantStatus(t, err, http.StatusNotFound, "attachment_not_found")
	if got.Body != unknown.Body {
		t.Errorf("the transcript answers %+v to helper, an unknown id %+v; want the same", got.Body, unknown.Body)
	}

	for who, download := range map[string]func() (io.ReadCloser, *client.AttachmentMeta, error){
		"alice": func() (io.ReadCloser, *client.AttachmentMeta, error) {
			return e.alice.MeDownloadAttachment(ctx, att.AttachmentID)
		},
		"bot": func() (io.ReadCloser, *client.AttachmentMeta, error) {
			return e.bot.DownloadAttachment(ctx, att.AttachmentID)
		},
	} {
		rc, _, err := download()
		if err != nil {
			t.Fatalf("%s fetching the transcript: %v", who, err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if !strings.Contains(string(b), "launch code") {
			t.Errorf("%s read %q", who, b)
		}
	}
}
