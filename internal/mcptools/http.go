package mcptools

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultHTTPSessionTimeout is how long an idle MCP session over HTTP
// (Mcp-Session-Id) lives: after this long without a request the session
// is closed and its id answers 404, so the client starts a new one.
const DefaultHTTPSessionTimeout = 30 * time.Minute

// HTTPIdentity is who one request to the HTTP endpoint acts for, as the
// caller's authentication found it.
type HTTPIdentity struct {
	// Token is the request's bearer token (an agent key or a turn token);
	// the tools call the gateway with it.
	Token string
	// Binding names the credential (for example its key id); every request
	// of one Mcp-Session-Id must carry the same, so a session id alone
	// never lets another credential into the session (answer 403).
	Binding string
	// Agent is the agent's name.
	Agent string
	// SessionID is the mail session a turn token is narrowed to, the
	// default of session_participants; "" for an agent key.
	SessionID string
}

// HTTPOptions configures NewHTTPHandler.
type HTTPOptions struct {
	// Identify answers the identity of an already authenticated request;
	// false answers 401 (the caller's middleware should have refused it).
	Identify func(r *http.Request) (HTTPIdentity, bool)
	// Gateway builds the gateway client the tools of one session use,
	// from the request that opened the session.
	Gateway func(r *http.Request, token string) Gateway
	// SessionTimeout bounds idle sessions; 0: DefaultHTTPSessionTimeout.
	SessionTimeout time.Duration
	// Log receives the endpoint's log lines; nil: slog.Default().
	Log *slog.Logger
}

// HTTPInstructions are the server instructions over HTTP: they name the
// tools that only `agentmail mcp` on the agent's machine offers, and why.
const HTTPInstructions = "AgentMail: mail with people and other agents. read_inbox shows new mail; send_mail with reply_to answers. " +
	"Over HTTP the tools that act on a machine (run_command, write_file, upload_attachment and download_attachment with local paths, connect_to_server) are not offered: " +
	"here they would act on the gateway's machine, not on yours. They are offered by `agentmail mcp` over stdio, running on the agent's own machine."

// NewHTTPHandler is MCP over Streamable HTTP (issue 19 item 1): the SDK's
// streamable handler serving, per MCP session, a Server with the same
// tools, rendering and errors as `agentmail mcp` except the local ones
// (Options.Remote). Authentication, Host and Origin checks are the
// caller's (httpapi); this handler binds each session to the credential
// that opened it (HTTPIdentity.Binding) and closes sessions idle for
// SessionTimeout.
func NewHTTPHandler(o HTTPOptions) http.Handler {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultHTTPSessionTimeout
	}
	getServer := func(r *http.Request) *mcp.Server {
		ti := auth.TokenInfoFromContext(r.Context())
		if ti == nil {
			return nil
		}
		id, ok := ti.Extra[identityKey].(HTTPIdentity)
		if !ok {
			return nil
		}
		srv, err := New(Options{
			Config:    Config{AgentName: id.Agent, SessionID: id.SessionID},
			Gateway:   o.Gateway(r, id.Token),
			Protected: &ProtectedPaths{},
			Remote:    true,
			Log:       o.Log.With("agent", id.Agent, "transport", "http"),
		})
		if err != nil {
			o.Log.Error("mcp over http: cannot build the server", "err", err)
			return nil
		}
		return srv.MCP()
	}
	h := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout: o.SessionTimeout,
		Logger:         o.Log,
	})
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		id, ok := o.Identify(r)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		if id.Binding == "" {
			return nil, errors.New("mcp over http: an identity without binding")
		}
		// The credential is checked on every request (Identify); the
		// expiration only satisfies the SDK's check of this one request.
		return &auth.TokenInfo{UserID: id.Binding, Expiration: time.Now().Add(time.Minute),
			Extra: map[string]any{identityKey: id}}, nil
	}
	return auth.RequireBearerToken(verify, nil)(h)
}

const identityKey = "agentmail.identity"
