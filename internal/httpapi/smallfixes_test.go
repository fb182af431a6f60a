package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpapi"
)

// TestUploadWithTwoFilePartsIsRefused checks that a multipart upload with a
// second part named "file" is a 400 naming field file and records no
// attachment, while one file among other fields is stored.
func TestUploadWithTwoFilePartsIsRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app, err := httpapi.Start(ctx, httpapi.AppConfig{Addr: "127.0.0.1:0", DataDir: t.TempDir(), AdminUser: "admin",
		AdminPassword: adminPassword, Gateway: fastHashing, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		app.Shutdown(context.Background())
		app.Store.Close()
	})
	admin := client.New(app.URL(), client.WithCookieJar())
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatal(err)
	}
	key, err := admin.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "upload", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	upload := func(parts ...[2]string) (int, client.ErrorBody) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for _, p := range parts {
			if p[0] == "file" {
				w, _ := mw.CreateFormFile("file", "f.txt")
				w.Write([]byte(p[1]))
			} else {
				mw.WriteField(p[0], p[1])
			}
		}
		mw.Close()
		req, _ := http.NewRequestWithContext(ctx, "POST", app.URL()+"/api/v1/me/attachments", &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+key.KeyToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var eb client.ErrorBody
		if resp.StatusCode >= 400 {
			eb = errorBody(t, string(body))
		}
		return resp.StatusCode, eb
	}
	count := func() int {
		var n int
		if err := app.Store.Read().QueryRow(ctx, `SELECT COUNT(*) FROM attachments`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if st, eb := upload([2]string{"file", "one"}, [2]string{"file", "two"}); st != 400 || eb.Field != "file" {
		t.Fatalf("two file parts: %d %+v", st, eb)
	}
	if st, eb := upload([2]string{"note", "x"}, [2]string{"file", "one"}, [2]string{"other", "y"}, [2]string{"file", "two"}); st != 400 || eb.Field != "file" {
		t.Fatalf("two file parts among other fields: %d %+v", st, eb)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d attachments recorded by refused uploads", n)
	}
	if st, eb := upload([2]string{"note", "x"}, [2]string{"file", "one"}, [2]string{"other", "y"}); st != 201 {
		t.Fatalf("one file among other fields: %d %+v", st, eb)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d attachments after one upload", n)
	}
}

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
