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
