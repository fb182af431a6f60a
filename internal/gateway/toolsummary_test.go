package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
)

func TestToolSummaryNamesToolAndArguments(t *testing.T) {
	long := strings.Repeat("x", 400)
	cases := []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"Bash", map[string]any{"command": "rm -rf build/", "description": "clean"}, "Bash: rm -rf build/"},
		{"Edit", map[string]any{"file_path": "/srv/app/main.go", "old_string": "a", "new_string": "b"}, "Edit: /srv/app/main.go"},
		{"WebFetch", map[string]any{"url": "https://example.org/x", "prompt": "read"}, "WebFetch: https://example.org/x"},
		{"Bash", map[string]any{"command": "make\n  test\tall"}, "Bash: make test all"},
		{"mcp_tool", map[string]any{"b": 2, "a": "x"}, `mcp_tool: {"a":"x","b":2}`},
		{"notify", map[string]any{"text": "hello"}, "notify: hello"},
		{"Bash", nil, "Bash"},
		{"", map[string]any{"command": "ls"}, "ls"},
		{"", nil, ""},
	}
	for _, c := range cases {
		if got := ToolSummary(c.tool, c.input); got != c.want {
			t.Errorf("ToolSummary(%q, %v) = %q, want %q", c.tool, c.input, got, c.want)
		}
	}
	got := ToolSummary("Bash", map[string]any{"command": long})
	if n := utf8.RuneCountInString(got); n != MaxToolSummaryRunes || !strings.HasSuffix(got, "…") {
		t.Errorf("long summary: %d runes, %q", n, got[len(got)-10:])
	}
	got = ToolSummary("Bash", map[string]any{"command": strings.Repeat("重构", 300)})
	if n := utf8.RuneCountInString(got); n != MaxToolSummaryRunes || !utf8.ValidString(got) {
		t.Errorf("long Chinese summary: %d runes, valid %v", n, utf8.ValidString(got))
	}
}

// Every Permission answer carries the tool summary: the request's answer,
// its event, GetPermission, the list and the mail view; and the request
// mail hangs under the newest mail of the session addressed to the agent.
func TestPermissionCarriesToolSummaryAndSitsInTheTree(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "perm-sum")
	const want = "Bash: rm -rf build/"
	if p.ToolSummary != want {
		t.Fatalf("request answer: %q", p.ToolSummary)
	}
	if got, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID); got.ToolSummary != want {
		t.Fatalf("GetPermission: %q", got.ToolSummary)
	}
	ev := e.events("alice", client.EventPermissionRequest)
	var evp client.Permission
	if len(ev) != 1 || json.Unmarshal(ev[0].Data, &evp) != nil || evp.ToolSummary != want {
		t.Fatalf("permission_request event: %+v", ev)
	}
	list, err := e.svc.ListPermissions(e.ctx, e.alice, PermissionStatusPending)
	if err != nil || len(list.Permissions) != 1 || list.Permissions[0].ToolSummary != want {
		t.Fatalf("list: %+v, %v", list, err)
	}
	m, err := e.svc.GetMail(e.ctx, e.alice, p.MailID)
	if err != nil || m.Permission == nil || m.Permission.ToolSummary != want {
		t.Fatalf("mail view: %+v, %v", m, err)
	}
	// The request answers alice's first mail, the newest one to bot.
	if m.ParentMailID != s.MailID {
		t.Fatalf("request parent = %q, want the mail to the agent %q", m.ParentMailID, s.MailID)
	}
	// After bot's own mail and a newer mail from bob to bot, a second
	// request hangs under bob's mail, not under bot's.
	if _, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice", ReplyTo: s.MailID, Body: "working"}); err != nil {
		t.Fatal(err)
	}
	bob, err := e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "bot", ReplyTo: s.MailID, Body: "also this"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "Ask?", SessionID: s.SessionID, RelayKey: "perm-2"})
	if err != nil || p2.ToolSummary != "" {
		t.Fatalf("a request without a tool: %+v, %v", p2, err)
	}
	if m2, _ := e.svc.GetMail(e.ctx, e.alice, p2.MailID); m2.ParentMailID != bob.MailID {
		t.Fatalf("second request parent = %q, want %q", m2.ParentMailID, bob.MailID)
	}
}

// A request in a session where nothing was ever addressed to the agent
// (the agent opened it) has no parent.
func TestPermissionRequestWithoutMailToTheAgentHasNoParent(t *testing.T) {
	e := newServiceEnv(t)
	r, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice@.new", Subject: "question", Body: "may I?"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "Deploy?", SessionID: r.SessionID, RelayKey: "perm-np",
		Tool: "deploy", ToolInput: map[string]any{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.ToolSummary != "deploy: prod" {
		t.Fatalf("summary %q", p.ToolSummary)
	}
	if m, _ := e.svc.GetMail(e.ctx, e.alice, p.MailID); m.ParentMailID != "" {
		t.Fatalf("parent = %q", m.ParentMailID)
	}
}
