package gateway

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// A forward carries the forwarder's own attachments (checked as on a send)
// first, then the original's; the new recipient may fetch both.
func TestForwardCarriesOwnAndOriginalAttachments(t *testing.T) {
	e := newServiceEnv(t)
	upload := func(p *Principal, name, fill string) *client.Attachment {
		t.Helper()
		a, err := e.svc.CreateAttachment(e.ctx, p, NewAttachment{SHA256: strings.Repeat(fill, 64), Size: 1, Filename: name})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	orig := upload(e.bob, "log.txt", "a")
	sent, err := e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "alice", Subject: "the log", Body: "see", AttachmentIDs: []string{orig.AttachmentID}})
	if err != nil {
		t.Fatal(err)
	}
	mine := upload(e.alice, "notes.md", "b")
	bobs := upload(e.bob, "other.txt", "c")

	// Another person's upload is refused, naming attachment_ids; nothing is sent.
	before := e.countMails("1 = 1")
	_, err = e.svc.Forward(e.ctx, e.alice, sent.MailID, client.ForwardRequest{To: "carol", AttachmentIDs: []string{bobs.AttachmentID}})
	if ae := AsError(err); ae == nil || ae.Kind != KindInvalid || ae.Field != "attachment_ids" {
		t.Fatalf("foreign attachment: %v", err)
	}
	if n := e.countMails("1 = 1"); n != before {
		t.Fatalf("%d mails stored by a refused forward", n-before)
	}

	fwd, err := e.svc.Forward(e.ctx, e.alice, sent.MailID, client.ForwardRequest{To: "carol", Body: "fyi", AttachmentIDs: []string{mine.AttachmentID}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.svc.GetMail(e.ctx, e.carol, fwd.MailID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range m.Attachments {
		got = append(got, a.Filename)
	}
	if strings.Join(got, ",") != "notes.md,log.txt" {
		t.Fatalf("forward attachments %v, want notes.md then log.txt", got)
	}
	for _, id := range []string{mine.AttachmentID, orig.AttachmentID} {
		if _, err := e.svc.AttachmentForDownload(e.ctx, e.carol, id); err != nil {
			t.Errorf("carol fetching %s: %v", id, err)
		}
	}
	// The uploader forwarding their own mail with its attachment listed
	// again: linked once.
	again, err := e.svc.Forward(e.ctx, e.bob, sent.MailID, client.ForwardRequest{To: "carol", AttachmentIDs: []string{bobs.AttachmentID, orig.AttachmentID}})
	if err != nil {
		t.Fatal(err)
	}
	m, err = e.svc.GetMail(e.ctx, e.carol, again.MailID)
	if err != nil || len(m.Attachments) != 2 || m.Attachments[0].Filename != "other.txt" || m.Attachments[1].Filename != "log.txt" {
		t.Fatalf("forward of own mail: %+v, %v", m.Attachments, err)
	}
}
