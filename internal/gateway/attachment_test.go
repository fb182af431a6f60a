package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

func TestSafeFilename(t *testing.T) {
	cases := map[string]string{
		"report.pdf":              "report.pdf",
		"../../etc/passwd":        "passwd",
		`C:\Users\x\secret.txt`:   "secret.txt",
		"a\"b\x00c\nd.txt":        "abcd.txt",
		"":                        "attachment",
		"..":                      "attachment",
		".bashrc":                 "bashrc",
		"报告 2026.md":              "报告 2026.md",
		"evil\u202egnp.exe":       "evilgnp.exe",
		strings.Repeat("x", 300):  strings.Repeat("x", MaxFilenameBytes),
		strings.Repeat("界", 100):  strings.Repeat("界", MaxFilenameBytes/3),
		"dir/":                    "dir",
		"name with spaces .txt  ": "name with spaces .txt",
	}
	for in, want := range cases {
		if got := SafeFilename(in); got != want {
			t.Errorf("SafeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanContentType(t *testing.T) {
	for in, want := range map[string]string{
		"text/plain; charset=utf-8": "text/plain; charset=utf-8",
		"TEXT/HTML":                 "text/html",
		"":                          "application/octet-stream",
		"not a type":                "application/octet-stream",
	} {
		if got := CleanContentType(in); got != want {
			t.Errorf("CleanContentType(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeBlobs records removals; every digest is idle.
type fakeBlobs struct {
	sums    []string
	removed []string
}

func (f *fakeBlobs) RemoveIfIdle(sum string, _ time.Time) (bool, error) {
	f.removed = append(f.removed, sum)
	return true, nil
}
func (f *fakeBlobs) Sums() ([]string, error) { return f.sums, nil }

func TestAttachmentsBelongToTheSenderAndOnlyParticipantsFetch(t *testing.T) {
	e := newServiceEnv(t)
	sum := strings.Repeat("a", 64)
	a, err := e.svc.CreateAttachment(e.ctx, e.alice, NewAttachment{SHA256: sum, Size: 3, Filename: "../x.txt", ContentType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Filename != "x.txt" || a.Size != 3 || a.SHA256 != sum {
		t.Fatalf("attachment = %+v", a)
	}
	// bob cannot attach alice's upload.
	_, err = e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "alice", Subject: "s", Body: "b", AttachmentIDs: []string{a.AttachmentID}})
	wantCode(t, err, KindInvalid, "")
	if AsError(err).Field != "attachment_ids" {
		t.Errorf("field = %q", AsError(err).Field)
	}
	_, err = e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bob", Subject: "s", Body: "b", AttachmentIDs: []string{a.AttachmentID, a.AttachmentID}})
	wantCode(t, err, KindInvalid, "")
	if n := e.countMails("1 = 1"); n != 0 {
		t.Fatalf("%d mails stored by refused sends", n)
	}
	// Before sending, only the uploader may fetch.
	if _, err := e.svc.AttachmentForDownload(e.ctx, e.alice, a.AttachmentID); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.AttachmentForDownload(e.ctx, e.bob, a.AttachmentID)
	wantCode(t, err, KindNotFound, "attachment_not_found")
	r, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bob", Subject: "s", Body: "b", AttachmentIDs: []string{a.AttachmentID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.AttachmentForDownload(e.ctx, e.bob, a.AttachmentID); err != nil {
		t.Errorf("recipient cannot fetch: %v", err)
	}
	_, err = e.svc.AttachmentForDownload(e.ctx, e.carol, a.AttachmentID)
	wantCode(t, err, KindNotFound, "attachment_not_found")
	m, _ := e.svc.GetMail(e.ctx, e.bob, r.MailID)
	if len(m.Attachments) != 1 || m.Attachments[0].Filename != "x.txt" || m.Attachments[0].SHA256 != sum {
		t.Errorf("mail attachments = %+v", m.Attachments)
	}
}

func TestSweepRemovesOnlyUnsentAttachmentsAfter24h(t *testing.T) {
	e := newServiceEnv(t)
	sent, _ := e.svc.CreateAttachment(e.ctx, e.alice, NewAttachment{SHA256: strings.Repeat("1", 64), Size: 1, Filename: "a"})
	unsent, _ := e.svc.CreateAttachment(e.ctx, e.alice, NewAttachment{SHA256: strings.Repeat("2", 64), Size: 1, Filename: "b"})
	shared, _ := e.svc.CreateAttachment(e.ctx, e.bob, NewAttachment{SHA256: strings.Repeat("1", 64), Size: 1, Filename: "c"})
	if _, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bob", Subject: "s", Body: "b", AttachmentIDs: []string{sent.AttachmentID}}); err != nil {
		t.Fatal(err)
	}
	blobs := &fakeBlobs{sums: []string{strings.Repeat("1", 64), strings.Repeat("2", 64)}}
	e.clock.Advance(23 * time.Hour)
	if n, _ := e.svc.SweepAttachments(e.ctx, blobs); n != 0 {
		t.Fatalf("removed %d before 24 h", n)
	}
	e.clock.Advance(2 * time.Hour)
	n, err := e.svc.SweepAttachments(e.ctx, blobs)
	if err != nil || n != 2 {
		t.Fatalf("removed %d, %v; want the two unsent ones", n, err)
	}
	if _, err := e.svc.AttachmentForDownload(e.ctx, e.alice, sent.AttachmentID); err != nil {
		t.Errorf("a sent attachment was removed: %v", err)
	}
	for _, gone := range []string{unsent.AttachmentID, shared.AttachmentID} {
		if _, err := e.svc.AttachmentForDownload(e.ctx, e.alice, gone); err == nil {
			t.Errorf("attachment %s still there", gone)
		}
	}
	// The content of "1" is still used by the sent one; "2" is not.
	if strings.Join(blobs.removed, ",") != strings.Repeat("2", 64) {
		t.Errorf("removed blobs = %v", blobs.removed)
	}
}
