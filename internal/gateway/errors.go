package gateway

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a domain error; the HTTP layer maps each kind to one
// status code (W-9) and nothing else decides statuses.
type Kind int

// Error kinds and the status each becomes.
const (
	KindInternal     Kind = iota // 500: a server fault
	KindInvalid                  // 400: a request field is wrong (Field names it)
	KindUnauthorized             // 401: missing, unknown, revoked or expired key or cookie
	KindForbidden                // 403: round budget spent, or not allowed
	KindNotFound                 // 404: unknown id, name or alias (or not visible to the caller)
	KindConflict                 // 409: already exists, already decided, no one to decide
	KindTooLarge                 // 413: body or attachment too large
	KindRateLimited              // 429: too many new sessions (RetryAfter set)
	KindUnavailable              // 503: shutting down or database unreachable
)

// KindUnsupportedMedia (415) is a body in a media type the endpoint does not
// read (POST /auth/login takes only application/json). It is numbered
// apart from the list above so that kinds added there never collide with it.
const KindUnsupportedMedia Kind = 415

// KindStorageFull (507) is a write that found the disk full (storagefull.go).
const KindStorageFull Kind = 507

// Error is a typed domain error. Code is a stable machine word
// ("alias_not_found", "budget_exhausted", ...); Message says what went wrong
// and Suggestion what to do instead. Field names the request field at fault
// for KindInvalid. RetryAfter is set for KindRateLimited.
type Error struct {
	Kind       Kind
	Code       string
	Message    string
	Field      string
	Suggestion string
	RetryAfter time.Duration
	Err        error // wrapped cause, never shown to the caller
}

// Error answers the message.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s (field %s)", e.Message, e.Field)
	}
	return e.Message
}

// Unwrap answers the cause.
func (e *Error) Unwrap() error { return e.Err }

// AsError answers the *Error inside err, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// HasCode reports whether err is a domain error with that code.
func HasCode(err error, code string) bool {
	e := AsError(err)
	return e != nil && e.Code == code
}

// Invalid is a 400 naming the field (W-9: the message points at the field).
func Invalid(field, message, suggestion string) *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_field", Field: field, Message: message, Suggestion: suggestion}
}

// InvalidCode is a 400 with its own code.
func InvalidCode(code, field, message, suggestion string) *Error {
	return &Error{Kind: KindInvalid, Code: code, Field: field, Message: message, Suggestion: suggestion}
}

// Unauthorized is a 401.
func Unauthorized(code, message string) *Error {
	return &Error{Kind: KindUnauthorized, Code: code, Message: message,
		Suggestion: "sign in again or use a valid key; do not retry with the same credentials"}
}

// Forbidden is a 403.
func Forbidden(code, message, suggestion string) *Error {
	return &Error{Kind: KindForbidden, Code: code, Message: message, Suggestion: suggestion}
}

// NotFound is a 404.
func NotFound(code, message, suggestion string) *Error {
	return &Error{Kind: KindNotFound, Code: code, Message: message, Suggestion: suggestion}
}

// Conflict is a 409.
func Conflict(code, message, suggestion string) *Error {
	return &Error{Kind: KindConflict, Code: code, Message: message, Suggestion: suggestion}
}

// TooLarge is a 413.
func TooLarge(code, message, suggestion string) *Error {
	return &Error{Kind: KindTooLarge, Code: code, Message: message, Suggestion: suggestion}
}

// UnsupportedMedia is a 415: the request's Content-Type is not the one the
// endpoint reads; Field is "Content-Type".
func UnsupportedMedia(code, message, suggestion string) *Error {
	return &Error{Kind: KindUnsupportedMedia, Code: code, Field: "Content-Type", Message: message, Suggestion: suggestion}
}

// RateLimited is a 429 with the wait.
func RateLimited(code, message string, retryAfter time.Duration) *Error {
	return &Error{Kind: KindRateLimited, Code: code, Message: message, RetryAfter: retryAfter,
		Suggestion: fmt.Sprintf("wait %d seconds, or continue in an existing session instead of opening a new one", RetrySeconds(retryAfter))}
}

// Internal wraps a server fault; the message shown is generic.
func Internal(err error) *Error {
	return &Error{Kind: KindInternal, Code: "internal", Message: "internal server error", Err: err}
}

// RetrySeconds rounds a wait up to whole seconds, at least 1.
func RetrySeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// Common errors.
var (
	// ErrMailNotFound answers every mail id the caller may not see.
	ErrMailNotFound = NotFound("mail_not_found", "no such mail", "check the mail id; ids of mails you did not send or receive are not visible")
	// ErrSessionNotFound answers every session id the caller does not take part in.
	ErrSessionNotFound = NotFound("session_not_found", "no such session", "check the session id; only sessions you take part in are visible")
)
