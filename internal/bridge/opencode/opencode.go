// Package opencode is the bridge adapter for opencode (`opencode serve`, npm package
// opencode-ai). The bridge starts one server on loopback, or attaches to a running one
// (AGENTMAIL_OPENCODE_URL), and drives it over its HTTP API:
//
//   - one opencode session per mail session, created with ?directory=<the mail's
//     directory> and no title (C-2, B-3.1, B-3.2), with a permission ruleset that makes
//     bash and edit ask;
//   - a turn is POST /session/{id}/prompt_async with the attempt's model; its end and its
//     failure come from the event stream GET /global/event (session.idle, session.error,
//     session.status "retry"), never from the prompt call returning (C-4, D-3.2, 9.2);
//   - the reply is the last assistant message's text parts only (B-5.1), its id the relay
//     key (B-5.2), the session slug the alias (D-5 level 1);
//   - permission.asked events are answered by POST /permission/{id}/reply (or the older
//     POST /session/{id}/permissions/{id}, whichever the installed version serves) after
//     the person decides, from a goroutine so the event loop never waits (D-2.1);
//   - the AgentMail tools reach the model through `agentmail mcp`, registered before each
//     turn with POST /mcp?directory=<dir> and the turn's environment (C-6).
package opencode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// Name is the platform name of this adapter.
const Name = "opencode"

// MCPServerKey is the name under which the AgentMail tool server is registered; opencode
// offers its tools to the model as agentmail_<tool>.
const MCPServerKey = "agentmail"

// Environment variables the adapter reads (from Options.Environ, else the process).
const (
	// EnvURL attaches to a running `opencode serve` instead of starting one.
	EnvURL = "AGENTMAIL_OPENCODE_URL"
	// EnvPassword is the attached server's password (else OPENCODE_SERVER_PASSWORD).
	EnvPassword = "AGENTMAIL_OPENCODE_PASSWORD"
)

// GuardedPermissions are the opencode permissions that ask a person in mail-driven
// sessions: bash (shell commands) and edit (write, edit and patch tools).
var GuardedPermissions = []string{"bash", "edit"}

// Defaults of Options.
const (
	DefaultStartTimeout = 90 * time.Second
	DefaultKillGrace    = 5 * time.Second
	// DefaultAbortWait is how long a turn waits for the idle event after it aborted its
	// session (a model retry loop, or the end of ctx) before it returns anyway.
	DefaultAbortWait = 30 * time.Second
)

// Options configures the adapter. Zero values take the defaults.
type Options struct {
	// Environ is the environment of the opencode server the adapter starts (KEY=VALUE
	// lines), and where EnvURL and EnvPassword are read; nil means os.Environ(). The
	// user's provider configuration (OPENCODE_CONFIG_CONTENT, OPENCODE_CONFIG, …) passes
	// through untouched.
	Environ []string
	// StartTimeout bounds the wait for GET /global/health at Start (DefaultStartTimeout).
	StartTimeout time.Duration
	// KillGrace is how long the started server gets after SIGTERM before SIGKILL.
	KillGrace time.Duration
	// AbortWait bounds the wait for the idle event after the adapter aborted a session.
	AbortWait time.Duration
}

// replyRoute is how the installed opencode answers a permission request.
type replyRoute int

const (
	// routePermissionReply is POST /permission/{requestID}/reply {reply, message}.
	routePermissionReply replyRoute = iota + 1
	// routeSessionPermissions is the older POST /session/{id}/permissions/{permissionID}
	// {response}.
	routeSessionPermissions
)

// Adapter drives one opencode server. It implements bridge.Adapter and is safe for
// concurrent turns of different sessions.
type Adapter struct {
	opts Options

	mu       sync.Mutex
	env      bridge.Env
	api      *api
	stream   *stream
	cancel   context.CancelFunc // stops the event stream
	cmd      *exec.Cmd          // the server we started; nil when attached
	waitDone chan struct{}      // closed when cmd has exited
	output   *bridge.TailBuffer
	workDir  string // the started server's own working directory (removed at Close)
	route    replyRoute
	hasMCP   bool // the server serves POST /mcp
	listPath string
	dirOf    map[string]string // platform session id → directory (for the API's ?directory=)
	started  bool
	closed   bool
}

var _ bridge.Adapter = (*Adapter)(nil)
var _ bridge.DetailedSessionLister = (*Adapter)(nil)

// New returns an adapter; call Start before anything else.
func New(opts Options) *Adapter {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.AbortWait <= 0 {
		opts.AbortWait = DefaultAbortWait
	}
	return &Adapter{opts: opts, dirOf: map[string]string{}}
}

// Name returns "opencode".
func (a *Adapter) Name() string { return Name }

// Capabilities declares what opencode serve offers (docs/PLATFORMS.md, "opencode").
// Every capability is present. C-9 holds over the HTTP API: a permission request stays
// pending, with its tool call waiting, until the reply comes (the in-process plugin hook
// of seed section 8 could not wait; the adapter still calls the person from a goroutine).
// C-11: the slug exists at creation and the title is generated by the model.
func (a *Adapter) Capabilities() bridge.Capabilities {
	return bridge.Capabilities{
		InjectTurn:           true, // POST /session/{id}/prompt_async
		CreateSessionWithCwd: true, // POST /session?directory=
		StableSessionID:      true, // ses_…
		TurnEndSignal:        true, // session.idle; session.error / status retry for failure
		ReadMessages:         true, // GET /session/{id}/message, parts of type text
		RegisterTools:        true, // POST /mcp?directory= with the turn's environment
		LongRunning:          true, // the bridge is its own process
		PermissionHook:       true, // permission.asked
		AsyncPermission:      true, // the request waits for POST /permission/{id}/reply
		ListSessions:         true, // GET /experimental/session (all directories)
		ModelTitle:           true, // slug at creation, generated title
		ListModels:           true, // GET /config/providers
		PerTurnModel:         true, // model {providerID, modelID} per prompt
		FileTools:            true, // read, write, edit, glob, grep
		PersistentProcess:    true, // one server for every session, idle between turns
	}
}

func (a *Adapter) environ() []string {
	if a.opts.Environ != nil {
		return a.opts.Environ
	}
	return os.Environ()
}

func lookupEnv(environ []string, key string) (string, bool) {
	v, ok := "", false
	for _, kv := range environ {
		if k, val, found := strings.Cut(kv, "="); found && k == key {
			v, ok = val, true // the last one wins, as in exec
		}
	}
	return v, ok
}

// Start attaches to EnvURL when set, else starts `<env.Bin> serve --hostname 127.0.0.1
// --port <free port>` with a random OPENCODE_SERVER_PASSWORD, waits for GET
// /global/health, reads GET /doc to find the permission reply route of the installed
// version, and opens the event stream. Errors name what failed and how to fix it.
func (a *Adapter) Start(ctx context.Context, env bridge.Env) error {
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return errors.New("opencode: Start called twice")
	}
	a.started = true
	a.env = env
	if a.env.Log == nil {
		a.env.Log = func(string, ...any) {}
	}
	a.mu.Unlock()

	environ := a.environ()
	c := &api{http: &http.Client{}}
	if u, ok := lookupEnv(environ, EnvURL); ok && u != "" {
		parsed, err := url.Parse(u)
		if err != nil || parsed.Scheme == "" || parsed.Host == "" {
			return fmt.Errorf("opencode: %s=%q is not a URL like http://127.0.0.1:4096", EnvURL, u)
		}
		c.base = strings.TrimRight(u, "/")
		c.password, _ = lookupEnv(environ, EnvPassword)
		if c.password == "" {
			c.password, _ = lookupEnv(environ, "OPENCODE_SERVER_PASSWORD")
		}
		if err := a.waitHealthy(ctx, c, nil); err != nil {
			return fmt.Errorf("opencode: attaching to %s: %w", c.base, err)
		}
		a.env.Log("attached to a running opencode server", "url", c.base)
	} else {
		if err := a.spawn(ctx, c, environ); err != nil {
			return err
		}
	}
	if err := a.discover(ctx, c); err != nil {
		a.Close()
		return err
	}
	sctx, cancel := context.WithCancel(context.Background())
	st := newStream(c, a.env.Log)
	ready := make(chan error, 1)
	go st.run(sctx, ready)
	select {
	case err := <-ready:
		if err != nil {
			cancel()
			a.Close()
			return err
		}
	case <-ctx.Done():
		cancel()
		a.Close()
		return ctx.Err()
	}
	a.mu.Lock()
	a.api, a.stream, a.cancel = c, st, cancel
	a.mu.Unlock()
	return nil
}

// spawn starts the server and waits until it answers.
func (a *Adapter) spawn(ctx context.Context, c *api, environ []string) error {
	if a.env.Bin == "" {
		return errors.New("opencode: Env.Bin is empty: set AGENTMAIL_OPENCODE_BIN or put opencode on PATH (npm install -g opencode-ai)")
	}
	bin, err := exec.LookPath(a.env.Bin)
	if err != nil {
		return fmt.Errorf("opencode: Env.Bin %q is not an executable: %w", a.env.Bin, err)
	}
	port, err := freePort()
	if err != nil {
		return fmt.Errorf("opencode: no free loopback port: %w", err)
	}
	password, err := randomHex(24)
	if err != nil {
		return err
	}
	// The server's own directory is a private one, so that nothing of the bridge's
	// working directory becomes an opencode project by accident.
	workDir, err := os.MkdirTemp("", "agentmail-opencode-")
	if err != nil {
		return fmt.Errorf("opencode: temporary directory: %w", err)
	}
	// The bridge's credentials never reach the server or the model's shell
	// (bridge.PlatformEnviron); the tools get the turn's token through their own
	// registration (registerTools).
	vars := make([]string, 0, len(environ)+2)
	for _, kv := range bridge.PlatformEnviron(environ) {
		k, _, _ := strings.Cut(kv, "=")
		if k != "OPENCODE_SERVER_PASSWORD" {
			vars = append(vars, kv)
		}
	}
	vars = append(vars, "OPENCODE_SERVER_PASSWORD="+password)
	if v, ok := lookupEnv(environ, "OPENCODE_PERMISSION"); ok && v != "" {
		a.env.Log("OPENCODE_PERMISSION is set by the user and kept; mail-driven sessions still ask through their own ruleset", "value", v)
	} else {
		perm := map[string]string{}
		for _, p := range GuardedPermissions {
			perm[p] = "ask"
		}
		b, _ := json.Marshal(perm)
		vars = append(vars, "OPENCODE_PERMISSION="+string(b))
	}
	// Its own process group; in the platform sandbox when there is one.
	cmd := a.env.Command(bin, "serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Dir = workDir
	cmd.Env = vars
	out := bridge.NewTailBuffer(16 << 10)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		os.RemoveAll(workDir)
		return fmt.Errorf("opencode: start %s serve: %w", bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	a.mu.Lock()
	a.cmd, a.waitDone, a.output, a.workDir = cmd, done, out, workDir
	a.mu.Unlock()
	c.base = "http://127.0.0.1:" + strconv.Itoa(port)
	c.password = password
	if err := a.waitHealthy(ctx, c, done); err != nil {
		a.Close()
		return fmt.Errorf("opencode: server %s did not become healthy: %w; output: %s", c.base, err, out.String())
	}
	a.env.Log("opencode server started", "url", c.base, "pid", cmd.Process.Pid)
	return nil
}

// waitHealthy polls GET /global/health until it answers healthy, the process exits
// (exited closes), ctx ends or StartTimeout passes.
func (a *Adapter) waitHealthy(ctx context.Context, c *api, exited <-chan struct{}) error {
	deadline := time.Now().Add(a.opts.StartTimeout)
	var last error
	for {
		var h struct {
			Healthy bool   `json:"healthy"`
			Version string `json:"version"`
		}
		hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = c.do(hctx, http.MethodGet, "/global/health", nil, nil, &h)
		cancel()
		if last == nil && h.Healthy {
			a.env.Log("opencode server is healthy", "version", h.Version)
			return nil
		}
		if last == nil {
			last = errors.New("GET /global/health answered healthy=false")
		}
		var ae *apiError
		if errors.As(last, &ae) && ae.Status == http.StatusUnauthorized {
			return fmt.Errorf("%w (wrong password: set %s or OPENCODE_SERVER_PASSWORD)", last, EnvPassword)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no healthy answer within %s: %w", a.opts.StartTimeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return errors.New("the server process exited")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// discover reads GET /doc: which permission reply route, session list and MCP routes the
// installed version serves.
func (a *Adapter) discover(ctx context.Context, c *api) error {
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := c.do(ctx, http.MethodGet, "/doc", nil, nil, &doc); err != nil {
		return fmt.Errorf("opencode: reading the API description: %w", err)
	}
	has := func(p string) bool { _, ok := doc.Paths[p]; return ok }
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case has("/permission/{requestID}/reply"):
		a.route = routePermissionReply
	case has("/session/{sessionID}/permissions/{permissionID}"):
		a.route = routeSessionPermissions
	default:
		return errors.New("opencode: the server offers no permission reply route (neither /permission/{requestID}/reply nor /session/{sessionID}/permissions/{permissionID}); this opencode version is not supported")
	}
	for _, p := range []string{"/session", "/session/{sessionID}/prompt_async", "/session/{sessionID}/message", "/global/event"} {
		if !has(p) {
			return fmt.Errorf("opencode: the server lacks the route %s; this opencode version is not supported", p)
		}
	}
	a.hasMCP = has("/mcp")
	a.listPath = "/session"
	if has("/experimental/session") {
		a.listPath = "/experimental/session"
	}
	a.env.Log("opencode routes found", "permission_reply", a.routeName(), "session_list", a.listPath, "mcp", a.hasMCP)
	return nil
}

func (a *Adapter) routeName() string {
	if a.route == routeSessionPermissions {
		return "POST /session/{sessionID}/permissions/{permissionID}"
	}
	return "POST /permission/{requestID}/reply"
}

// Close stops the event stream and, when the adapter started the server, the server's
// whole process group (SIGTERM, then SIGKILL after KillGrace).
func (a *Adapter) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	cancel, cmd, done, workDir := a.cancel, a.cmd, a.waitDone, a.workDir
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if cmd != nil && cmd.Process != nil {
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(a.opts.KillGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
		// Children that left the group's leader behind still get the signal.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if workDir != "" {
		os.RemoveAll(workDir)
	}
	return nil
}

// serverPID is the pid of the started server (0 when attached).
func (a *Adapter) serverPID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cmd != nil && a.cmd.Process != nil {
		return a.cmd.Process.Pid
	}
	return 0
}

// ready returns the API client and stream, or an error before Start.
func (a *Adapter) ready() (*api, *stream, bridge.Env, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.api == nil || a.closed {
		return nil, nil, bridge.Env{}, errors.New("opencode: the adapter is not started (call Start) or already closed")
	}
	if a.waitDone != nil {
		select {
		case <-a.waitDone:
			return nil, nil, bridge.Env{}, fmt.Errorf("opencode: the server exited: %s", a.output.String())
		default:
		}
	}
	return a.api, a.stream, a.env, nil
}

// serverExited is closed when the started server exits (nil, never ready, when attached).
func (a *Adapter) serverExited() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waitDone
}

func (a *Adapter) rememberDir(sessionID, dir string) {
	if sessionID == "" || dir == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.dirOf) >= maxParents {
		a.dirOf = map[string]string{}
	}
	a.dirOf[sessionID] = dir
}

func (a *Adapter) knownDir(sessionID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dirOf[sessionID]
}

// ListModels returns the configured providers' models from GET /config/providers (C-12),
// sorted by provider and model. The models field there is an object keyed by model id.
func (a *Adapter) ListModels(ctx context.Context) ([]client.Model, error) {
	c, _, _, err := a.ready()
	if err != nil {
		return nil, err
	}
	var out struct {
		Providers []provider `json:"providers"`
	}
	if err := c.do(ctx, http.MethodGet, "/config/providers", nil, nil, &out); err != nil {
		return nil, err
	}
	var models []client.Model
	for _, p := range out.Providers {
		for key, m := range p.Models {
			id := m.ID
			if id == "" {
				id = key
			}
			models = append(models, client.Model{Provider: p.ID, Model: id, DisplayName: m.Name})
		}
	}
	sortModels(models)
	return models, nil
}

// ListSessions is ListSessionsDetailed without the parent ids (C-10).
func (a *Adapter) ListSessions(ctx context.Context) ([]client.PlatformSession, error) {
	ls, err := a.ListSessionsDetailed(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]client.PlatformSession, len(ls))
	for i, s := range ls {
		out[i] = s.PlatformSession
	}
	return out, nil
}

// sessionListLimit is how many sessions one listing asks for (the core keeps 200 after
// S-1..S-3).
const sessionListLimit = 1000

// ListSessionsDetailed lists the server's sessions of every directory (GET
// /experimental/session, else GET /session), newest first, with the parent id of
// subagent sessions so the core can leave them out (S-2). Placeholder titles ("New
// session - <time>") are reported as no title.
func (a *Adapter) ListSessionsDetailed(ctx context.Context) ([]bridge.ListedSession, error) {
	c, _, _, err := a.ready()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	path := a.listPath
	a.mu.Unlock()
	var list []session
	if err := c.do(ctx, http.MethodGet, path, url.Values{"limit": {strconv.Itoa(sessionListLimit)}}, nil, &list); err != nil {
		return nil, err
	}
	out := make([]bridge.ListedSession, 0, len(list))
	for _, s := range list {
		a.rememberDir(s.ID, s.Directory)
		ps := client.PlatformSession{PlatformID: s.ID, Workspace: s.Directory, Slug: s.Slug, Title: usableTitle(s.Title)}
		if s.Time.Updated > 0 {
			t := time.UnixMilli(s.Time.Updated).UTC()
			ps.UpdatedAt = &t
		}
		out = append(out, bridge.ListedSession{PlatformSession: ps, ParentID: s.ParentID})
	}
	return out, nil
}

// placeholderTitle is the prefix of the title opencode gives a session before its title
// request answered ("New session - 2026-…"); it is no title at all (D-5).
const placeholderTitle = "New session - "

func usableTitle(t string) string {
	if strings.HasPrefix(t, placeholderTitle) || strings.HasPrefix(t, "Child session - ") {
		return ""
	}
	return strings.TrimSpace(t)
}

// RenameSession writes the gateway's final alias into the session's title with PATCH
// /session/{id} {title} (D-5, W-7). opencode cannot change a slug, so the title is the
// only name that can follow the gateway. An empty name is refused.
func (a *Adapter) RenameSession(ctx context.Context, platformSessionID, name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("opencode: RenameSession with an empty name (an empty name is never written)")
	}
	c, _, _, err := a.ready()
	if err != nil {
		return err
	}
	dir := a.knownDir(platformSessionID)
	if dir == "" {
		if _, err := a.ListSessionsDetailed(ctx); err == nil {
			dir = a.knownDir(platformSessionID)
		}
	}
	err = c.do(ctx, http.MethodPatch, "/session/"+url.PathEscape(platformSessionID), dirQuery(dir), map[string]any{"title": name}, nil)
	if isNotFound(err) {
		return fmt.Errorf("%w: %s: %v", bridge.ErrSessionNotFound, platformSessionID, err)
	}
	return err
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("opencode: random password: %w", err)
	}
	return hex.EncodeToString(b), nil
}
