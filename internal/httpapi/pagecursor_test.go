package httpapi_test

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestGarbageCursorIsA400NamingIt checks every paged listing: a cursor that
// is not a next_cursor the endpoint gave is 400 with field cursor, while a
// real next_cursor pages on.
func TestGarbageCursorIsA400NamingIt(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	var sessionID string
	for i := 0; i < 3; i++ {
		r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w.new", Subject: "s", Body: "b"})
		if err != nil {
			t.Fatal(err)
		}
		sessionID = r.SessionID
	}
	key, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "k", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, token string }{
		{"/api/v1/mail/inbox?cursor=garbage", dshToken},
		{"/api/v1/mail/inbox?cursor=zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", dshToken},
		{"/api/v1/me/mail/inbox?cursor=garbage", key.KeyToken},
		{"/api/v1/me/mail/sent?cursor=garbage", key.KeyToken},
		{"/api/v1/me/sessions/" + sessionID + "/mails?cursor=garbage", key.KeyToken},
		{"/api/v1/me/sessions?cursor=garbage", key.KeyToken},
		{"/api/v1/me/sessions?cursor=123:garbage", key.KeyToken},
	} {
		status, body, _ := e.raw("GET", c.path, c.token, "")
		if eb := errorBody(t, body); status != 400 || eb.Field != "cursor" {
			t.Errorf("GET %s: %d %s", c.path, status, body)
		}
	}
	// Real cursors page on.
	page, err := e.admin.MeSent(e.ctx(), client.PageQuery{Limit: 2})
	if err != nil || page.NextCursor == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	if rest, err := e.admin.MeSent(e.ctx(), client.PageQuery{Limit: 2, Cursor: page.NextCursor}); err != nil || len(rest.Mails) != 1 {
		t.Fatalf("second page: %+v, %v", rest, err)
	}
	sl, err := e.admin.MeSessions(e.ctx(), client.PageQuery{Limit: 2})
	if err != nil || sl.NextCursor == "" {
		t.Fatalf("first sessions page: %+v, %v", sl, err)
	}
	if rest, err := e.admin.MeSessions(e.ctx(), client.PageQuery{Limit: 2, Cursor: sl.NextCursor}); err != nil || len(rest.Sessions) != 1 {
		t.Fatalf("second sessions page: %+v, %v", rest, err)
	}
}
