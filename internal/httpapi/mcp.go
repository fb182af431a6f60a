package httpapi

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/mcptools"
)

// MCPPath is the path of MCP over Streamable HTTP (issue 19 item 1). It is
// JSON-RPC, not a REST route, so it is not in the route table or the
// OpenAPI document; docs/API.md and docs/TOOLS.md describe it.
const MCPPath = "/mcp"

// EnvMCPHosts names the setting of Options.MCPHosts in messages.
const EnvMCPHosts = "AGENTMAIL_MCP_HOSTS"

// mcpRoutes are MCP over Streamable HTTP (issue 19 item 1): POST sends
// JSON-RPC messages (answered as JSON or an event stream), GET opens the
// session's event stream, DELETE ends the session. The bodies are
// JSON-RPC (the MCP specification), not REST types: docs/TOOLS.md.
func mcpRoutes() []Route {
	errs := []int{400, 401, 403, 404, 500}
	return []Route{
		{Method: "POST", Path: MCPPath, Auth: AuthAgent, Summary: "MCP over Streamable HTTP: one JSON-RPC message (agent key or turn token as Bearer)", Description: "A JSON-RPC message of the Model Context Protocol (docs/TOOLS.md), answered as JSON or an event stream. Host and Origin are checked against DNS rebinding (403). 400 a malformed message, 404 an expired Mcp-Session-Id.",
			Request: map[string]any{}, Status: 200, Errors: errs, Produces: "text/event-stream", PlainErrors: true, Handler: (*Server).handleMCP},
		{Method: "GET", Path: MCPPath, Auth: AuthAgent, Summary: "MCP over Streamable HTTP: the session's event stream (Mcp-Session-Id)", Description: "The server-to-client stream of an MCP session. 400 no Mcp-Session-Id, 404 an expired session.",
			Status: 200, Errors: errs, Produces: "text/event-stream", PlainErrors: true, Handler: (*Server).handleMCP},
		{Method: "DELETE", Path: MCPPath, Auth: AuthAgent, Summary: "MCP over Streamable HTTP: end the session (Mcp-Session-Id)", Description: "404 an unknown or expired session.",
			Status: 204, Errors: errs, PlainErrors: true, Handler: (*Server).handleMCP},
	}
}

type mcpIdentityKey struct{}

// handleMCP checks Host and Origin (checkMCPHost) and hands the request to
// mcptools.NewHTTPHandler, built once, whose tools call this server's own
// routes in-process (inProcess) with the request's bearer, so every rule
// of the API holds for the tools as for any client, the narrowing of a
// turn token to its session included (turntokens.go).
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkMCPHost(r); err != nil {
		return err
	}
	_, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if token == "" {
		return gateway.Unauthorized("missing_key", "MCP over HTTP needs `Authorization: Bearer <agent key>`")
	}
	p := PrincipalOf(r)
	id := mcptools.HTTPIdentity{Token: token, Binding: p.AuthKind + ":" + p.KeyID, Agent: p.Name, SessionID: p.TurnSession}
	s.mcpOnce.Do(func() {
		s.mcp = mcptools.NewHTTPHandler(mcptools.HTTPOptions{
			Identify: func(r *http.Request) (mcptools.HTTPIdentity, bool) {
				id, ok := r.Context().Value(mcpIdentityKey{}).(mcptools.HTTPIdentity)
				return id, ok
			},
			Gateway: func(r *http.Request, token string) mcptools.Gateway {
				return client.New("http://agentmail.internal", client.WithToken(token),
					client.WithUserAgent("agentmail-mcp-http/"+mcptools.Version),
					client.WithHTTPClient(&http.Client{Transport: inProcess{h: s.router, remoteAddr: r.RemoteAddr}}))
			},
			SessionTimeout: s.opt.MCPSessionTimeout,
			Log:            s.log.With("endpoint", MCPPath),
		})
	})
	s.mcp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mcpIdentityKey{}, id)))
	return nil
}

// checkMCPHost is the DNS-rebinding protection of MCPPath: the Host must
// be a loopback name, an IP address, or one of Options.MCPHosts; an Origin,
// when the client sends one (browsers do), must name the same host and
// port as Host or a host of Options.MCPHosts. Anything else is a 403.
func (s *Server) checkMCPHost(r *http.Request) error {
	host := hostOnly(r.Host)
	if !s.mcpHostAllowed(host) {
		return gateway.Forbidden("mcp_host_not_allowed", "MCP over HTTP does not answer the host name "+r.Host,
			"connect with the gateway's address (127.0.0.1 or its IP address), or the gateway's operator adds the name to "+EnvMCPHosts)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || (!strings.EqualFold(u.Host, r.Host) && !slices.Contains(s.opt.MCPHosts, strings.ToLower(hostOnly(u.Host)))) {
			return gateway.Forbidden("mcp_origin_not_allowed", "MCP over HTTP does not answer requests from the web origin "+o,
				"call the endpoint from an MCP client, not from a web page of another site")
		}
	}
	return nil
}

func (s *Server) mcpHostAllowed(host string) bool {
	host = strings.ToLower(host)
	if host == "localhost" || net.ParseIP(host) != nil {
		return true
	}
	return slices.Contains(s.opt.MCPHosts, host)
}

// hostOnly strips the port of a Host header value ("[::1]:8180" → "::1").
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// inProcess is an http.RoundTripper that answers requests with the API's
// own handler, without a network hop: the MCP tools' gateway client. The
// answer is buffered (the tools read small JSON answers).
type inProcess struct {
	h          http.Handler
	remoteAddr string
}

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	// A fresh routing context: the request must not inherit the route
	// match of the /mcp request whose tool call made it.
	req = req.Clone(context.WithValue(req.Context(), chi.RouteCtxKey, nil))
	req.RemoteAddr = t.remoteAddr
	req.RequestURI = req.URL.RequestURI()
	w := &bufferedResponse{header: http.Header{}}
	t.h.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status: http.StatusText(w.status), StatusCode: w.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// bufferedResponse is the http.ResponseWriter of inProcess.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}
