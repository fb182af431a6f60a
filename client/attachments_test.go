package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// gatedReader yields first, then blocks until release is closed (or gives
// up after a generous deadline with an error), then yields rest.
type gatedReader struct {
	first, rest []byte
	release     <-chan struct{}
	stage       int
}

var errGateTimeout = errors.New("the gateway never saw the first chunk: the upload was buffered, not streamed")

func (g *gatedReader) Read(p []byte) (int, error) {
	switch g.stage {
	case 0:
		n := copy(p, g.first)
		g.first = g.first[n:]
		if len(g.first) == 0 {
			g.stage = 1
		}
		return n, nil
	case 1:
		select {
		case <-g.release:
		case <-time.After(20 * time.Second):
			return 0, errGateTimeout
		}
		g.stage = 2
		fallthrough
	default:
		if len(g.rest) == 0 {
			return 0, io.EOF
		}
		n := copy(p, g.rest)
		g.rest = g.rest[n:]
		return n, nil
	}
}

// TestUploadStreamsWithoutBuffering proves the upload is streamed: the
// reader does not give its second half until the gateway has received the
// first half, which deadlocks (and fails) if the client read the whole file
// before sending.
func TestUploadStreamsWithoutBuffering(t *testing.T) {
	first := bytes.Repeat([]byte("a"), 256<<10)
	rest := bytes.Repeat([]byte("b"), 256<<10)
	release := make(chan struct{})
	var gotName, gotType, gotField string
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/api/v1/me/attachments" {
			t.Errorf("sent %s %s", r.Method, r.URL.Path)
		}
		if r.Header.Get("Authorization") != "Bearer uk" {
			t.Errorf("Authorization %q", r.Header.Get("Authorization"))
		}
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/form-data" {
			t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		part, err := mr.NextPart()
		if err != nil {
			t.Errorf("no part: %v", err)
			return
		}
		gotField, gotName, gotType = part.FormName(), part.FileName(), part.Header.Get("Content-Type")
		head := make([]byte, len(first))
		if _, err := io.ReadFull(part, head); err != nil {
			t.Errorf("read first half: %v", err)
			return
		}
		close(release) // only now may the client's reader produce the rest
		tail, _ := io.ReadAll(part)
		gotBody = append(head, tail...)
		if _, err := mr.NextPart(); err != io.EOF {
			t.Errorf("more than one part: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		_, _ = w.Write([]byte(`{"attachment_id":"a1","filename":"report \"q\".txt","size":524288,"sha256":"x","content_type":"text/plain","created_at":"2026-11-30T12:00:00Z"}`))
	}))
	defer srv.Close()

	c := New(srv.URL, WithToken("uk"))
	att, err := c.MeUploadAttachment(context.Background(), `report "q".txt`, &gatedReader{first: first, rest: rest, release: release})
	if err != nil {
		t.Fatal(err)
	}
	if att.AttachmentID != "a1" || att.Size != 524288 {
		t.Errorf("decoded %+v", att)
	}
	if gotField != "file" || gotName != `report "q".txt` || !strings.HasPrefix(gotType, "text/plain") {
		t.Errorf("part field %q filename %q type %q", gotField, gotName, gotType)
	}
	if !bytes.Equal(gotBody, append(first, rest...)) {
		t.Errorf("gateway received %d bytes, want %d unchanged", len(gotBody), len(first)+len(rest))
	}
}

// endlessReader never ends.
type endlessReader struct{}

func (endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'z'
	}
	return len(p), nil
}

// TestUploadRefusedEarlyReturnsTheError shows that a 413 answered before
// the file is sent ends the call (and its writer) instead of streaming
// forever.
func TestUploadRefusedEarlyReturnsTheError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = w.Write([]byte(`{"error":"attachment over 10 MiB","code":"too_large","field":"file","suggestion":"split the file"}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := New(srv.URL, WithToken("ak")).UploadAttachment(ctx, "big.bin", endlessReader{})
	if StatusOf(err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("got %v, want the 413 answer", err)
	}
	if e := AsAPIError(err); e.Field() != "file" || e.Suggestion() != "split the file" {
		t.Errorf("APIError %+v", e)
	}
}

// TestUploadNeedsAFilename refuses an empty filename before any request.
func TestUploadNeedsAFilename(t *testing.T) {
	f := newFakeGateway(t)
	_, err := New(f.srv.URL).UploadAttachment(context.Background(), " ", strings.NewReader("x"))
	if err == nil || !strings.Contains(err.Error(), "filename") || f.count() != 0 {
		t.Fatalf("err %v, requests %d", err, f.count())
	}
}

// TestDownloadReturnsStreamAndMeta reads the bytes and the filename, size
// and type from the answer's headers, for agents and people.
func TestDownloadReturnsStreamAndMeta(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if r.URL.Path == "/api/v1/attachments/missing" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error":"no attachment missing","code":"not_found"}`))
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`)
		w.Header().Set("Content-Length", "5")
		_, _ = w.Write([]byte("hello"))
	}))
	defer srv.Close()
	c := New(srv.URL, WithToken("k"))
	for _, dl := range []func(context.Context, string) (io.ReadCloser, *AttachmentMeta, error){c.DownloadAttachment, c.MeDownloadAttachment} {
		rc, meta, err := dl(context.Background(), "a1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		if string(body) != "hello" || meta.Filename != "résumé.pdf" || meta.Size != 5 || meta.ContentType != "application/octet-stream" {
			t.Errorf("body %q meta %+v", body, meta)
		}
	}
	if _, _, err := c.DownloadAttachment(context.Background(), "missing"); !IsNotFound(err) {
		t.Errorf("missing attachment: %v", err)
	}
	want := []string{"/api/v1/attachments/a1", "/api/v1/me/attachments/a1", "/api/v1/attachments/missing"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("paths %v, want %v", paths, want)
	}
}
