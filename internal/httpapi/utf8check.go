package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/internal/gateway"
)

// invalidUTF8Field answers the JSON path ("subject", "cc", "options[2]")
// of the first string in the body raw holding bytes that are not UTF-8,
// and true; or "", false when raw is valid UTF-8. encoding/json would
// silently replace such bytes with U+FFFD, storing text other than what was
// sent; the request is refused instead (400 invalid_utf8), like a NUL.
// A body that is not valid UTF-8 but whose path cannot be followed answers
// "body".
func invalidUTF8Field(raw []byte) (string, bool) {
	if utf8.Valid(raw) {
		return "", false
	}
	bad := firstInvalidUTF8(raw)
	type frame struct {
		path      string
		object    bool
		key       string
		expectKey bool
		index     int
	}
	var stack []*frame
	valuePath := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			return join(f.path, f.key)
		}
		return fmt.Sprintf("%s[%d]", f.path, f.index)
	}
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		f := stack[len(stack)-1]
		if f.object {
			f.expectKey = true
		} else {
			f.index++
		}
	}
	orBody := func(p string) (string, bool) {
		if p == "" {
			return "body", true
		}
		return p, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "body", true
		}
		end := dec.InputOffset()
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, &frame{path: valuePath(), object: d == '{', expectKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
			continue
		}
		if top != nil && top.object && top.expectKey {
			top.key, _ = tok.(string)
			top.expectKey = false
			if int(end) > bad {
				return orBody(join(top.path, top.key))
			}
			continue
		}
		if _, isString := tok.(string); isString && int(end) > bad {
			return orBody(valuePath())
		}
		valueDone()
	}
}

// firstInvalidUTF8 answers the offset of the first byte of raw that does
// not start a valid UTF-8 sequence, or len(raw).
func firstInvalidUTF8(raw []byte) int {
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(raw)
}

// checkURLText refuses a path parameter ({id}, {name}, ...) or query
// parameter holding a NUL character or bytes that are not UTF-8, with a 400
// naming it (nul_character, invalid_utf8): such text can never name
// anything, and PostgreSQL would answer the lookup with an error (a 500).
func checkURLText(r *http.Request) error {
	bad := func(name, v string) error {
		if strings.IndexByte(v, 0) >= 0 {
			return gateway.InvalidCode("nul_character", name, fmt.Sprintf("parameter %q contains a NUL character (U+0000)", name), "remove it")
		}
		if !utf8.ValidString(v) {
			return gateway.InvalidCode("invalid_utf8", name, fmt.Sprintf("parameter %q is not valid UTF-8 text", name), "percent-encode UTF-8 text")
		}
		return nil
	}
	if rc := chi.RouteContext(r.Context()); rc != nil {
		for i, k := range rc.URLParams.Keys {
			if i < len(rc.URLParams.Values) {
				if err := bad(k, rc.URLParams.Values[i]); err != nil {
					return err
				}
			}
		}
	}
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := bad(k, k); err != nil {
			return err
		}
		for _, v := range q[k] {
			if err := bad(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}
