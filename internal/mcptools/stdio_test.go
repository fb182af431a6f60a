package mcptools

import (
	"strings"
	"testing"
	"time"
)

// rawLine writes one line as it is and waits for the answer with the JSON
// id want ("null" for errors that cannot name the message).
func (p *mcpProcess) rawLine(line, want string) map[string]any {
	p.t.Helper()
	ch := p.waitFor(want)
	p.wmu.Lock()
	_, err := p.stdin.Write([]byte(line + "\n"))
	p.wmu.Unlock()
	if err != nil {
		p.t.Fatalf("write to agentmail mcp: %v", err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			p.t.Fatalf("agentmail mcp closed stdout after %.60q; stderr:\n%s", line, p.stderr.String())
		}
		return m
	case <-time.After(time.Minute):
		p.t.Fatalf("no answer to %.60q within a minute", line)
	}
	return nil
}

// Issue 19 item 2: the real binary answers every malformed line with the
// JSON-RPC error the spec names and keeps serving the valid calls between
// them.
func TestStdioSurvivesMalformedLines(t *testing.T) {
	bin := agentmailBinary(t)
	fg := newFakeGateway(t)
	ws, home := realDir(t), realDir(t)
	p := startMCP(t, processEnv(fg, ws, home, "plan"), ws, bin)
	initProcess(t, p)

	huge := `{"jsonrpc":"2.0","id":"huge","method":"tools/list","params":{"pad":"` + strings.Repeat("x", MaxStdioLine) + `"}}`
	cases := []struct {
		name, line, id string
		code           float64
	}{
		{"garbage", "hello, is this thing on?", "null", -32700},
		{"a bare literal", "true", "null", -32600},
		{"truncated JSON", `{"jsonrpc":"2.0","id":7,"method":"tools/li`, "null", -32700},
		{"no version tag", `{"id":8,"method":"tools/list"}`, "8", -32600},
		{"wrong version tag", `{"jsonrpc":"1.0","id":"v","method":"tools/list"}`, `"v"`, -32600},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, "null", -32600},
		{"a number method", `{"jsonrpc":"2.0","id":9,"method":42}`, "9", -32600},
		{"neither request nor response", `{"jsonrpc":"2.0","id":10}`, "10", -32600},
		{"a batch", `[{"jsonrpc":"2.0","id":11,"method":"tools/list"}]`, "null", -32600},
		{"two values on one line", `{"jsonrpc":"2.0","id":12,"method":"tools/list"}{}`, "null", -32700},
		{"a huge line", huge, "null", -32600},
	}
	for i, c := range cases {
		m := p.rawLine(c.line, c.id)
		if got := errorCode(m); got != c.code {
			t.Errorf("%s: error code %v, want %v (answer %v)", c.name, got, c.code, m)
		}
		// The server still serves: a valid call right after answers.
		l := p.rpc(100+i, "tools/list", map[string]any{})
		res, _ := l["result"].(map[string]any)
		if tools, _ := res["tools"].([]any); len(tools) != len(wantTools) {
			t.Fatalf("after %s: tools/list answered %v", c.name, l)
		}
	}
	text, isErr := p.callTool(200, "list_contacts", map[string]any{})
	if isErr {
		t.Errorf("list_contacts after the bad lines: %q", text)
	}
	select {
	case <-p.done:
		t.Fatalf("the server exited: %v", p.exit)
	default:
	}
}
