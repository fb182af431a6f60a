package webui

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func gunzip(t *testing.T, b string) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A large text file goes out gzip-compressed to a browser that accepts it,
// under its own ETag and with Vary: Accept-Encoding; as it is to a client
// that does not, to one that refuses gzip with q=0, and for a Range.
func TestLargeTextFilesAreServedCompressed(t *testing.T) {
	script := strings.Repeat("export const answer = 42;\n", 400)
	h := New(fstest.MapFS{
		"index.html":             {Data: []byte(testIndex)},
		"assets/index-abc123.js": {Data: []byte(script)},
		"assets/logo-1.png":      {Data: bytes.Repeat([]byte{0x89}, 4096)},
	})
	res := do(t, h, "GET", "/assets/index-abc123.js", map[string]string{"Accept-Encoding": "br;q=1, gzip;q=0.8"})
	got := body(t, res)
	if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("headers %v", res.Header)
	}
	if len(got) >= len(script)/4 || gunzip(t, got) != script {
		t.Fatalf("compressed %d of %d bytes", len(got), len(script))
	}
	if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Fatalf("Content-Type %q", ct)
	}
	gzETag := res.Header.Get("ETag")
	if r := do(t, h, "GET", "/assets/index-abc123.js", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": gzETag}); r.StatusCode != 304 {
		t.Fatalf("revalidation of the gzip form: %d", r.StatusCode)
	}

	for _, hdr := range []map[string]string{nil, {"Accept-Encoding": "identity"}, {"Accept-Encoding": "*, gzip;q=0"},
		{"Accept-Encoding": "gzip", "Range": "bytes=0-9"}} {
		r := do(t, h, "GET", "/assets/index-abc123.js", hdr)
		b := body(t, r)
		if r.Header.Get("Content-Encoding") != "" || r.Header.Get("ETag") == gzETag {
			t.Fatalf("%v: compressed answer %v", hdr, r.Header)
		}
		if hdr["Range"] == "" && b != script || hdr["Range"] != "" && b != script[:10] {
			t.Fatalf("%v: body of %d bytes", hdr, len(b))
		}
		if r.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("%v: Vary %q", hdr, r.Header.Get("Vary"))
		}
	}
	if r := do(t, h, "GET", "/assets/index-abc123.js", map[string]string{"Accept-Encoding": "*"}); r.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("* accepts gzip: %v", r.Header)
	}
	// Images and small files stay as they are, with no Vary.
	for _, p := range []string{"/assets/logo-1.png", "/"} {
		r := do(t, h, "GET", p, map[string]string{"Accept-Encoding": "gzip"})
		if r.Header.Get("Content-Encoding") != "" || r.Header.Get("Vary") != "" {
			t.Fatalf("%s: %v", p, r.Header)
		}
	}
	if r := do(t, h, "HEAD", "/assets/index-abc123.js", map[string]string{"Accept-Encoding": "gzip"}); r.Header.Get("Content-Length") == "" || body(t, r) != "" {
		t.Fatalf("HEAD: %v", r.Header)
	}
}

// The embedded page's script, the bulk of a first visit, shrinks to less
// than a third on the wire.
func TestEmbeddedScriptIsCompressed(t *testing.T) {
	if !Built() {
		t.Skip("the web page is not built into this binary")
	}
	sub, _ := fs.Sub(distFS, "dist")
	scripts, _ := fs.Glob(sub, "assets/*.js")
	if len(scripts) == 0 {
		t.Fatal("no script in the embedded build")
	}
	plain, _ := fs.ReadFile(sub, scripts[0])
	res := do(t, Handler(), "GET", "/"+scripts[0], map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	got := body(t, res)
	if res.Header.Get("Content-Encoding") != "gzip" || gunzip(t, got) != string(plain) || 3*len(got) > len(plain) {
		t.Fatalf("%s: %d bytes on the wire for %d (%v)", scripts[0], len(got), len(plain), res.Header)
	}
	t.Logf("%s: %d bytes gzip for %d", scripts[0], len(got), len(plain))
}
