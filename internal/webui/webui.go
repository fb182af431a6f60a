// Package webui serves the built web page (the mailbox people use) from files
// embedded into the agentmail binary with go:embed.
//
// The page is built from web/ by scripts/build-web.sh into internal/webui/dist,
// and the built files are committed, so a fresh clone serves the real page with
// `go run ./cmd/agentmail serve` and the binary never needs Node at run time
// (issue 5 item 11). scripts/check-web-build.sh rebuilds and fails when the
// committed files differ from a fresh build.
//
// When dist holds no index.html (someone removed the build to work on the
// gateway alone) the handler answers every page request with a small
// "frontend not built" page; the API is unaffected.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/agentmail/agentmail/internal/httpbody"
)

// distFS holds the built page. The "all:" prefix keeps dist/.keep, the file
// that makes the directory exist in a clone without a build.
//
//go:embed all:dist
var distFS embed.FS

// ContentSecurityPolicy is sent with every response of the handler. Scripts
// load only from the page's own origin (no inline scripts, no eval); API calls
// and the SSE stream go to the same origin; images may be data: URLs (icons);
// the page cannot be framed. Issue 5 item 11.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// Cache-Control values. Files under assets/ carry a content hash in their
// name (Vite's output), so they never change and are cached for a year;
// HTML (index.html and the SPA fallback) is revalidated on every load so a
// new binary's page is seen at once.
const (
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheNone      = "no-cache"
)

// hashedPrefix is the folder of Vite's content-hashed output.
const hashedPrefix = "assets/"

// Handler returns the handler for the embedded build in internal/webui/dist.
// Mount it as the router's fallback ("/*"); it answers:
//   - GET/HEAD of an existing file: that file (long cache for assets/, ETag,
//     gzip when the browser accepts it: httpbody);
//   - GET/HEAD of any other path outside /api/: index.html (the page routes
//     on the client side), or the "frontend not built" page when there is no
//     build;
//   - any path under /api/: 404 with a JSON error body, never HTML;
//   - other methods: 405.
func Handler() http.Handler {
	sub, err := fs.Sub(distFS, "dist")
	if err != nil {
		// fs.Sub only fails on an invalid name; "dist" is valid.
		panic(err)
	}
	return New(sub)
}

// Built reports whether the embedded build holds an index.html, i.e. whether
// Handler serves the real page rather than the "frontend not built" page.
func Built() bool {
	_, err := fs.Stat(distFS, "dist/index.html")
	return err == nil
}

// New returns a handler serving the built page held in fsys (the contents
// of a Vite dist folder: index.html at its root, hashed files under assets/).
// Handler uses the embedded build; tests pass an fstest.MapFS.
func New(fsys fs.FS) http.Handler {
	h := &handler{files: map[string]*httpbody.Fixed{}}
	if b, err := fs.ReadFile(fsys, "index.html"); err == nil {
		h.index = httpbody.New("index.html", b)
	} else {
		h.index = httpbody.New("index.html", []byte(notBuiltPage))
	}
	// Every file is read, hashed and compressed once here, so serving needs
	// no lock and no file system.
	_ = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() || strings.HasPrefix(path.Base(name), ".") {
			return nil
		}
		if b, err := fs.ReadFile(fsys, name); err == nil {
			h.files[name] = httpbody.New(name, b)
		}
		return nil
	})
	return h
}

type handler struct {
	index *httpbody.Fixed            // index.html, or the "frontend not built" page
	files map[string]*httpbody.Fixed // file name → body, filled by New, read-only after
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	urlPath := r.URL.Path
	if urlPath == "/api" || strings.HasPrefix(urlPath, "/api/") {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", cacheNone)
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"no such API endpoint","code":"not_found","suggestion":"see docs/API.md for the list of endpoints"}` + "\n"))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: the web page is read with GET", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+urlPath), "/")
	if name != "" && name != "index.html" {
		if h.serveFile(w, r, name) {
			return
		}
		// A missing hashed asset is a real 404: answering HTML for a
		// script URL would only produce a confusing MIME error.
		if strings.HasPrefix(name, hashedPrefix) {
			w.Header().Set("Cache-Control", cacheNone)
			http.Error(w, "asset not found: reload the page", http.StatusNotFound)
			return
		}
	}
	h.serveIndex(w, r)
}

// serveFile answers with the named file when the build has it; it reports
// whether it did.
func (h *handler) serveFile(w http.ResponseWriter, r *http.Request, name string) bool {
	b, ok := h.files[name]
	if !ok {
		return false
	}
	if strings.HasPrefix(name, hashedPrefix) {
		w.Header().Set("Cache-Control", cacheImmutable)
	} else {
		w.Header().Set("Cache-Control", cacheNone)
	}
	b.Serve(w, r)
	return true
}

func (h *handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", cacheNone)
	h.index.Serve(w, r)
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}

// notBuiltPage is served when the binary was built without the web page.
// It has no script, so the Content-Security-Policy holds for it too.
const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>AgentMail: frontend not built</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<h1>AgentMail: frontend not built</h1>
<p>This binary was built without the web page. The HTTP API under <code>/api/v1/</code> works as usual.</p>
<p>To get the page, build it and rebuild the binary:</p>
<pre>scripts/build-web.sh
go build ./cmd/agentmail</pre>
<p lang="zh">网页前端未构建：运行 <code>scripts/build-web.sh</code> 后重新构建二进制即可。API 不受影响。</p>
</body></html>
`
