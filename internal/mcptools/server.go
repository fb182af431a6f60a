// Package mcptools is the AgentMail MCP tool server (`agentmail mcp`): the
// mail tools every platform gives its model (seed 000 section 3, seed 001's
// schedule tools, seed 003's tool surface) and the execution gate
// (run_command and write_file behind a person's approval, seed 003 section
// 2). Tool names, parameters and rendering are the same for every platform.
// There is deliberately no tool through which the model reports its own
// permission needs (N-1, T-7): permission questions come from the gate and
// from the platforms' own hooks, never from the model.
package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Gateway is the part of the AgentMail HTTP API the tools use, as methods
// of client.Client (agent side, authenticated with the agent key).
type Gateway interface {
	PermissionAPI
	CoordinationAPI // tools_reservations.go
	Register(ctx context.Context, req client.RegisterRequest) (*client.Agent, error)
	Inbox(ctx context.Context, q client.InboxQuery) (*client.MailList, error)
	MarkRead(ctx context.Context, req client.MarkReadRequest) (*client.MarkReadResponse, error)
	SendMail(ctx context.Context, req client.SendMailRequest) (*client.SendMailResponse, error)
	GetMail(ctx context.Context, id string) (*client.Mail, error)
	Thread(ctx context.Context, id string) (*client.MailList, error)
	Forward(ctx context.Context, id string, req client.ForwardRequest) (*client.SendMailResponse, error)
	UploadAttachment(ctx context.Context, filename string, r io.Reader) (*client.Attachment, error)
	DownloadAttachment(ctx context.Context, id string) (io.ReadCloser, *client.AttachmentMeta, error)
	Suggest(ctx context.Context, q string, limit int) (*client.SuggestionList, error)
	Contacts(ctx context.Context) (*client.ContactList, error)
	Participants(ctx context.Context, sessionID string) (*client.ParticipantList, error)
	CreateSchedule(ctx context.Context, req client.CreateScheduleRequest) (*client.Schedule, error)
	ListSchedules(ctx context.Context) (*client.ScheduleList, error)
	UpdateSchedule(ctx context.Context, id string, req client.UpdateScheduleRequest) (*client.Schedule, error)
	DeleteSchedule(ctx context.Context, id string) error
	SearchMail(ctx context.Context, q client.SearchQuery) (*client.SearchResults, error) // tools_search.go
}

var _ Gateway = (*client.Client)(nil)

// Version is reported in the MCP initialize answer.
const Version = "1.0.0"

// Options configures a Server.
type Options struct {
	// Config is the environment-derived configuration.
	Config Config
	// Gateway is the gateway client (agent key). Required.
	Gateway Gateway
	// Connect builds a gateway client for connect_to_server; nil uses
	// client.New with the key as Bearer token.
	Connect func(gatewayURL, agentKey string) Gateway
	// Protected is the protected-path list; nil protects nothing beyond
	// what Config.ProtectedPrefixes gives (resolved at New).
	Protected *ProtectedPaths
	// Gate overrides the execution gate (tests); nil builds one from Config.
	Gate *Gate
	// Sandbox confines approved commands; nil runs them unconfined (Main
	// sets it from FindSandbox).
	Sandbox *Sandbox
	// Log receives the server's log lines (never stdout: that is the
	// protocol). nil: slog.Default().
	Log *slog.Logger
	// Remote is the server of the gateway's HTTP endpoint (NewHTTPHandler):
	// the tools acting on the local machine (LocalTools) are not
	// registered, and the instructions say so (HTTPInstructions).
	Remote bool
}

// Server is one MCP tool server: the registered tools over one gateway.
type Server struct {
	cfg       Config
	log       *slog.Logger
	connect   func(string, string) Gateway
	protected *ProtectedPaths
	gate      *Gate
	sandbox   *Sandbox
	remote    bool
	mcp       *mcp.Server

	mu sync.RWMutex
	gw Gateway
	// fileToken is the turn token the gateway client holds when the token comes
	// from Config.TurnTokenFile; connected is set once connect_to_server
	// switched the gateway (the file no longer decides it).
	fileToken string
	connected bool

	names []string
}

// New builds the server and registers every tool. The tool count is the
// number of registrations (ToolNames), never a written-down number.
func New(opts Options) (*Server, error) {
	if opts.Gateway == nil {
		return nil, errors.New("mcptools: Options.Gateway is required")
	}
	s := &Server{
		cfg:       opts.Config,
		log:       opts.Log,
		connect:   opts.Connect,
		protected: opts.Protected,
		gate:      opts.Gate,
		sandbox:   opts.Sandbox,
		gw:        opts.Gateway,
		remote:    opts.Remote,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.connect == nil {
		s.connect = func(u, k string) Gateway { return client.New(u, client.WithToken(k)) }
	}
	if s.protected == nil {
		pp, err := NewProtectedPaths(s.cfg.Workspace, s.cfg.ProtectedPrefixes("", "")...)
		if err != nil {
			return nil, err
		}
		s.protected = pp
	}
	if s.gate == nil {
		s.gate = &Gate{
			API:       gateAPI{s},
			Tier:      s.cfg.Tier,
			SessionID: s.cfg.SessionID,
			Scope:     s.cfg.Workspace,
			Wait:      s.cfg.PermissionWait,
			Log:       s.log,
		}
	}
	instructions := "AgentMail: mail with people and other agents. read_inbox shows new mail; send_mail with reply_to answers. run_command and write_file act on this machine and may need a person's approval by mail."
	if s.remote {
		instructions = HTTPInstructions
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "agentmail", Version: Version}, &mcp.ServerOptions{
		Logger: s.log,
		// Tools are added to these by the SDK; resources without
		// subscribe or listChanged (resources.go).
		Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}},
		Instructions: instructions,
	})
	s.registerAll()
	s.registerResources()
	return s, nil
}

// gateAPI lets the gate follow a gateway switched by connect_to_server.
type gateAPI struct{ s *Server }

func (g gateAPI) RequestPermission(ctx context.Context, req client.PermissionRequest) (*client.Permission, error) {
	return g.s.gateway().RequestPermission(ctx, req)
}

func (g gateAPI) GetPermission(ctx context.Context, mailID string) (*client.Permission, error) {
	return g.s.gateway().GetPermission(ctx, mailID)
}

func (g gateAPI) Grants(ctx context.Context, sessionID, tool string) (*client.GrantList, error) {
	return g.s.gateway().Grants(ctx, sessionID, tool)
}

// gateway is the gateway client of this call. With a turn token file it is
// the client of the token the file holds now (refreshTurnToken).
func (s *Server) gateway() Gateway {
	if s.cfg.TurnTokenFile != "" {
		s.refreshTurnToken()
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.gw
}

// setGateway switches to the gateway connect_to_server reached.
func (s *Server) setGateway(gw Gateway) {
	s.mu.Lock()
	s.gw, s.connected = gw, true
	s.mu.Unlock()
}

// refreshTurnToken reads Config.TurnTokenFile, which the bridge rewrites for
// each turn of a platform process that outlives its turns (its tool server's
// environment is fixed when the platform starts it), and switches the
// gateway client when the token changed. It returns the token, "" when no
// turn is running (the file is empty or gone).
func (s *Server) refreshTurnToken() string {
	tok := readTurnToken(s.cfg.TurnTokenFile)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.connected && tok != s.fileToken {
		s.fileToken = tok
		s.gw = s.connect(s.cfg.GatewayURL, tok)
		s.log.Info("turn token changed", "file", s.cfg.TurnTokenFile, "turn_running", tok != "")
	}
	return tok
}

// errNoTurn is a tool call while no turn runs (an empty turn token file).
var errNoTurn = errors.New("no AgentMail turn is running for this tool server right now (the bridge's turn token file is empty): the tools work during a turn, when a mail started it")

func (s *Server) isConnected() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.connected
}

// ToolNames returns the names of the registered tools, sorted.
func (s *Server) ToolNames() []string {
	out := append([]string(nil), s.names...)
	sort.Strings(out)
	return out
}

// MCP returns the underlying SDK server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// LocalTools are the tools that act on the machine the tool server runs
// on (the execution gate's tools, attachments to and from local paths,
// connect_to_server with its key file): offered by `agentmail mcp` on the
// agent's machine, never by the gateway's HTTP endpoint (Options.Remote).
var LocalTools = map[string]bool{
	"run_command": true, "write_file": true, "upload_attachment": true,
	"download_attachment": true, "connect_to_server": true,
}

// toolFunc is the body of one tool: the text for the model, or an error
// that becomes a tool error (isError) with the gateway's error and
// suggestion, never a success.
type toolFunc func(ctx context.Context, a args) (string, error)

// add registers one tool. Every tool goes through here, so the count of
// registrations is the tool count.
func (s *Server) add(name, description string, schema map[string]any, fn toolFunc) {
	if s.remote && LocalTools[name] {
		return
	}
	s.names = append(s.names, name)
	tool := &mcp.Tool{Name: name, Description: description, InputSchema: schema}
	s.mcp.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("tool panicked", "tool", name, "panic", p)
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s failed: internal error (%v)\n", name, p)}}}
			}
		}()
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			var n float64
			ctx = WithProgress(ctx, func(msg string) {
				n++
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: n, Message: msg})
			})
		}
		a, err := parseArgs(req.Params.Arguments)
		if err == nil && s.cfg.TurnTokenFile != "" && s.refreshTurnToken() == "" && !s.isConnected() {
			err = errNoTurn
		}
		var text string
		if err == nil {
			text, err = fn(ctx, a)
		}
		if err != nil {
			s.log.Info("tool call failed", "tool", name, "duration", time.Since(start), "err", err)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: ErrorText(name, err)}}}, nil
		}
		s.log.Info("tool call", "tool", name, "duration", time.Since(start))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
}

// ErrorText renders a tool failure for the model: a refusal of the gate, a
// gateway error with its code, field and suggestion (W-9), a bad argument,
// or any other failure, each prefixed with the tool name.
func ErrorText(tool string, err error) string {
	var ref *Refusal
	if errors.As(err, &ref) {
		return fmt.Sprintf("%s refused: %s\n", tool, ref.Reason)
	}
	if ae := client.AsAPIError(err); ae != nil {
		return fmt.Sprintf("%s failed.\n%s", tool, RenderAPIError(ae))
	}
	var aerr *argError
	if errors.As(err, &aerr) {
		return fmt.Sprintf("%s: bad arguments: %s\n", tool, aerr.msg)
	}
	return fmt.Sprintf("%s failed: %v\n", tool, err)
}

// Run serves the MCP protocol on t until the peer closes it or ctx ends.
// An unknown method answers JSON-RPC "method not found"; in particular
// `server/discover`, which Claude Code sends before initialize, is answered
// so by DiscoverGuard before the SDK sees it.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	s.log.Info("agentmail mcp: tools registered", "count", len(s.names), "tools", s.ToolNames(),
		"tier", string(s.cfg.Tier), "workspace", s.cfg.Workspace,
		"gateway", s.cfg.GatewayURL, "protected", s.protected.Prefixes())
	return s.mcp.Run(ctx, &DiscoverGuard{Transport: t})
}

// DiscoverGuard wraps a transport and answers every `server/discover`
// request itself with JSON-RPC error -32601 "method not found". Claude Code
// probes with server/discover (protocol 2026-07-28) before initialize and
// falls back to initialize (2025-11-25) on "method not found"; the SDK
// would otherwise accept the probe and switch to the new sessionless
// protocol, which the platforms do not speak reliably yet.
type DiscoverGuard struct {
	Transport mcp.Transport
}

// Connect implements mcp.Transport.
func (g *DiscoverGuard) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := g.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &discoverConn{Connection: c}, nil
}

type discoverConn struct {
	mcp.Connection
}

// MethodServerDiscover is the probe method answered with "method not found".
const MethodServerDiscover = "server/discover"

func (c *discoverConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.Method != MethodServerDiscover {
			return msg, nil
		}
		if !req.IsCall() {
			continue // a notification gets no answer
		}
		resp := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
			Code:    jsonrpc.CodeMethodNotFound,
			Message: "method not found: " + MethodServerDiscover,
		}}
		if err := c.Connection.Write(ctx, resp); err != nil {
			return nil, err
		}
	}
}
