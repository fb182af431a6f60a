package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAPIErrorCarriesTheGatewayErrorBody checks W-9: code, field and
// suggestion of the JSON error shape reach the caller, with the helpers.
func TestAPIErrorCarriesTheGatewayErrorBody(t *testing.T) {
	f := newFakeGateway(t)
	c := New(f.srv.URL, WithToken("k"))
	f.answer(t, 404, ErrorBody{Error: "no session with alias fix", Code: "alias_not_found", Field: "to", Suggestion: "use .new to open a new session"}, nil)
	_, err := c.SendMail(context.Background(), SendMailRequest{To: "claude@/srv.fix", Subject: "s", Body: "b"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T) is not an *APIError", err, err)
	}
	if apiErr.Status != 404 || apiErr.Code() != "alias_not_found" || apiErr.Field() != "to" || apiErr.Suggestion() != "use .new to open a new session" || apiErr.Message() != "no session with alias fix" {
		t.Errorf("APIError %+v", apiErr)
	}
	if apiErr.Method != "POST" || apiErr.Path != "/api/v1/mail/send" {
		t.Errorf("APIError names %s %s", apiErr.Method, apiErr.Path)
	}
	if !IsNotFound(err) || IsConflict(err) || StatusOf(err) != 404 || CodeOf(err) != "alias_not_found" {
		t.Errorf("helpers disagree: IsNotFound=%v IsConflict=%v StatusOf=%d", IsNotFound(err), IsConflict(err), StatusOf(err))
	}
	for _, want := range []string{"404", "alias_not_found", "no session with alias fix", "field to", "suggestion: use .new"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err.Error(), want)
		}
	}
	wrapped := errors.Join(errors.New("context"), err)
	if !IsNotFound(wrapped) {
		t.Error("IsNotFound does not see through wrapping")
	}
}

// TestAPIErrorStatusHelpers maps each status to its helper.
func TestAPIErrorStatusHelpers(t *testing.T) {
	f := newFakeGateway(t)
	c := New(f.srv.URL)
	for _, tc := range []struct {
		status int
		is     func(error) bool
	}{
		{401, IsUnauthorized}, {403, IsForbidden}, {404, IsNotFound}, {409, IsConflict}, {429, IsRateLimited},
	} {
		f.answer(t, tc.status, ErrorBody{Error: "e", Code: "c"}, nil)
		_, err := c.MeCounts(context.Background())
		if !tc.is(err) || StatusOf(err) != tc.status {
			t.Errorf("status %d: helper false or StatusOf %d", tc.status, StatusOf(err))
		}
	}
}

// TestAPIErrorFromNonJSONAnswer keeps the raw text of an answer that is not
// the error shape (a proxy page).
func TestAPIErrorFromNonJSONAnswer(t *testing.T) {
	f := newFakeGateway(t)
	f.answerRaw(502, "<html>bad gateway</html>", http.Header{"Content-Type": {"text/html"}})
	_, err := New(f.srv.URL).Me(context.Background())
	e := AsAPIError(err)
	if e == nil || e.Status != 502 || e.Code() != "http_502" || !strings.Contains(e.Message(), "bad gateway") {
		t.Fatalf("got %#v", err)
	}
}

// TestRetryAfterIsParsed reads Retry-After as seconds, as an HTTP date, and
// falls back to retry_after_seconds of the body.
func TestRetryAfterIsParsed(t *testing.T) {
	f := newFakeGateway(t)
	c := New(f.srv.URL, WithToken("k"))
	f.answer(t, 429, ErrorBody{Error: "too many new sessions", Code: "rate_limited", RetryAfterSeconds: 99}, http.Header{"Retry-After": {"42"}})
	_, err := c.SendMail(context.Background(), SendMailRequest{})
	if !IsRateLimited(err) || RetryAfterOf(err) != 42*time.Second {
		t.Errorf("header seconds: rate limited %v, retry after %v", IsRateLimited(err), RetryAfterOf(err))
	}
	if !strings.Contains(err.Error(), "retry after 42s") {
		t.Errorf("message %q does not give the wait", err)
	}
	f.answer(t, 429, ErrorBody{Error: "slow down", Code: "rate_limited", RetryAfterSeconds: 7}, nil)
	_, err = c.SendMail(context.Background(), SendMailRequest{})
	if RetryAfterOf(err) != 7*time.Second {
		t.Errorf("body fallback: retry after %v, want 7s", RetryAfterOf(err))
	}

	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if d := parseRetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); d != 90*time.Second {
		t.Errorf("HTTP date: %v, want 90s", d)
	}
	for _, v := range []string{"", "soon", "-3", "0", now.Add(-time.Minute).Format(http.TimeFormat)} {
		if d := parseRetryAfter(v, now); d != 0 {
			t.Errorf("parseRetryAfter(%q) = %v, want 0", v, d)
		}
	}
}

// TestNetworkErrorIsNotAnAPIError gives StatusOf 0 for a refused connection.
func TestNetworkErrorIsNotAnAPIError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = New("http://" + addr).Me(context.Background())
	if err == nil || StatusOf(err) != 0 || AsAPIError(err) != nil {
		t.Fatalf("got %v, StatusOf %d", err, StatusOf(err))
	}
	if !strings.Contains(err.Error(), "/api/v1/me") {
		t.Errorf("network error %q does not name the route", err)
	}
}

// TestLoginKeepsCookieAndSendsCSRFOnWritesOnly checks the cookie session:
// the cookie from the login answer comes back on every request, and the
// CSRF token of the answer is sent as X-CSRF-Token on writes, never on
// reads; Logout forgets it.
func TestLoginKeepsCookieAndSendsCSRFOnWritesOnly(t *testing.T) {
	type seen struct {
		method, path, cookie, csrf string
	}
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cookie := ""
		if ck, err := r.Cookie("agentmail_session"); err == nil {
			cookie = ck.Value
		}
		got = append(got, seen{r.Method, r.URL.Path, cookie, r.Header.Get("X-CSRF-Token")})
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/auth/login":
			http.SetCookie(w, &http.Cookie{Name: "agentmail_session", Value: "sess1", Path: "/", HttpOnly: true})
			_, _ = w.Write([]byte(`{"username":"ann","role":"user","csrf_token":"csrf1"}`))
		case "/api/v1/auth/logout":
			w.WriteHeader(204)
		case "/api/v1/me/keys":
			w.WriteHeader(201)
			_, _ = w.Write([]byte(`{"key_id":"k1","key_token":"am_x"}`))
		default:
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()

	c := New(srv.URL)
	ctx := context.Background()
	lr, err := c.Login(ctx, LoginRequest{Username: "ann", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if lr.CSRFToken != "csrf1" || c.CSRFToken() != "csrf1" {
		t.Fatalf("login answer %+v, stored token %q", lr, c.CSRFToken())
	}
	if _, err := c.MeCounts(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateUserKey(ctx, CreateUserKeyRequest{Label: "cli", Lifecycle: LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	if err := c.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	if c.CSRFToken() != "" {
		t.Error("Logout kept the CSRF token")
	}
	want := []seen{
		{"POST", "/api/v1/auth/login", "", ""},
		{"GET", "/api/v1/me/counts", "sess1", ""},
		{"POST", "/api/v1/me/keys", "sess1", "csrf1"},
		{"POST", "/api/v1/auth/logout", "sess1", "csrf1"},
	}
	if len(got) != len(want) {
		t.Fatalf("requests %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestMeLearnsCSRFTokenOfCookieSession stores the token that /me returns.
func TestMeLearnsCSRFTokenOfCookieSession(t *testing.T) {
	f := newFakeGateway(t)
	f.answer(t, 200, Me{Username: "ann", Role: "user", AuthKind: "cookie", CSRFToken: "t2"}, nil)
	c := New(f.srv.URL)
	if _, err := c.Me(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.answer(t, 200, MarkReadResponse{}, nil)
	if _, err := c.MeMarkRead(context.Background(), MarkReadRequest{MailIDs: []string{"m"}}); err != nil {
		t.Fatal(err)
	}
	if h := f.last(t).Header.Get("X-CSRF-Token"); h != "t2" {
		t.Errorf("X-CSRF-Token %q, want t2", h)
	}
}

// TestWithHTTPClientDoesNotChangeTheCallersClient keeps the caller's
// *http.Client free of the jar Login adds.
func TestWithHTTPClientDoesNotChangeTheCallersClient(t *testing.T) {
	f := newFakeGateway(t)
	f.answer(t, 200, LoginResponse{Username: "ann", CSRFToken: "x"}, nil)
	h := &http.Client{}
	c := New(f.srv.URL, WithHTTPClient(h))
	if _, err := c.Login(context.Background(), LoginRequest{Username: "ann", Password: "p"}); err != nil {
		t.Fatal(err)
	}
	if h.Jar != nil {
		t.Error("Login set a jar on the caller's http.Client")
	}
	if c.HTTPClient().Jar == nil {
		t.Error("Login left the client without a cookie jar")
	}
}
