package webui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

const testIndex = `<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>`

func builtFS() fstest.MapFS {
	return fstest.MapFS{
		"index.html":              {Data: []byte(testIndex)},
		"assets/index-abc123.js":  {Data: []byte("console.log('hi')")},
		"assets/index-def456.css": {Data: []byte("body{}")},
		"favicon.svg":             {Data: []byte("<svg xmlns='http://www.w3.org/2000/svg'/>")},
		".keep":                   {Data: []byte("")},
	}
}

func do(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestIndexIsServedWithoutCaching(t *testing.T) {
	h := New(builtFS())
	for _, p := range []string{"/", "/index.html"} {
		res := do(t, h, "GET", p, nil)
		if res.StatusCode != 200 {
			t.Fatalf("%s: status %d", p, res.StatusCode)
		}
		if got := res.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s: Cache-Control %q, want no-cache", p, got)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("%s: Content-Type %q", p, ct)
		}
		if b := body(t, res); b != testIndex {
			t.Errorf("%s: body %q", p, b)
		}
	}
}

func TestClientRoutesFallBackToIndex(t *testing.T) {
	h := New(builtFS())
	for _, p := range []string{"/mail/42", "/admin/users", "/settings/keys?x=1", "/.keep", "/a/../b"} {
		res := do(t, h, "GET", p, nil)
		if res.StatusCode != 200 || body(t, res) != testIndex {
			t.Errorf("%s: want index.html, got status %d", p, res.StatusCode)
		}
		if got := res.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s: Cache-Control %q", p, got)
		}
	}
}

func TestHashedAssetsAreImmutable(t *testing.T) {
	h := New(builtFS())
	res := do(t, h, "GET", "/assets/index-abc123.js", nil)
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	if got := res.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
		t.Errorf("Cache-Control %q", got)
	}
	if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("Content-Type %q", ct)
	}
	if b := body(t, res); b != "console.log('hi')" {
		t.Errorf("body %q", b)
	}
	css := do(t, h, "GET", "/assets/index-def456.css", nil)
	if ct := css.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Errorf("css Content-Type %q", ct)
	}
}

func TestUnhashedFilesAreRevalidated(t *testing.T) {
	res := do(t, New(builtFS()), "GET", "/favicon.svg", nil)
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("status %d Cache-Control %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
}

func TestMissingAssetIs404NotHTML(t *testing.T) {
	res := do(t, New(builtFS()), "GET", "/assets/gone-000.js", nil)
	if res.StatusCode != 404 {
		t.Fatalf("status %d, want 404", res.StatusCode)
	}
	if strings.Contains(body(t, res), "<div id=\"root\">") {
		t.Error("missing asset answered with index.html")
	}
}

func TestAPIPathsNeverGetTheSPA(t *testing.T) {
	h := New(builtFS())
	for _, p := range []string{"/api", "/api/v1/nope", "/api/v1/me/unknown"} {
		for _, m := range []string{"GET", "POST"} {
			res := do(t, h, m, p, nil)
			if res.StatusCode != 404 {
				t.Errorf("%s %s: status %d", m, p, res.StatusCode)
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q", m, p, ct)
			}
			if b := body(t, res); !strings.Contains(b, `"code":"not_found"`) {
				t.Errorf("%s %s: body %q", m, p, b)
			}
		}
	}
}

func TestSecurityHeadersForbidInlineScript(t *testing.T) {
	h := New(builtFS())
	for _, p := range []string{"/", "/assets/index-abc123.js", "/mail/1", "/api/x"} {
		res := do(t, h, "GET", p, nil)
		csp := res.Header.Get("Content-Security-Policy")
		m := regexp.MustCompile(`script-src ([^;]*)`).FindStringSubmatch(csp)
		if m == nil || strings.TrimSpace(m[1]) != "'self'" {
			t.Errorf("%s: script-src in %q, want exactly 'self'", p, csp)
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP allows unsafe sources: %q", p, csp)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", p)
		}
	}
}

func TestETagRevalidationAnswers304(t *testing.T) {
	h := New(builtFS())
	first := do(t, h, "GET", "/assets/index-abc123.js", nil)
	etag := first.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	again := do(t, h, "GET", "/assets/index-abc123.js", map[string]string{"If-None-Match": etag})
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("status %d, want 304", again.StatusCode)
	}
	idx := do(t, h, "GET", "/", nil)
	idx2 := do(t, h, "GET", "/other/route", map[string]string{"If-None-Match": idx.Header.Get("ETag")})
	if idx2.StatusCode != http.StatusNotModified {
		t.Errorf("index revalidation status %d, want 304", idx2.StatusCode)
	}
}

func TestWritesAreRejected(t *testing.T) {
	res := do(t, New(builtFS()), "POST", "/", nil)
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("status %d", res.StatusCode)
	}
	head := do(t, New(builtFS()), "HEAD", "/", nil)
	if head.StatusCode != 200 || body(t, head) != "" {
		t.Errorf("HEAD: status %d", head.StatusCode)
	}
}

func TestPlaceholderWhenNotBuilt(t *testing.T) {
	h := New(fstest.MapFS{".keep": {Data: nil}})
	for _, p := range []string{"/", "/mail/3"} {
		res := do(t, h, "GET", p, nil)
		b := body(t, res)
		if res.StatusCode != 200 || !strings.Contains(b, "frontend not built") {
			t.Errorf("%s: status %d body %q", p, res.StatusCode, b)
		}
		if strings.Contains(b, "<script") || strings.Contains(b, "style=") {
			t.Errorf("%s: placeholder would break the CSP", p)
		}
		if res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: placeholder cached", p)
		}
	}
}

// TestEmbeddedBuildIsComplete checks the committed build: index.html is
// served and every /assets/ file it references is served too.
func TestEmbeddedBuildIsComplete(t *testing.T) {
	h := Handler()
	res := do(t, h, "GET", "/", nil)
	b := body(t, res)
	if !Built() {
		if !strings.Contains(b, "frontend not built") {
			t.Fatalf("no build, and no placeholder: %q", b)
		}
		t.Skip("internal/webui/dist holds no build; run scripts/build-web.sh")
	}
	if !strings.Contains(b, `id="root"`) {
		t.Fatalf("index.html has no root element: %q", b)
	}
	if strings.Contains(regexp.MustCompile(`(?s)<script[^>]*src=`).ReplaceAllString(b, ""), "<script") {
		t.Error("index.html has an inline script, which the CSP blocks")
	}
	refs := regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(b, -1)
	if len(refs) == 0 {
		t.Fatal("index.html references no assets")
	}
	for _, m := range refs {
		r := do(t, h, "GET", m[1], nil)
		if r.StatusCode != 200 {
			t.Errorf("%s: status %d", m[1], r.StatusCode)
		}
	}
}
