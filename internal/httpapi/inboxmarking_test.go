package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// A GET that a page of another site can make the browser send (with the
// SameSite=Lax cookie, without a CSRF token) must not change state: listing
// the inbox with mark_read=true on the cookie is refused and marks nothing,
// while a user key still marks; a HEAD, whose answer shows no mail, never
// marks, for an agent neither.
func TestAGetWithTheCookieNeverMarksMailRead(t *testing.T) {
	e := newEnv(t)
	dsh := e.agent("dsh")
	r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w.new", Subject: "task", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dsh.SendMail(e.ctx(), client.SendMailRequest{To: "admin", ReplyTo: r.MailID, Subject: "done", Body: "y"}); err != nil {
		t.Fatal(err)
	}
	unread := func() int {
		t.Helper()
		l, err := e.admin.MeInbox(e.ctx(), client.InboxQuery{Status: "all", MarkRead: client.Bool(false)})
		if err != nil {
			t.Fatal(err)
		}
		return l.Unread
	}
	if n := unread(); n != 1 {
		t.Fatalf("unread = %d, want 1", n)
	}

	// The cookie (the page's sign-in; the client sends it as a browser would).
	_, err = e.admin.MeInbox(e.ctx(), client.InboxQuery{Status: "unread", MarkRead: client.Bool(true)})
	wantStatus(t, err, 400, "mark_read_needs_post")
	if n := unread(); n != 1 {
		t.Fatalf("a cookie GET with mark_read=true marked mail read: unread = %d, want 1", n)
	}

	// HEAD with a user key, and an agent's HEAD: nothing is marked.
	key, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := e.raw(http.MethodHead, "/api/v1/me/mail/inbox?status=unread&mark_read=true", key.KeyToken, ""); status != 200 {
		t.Fatalf("HEAD inbox = %d", status)
	}
	if n := unread(); n != 1 {
		t.Fatalf("a HEAD marked mail read: unread = %d, want 1", n)
	}
	if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", ReplyTo: r.MailID, Subject: "more", Body: "z"}); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := e.raw(http.MethodHead, "/api/v1/mail/inbox", "test-key-dsh-0123456789abcdef", ""); status != 200 {
		t.Fatalf("agent HEAD inbox = %d", status)
	}
	if l, err := dsh.Inbox(e.ctx(), client.InboxQuery{Status: "unread", MarkRead: client.Bool(false)}); err != nil || l.Unread != 2 {
		t.Fatalf("after the agent's HEAD: %+v %v, want 2 unread (the HEAD marks none)", l, err)
	}

	// The user key marks with the GET, as clients rely on.
	l, err := client.New(e.url, client.WithToken(key.KeyToken)).MeInbox(e.ctx(), client.InboxQuery{Status: "unread", MarkRead: client.Bool(true)})
	if err != nil || len(l.Mails) != 1 {
		t.Fatalf("key GET mark_read=true = %+v, %v", l, err)
	}
	if n := unread(); n != 0 {
		t.Fatalf("a user key's GET with mark_read=true: unread = %d, want 0", n)
	}
}
