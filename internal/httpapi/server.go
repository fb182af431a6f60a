// Package httpapi is the HTTP API of the gateway: one route table
// (RouteTable in routes.go, listing the routes each domain file declares
// next to its handlers), handlers as methods on Server, one authentication middleware
// and one error funnel (errors.go). Handlers parse and encode with the wire
// types of package client; the rules live in package gateway.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/blob"
	"github.com/agentmail/agentmail/internal/emailchannel"
	"github.com/agentmail/agentmail/internal/events"
	"github.com/agentmail/agentmail/internal/gateway"
)

// operationRoutes are the routes of operations: liveness, readiness and
// this API's own description.
func operationRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: "/healthz", Auth: AuthNone, Summary: "Liveness", Description: "Answers 200 {\"status\":\"ok\"} while the process serves HTTP; it does not touch the database.", Response: map[string]string{}, Status: 200, Handler: (*Server).handleHealthz},
		{Method: "GET", Path: "/readyz", Auth: AuthNone, Summary: "Readiness: the database answers", Description: "Answers 200 {\"status\":\"ready\"} when the database answers a ping (with \"storage\":\"full\" after a write found the disk full, and the email channel's state when email is on); 503 while draining for shutdown, when the database does not answer, or (\"status\":\"storage failed\") once the SQLite write-ahead log could not be flushed to disk.", Response: map[string]string{}, Status: 200, Errors: []int{503}, Handler: (*Server).handleReadyz},
		{Method: "GET", Path: p + "/openapi.json", Auth: AuthNone, Summary: "This API's OpenAPI 3.1 description", Description: "The document generated from the gateway's route table and wire types, the same bytes as api/openapi.json in the repository.", Response: map[string]any{}, Status: 200, Errors: []int{500}, Handler: (*Server).handleOpenAPI},
	}
}

// CookieName is the HttpOnly session cookie of people.
const CookieName = "agentmail_session"

// DeviceCookieName is the HttpOnly cookie that marks a browser as a known
// device of the account it signed in to (gateway.SignInFrom, migration
// 0047); it is sent only to loginPath.
const DeviceCookieName = "agentmail_device"

// loginPath is the sign-in route, the only path the device cookie is sent to.
const loginPath = "/api/v1/auth/login"

// Options tunes a Server. Zero fields take defaults.
type Options struct {
	// StreamsOnResponseWriter keeps HTTP/1.1 event streams on net/http's
	// response writer instead of taking their connections over
	// (handleStream); for comparing the two in benchmarks and tests.
	StreamsOnResponseWriter bool
	// SSEHeartbeat is the interval of comment heartbeats on event streams;
	// default 15 s.
	SSEHeartbeat time.Duration
	// WebUI serves every path outside /api/ (the web page); nil answers 404.
	WebUI http.Handler
	// SecureCookies marks the session cookie Secure (behind TLS).
	SecureCookies bool
	// MaxStreamsPerKey is how many event streams one key (or one cookie
	// session) may hold open at once; the next is a 429 too_many_streams.
	// Default DefaultMaxStreamsPerKey (AGENTMAIL_MAX_STREAMS_PER_KEY).
	MaxStreamsPerKey int
	// MaxAttachmentBytes is the size limit of one attachment in bytes
	// (W-8); beyond it an upload is a 413 attachment_too_large. Default
	// gateway.DefaultMaxAttachmentBytes (AGENTMAIL_MAX_ATTACHMENT_BYTES).
	MaxAttachmentBytes int64
	// MCPHosts are the host names (lower case, without port) MCP over
	// HTTP answers besides localhost and IP addresses (DNS-rebinding
	// protection, mcp.go): the names a reverse proxy serves the gateway
	// under (AGENTMAIL_MCP_HOSTS, separated by commas).
	MCPHosts []string
	// MCPSessionTimeout bounds idle MCP sessions over HTTP; default
	// mcptools.DefaultHTTPSessionTimeout.
	MCPSessionTimeout time.Duration
}

// StreamsPerPrincipalFactor bounds the event streams of one person or agent
// over all its keys and cookie sessions to this many times
// Options.MaxStreamsPerKey (64 by default), so that minting keys or
// signing in again, which any person may do without limit, does not pass
// the cap per key.
const StreamsPerPrincipalFactor = 4

// DefaultMaxStreamsPerKey is Options.MaxStreamsPerKey when it is not set.
const DefaultMaxStreamsPerKey = 16

// EnvMaxStreamsPerKey names the setting of Options.MaxStreamsPerKey in
// messages (`agentmail serve --max-streams-per-key`).
const EnvMaxStreamsPerKey = "AGENTMAIL_MAX_STREAMS_PER_KEY"

// Server holds the dependencies of the handlers.
type Server struct {
	svc      *gateway.Service
	hub      *events.Hub
	log      *slog.Logger
	opt      Options
	draining atomic.Bool
	// storageFullAt is when a write last found the disk full (Unix ms; 0
	// none, or a mail was stored since): /readyz and the metrics report it.
	storageFullAt atomic.Int64
	// streams is closed by Drain so open SSE streams end before shutdown.
	streams chan struct{}
	// blobs is the attachment store; nil (a Server built without Start)
	// answers the attachment routes 503.
	blobs *blob.Store
	// met is built once by metrics() (metrics.go).
	metOnce sync.Once
	met     *metrics
	// keyed holds the open event streams by key, ended on revocation.
	keyed keyStreams
	// email is the email channel, nil when the gateway sends no email.
	email *emailchannel.Channel
	// router is the last router Handler built; mcp is MCP over HTTP,
	// built at its first request (mcp.go).
	router  http.Handler
	mcpOnce sync.Once
	mcp     http.Handler
	// lastPingError and lastRelayError are the error texts /readyz last
	// logged, so a probe every few seconds logs a failure once, not each
	// time (logReadinessError).
	lastPingError  atomic.Pointer[string]
	lastRelayError atomic.Pointer[string]
}

// logReadinessError logs a readiness failure's text as a warning when it
// differs from the last one logged in last: the details /readyz does not
// show to callers without an admin's credentials.
func (s *Server) logReadinessError(last *atomic.Pointer[string], msg, text string) {
	if old := last.Swap(&text); old == nil || *old != text {
		s.log.Warn(msg, "err", text)
	}
}

// New builds a Server. The hub must be started by the caller.
func New(svc *gateway.Service, hub *events.Hub, log *slog.Logger, opt Options) *Server {
	if opt.SSEHeartbeat <= 0 {
		opt.SSEHeartbeat = 15 * time.Second
	}
	if opt.MaxStreamsPerKey <= 0 {
		opt.MaxStreamsPerKey = DefaultMaxStreamsPerKey
	}
	if opt.MaxAttachmentBytes <= 0 {
		opt.MaxAttachmentBytes = gateway.DefaultMaxAttachmentBytes
	}
	if log == nil {
		log = slog.Default()
	}
	return &Server{svc: svc, hub: hub, log: log, opt: opt, streams: make(chan struct{})}
}

// Service answers the gateway service the handlers use.
func (s *Server) Service() *gateway.Service { return s.svc }

// Drain makes /readyz answer 503 and ends open event streams, so a graceful
// shutdown does not wait on them. Safe to call more than once.
func (s *Server) Drain() {
	if s.draining.CompareAndSwap(false, true) {
		close(s.streams)
	}
}

// Handler builds the router from the route table. Every GET route also
// answers HEAD (RFC 9110 9.3.2: the GET answer's status and headers, no
// body). Paths under /api/ that match no route answer a JSON 404; a path
// that matches with another method answers a JSON 405 with Allow listing
// the methods it has (RFC 9110 15.5.6); every other path goes to the web
// page.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	s.router = r // the MCP tools' gateway (mcp.go)
	r.Use(noSniff)
	r.Use(s.observe) // metrics.go: requests by route and status
	r.Use(s.recoverer)
	for _, rt := range RouteTable() {
		h := s.wrap(rt)
		r.Method(rt.Method, rt.Path, h)
		if rt.Method == http.MethodGet {
			r.Method(http.MethodHead, rt.Path, h)
		}
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") || s.opt.WebUI == nil {
			s.writeError(w, r, gateway.NotFound("route_not_found", "no such endpoint: "+r.Method+" "+r.URL.Path,
				"see docs/API.md or GET /api/v1/openapi.json"))
			return
		}
		s.opt.WebUI.ServeHTTP(w, r)
	}
	r.NotFound(notFound)
	mux := r
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasPrefix(req.URL.Path, "/api/") && s.opt.WebUI != nil {
			s.opt.WebUI.ServeHTTP(w, req)
			return
		}
		allowed := allowedMethods(mux, req.URL.Path)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeJSON(w, http.StatusMethodNotAllowed, client.ErrorBody{Error: "method " + req.Method + " is not allowed here",
			Code: "method_not_allowed", Suggestion: "use " + strings.Join(allowed, ", ") + "; see docs/API.md"})
	})
	return r
}

// routeMethods are the methods the route table uses, HEAD included, in the
// order an Allow header lists them.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods answers the methods mux routes for path: the Allow header
// of a 405.
func allowedMethods(mux *chi.Mux, path string) []string {
	var out []string
	for _, m := range routeMethods {
		if mux.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return out
}

// noSniff sets X-Content-Type-Options: nosniff on every answer (JSON,
// errors, event streams, downloads and the web page alike), before any
// handler runs, so a browser never runs an answer as something other than
// its declared Content-Type (a JSON error echoing a request's text read as
// HTML or script).
func noSniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// recoverer turns a handler panic into a logged 500.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", p)
				writeJSON(w, http.StatusInternalServerError, client.ErrorBody{Error: "internal server error", Code: "internal"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type ctxKey int

const principalKey ctxKey = 1

// PrincipalOf answers the authenticated principal of a request (nil for
// routes with Auth "none" and no credentials).
func PrincipalOf(r *http.Request) *gateway.Principal {
	p, _ := r.Context().Value(principalKey).(*gateway.Principal)
	return p
}

// withPrincipal stores the principal in the request context.
func withPrincipal(r *http.Request, p *gateway.Principal) *http.Request {
	// gateway.WithPrincipal carries a turn token's session into the
	// gateway's visibility rule.
	return r.WithContext(context.WithValue(gateway.WithPrincipal(r.Context(), p), principalKey, p))
}

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// storageFull reports a write that found the disk full in the last minute
// with no mail stored since (issue 18 point 12).
func (s *Server) storageFull() bool {
	at := s.storageFullAt.Load()
	return at != 0 && time.Since(time.UnixMilli(at)) < time.Minute
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.svc.Store.Ping(ctx); err != nil {
		// The database's words stay in the log: the unauthenticated
		// answer says only that it is unavailable.
		s.logReadinessError(&s.lastPingError, "readiness: the database does not answer", err.Error())
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
		return nil
	}
	if err := s.svc.Store.StorageFailure(); err != nil {
		// Once: the store logged the failed flush itself when it happened.
		s.logReadinessError(&s.lastPingError, "readiness: the database could not be flushed to disk; restart the gateway after checking the disk", err.Error())
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "storage failed"})
		return nil
	}
	body := map[string]string{"status": "ready"}
	if s.storageFull() {
		body["storage"] = "full" // writes answer 507 storage_full; reads still work
	}
	s.emailReadiness(r, body)
	writeJSON(w, http.StatusOK, body)
	return nil
}
