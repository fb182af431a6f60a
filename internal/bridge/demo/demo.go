// Package demo is the demo agent platform, `agentmail bridge --platform
// demo`: a platform built into the bridge, with no model, no network of its
// own and nothing to install, so that someone without any model account
// gets an answered mail. It runs through the bridge core's real paths like
// every adapter: each mail is a turn with its run and live progress, the
// mail is read with the turn's own token (as a model's read_mail tool
// does), a file is written only after a permission request through the
// gateway, a stop ends the turn, and the answer goes back as the turn's
// reply.
//
// The answer, in the reader's language (English and Chinese, through
// TurnResult.Translations): that this is the demo agent without a model;
// the mail's subject and first lines as received; the working directory and
// up to MaxEntries of its entries; and how to connect a real platform.
//
// A mail asks for a file with a line of its own (see ParseWrites):
//
//	write hello.txt: Hello, world
//
// The body is hostile input: at most MaxWrites such lines count, the path is
// relative to the working directory and stays inside it (no "..", no
// absolute path, no component starting with "." such as .git or .ssh, no
// symbolic link on the way, parent directories must exist already), the
// content is the rest of the line (at most MaxContent bytes) and a newline.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/pathwalk"
)

// Name is the platform name of this adapter.
const Name = "demo"

// Bounds on what one mail can make the demo do.
const (
	// MaxWrites is how many write lines of one mail are acted on; later
	// ones are refused.
	MaxWrites = 3
	// MaxContent bounds one file's content in bytes (without the final
	// newline); a longer line is refused, not cut.
	MaxContent = 4096
	// MaxPath bounds a write line's path in bytes.
	MaxPath = 200
	// MaxEntries is how many entries of the working directory the answer
	// lists.
	MaxEntries = 20
	// scanLines is how many lines of the body are looked at for write
	// lines.
	scanLines = 200
	// maxSessions bounds the sessions kept in memory; the least recently
	// used one is forgotten first.
	maxSessions = 1000
)

// WriteTool is the tool name of the demo's permission requests; the
// gateway shows it with the path, "Write: <path>" (tool_summary).
const WriteTool = "Write"

// Options configures the adapter.
type Options struct {
	// Hidden are absolute paths no write may reach, whoever approves (the
	// agent key's folder, the gateway's data directory:
	// bridge.PlatformHidden).
	Hidden []string
}

// Adapter is the demo platform. Its sessions live in memory only.
type Adapter struct {
	opts Options

	mu       sync.Mutex
	env      bridge.Env
	sessions map[string]*session
}

type session struct {
	cwd     string
	name    string
	updated time.Time
}

// New returns the demo adapter. Options.Hidden are taken in their
// resolved form as well, so a link to one of them matches too.
func New(opts Options) *Adapter {
	var hidden []string
	for _, h := range opts.Hidden {
		if h = strings.TrimSpace(h); h == "" || !filepath.IsAbs(h) {
			continue
		}
		hidden = append(hidden, filepath.Clean(h))
		if r, err := pathwalk.Resolve(h, 40, nil); err == nil && r != filepath.Clean(h) {
			hidden = append(hidden, r)
		}
	}
	opts.Hidden = hidden
	return &Adapter{opts: opts, sessions: map[string]*session{}}
}

// Name answers "demo".
func (a *Adapter) Name() string { return Name }

// Capabilities: the required ones, the permission hook that waits (C-8,
// C-9) and session listing (C-10). It has no model, so no model listing or
// choice (C-12, C-13), no titles (C-11) and no file tools for attachments
// (C-14). C-6 holds trivially: there is no model to give tools to, and the
// demo reads its mail with the turn's token as the tools would.
func (a *Adapter) Capabilities() bridge.Capabilities {
	return bridge.Capabilities{
		InjectTurn: true, CreateSessionWithCwd: true, StableSessionID: true, TurnEndSignal: true,
		ReadMessages: true, RegisterTools: true, LongRunning: true,
		PermissionHook: true, AsyncPermission: true, ListSessions: true,
		InProcess: true,
	}
}

// Start keeps the environment; the demo starts nothing.
func (a *Adapter) Start(_ context.Context, env bridge.Env) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.env = env
	return nil
}

func (a *Adapter) log(msg string, args ...any) {
	a.mu.Lock()
	l := a.env.Log
	a.mu.Unlock()
	if l != nil {
		l(msg, args...)
	}
}

// RunTurn answers one mail: it reads the mail with the turn's token, asks
// for and performs the writes it requests, and answers in English and
// Chinese. A stop (ctx's end) while a permission request waits ends the
// turn without writing; the result then says it failed, as a cut turn
// does.
func (a *Adapter) RunTurn(ctx context.Context, req bridge.TurnRequest) (bridge.TurnResult, error) {
	res := bridge.TurnResult{Facts: bridge.RunFacts{StartedAt: time.Now()}}
	if req.Cwd == "" {
		return res, errors.New("demo: TurnRequest.Cwd is empty: the turn needs the mail's directory")
	}
	psid, err := a.session(req.PlatformSessionID, req.Cwd)
	if err != nil {
		return res, err
	}
	res.PlatformSessionID = psid
	if req.OnStart != nil {
		req.OnStart(0, psid) // no process: the turn runs in the bridge
	}
	if req.OnVerdict != nil {
		req.OnVerdict(nil) // there is no model that could fail
	}
	activity := func(t bridge.TurnActivity) {
		if req.OnActivity != nil {
			req.OnActivity(t)
		}
	}

	in := a.readMail(ctx, req, activity)
	var done []writeOutcome
	for i, w := range ParseWrites(in.mail.Body) {
		if ctx.Err() != nil {
			break
		}
		done = append(done, a.write(ctx, req, psid, i, w, activity))
	}
	if ctx.Err() != nil {
		res.Failed, res.FailureReason = true, "turn stopped: "+ctx.Err().Error()
		res.Facts.StopReason = "canceled"
		res.Facts.EndedAt = time.Now()
		return res, fmt.Errorf("demo: turn stopped: %w", ctx.Err())
	}
	entries, more, listErr := listDir(req.Cwd)
	a.mu.Lock()
	agent := a.env.AgentName
	a.mu.Unlock()
	ans := answer{agent: agent, cwd: req.Cwd, in: in, writes: done, entries: entries, more: more, listErr: listErr}
	res.Text = ans.render(english)
	res.Translations = []client.MailTranslation{
		{Language: "en", Body: res.Text},
		{Language: "zh", Body: ans.render(chinese)},
	}
	res.MessageID = "demo:" + psid + ":" + req.MailID
	activity(bridge.TurnActivity{Kind: bridge.ActivityText, Text: res.Text})
	res.Facts.EndedAt = time.Now()
	a.touch(psid)
	return res, nil
}

// session answers the platform session of a turn: id when the demo knows
// it, else a new one for cwd (also for an id from before a restart: the
// demo keeps nothing on disk, and a conversation needs no memory here).
func (a *Adapter) session(id, cwd string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok && id != "" {
		s.cwd = cwd
		return id, nil
	}
	if id == "" {
		raw := make([]byte, 8)
		if _, err := rand.Read(raw); err != nil {
			return "", fmt.Errorf("demo: a session id: %w", err)
		}
		id = "demo-" + hex.EncodeToString(raw)
	}
	if len(a.sessions) >= maxSessions {
		oldest := ""
		for k, s := range a.sessions {
			if oldest == "" || s.updated.Before(a.sessions[oldest].updated) {
				oldest = k
			}
		}
		delete(a.sessions, oldest) // its next mail starts it again under the same id
	}
	a.sessions[id] = &session{cwd: cwd, updated: time.Now()}
	return id, nil
}

func (a *Adapter) touch(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		s.updated = time.Now()
	}
}

// received is the mail as the turn read it.
type received struct {
	mail client.Mail
	err  error // why it could not be read; nil when it was
}

// readMail reads the turn's mail through the gateway with the turn's token
// (AGENTMAIL_TURN_TOKEN in ToolEnv), the way a model's read_mail tool does.
func (a *Adapter) readMail(ctx context.Context, req bridge.TurnRequest, activity func(bridge.TurnActivity)) received {
	a.mu.Lock()
	url := a.env.GatewayURL
	a.mu.Unlock()
	token := req.ToolEnv[bridge.TurnTokenEnv]
	activity(bridge.TurnActivity{Kind: bridge.ActivityToolCall, Tool: "read_mail", Input: map[string]any{"mail_id": req.MailID}})
	if token == "" || url == "" {
		err := errors.New("the bridge got no turn token for this turn")
		activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: "read_mail", Text: err.Error(), IsError: true})
		return received{err: err}
	}
	m, err := client.New(url, client.WithToken(token), client.WithUserAgent("agentmail-bridge/demo")).GetMail(ctx, req.MailID)
	if err != nil {
		a.log("demo: reading the mail failed", "mail_id", req.MailID, "err", err)
		activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: "read_mail", Text: err.Error(), IsError: true})
		return received{err: err}
	}
	activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: "read_mail", Text: fmt.Sprintf("%d bytes", len(m.Body))})
	return received{mail: *m}
}

// writeOutcome is what became of one write line.
type writeOutcome struct {
	w       WriteRequest
	abs     string  // the file, when the path was acceptable
	written int     // bytes written; -1 when nothing was written
	refused Refusal // why the path or content was refused, "" when acceptable
	denied  bool    // a person denied it
	late    bool    // refused by the check after the approval
	// standing: what allowed it without a person deciding this one
	// (bridge.AllowedByGrant, bridge.AllowedByTier), "" for a decision.
	standing string
	notice   string // the permission path's own words when it refused without a person (tier plan, shutdown, no gateway)
	failed   string // the write itself failed
}

// write performs one write line: the path is checked, a person is asked
// (through the core's permission path: tool Write, file_path, content),
// the path is checked again (time passed while the person decided) and
// the file written only when the answer allows it.
func (a *Adapter) write(ctx context.Context, req bridge.TurnRequest, psid string, i int, w WriteRequest, activity func(bridge.TurnActivity)) writeOutcome {
	out := writeOutcome{w: w, written: -1}
	if w.Refused != "" {
		out.refused = w.Refused
		return out
	}
	abs, err := Confine(req.Cwd, w.Path, a.opts.Hidden)
	if err != nil {
		if !errors.As(err, &out.refused) {
			out.failed = err.Error()
		}
		return out
	}
	out.abs = abs
	// The content as it will be written, final newline included: what the
	// person approves is what lands in the file.
	input := map[string]any{"file_path": abs, "content": w.Content + "\n"}
	activity(bridge.TurnActivity{Kind: bridge.ActivityToolCall, Tool: WriteTool, Input: input})
	if req.Permission == nil {
		out.notice = "permission requests are off for this bridge, so nothing is written without one"
		activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: WriteTool, Text: out.notice, IsError: true})
		return out
	}
	ans := req.Permission(ctx, bridge.PermissionAsk{
		PlatformID: fmt.Sprintf("%s:%s:%s:%d", psid, WriteTool, req.MailID, i+1),
		ToolName:   WriteTool,
		Input:      input,
		ToolUseID:  fmt.Sprintf("write-%d", i+1),
		Summary:    WriteTool + ": " + abs,
	})
	if !ans.Allow {
		if strings.HasPrefix(ans.Message, "Denied by a person") {
			out.denied = true
		} else {
			out.notice = strings.TrimPrefix(ans.Message, "Refused: ")
		}
		activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: WriteTool, Text: "not written: " + ans.Message, IsError: true})
		return out
	}
	if ctx.Err() != nil {
		return out
	}
	out.standing = ans.Standing
	// Checked again: a link could have been planted while the person decided.
	if _, err := Confine(req.Cwd, w.Path, a.opts.Hidden); err != nil {
		if !errors.As(err, &out.refused) {
			out.failed = err.Error()
		}
		out.late = true
		return out
	}
	n, err := writeInside(req.Cwd, w.Path, []byte(w.Content+"\n"))
	if errors.As(err, &out.refused) {
		out.late = true
		return out
	}
	if err != nil {
		out.failed = err.Error()
		a.log("demo: writing the approved file failed", "mail_id", req.MailID, "path", abs, "err", err)
		activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: WriteTool, Text: err.Error(), IsError: true})
		return out
	}
	out.written = n
	activity(bridge.TurnActivity{Kind: bridge.ActivityToolResult, Tool: WriteTool, Text: fmt.Sprintf("wrote %d bytes to %s", n, abs)})
	return out
}

// listDir answers up to MaxEntries entry names of dir, sorted, directories
// with a trailing "/", and how many more there are.
func listDir(dir string) ([]string, int, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	names := make([]string, 0, len(des))
	for _, d := range des {
		n := d.Name()
		if d.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > MaxEntries {
		return names[:MaxEntries], len(names) - MaxEntries, nil
	}
	return names, 0, nil
}

// ListSessions answers the demo's sessions of this run of the bridge
// (C-10).
func (a *Adapter) ListSessions(context.Context) ([]client.PlatformSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]client.PlatformSession, 0, len(a.sessions))
	for id, s := range a.sessions {
		u := s.updated
		out = append(out, client.PlatformSession{PlatformID: id, Workspace: s.cwd, Slug: s.name, UpdatedAt: &u})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PlatformID < out[j].PlatformID })
	return out, nil
}

// ListModels: the demo has no model (C-12 absent).
func (a *Adapter) ListModels(context.Context) ([]client.Model, error) {
	return nil, bridge.ErrUnsupported
}

// RenameSession keeps the gateway's alias as the session's name (D-5).
func (a *Adapter) RenameSession(_ context.Context, id, name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("demo: empty session name")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return bridge.ErrSessionNotFound
	}
	s.name = name
	return nil
}

// Close: the demo started nothing.
func (a *Adapter) Close() error { return nil }

var _ bridge.Adapter = (*Adapter)(nil)
