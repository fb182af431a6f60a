package mcptools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/testkit"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
)

// testMainEnv makes the test binary itself act as `agentmail mcp` (the same
// Main the command calls), so the protocol tests run a real child process
// without depending on every other package of the binary compiling.
const testMainEnv = "AGENTMAIL_MCPTOOLS_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(testMainEnv) == "mcp" {
		if err := Main(context.Background(), os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "agentmail mcp:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(gatewayproc.Main(m))
}

// selfBinary is the test binary, which serves MCP when testMainEnv is
// "mcp" (its directory is then the protected install directory).
func selfBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// agentmailBinary is cmd/agentmail, built once per test run into its own
// temporary directory (which is then a protected path of the processes it
// starts: the bridge's own install).
func agentmailBinary(t *testing.T) string { return gatewayproc.Binary(t) }

// mcpProcess is `agentmail mcp` running as a child process, spoken to in
// newline-delimited JSON-RPC.
type mcpProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *testkit.Log

	wmu     sync.Mutex
	waiters map[string]chan map[string]any
	closed  bool
	done    chan struct{} // closed when the process has exited
	exit    error
}

// startMCP starts the tool server as a child process: the test binary in
// its `agentmail mcp` role, or the given binary with the argument "mcp".
func startMCP(t *testing.T, env map[string]string, dir string, bin ...string) *mcpProcess {
	t.Helper()
	var cmd *exec.Cmd
	if len(bin) > 0 {
		cmd = exec.Command(bin[0], "mcp")
	} else {
		cmd = exec.Command(selfBinary(t))
	}
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &mcpProcess{t: t, cmd: cmd, stderr: &testkit.Log{}, done: make(chan struct{}), waiters: map[string]chan map[string]any{}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("stdout line is not JSON (stdout must carry only the protocol): %q", sc.Text())
				continue
			}
			if m["method"] != nil {
				continue // a notification or a request of the server
			}
			id, _ := json.Marshal(m["id"])
			p.wmu.Lock()
			if ch, ok := p.waiters[string(id)]; ok {
				delete(p.waiters, string(id))
				ch <- m
			}
			p.wmu.Unlock()
		}
		p.wmu.Lock()
		p.closed = true
		for id, ch := range p.waiters {
			close(ch)
			delete(p.waiters, id)
		}
		p.wmu.Unlock()
		p.exit = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("agentmail mcp stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

func (p *mcpProcess) send(msg map[string]any) {
	p.t.Helper()
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	p.wmu.Lock()
	_, err := p.stdin.Write(append(b, '\n'))
	p.wmu.Unlock()
	if err != nil {
		p.t.Fatalf("write to agentmail mcp: %v", err)
	}
}

// rpc sends a request and waits (generously) for the answer with its id.
func (p *mcpProcess) rpc(id any, method string, params any) map[string]any {
	p.t.Helper()
	m, err := p.rpcE(id, method, params)
	if err != nil {
		p.t.Fatal(err)
	}
	return m
}

// rpcE is rpc for other goroutines: it reports instead of ending the test.
// Answers are matched by id, so concurrent calls may share the process.
func (p *mcpProcess) rpcE(id any, method string, params any) (map[string]any, error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	want, _ := json.Marshal(id)
	ch := p.waitFor(string(want))
	p.wmu.Lock()
	_, err := p.stdin.Write(append(b, '\n'))
	p.wmu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("write %s to agentmail mcp: %v", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("agentmail mcp closed stdout while waiting for %s; stderr:\n%s", method, p.stderr.String())
		}
		return m, nil
	case <-time.After(3 * time.Minute):
		return nil, fmt.Errorf("no answer to %s within 3 minutes", method)
	}
}

// waitFor registers interest in the answer with the given JSON id.
func (p *mcpProcess) waitFor(id string) chan map[string]any {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	ch := make(chan map[string]any, 1)
	if p.closed {
		close(ch)
		return ch
	}
	p.waiters[id] = ch
	return ch
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// callTool calls a tool over the process and returns text and isError.
func (p *mcpProcess) callTool(id int, name string, args map[string]any) (string, bool) {
	p.t.Helper()
	text, isErr, err := p.callToolE(id, name, args)
	if err != nil {
		p.t.Fatal(err)
	}
	return text, isErr
}

// callToolE is callTool for other goroutines.
func (p *mcpProcess) callToolE(id int, name string, args map[string]any) (string, bool, error) {
	m, err := p.rpcE(id, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", false, err
	}
	if m["error"] != nil {
		return "", false, fmt.Errorf("tools/call %s: protocol error %v (tool errors must be isError results)", name, m["error"])
	}
	res, _ := m["result"].(map[string]any)
	var b strings.Builder
	content, _ := res["content"].([]any)
	for _, c := range content {
		if cm, ok := c.(map[string]any); ok {
			s, _ := cm["text"].(string)
			b.WriteString(s)
		}
	}
	isErr, _ := res["isError"].(bool)
	return b.String(), isErr, nil
}

// processEnv is the environment of an `agentmail mcp` child wired to fg.
func processEnv(fg *fakeGateway, ws, home, tier string) map[string]string {
	return map[string]string{
		"HOME":                         home,
		"AGENTMAIL_GATEWAY_URL":        fg.URL(),
		"AGENTMAIL_AGENT_KEY":          fg.key,
		"AGENTMAIL_AGENT_NAME":         "claude",
		"AGENTMAIL_SESSION_ID":         "s_1",
		"AGENTMAIL_MAIL_ID":            "m_0",
		"AGENTMAIL_WORKSPACE":          ws,
		"AGENTMAIL_PERMISSION_MODE":    tier,
		"AGENTMAIL_PERMISSION_WAIT_MS": "60000",
		"AGENTMAIL_DATA_DIR":           filepath.Join(home, "gateway-data"),
		testMainEnv:                    "mcp",
	}
}

// claudeDiscoverProbe is the exact probe Claude Code 2.1.328 sends before
// initialize (captured from the real binary).
var claudeDiscoverProbe = map[string]any{"_meta": map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "claude-code", "title": "Claude Code", "version": "2.1.328"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{"listChanged": true}, "elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}},
}}

func TestMCPProcessSpeaksJSONRPCOverStdio(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			fg := newFakeGateway(t)
			fg.addMail(sampleMail("m_1"))
			ws, home := realDir(t), realDir(t)
			p := startMCP(t, processEnv(fg, ws, home, "workspace"), ws)

			// Claude Code's probe, before initialize: "method not found".
			m := p.rpc("server-discover-probe-1", "server/discover", claudeDiscoverProbe)
			if errorCode(m) != -32601 {
				t.Fatalf("server/discover answered %v, want error -32601 (method not found)", m)
			}
			m = p.rpc(0, "initialize", map[string]any{
				"protocolVersion": version, "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "test", "version": "1"},
			})
			res, _ := m["result"].(map[string]any)
			if res["protocolVersion"] != version {
				t.Fatalf("initialize answered %v, want protocol %s", m, version)
			}
			if info, _ := res["serverInfo"].(map[string]any); info["name"] != "agentmail" {
				t.Errorf("serverInfo %v", res["serverInfo"])
			}
			p.send(map[string]any{"method": "notifications/initialized"})

			m = p.rpc(1, "tools/list", map[string]any{})
			res, _ = m["result"].(map[string]any)
			tools, _ := res["tools"].([]any)
			var names []string
			for _, tl := range tools {
				names = append(names, tl.(map[string]any)["name"].(string))
			}
			slices.Sort(names)
			if !slices.Equal(names, wantTools) {
				t.Errorf("tools/list = %v, want %v", names, wantTools)
			}

			text, isErr := p.callTool(2, "read_inbox", map[string]any{})
			if isErr || !strings.Contains(text, "mail_id: m_1") || !strings.Contains(text, "Cc: bob, ops@/srv/ops") {
				t.Errorf("read_inbox (isError %v):\n%s", isErr, text)
			}
			if fg.isUnread("m_1") {
				t.Errorf("read_inbox did not mark the listed mail read")
			}
			text, isErr = p.callTool(3, "send_mail", map[string]any{"to": "bob", "subject": "s"})
			if !isErr || !strings.Contains(text, "body is required") {
				t.Errorf("send_mail without body: isError %v, %q", isErr, text)
			}
			if m := p.rpc(4, "no/such/method", nil); errorCode(m) != -32601 {
				t.Errorf("unknown method answered %v", m)
			}

			// The count in the start-up log comes from registration.
			if want := fmt.Sprintf("count=%d", len(wantTools)); !strings.Contains(p.stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
			}
			// Closing stdin ends the server cleanly.
			_ = p.stdin.Close()
			select {
			case <-p.done:
				if p.exit != nil {
					t.Errorf("agentmail mcp exited with %v", p.exit)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("agentmail mcp did not exit after stdin closed")
			}
		})
	}
}

func initProcess(t *testing.T, p *mcpProcess) {
	t.Helper()
	m := p.rpc(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}})
	if m["error"] != nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(map[string]any{"method": "notifications/initialized"})
}

// The gate across the process boundary: the per-turn environment reaches
// the gate, a person's approval lets the command run, a denial does not,
// and the binary's own directory is protected.
func TestMCPProcessGatedRunCommand(t *testing.T) {
	fg := newFakeGateway(t)
	ws, home := realDir(t), realDir(t)
	p := startMCP(t, processEnv(fg, ws, home, "workspace"), ws)
	initProcess(t, p)

	fg.mu.Lock()
	fg.decide = approveOn(2, "approve")
	fg.mu.Unlock()
	text, isErr := p.callTool(1, "run_command", map[string]any{"command": "echo approved > approved.txt"})
	if isErr {
		t.Fatalf("approved run_command failed:\n%s", text)
	}
	assertContent(t, filepath.Join(ws, "approved.txt"), "approved\n")
	reqs := fg.permissionRequests()
	if len(reqs) != 1 || reqs[0].SessionID != "s_1" || reqs[0].Scope != ws {
		t.Fatalf("permission requests %+v", reqs)
	}

	fg.mu.Lock()
	fg.decide = denyOn(1, "deny", "no")
	fg.mu.Unlock()
	text, isErr = p.callTool(2, "write_file", map[string]any{"path": "denied.txt", "content": "x"})
	if !isErr || !strings.Contains(text, "denied") {
		t.Errorf("denied write_file: isError %v %q", isErr, text)
	}
	assertAbsent(t, filepath.Join(ws, "denied.txt"))

	// The tool server's own install directory is protected.
	bin := selfBinary(t)
	text, isErr = p.callTool(3, "write_file", map[string]any{"path": bin, "content": "x"})
	if !isErr || !strings.Contains(text, "protected path") {
		t.Errorf("writing over the binary: isError %v %q", isErr, text)
	}
	if fi, err := os.Stat(bin); err != nil || fi.Size() < 1000 {
		t.Errorf("the binary was changed: %v", err)
	}
	if n := len(fg.permissionRequests()); n != 2 {
		t.Errorf("want 2 permission requests (the protected write asks nobody), got %d", n)
	}
}

// The `agentmail` binary itself (cmd/agentmail, cobra wiring included)
// serves the same protocol.
func TestAgentmailBinaryServesMCP(t *testing.T) {
	bin := agentmailBinary(t)
	fg := newFakeGateway(t)
	ws, home := realDir(t), realDir(t)
	p := startMCP(t, processEnv(fg, ws, home, "plan"), ws, bin)
	if m := p.rpc("server-discover-probe-1", "server/discover", claudeDiscoverProbe); errorCode(m) != -32601 {
		t.Fatalf("server/discover answered %v", m)
	}
	initProcess(t, p)
	m := p.rpc(1, "tools/list", map[string]any{})
	res, _ := m["result"].(map[string]any)
	if tools, _ := res["tools"].([]any); len(tools) != len(wantTools) {
		t.Errorf("tools/list has %d tools, want %d", len(tools), len(wantTools))
	}
	text, isErr := p.callTool(2, "run_command", map[string]any{"command": "touch planned"})
	if !isErr || !strings.Contains(text, "plan") {
		t.Errorf("plan tier: isError %v %q", isErr, text)
	}
	assertAbsent(t, filepath.Join(ws, "planned"))
}
