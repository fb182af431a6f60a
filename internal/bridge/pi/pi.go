// Package pi is the bridge adapter for pi (npm package @mariozechner/pi-coding-agent).
// Every mail session gets its own pi process in RPC mode, started in the mail's directory:
//
//	pi --mode rpc --no-extensions -e <agentmail extension> [--session <id>] [--provider P --model M]
//
// --no-extensions keeps the user's global extensions out (seed 000, 9.12); the only
// extension is the one the bridge supplies (extension/agentmail.ts, embedded and written
// to a private temporary folder at Start). It registers the AgentMail tools by proxying to
// `agentmail mcp`, and asks the bridge before the guarded tools run, over pi's RPC
// extension UI channel (C-8, C-9).
//
// A turn is one RPC prompt sent with streamingBehavior "followUp": pi starts a new run
// when the session is idle and queues the prompt after the running work when it is busy
// (9.11: never the follow_up command, which does nothing on an idle session). A turn
// ends with agent_end, or when the next queued prompt's user message starts; it failed
// when the last assistant message has stopReason "error" (C-4). The reply is that
// message's text blocks, its responseId the relay key. pi names no session itself, so
// the alias comes from the mail subject (D-5 level 3) and is written back with
// set_session_name.
package pi

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// Name is the platform name of this adapter.
const Name = "pi"

// extensionSource is the pi extension the bridge supplies (TypeScript; pi loads it
// without a build step).
//
//go:embed extension/agentmail.ts
var extensionSource []byte

// ExtensionFile is the file name the extension gets in the adapter's temporary folder.
const ExtensionFile = "agentmail.ts"

// GuardedTools are the pi tools that ask a person before they run.
var GuardedTools = []string{"bash", "write", "edit"}

// permissionTitle is the title of the extension's permission dialog (see the extension).
const permissionTitle = "agentmail.permission"

// Environment variables between the adapter and its extension.
const (
	envMCP     = "AGENTMAIL_PI_MCP"     // JSON argv of the AgentMail tool server
	envToolEnv = "AGENTMAIL_PI_TOOLENV" // JSON file with the tool server's environment
	envGuarded = "AGENTMAIL_PI_GUARDED" // comma-separated guarded tool names
)

// Defaults of Options.
const (
	DefaultIdleTimeout   = 10 * time.Minute
	DefaultStartTimeout  = 90 * time.Second
	DefaultKillGrace     = 5 * time.Second
	DefaultModelCacheTTL = 5 * time.Minute
)

// Options configures the adapter. Zero values take the defaults.
type Options struct {
	// Environ is the environment of every pi process (KEY=VALUE lines); nil means
	// os.Environ(). The user's pi configuration (PI_CODING_AGENT_DIR, providers, models)
	// passes through; the bridge's credentials are removed (bridge.PlatformEnviron: the
	// tools get the turn's token through their own environment file, never the model's shell).
	Environ []string
	// IdleTimeout stops a session's process after that long without a turn; the next
	// turn resumes it with --session.
	IdleTimeout time.Duration
	// StartTimeout bounds how long a new process may take to answer get_state.
	StartTimeout time.Duration
	// KillGrace is how long a process gets after stdin closes, and again after SIGTERM,
	// before it is killed.
	KillGrace time.Duration
	// ModelCacheTTL is how long ListModels reuses its last answer.
	ModelCacheTTL time.Duration
}

// Adapter drives pi processes, one per mail session. It implements bridge.Adapter and is
// safe for concurrent use.
type Adapter struct {
	opts Options

	mu      sync.Mutex
	env     bridge.Env
	tmpDir  string
	extPath string
	procs   map[string]*proc // pi session id → live process
	// sessionLocks serialises choosing a session's process (lockSession).
	sessionLocks map[string]*sync.Mutex
	models       []client.Model
	modelsAt     time.Time
	started      bool
	closed       bool
	nextFile     int
}

var _ bridge.Adapter = (*Adapter)(nil)

// New returns an adapter; call Start before anything else.
func New(opts Options) *Adapter {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.ModelCacheTTL <= 0 {
		opts.ModelCacheTTL = DefaultModelCacheTTL
	}
	return &Adapter{opts: opts, procs: map[string]*proc{}}
}

// Name returns "pi".
func (a *Adapter) Name() string { return Name }

// Capabilities declares what pi offers through its RPC mode and the bridge's extension
// (docs/PLATFORMS.md, "pi"). C-11 is missing: pi's core never names a session (the title
// generator lives in pi-web), so aliases come from mail subjects (D-5 level 3).
func (a *Adapter) Capabilities() bridge.Capabilities {
	return bridge.Capabilities{
		InjectTurn:           true, // RPC prompt (streamingBehavior followUp when busy)
		CreateSessionWithCwd: true, // the process working directory; sessions are grouped by it
		StableSessionID:      true, // get_state sessionId, resumed with --session
		TurnEndSignal:        true, // agent_end; stopReason "error" for failure
		ReadMessages:         true, // the assistant message's text blocks
		RegisterTools:        true, // the extension proxies the AgentMail tools
		LongRunning:          true, // the bridge is its own process
		PermissionHook:       true, // the extension's tool_call handler
		AsyncPermission:      true, // the handler awaits the bridge's answer
		ListSessions:         true, // the session files of every directory
		ModelTitle:           false,
		ListModels:           true, // get_available_models
		PerTurnModel:         true, // --provider/--model per process
		FileTools:            true, // read, write, edit
		PersistentProcess:    true, // one process per session, idle between turns
	}
}

func (a *Adapter) baseEnviron() []string {
	src := a.opts.Environ
	if src == nil {
		src = os.Environ()
	}
	out := make([]string, 0, len(src)+4)
	for _, kv := range bridge.PlatformEnviron(src) {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case envMCP, envToolEnv, envGuarded:
			continue
		}
		out = append(out, kv)
	}
	return out
}

func lookupEnv(environ []string, key string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// Start checks the pi executable and writes the extension into a private temporary
// folder (mode 0700). Errors: env.Bin empty or not executable, the folder not writable.
func (a *Adapter) Start(ctx context.Context, env bridge.Env) error {
	if env.Bin == "" {
		return errors.New("pi: Env.Bin is empty: set AGENTMAIL_PI_BIN or put pi on PATH (npm install -g @mariozechner/pi-coding-agent)")
	}
	bin, err := exec.LookPath(env.Bin)
	if err != nil {
		return fmt.Errorf("pi: Env.Bin %q is not an executable: %w", env.Bin, err)
	}
	env.Bin = bin
	if env.Log == nil {
		env.Log = func(string, ...any) {}
	}
	dir, err := os.MkdirTemp("", "agentmail-pi-")
	if err != nil {
		return fmt.Errorf("pi: temporary folder for the extension: %w", err)
	}
	ext := filepath.Join(dir, ExtensionFile)
	if err := os.WriteFile(ext, extensionSource, 0o600); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("pi: writing the extension: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started {
		os.RemoveAll(dir)
		return errors.New("pi: Start called twice")
	}
	a.env, a.tmpDir, a.extPath, a.started = env, dir, ext, true
	return nil
}

func (a *Adapter) ready() (bridge.Env, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started || a.closed {
		return bridge.Env{}, errors.New("pi: the adapter is not started (call Start) or already closed")
	}
	return a.env, nil
}

// Close stops every pi process (pending permission questions are answered deny by the
// core; a process that stops blocks its guarded tool) and removes the temporary folder.
func (a *Adapter) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	procs := make([]*proc, 0, len(a.procs))
	for _, p := range a.procs {
		procs = append(procs, p)
	}
	a.procs = map[string]*proc{}
	dir := a.tmpDir
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func(p *proc) { defer wg.Done(); p.stop() }(p)
	}
	wg.Wait()
	if dir != "" {
		os.RemoveAll(dir)
	}
	return nil
}

// toolEnvFile returns a new file path for one process's tool environment.
func (a *Adapter) toolEnvFile() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextFile++
	return filepath.Join(a.tmpDir, fmt.Sprintf("toolenv-%d.json", a.nextFile))
}

// agentDir is pi's configuration folder: PI_CODING_AGENT_DIR, else ~/.pi/agent.
func (a *Adapter) agentDir() string {
	environ := a.baseEnviron()
	home := lookupEnv(environ, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if d := lookupEnv(environ, "PI_CODING_AGENT_DIR"); d != "" {
		if d == "~" {
			return home
		}
		if strings.HasPrefix(d, "~/") {
			return filepath.Join(home, d[2:])
		}
		return d
	}
	return filepath.Join(home, ".pi", "agent")
}

// sessionFolders are the folders holding session files: every per-directory folder under
// <agent dir>/sessions (9.13: all directories, not the bridge's own), plus
// PI_CODING_AGENT_SESSION_DIR when set.
func (a *Adapter) sessionFolders() []string {
	root := filepath.Join(a.agentDir(), "sessions")
	var out []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(root, e.Name()))
		}
	}
	if d := lookupEnv(a.baseEnviron(), "PI_CODING_AGENT_SESSION_DIR"); d != "" {
		out = append(out, d)
	}
	return out
}

// sessionFile is what the adapter reads from one session file.
type sessionFile struct {
	Path    string
	ID      string
	Cwd     string
	Name    string
	Updated time.Time
}

// readSessionFile reads the header ({type: session, id, cwd}) and the last session_info
// name of one session file.
func readSessionFile(path string) (sessionFile, bool) {
	f, err := os.Open(path)
	if err != nil {
		return sessionFile{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return sessionFile{}, false
	}
	sf := sessionFile{Path: path, Updated: st.ModTime()}
	r := bufio.NewReaderSize(f, 64<<10)
	first := true
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var e struct {
				Type string  `json:"type"`
				ID   string  `json:"id"`
				Cwd  string  `json:"cwd"`
				Name *string `json:"name"`
			}
			if json.Unmarshal(line, &e) == nil {
				switch {
				case first && e.Type == "session":
					sf.ID, sf.Cwd = e.ID, e.Cwd
				case e.Type == "session_info" && e.Name != nil:
					sf.Name = strings.TrimSpace(*e.Name)
				}
			}
			first = false
		}
		if err != nil {
			break
		}
	}
	return sf, sf.ID != ""
}

// sessionFiles lists every session file of every directory.
func (a *Adapter) sessionFiles() []sessionFile {
	var out []sessionFile
	for _, dir := range a.sessionFolders() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			if sf, ok := readSessionFile(filepath.Join(dir, e.Name())); ok {
				out = append(out, sf)
			}
		}
	}
	return out
}

// findSession returns the session file of id (a full session id).
func (a *Adapter) findSession(id string) (sessionFile, bool) {
	for _, dir := range a.sessionFolders() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "_"+id+".jsonl") {
				if sf, ok := readSessionFile(filepath.Join(dir, e.Name())); ok && sf.ID == id {
					return sf, true
				}
			}
		}
	}
	for _, sf := range a.sessionFiles() {
		if sf.ID == id {
			return sf, true
		}
	}
	return sessionFile{}, false
}

// ListSessions lists pi's sessions of every directory from the session files (C-10,
// 9.13), newest first. pi has no slug: the session name (set with set_session_name, by
// the bridge or a person) is reported as the title, from which the core derives the
// slug (D-5); unnamed sessions are reported without one and dropped by S-1.
func (a *Adapter) ListSessions(ctx context.Context) ([]client.PlatformSession, error) {
	if _, err := a.ready(); err != nil {
		return nil, err
	}
	files := a.sessionFiles()
	sort.Slice(files, func(i, j int) bool { return files[i].Updated.After(files[j].Updated) })
	out := make([]client.PlatformSession, 0, len(files))
	for _, sf := range files {
		t := sf.Updated.UTC()
		out = append(out, client.PlatformSession{PlatformID: sf.ID, Workspace: sf.Cwd, Title: sf.Name, UpdatedAt: &t})
	}
	return out, nil
}

// ListModels returns the models pi can use with the configured credentials
// (get_available_models, not the whole catalogue), cached for ModelCacheTTL. It asks a
// short-lived pi process started without a session or extensions in a temporary folder.
func (a *Adapter) ListModels(ctx context.Context) ([]client.Model, error) {
	env, err := a.ready()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.models != nil && time.Since(a.modelsAt) < a.opts.ModelCacheTTL {
		ms := append([]client.Model(nil), a.models...)
		a.mu.Unlock()
		return ms, nil
	}
	dir := a.tmpDir
	a.mu.Unlock()
	p, err := a.startProc(ctx, env, procSpec{cwd: dir, noSession: true})
	if err != nil {
		return nil, err
	}
	defer p.stop()
	resp, err := p.call(ctx, map[string]any{"type": "get_available_models"})
	if err != nil {
		return nil, err
	}
	var data struct {
		Models []struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			Provider string `json:"provider"`
		} `json:"models"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		return nil, fmt.Errorf("pi: get_available_models answer: %w", err)
	}
	models := make([]client.Model, 0, len(data.Models))
	for _, m := range data.Models {
		models = append(models, client.Model{Provider: m.Provider, Model: m.ID, DisplayName: m.Name})
	}
	sort.Slice(models, func(i, j int) bool {
		if models[i].Provider != models[j].Provider {
			return models[i].Provider < models[j].Provider
		}
		return models[i].Model < models[j].Model
	})
	a.mu.Lock()
	a.models, a.modelsAt = models, time.Now()
	a.mu.Unlock()
	return append([]client.Model(nil), models...), nil
}

// RenameSession writes the gateway's final alias into the session with pi's own
// set_session_name (D-5, W-7; never by writing the session file, whose first write pi
// makes itself). A session without a live process is resumed in its own directory for
// the rename. An empty name is refused: for pi it would clear the name.
func (a *Adapter) RenameSession(ctx context.Context, platformSessionID, name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("pi: RenameSession with an empty name (for pi an empty name clears it; never written)")
	}
	env, err := a.ready()
	if err != nil {
		return err
	}
	if p := a.liveProc(platformSessionID); p != nil {
		_, err := p.call(ctx, map[string]any{"type": "set_session_name", "name": name})
		return err
	}
	sf, ok := a.findSession(platformSessionID)
	if !ok {
		return fmt.Errorf("%w: pi session %s has no session file", bridge.ErrSessionNotFound, platformSessionID)
	}
	p, err := a.startProc(ctx, env, procSpec{cwd: sf.Cwd, session: platformSessionID, bare: true})
	if err != nil {
		return err
	}
	defer p.stop()
	_, err = p.call(ctx, map[string]any{"type": "set_session_name", "name": name})
	return err
}

// liveProc returns the running process of a session, or nil.
func (a *Adapter) liveProc(sessionID string) *proc {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.procs[sessionID]
	if p != nil && p.exited() {
		delete(a.procs, sessionID)
		return nil
	}
	return p
}
