package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is a non-2xx answer of the gateway (W-9). Body is the decoded
// {error, code, field, suggestion} shape; when the answer was not that JSON
// (a proxy's error page, say), Body.Error holds the start of the raw text and
// Body.Code is "http_<status>".
type APIError struct {
	Status int       // HTTP status code
	Body   ErrorBody // the gateway's error shape
	// RetryAfter is the wait the gateway asked for on a 429 (or 503): from
	// the Retry-After header (seconds or an HTTP date), else from
	// Body.RetryAfterSeconds; zero when neither was given.
	RetryAfter time.Duration
	Method     string // request method, e.g. "POST"
	Path       string // request path, e.g. "/api/v1/mail/send"
}

// Error gives "<method> <path>: <status> <code>: <message> (field <field>;
// suggestion: <suggestion>)", leaving out the parts that are empty.
func (e *APIError) Error() string {
	var b strings.Builder
	if e.Method != "" || e.Path != "" {
		fmt.Fprintf(&b, "%s %s: ", e.Method, e.Path)
	}
	fmt.Fprintf(&b, "%d", e.Status)
	if e.Body.Code != "" {
		b.WriteString(" " + e.Body.Code)
	}
	if e.Body.Error != "" {
		b.WriteString(": " + e.Body.Error)
	}
	var extra []string
	if e.Body.Field != "" {
		extra = append(extra, "field "+e.Body.Field)
	}
	if e.Body.Suggestion != "" {
		extra = append(extra, "suggestion: "+e.Body.Suggestion)
	}
	if e.RetryAfter > 0 {
		extra = append(extra, "retry after "+e.RetryAfter.String())
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, "; ") + ")")
	}
	return b.String()
}

// Code returns the gateway's stable machine code, e.g. "alias_not_found".
func (e *APIError) Code() string { return e.Body.Code }

// Field returns the request field at fault (400 answers), or "".
func (e *APIError) Field() string { return e.Body.Field }

// Suggestion returns what the gateway suggests doing instead, or "".
func (e *APIError) Suggestion() string { return e.Body.Suggestion }

// Message returns the human-readable message of the gateway.
func (e *APIError) Message() string { return e.Body.Error }

// newAPIError reads (at most maxErrorBody of) an error answer.
func newAPIError(req *http.Request, resp *http.Response) *APIError {
	e := &APIError{Status: resp.StatusCode, Method: req.Method, Path: req.URL.Path}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err := json.Unmarshal(raw, &e.Body); err != nil || (e.Body.Error == "" && e.Body.Code == "") {
		e.Body = ErrorBody{Code: "http_" + strconv.Itoa(resp.StatusCode)}
		text := strings.TrimSpace(string(raw))
		if len(text) > 300 {
			text = text[:300] + "..."
		}
		if text == "" {
			text = http.StatusText(resp.StatusCode)
		}
		e.Body.Error = text
	}
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	if e.RetryAfter == 0 && e.Body.RetryAfterSeconds > 0 {
		e.RetryAfter = time.Duration(e.Body.RetryAfterSeconds) * time.Second
	}
	return e
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (relative to now). Unparsable or past values give 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d.Round(time.Second)
		}
	}
	return 0
}

// AsAPIError returns the *APIError inside err (errors.As), or nil.
func AsAPIError(err error) *APIError {
	var e *APIError
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// StatusOf returns the HTTP status of the gateway answer inside err, or 0
// when err is nil or did not come from a gateway answer (a network error).
func StatusOf(err error) int {
	if e := AsAPIError(err); e != nil {
		return e.Status
	}
	return 0
}

// CodeOf returns the gateway's machine code inside err ("alias_not_found",
// "budget_exhausted", ...), or "".
func CodeOf(err error) string {
	if e := AsAPIError(err); e != nil {
		return e.Body.Code
	}
	return ""
}

// IsNotFound tells whether err is a 404 answer (unknown id or alias; an id
// the caller may not see is a 404 too).
func IsNotFound(err error) bool { return StatusOf(err) == http.StatusNotFound }

// IsConflict tells whether err is a 409 answer (decision already made, no
// person to decide, ...).
func IsConflict(err error) bool { return StatusOf(err) == http.StatusConflict }

// IsUnauthorized tells whether err is a 401 answer (key or cookie missing,
// unknown, revoked or expired).
func IsUnauthorized(err error) bool { return StatusOf(err) == http.StatusUnauthorized }

// IsForbidden tells whether err is a 403 answer (round budget spent, or not
// allowed for this kind of caller).
func IsForbidden(err error) bool { return StatusOf(err) == http.StatusForbidden }

// IsRateLimited tells whether err is a 429 answer; RetryAfterOf tells how
// long to wait.
func IsRateLimited(err error) bool { return StatusOf(err) == http.StatusTooManyRequests }

// RetryAfterOf returns the wait the gateway asked for in err (429/503), or 0.
func RetryAfterOf(err error) time.Duration {
	if e := AsAPIError(err); e != nil {
		return e.RetryAfter
	}
	return 0
}
