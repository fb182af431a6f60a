// Package httpbody serves fixed response bodies (the embedded web page's
// files, the OpenAPI document) prepared once: ETag, gzip when the client
// accepts it, 304 on revalidation.
package httpbody

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// minCompressedSize is the smallest body worth compressing: below it the
// gzip header and the extra Vary handling cost more than they save.
const minCompressedSize = 1024

// Fixed is a response body prepared once: the bytes as they are, their
// gzip-compressed form when that is smaller, and an ETag for each form (the
// compressed one ends in "-gzip", so a cache never answers one with the
// other). Serving needs no lock and compresses nothing.
type Fixed struct {
	plain, gz      []byte
	etag, gzipETag string
	contentType    string
}

// New prepares b, served as name (its extension gives the
// Content-Type; ".json" is application/json). Text types (HTML, CSS,
// JavaScript, JSON, SVG, source maps, plain text) of at least 1 KiB get a
// gzip form at the best compression.
func New(name string, b []byte) *Fixed {
	ext := strings.ToLower(path.Ext(name))
	ct := mime.TypeByExtension(ext)
	switch ext {
	case ".json", ".map":
		ct = "application/json"
	case ".html":
		ct = "text/html; charset=utf-8"
	}
	out := &Fixed{plain: b, etag: ETag(b), contentType: ct}
	compressible := false
	switch ext {
	case ".html", ".css", ".js", ".mjs", ".json", ".map", ".svg", ".txt", ".webmanifest":
		compressible = true
	}
	if compressible && len(b) >= minCompressedSize {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
		_, _ = zw.Write(b)
		if zw.Close() == nil && buf.Len() < len(b) {
			out.gz = buf.Bytes()
			out.gzipETag = strings.TrimSuffix(out.etag, `"`) + `-gzip"`
		}
	}
	return out
}

// Serve answers GET and HEAD with the body: Content-Type from its name,
// ETag and If-None-Match (304), Range on the uncompressed form, and the
// gzip form with Content-Encoding: gzip when the request accepts it and
// asks for no range. Vary: Accept-Encoding is set whenever a compressed
// form exists. Cache-Control is the caller's.
func (b *Fixed) Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if b.contentType != "" {
		h.Set("Content-Type", b.contentType)
	}
	data, etag := b.plain, b.etag
	if b.gz != nil {
		h.Add("Vary", "Accept-Encoding")
		if r.Header.Get("Range") == "" && acceptsGzip(r.Header.Values("Accept-Encoding")) {
			data, etag = b.gz, b.gzipETag
			h.Set("Content-Encoding", "gzip")
			// ServeContent leaves the length of an encoded body unset.
			h.Set("Content-Length", strconv.Itoa(len(data)))
		}
	}
	h.Set("ETag", etag)
	// ServeContent answers If-None-Match with 304 (dropping the length and
	// encoding), sets Content-Length of a plain body and handles HEAD; the
	// name only matters when no Content-Type is set.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// acceptsGzip reports whether Accept-Encoding values (RFC 9110 §12.5.3)
// accept gzip: "gzip" or "*" with a quality above 0. An explicit
// "gzip;q=0" refuses it even when "*" is accepted.
func acceptsGzip(values []string) bool {
	star := false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				return q > 0
			case "*":
				star = q > 0
			}
		}
	}
	return star
}

// ETag answers the strong entity tag of b: a quoted prefix of its SHA-256.
func ETag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}
