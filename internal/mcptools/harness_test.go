package mcptools

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// harness is one tool server wired to a fake gateway and reached through a
// real MCP client session (in-memory transport).
type harness struct {
	t         *testing.T
	fg        *fakeGateway
	srv       *Server
	cs        *mcp.ClientSession
	ws        string // the session's workspace
	protected string // a protected directory (the "gateway data dir")
	home      string // a fake home holding .agentmail and .ssh
}

type harnessOpt func(*Config)

func withSession(id string) harnessOpt { return func(c *Config) { c.SessionID = id } }
func withWait(d time.Duration) harnessOpt {
	return func(c *Config) { c.PermissionWait = d }
}

func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newHarness(t *testing.T, tier Tier, opts ...harnessOpt) *harness {
	t.Helper()
	h := &harness{t: t, fg: newFakeGateway(t), ws: realDir(t), protected: realDir(t), home: realDir(t)}
	for _, d := range []string{".agentmail", ".ssh"} {
		if err := os.MkdirAll(filepath.Join(h.home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(h.home, ".agentmail", "agent.key"), []byte("am_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		GatewayURL:     h.fg.URL(),
		AgentKey:       h.fg.key,
		AgentKeyFile:   filepath.Join(h.home, ".agentmail", "agent.key"),
		AgentName:      "claude",
		Platform:       "claude",
		SessionID:      "s_1",
		MailID:         "m_0",
		Workspace:      h.ws,
		Tier:           tier,
		PermissionWait: 30 * time.Second,
		DataDir:        h.protected,
	}
	for _, o := range opts {
		o(&cfg)
	}
	pp, err := NewProtectedPaths(cfg.Workspace, cfg.ProtectedPrefixes("", h.home)...)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := New(Options{
		Config:    cfg,
		Gateway:   client.New(h.fg.URL(), client.WithToken(h.fg.key)),
		Protected: pp,
		Log:       log,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.gate.PollInterval = 5 * time.Millisecond
	h.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ct, st := mcp.NewInMemoryTransports()
	go func() { _ = srv.Run(ctx, st) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	h.cs = cs
	return h
}

// call calls one tool and returns its text and isError.
func (h *harness) call(name string, args map[string]any) (string, bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: protocol error (tool errors must be isError results): %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// mustOK calls a tool that must succeed.
func (h *harness) mustOK(name string, args map[string]any) string {
	h.t.Helper()
	text, isErr := h.call(name, args)
	if isErr {
		h.t.Fatalf("%s: unexpected tool error:\n%s", name, text)
	}
	return text
}

// mustFail calls a tool that must answer a tool error containing every want.
func (h *harness) mustFail(name string, args map[string]any, want ...string) string {
	h.t.Helper()
	text, isErr := h.call(name, args)
	if !isErr {
		h.t.Fatalf("%s: want a tool error, got success:\n%s", name, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			h.t.Errorf("%s: error text lacks %q:\n%s", name, w, text)
		}
	}
	return text
}

func contains(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
}

// assertAbsent fails when p exists.
func assertAbsent(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s exists but must not: the refused call touched the file system", p)
	}
}

// assertContent fails unless p holds exactly want.
func assertContent(t *testing.T, p, want string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	if string(b) != want {
		t.Errorf("%s holds %q, want %q", p, b, want)
	}
}
