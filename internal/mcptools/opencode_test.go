package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The real opencode (pinned) starts `agentmail mcp` as a local MCP server
// (protocol 2025-11-25), offers the tools as agentmail_<tool> and calls
// read_inbox for a scripted model: the same tool and the same rendering as
// on Claude Code.
func TestOpenCodeCallsAgentmailToolsOverMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("opencode needs about 30 s to start in a fresh home; skipped with -short")
	}
	bin := platforms.Require(t, platforms.OpenCode)
	fg := newFakeGateway(t)
	fg.addMail(sampleMail("m_1"))
	model := scriptedmodel.NewTest(t,
		scriptedmodel.Rule{Name: "read", UserContains: "check your mail", Reply: scriptedmodel.Call("agentmail_read_inbox", map[string]any{"limit": "2"})},
		scriptedmodel.Rule{Name: "after", ToolResultFor: "agentmail_read_inbox", Reply: scriptedmodel.Text("I read the inbox.")},
	)
	env := platforms.NewEnv(t)
	ws := realDir(t)
	var cfg map[string]any
	if err := json.Unmarshal([]byte(platforms.OpenCodeConfig(model.OpenAIBaseURL())), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["mcp"] = map[string]any{"agentmail": map[string]any{
		"type": "local", "command": []string{selfBinary(t)}, "environment": processEnv(fg, ws, env.Home, "workspace"),
	}}
	b, _ := json.Marshal(cfg)
	env.Set("OPENCODE_CONFIG_CONTENT", string(b))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "please check your mail")
	cmd.Dir = ws
	cmd.Env = env.Environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("opencode run: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	if !strings.Contains(string(out), "I read the inbox.") {
		t.Errorf("opencode did not end with the scripted text:\n%s\nstderr:\n%s", out, stderr.String())
	}
	checkModelSawInbox(t, model, "agentmail_", 2)
}
