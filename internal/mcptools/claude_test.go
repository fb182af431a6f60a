package mcptools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The real Claude Code (pinned, from the npm registry) starts `agentmail
// mcp` from --mcp-config, gets past its server/discover probe, lists the
// tools as mcp__agentmail__<tool> and calls read_inbox for a scripted
// model; the rendered inbox reaches the model as the tool result.
func TestClaudeCodeCallsAgentmailToolsOverMCP(t *testing.T) {
	bin := platforms.Require(t, platforms.Claude)
	fg := newFakeGateway(t)
	fg.addMail(sampleMail("m_1"))
	model := scriptedmodel.NewTest(t,
		scriptedmodel.Rule{Name: "read", UserContains: "check your mail", Reply: scriptedmodel.Call("mcp__agentmail__read_inbox", map[string]any{"limit": 3})},
		scriptedmodel.Rule{Name: "after", ToolResultFor: "mcp__agentmail__read_inbox", Reply: scriptedmodel.Text("I read the inbox.")},
	)
	env := platforms.NewEnv(t)
	env.UseClaude(model.URL)
	env.Set("ENABLE_TOOL_SEARCH", "false") // list MCP tools in tools[] directly
	ws := realDir(t)
	cfg := map[string]any{"mcpServers": map[string]any{"agentmail": map[string]any{
		"command": selfBinary(t), "args": []string{}, "env": processEnv(fg, ws, env.Home, "workspace"),
	}}}
	cfgPath := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "please check your mail", "--output-format", "stream-json", "--verbose",
		"--mcp-config", cfgPath, "--strict-mcp-config", "--allowedTools", "mcp__agentmail__*")
	cmd.Dir = ws
	cmd.Env = env.Environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}

	var connected, resultOK bool
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev["type"] == "system" && ev["subtype"] == "init" {
			servers, _ := ev["mcp_servers"].([]any)
			for _, s := range servers {
				sm, _ := s.(map[string]any)
				if sm["name"] == "agentmail" && sm["status"] == "connected" {
					connected = true
				}
			}
		}
		if ev["type"] == "result" {
			isErr, _ := ev["is_error"].(bool)
			res, _ := ev["result"].(string)
			resultOK = !isErr && strings.Contains(res, "I read the inbox.")
		}
	}
	if !connected {
		t.Errorf("Claude Code did not report the agentmail MCP server connected:\n%s", out)
	}
	if !resultOK {
		t.Errorf("the turn did not end with the scripted text:\n%s", out)
	}

	checkModelSawInbox(t, model, "mcp__agentmail__", 3)
	if fg.count("GET /api/v1/mail/inbox?limit=3&mark_read=true&status=unread") != 1 {
		t.Errorf("the gateway did not see the inbox read: %v", fg.requests)
	}
}

// checkModelSawInbox checks that the model was offered every AgentMail tool
// under the platform's name prefix (the same names on every platform) and
// saw the shared inbox rendering as the result of read_inbox.
func checkModelSawInbox(t *testing.T, model *scriptedmodel.Server, prefix string, limit int) {
	t.Helper()
	offered := map[string]bool{}
	var result string
	for _, r := range model.ModelRequests() {
		for _, name := range r.Tools {
			offered[name] = true
		}
		for _, tr := range r.ToolResults {
			if tr.Name == prefix+"read_inbox" {
				result = tr.Content
			}
		}
	}
	for _, name := range wantTools {
		if !offered[prefix+name] {
			t.Errorf("the model was not offered %s%s", prefix, name)
		}
	}
	for _, want := range []string{"mail_id: m_1", "Cc: bob, ops@/srv/ops", "attachment_id: att_heap", fmt.Sprintf("limit=%d", limit)} {
		if !strings.Contains(result, want) {
			t.Errorf("the read_inbox result the model saw lacks %q:\n%s", want, result)
		}
	}
}
