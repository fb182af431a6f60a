package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/store"
)

// MaxJSONBody bounds a JSON request body; larger is a 413.
const MaxJSONBody = 4 << 20

// statusOf maps a domain error kind to its status (W-9). This and
// writeError are the only places that decide an error's status.
func statusOf(k gateway.Kind) int {
	switch k {
	case gateway.KindInvalid:
		return http.StatusBadRequest
	case gateway.KindUnauthorized:
		return http.StatusUnauthorized
	case gateway.KindForbidden:
		return http.StatusForbidden
	case gateway.KindNotFound:
		return http.StatusNotFound
	case gateway.KindConflict:
		return http.StatusConflict
	case gateway.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case gateway.KindRateLimited:
		return http.StatusTooManyRequests
	case gateway.KindUnavailable:
		return http.StatusServiceUnavailable
	case gateway.KindUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case gateway.KindStorageFull:
		return http.StatusInsufficientStorage
	default:
		return http.StatusInternalServerError
	}
}

// writeError is the error funnel: every handler error ends here and becomes
// a status and a client.ErrorBody. Errors that are not domain errors are
// server faults: logged with the request, answered as a generic 500.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := gateway.AsError(err)
	if e == nil {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			return // the client went away; nobody to answer
		}
		e = gateway.Internal(err)
		if errors.Is(err, store.ErrStorageFailed) {
			// Before the disk-full check: a failed flush may be ENOSPC, but
			// then the write may well have been kept.
			e = storageFailed(err)
		} else if gateway.IsStorageFull(err) {
			e = s.svc.StorageFull(err) // 507: the disk, named; nothing was stored
			s.storageFullAt.Store(time.Now().UnixMilli())
			s.log.Error("request failed: the disk is full", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	status := statusOf(e.Kind)
	if status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body := client.ErrorBody{Error: e.Message, Code: e.Code, Field: e.Field, Suggestion: e.Suggestion}
	if p := PrincipalOf(r); p == nil || !p.IsAgent() {
		// People read these on the page and in the CLI (personwords.go).
		body.Error, body.Suggestion = personErrorText(body.Error, body.Suggestion)
	}
	if e.Kind == gateway.KindRateLimited {
		body.RetryAfterSeconds = gateway.RetrySeconds(e.RetryAfter)
		w.Header().Set("Retry-After", strconv.Itoa(body.RetryAfterSeconds))
	}
	if e.Kind == gateway.KindUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agentmail"`)
	}
	writeJSON(w, status, body)
}

// writeJSON answers v as JSON with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if v != nil {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
	}
}

// decodeJSON reads the request body into dst, strictly: a field dst does
// not have is a 400 unknown_field naming it (a misspelt field would
// otherwise be silently dropped), a wrong type is a 400 wrong_type naming
// the field with the expected and actual JSON type (W-2; a time that is not
// RFC 3339 too), malformed JSON is a 400 and a body over MaxJSONBody a 413
// (field "body"). A null where the request type has no pointer (a string,
// number, boolean, list or object) is a 400 wrong_type naming the field:
// only fields the document marks nullable take null. A string holding NUL (nul_character) or bytes that are
// not UTF-8 (invalid_utf8) is a 400 naming its field.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxJSONBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return bodyTooLarge()
		}
		return gateway.InvalidCode("invalid_json", "body", "the request body could not be read: "+err.Error(), "send the body again")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(dst)
	if err == nil {
		if dec.More() {
			return gateway.InvalidCode("invalid_json", "", "the body holds more than one JSON value", "send exactly one JSON object")
		}
		if f := nullField(dst, raw); f != "" {
			return gateway.InvalidCode("wrong_type", f, fmt.Sprintf("field %q cannot be null", f),
				"send a value of the field's type, or leave the field out")
		}
		if f := nulField(dst); f != "" { // textcheck.go: PostgreSQL stores no NUL
			return gateway.InvalidCode("nul_character", f, fmt.Sprintf("field %q contains a NUL character (U+0000), which cannot be stored", f),
				"remove the NUL characters (for example from pasted binary output) and send again")
		}
		if f, bad := invalidUTF8Field(raw); bad { // utf8check.go: never store replaced text
			return gateway.InvalidCode("invalid_utf8", f, fmt.Sprintf("field %q is not valid UTF-8 text", f),
				"send text encoded as UTF-8 (convert it from its original encoding first)")
		}
		return nil
	}
	var mbe *http.MaxBytesError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &mbe):
		return bodyTooLarge()
	case unknownField(err) != "":
		f := unknownField(err)
		return gateway.InvalidCode("unknown_field", f, fmt.Sprintf("field %q is not part of this request", f),
			"remove it; see docs/API.md")
	case isTimeError(err):
		field := badTimeField(dst, raw)
		if field == "" {
			field = "body"
		}
		return gateway.InvalidCode("wrong_type", field,
			fmt.Sprintf("field %q must be an RFC 3339 time such as \"2026-09-02T10:00:00Z\": %v", field, err),
			"send the time as an RFC 3339 string with a zone")
	case errors.Is(err, io.EOF):
		return gateway.InvalidCode("invalid_json", "", "the request body is empty", "send a JSON object")
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return gateway.InvalidCode("wrong_type", field,
			fmt.Sprintf("field %q has the wrong type: expected %s, got %s", field, jsonKind(te.Type), te.Value),
			"fix the request body; do not retry unchanged")
	case errors.As(err, &se):
		return gateway.InvalidCode("invalid_json", "", fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se),
			"send a valid JSON object")
	default:
		return gateway.InvalidCode("invalid_json", "", "malformed JSON: "+err.Error(), "send a valid JSON object")
	}
}

// bodyTooLarge is the 413 of a JSON body over MaxJSONBody.
func bodyTooLarge() error {
	e := gateway.TooLarge("body_too_large", fmt.Sprintf("the request body is larger than %d bytes", MaxJSONBody),
		"send less; put large content in an attachment")
	e.Field = "body"
	return e
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if t.String() == "time.Time" {
			return "string (RFC 3339 time)"
		}
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		return strings.ToLower(t.Kind().String())
	}
}

// queryInt reads an integer query parameter within [min, max]; absent gives
// def; anything else is a 400 naming the parameter.
func queryInt(r *http.Request, name string, def, min, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, gateway.Invalid(name, fmt.Sprintf("%s must be an integer from %d to %d, got %q", name, min, max, v), "")
	}
	return n, nil
}

// queryBool reads a boolean query parameter; absent gives def.
func queryBool(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, gateway.Invalid(name, fmt.Sprintf("%s must be true or false, got %q", name, v), "")
	}
	return b, nil
}

// storageFailed is the 503 storage_failed answer to a write once the
// gateway could not flush its SQLite write-ahead log to disk
// (store.ErrStorageFailed): it takes no write until it is restarted, and
// the write that was waiting for the flush may or may not have been kept.
func storageFailed(err error) *gateway.Error {
	return &gateway.Error{Kind: gateway.KindUnavailable, Code: "storage_failed",
		Message:    "the gateway could not write its database to disk and takes no writes until it is restarted",
		Suggestion: "ask the administrator to check the gateway's disk and restart it; then look whether your last change was kept before you send it again",
		Err:        err}
}
