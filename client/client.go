// Package client is the importable Go client of the AgentMail HTTP API.
//
// Every route of docs/API.md has one method here, and every request and
// answer body is a type of types.go or a types_<domain>.go, so a program
// using this package speaks exactly the wire contract the gateway serves.
// The bridge, the MCP tool server, the command-line client and the tests
// all talk to the gateway through this package.
//
// Authentication is either a Bearer key (WithToken: an agent key or a user
// key) or a cookie session opened with Login, after which the CSRF token the
// gateway returned is sent as X-CSRF-Token on every write.
//
// Errors answered by the gateway are *APIError values carrying the JSON
// ErrorBody (W-9); use errors.As, IsNotFound, IsConflict or StatusOf.
//
//	c := client.New("http://127.0.0.1:8180", client.WithToken(os.Getenv("AGENTMAIL_USER_KEY")))
//	res, err := c.MeSend(ctx, client.SendMailRequest{To: "claude@/srv/app", Subject: "hi", Body: "..."})
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
)

// APIPrefix is the path prefix of every API route.
const APIPrefix = "/api/v1"

// DefaultUserAgent is sent when WithUserAgent is not used.
const DefaultUserAgent = "agentmail-go-client/1"

// maxErrorBody bounds how much of an error answer is read (1 MiB).
const maxErrorBody = 1 << 20

// Client calls one AgentMail gateway. It is safe for concurrent use.
type Client struct {
	base      string // scheme://host[:port][/prefix], no trailing slash, without /api/v1
	hc        *http.Client
	userAgent string

	mu    sync.RWMutex
	token string
	csrf  string
}

// Option configures a Client in New.
type Option func(*Client)

// WithToken authenticates every request with `Authorization: Bearer token`
// (an agent key or a user key). Bearer requests need no CSRF token.
func WithToken(token string) Option {
	return func(c *Client) { c.token = token }
}

// WithHTTPClient makes the client send its requests through h (its
// Transport, Jar and CheckRedirect are used). The client keeps its own copy
// of *h, so a later WithCookieJar or Login never changes the caller's value.
// h.Timeout should be zero when the client is used for event streams; use
// contexts for deadlines instead.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) {
		if h != nil {
			cp := *h
			c.hc = &cp
		}
	}
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(s string) Option {
	return func(c *Client) { c.userAgent = s }
}

// WithCookieJar gives the client an in-memory cookie jar, needed for the
// cookie session of Login (Login adds one itself when none is set).
func WithCookieJar() Option {
	return func(c *Client) { c.ensureJar() }
}

// New returns a client for the gateway at baseURL, for example
// "http://127.0.0.1:8180". A trailing slash or a trailing "/api/v1" in
// baseURL is accepted and ignored, so both the gateway root and the API root
// work.
func New(baseURL string, opts ...Option) *Client {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	base = strings.TrimSuffix(base, APIPrefix)
	c := &Client{base: base, hc: &http.Client{}, userAgent: DefaultUserAgent}
	for _, o := range opts {
		o(c)
	}
	return c
}

// BaseURL returns the gateway root the client calls (without /api/v1).
func (c *Client) BaseURL() string { return c.base }

// Token returns the Bearer key the client sends, or "".
func (c *Client) Token() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.token
}

// SetToken replaces the Bearer key sent from now on ("" sends none).
func (c *Client) SetToken(token string) {
	c.mu.Lock()
	c.token = token
	c.mu.Unlock()
}

// CSRFToken returns the CSRF token of the cookie session opened by Login
// (or learnt from Me), or "" when there is none.
func (c *Client) CSRFToken() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.csrf
}

func (c *Client) setCSRF(tok string) {
	c.mu.Lock()
	c.csrf = tok
	c.mu.Unlock()
}

func (c *Client) ensureJar() {
	if c.hc.Jar == nil {
		jar, _ := cookiejar.New(nil) // cookiejar.New never fails with nil options
		c.hc.Jar = jar
	}
}

// HTTPClient returns the *http.Client the client sends through (its own
// copy; see WithHTTPClient).
func (c *Client) HTTPClient() *http.Client { return c.hc }

// apiPath returns APIPrefix + the path built from format and the escaped
// path parameters: apiPath("/mail/%s", id).
func apiPath(format string, params ...string) string {
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = url.PathEscape(p)
	}
	return APIPrefix + fmt.Sprintf(format, args...)
}

// isWrite tells whether method changes state (and so needs the CSRF token in
// a cookie session).
func isWrite(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// newRequest builds a request to path (which starts with "/"; include
// APIPrefix for API routes) with the client's authentication headers.
func (c *Client) newRequest(ctx context.Context, method, path string, query url.Values, body io.Reader) (*http.Request, error) {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("agentmail client: build %s %s: %w", method, path, err)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	c.mu.RLock()
	token, csrf := c.token, c.csrf
	c.mu.RUnlock()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if csrf != "" && isWrite(method) {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	return req, nil
}

// send performs req and turns a non-2xx answer into an *APIError (the body
// is then consumed and closed). On success the caller owns resp.Body.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agentmail client: %s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, newAPIError(req, resp)
	}
	return resp, nil
}

// Do sends one JSON request and decodes the JSON answer. path is the full
// path from the gateway root (e.g. "/api/v1/me"); query may be nil; in, when
// not nil, is encoded as the JSON body; out, when not nil, receives the
// decoded answer (a 204 leaves it untouched). It is the building block of
// every typed method and is exported for routes this package does not wrap
// yet. Errors: *APIError for a non-2xx answer, otherwise transport or
// decoding errors naming the route.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("agentmail client: encode %s %s body: %w", method, path, err)
		}
		body = bytes.NewReader(buf)
	}
	req, err := c.newRequest(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("agentmail client: decode %s %s answer (status %d): %w", method, path, resp.StatusCode, err)
	}
	return nil
}

// getJSON and postJSON are shorthands of Do for API routes whose answer is
// decoded into a value the caller already holds.
func (c *Client) getJSON(ctx context.Context, path string, query url.Values, out any) error {
	return c.Do(ctx, http.MethodGet, path, query, nil, out)
}

func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	return c.Do(ctx, http.MethodPost, path, nil, in, out)
}

// answerAs calls Do and returns the answer decoded into a new T: the one
// shape of every typed method (getAs, postAs, putAs, patchAs name the
// method). Errors are Do's.
func answerAs[T any](ctx context.Context, c *Client, method, path string, query url.Values, in any) (*T, error) {
	var out T
	if err := c.Do(ctx, method, path, query, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func getAs[T any](ctx context.Context, c *Client, path string, query url.Values) (*T, error) {
	return answerAs[T](ctx, c, http.MethodGet, path, query, nil)
}

func postAs[T any](ctx context.Context, c *Client, path string, in any) (*T, error) {
	return answerAs[T](ctx, c, http.MethodPost, path, nil, in)
}

func putAs[T any](ctx context.Context, c *Client, path string, in any) (*T, error) {
	return answerAs[T](ctx, c, http.MethodPut, path, nil, in)
}

func patchAs[T any](ctx context.Context, c *Client, path string, in any) (*T, error) {
	return answerAs[T](ctx, c, http.MethodPatch, path, nil, in)
}

func (c *Client) delete(ctx context.Context, path string) error {
	return c.Do(ctx, http.MethodDelete, path, nil, nil, nil)
}

// Health answers GET /healthz: nil when the gateway process is alive.
func (c *Client) Health(ctx context.Context) error {
	return c.getJSON(ctx, "/healthz", nil, nil)
}

// Ready answers GET /readyz: nil when the gateway can reach its database,
// an *APIError with status 503 when not.
func (c *Client) Ready(ctx context.Context) error {
	return c.getJSON(ctx, "/readyz", nil, nil)
}

// OpenAPI returns the gateway's OpenAPI 3.1 description
// (GET /api/v1/openapi.json) as raw JSON.
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.getJSON(ctx, APIPrefix+"/openapi.json", nil, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}
