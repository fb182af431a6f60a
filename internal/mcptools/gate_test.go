package mcptools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func approveOn(poll int, decision string) func(p *client.Permission, polls int) {
	return func(p *client.Permission, polls int) {
		if polls >= poll {
			p.Status, p.Approved, p.Decision, p.DecidedBy = "approved", true, decision, "alice"
		}
	}
}

func denyOn(poll int, decision, note string) func(p *client.Permission, polls int) {
	return func(p *client.Permission, polls int) {
		if polls >= poll {
			p.Status, p.Approved, p.Decision, p.DecidedBy, p.Note = "denied", false, decision, "alice", note
		}
	}
}

func TestPlanTierRefusesWithoutAskingAndTouchesNothing(t *testing.T) {
	h := newHarness(t, TierPlan)
	marker := filepath.Join(h.ws, "ran")
	h.mustFail("run_command", map[string]any{"command": "touch " + marker}, "plan", "nobody was asked")
	target := filepath.Join(h.ws, "out.txt")
	h.mustFail("write_file", map[string]any{"path": target, "content": "x"}, "plan")
	assertAbsent(t, marker)
	assertAbsent(t, target)
	if n := h.fg.count("POST /api/v1/permission/request"); n != 0 {
		t.Errorf("plan tier sent %d permission requests, want 0", n)
	}
}

func TestFullTierRunsAndWritesWithoutAsking(t *testing.T) {
	h := newHarness(t, TierFull)
	marker := filepath.Join(h.ws, "ran")
	out := h.mustOK("run_command", map[string]any{"command": "touch ran && echo hello && echo oops >&2; exit 3"})
	contains(t, out, "exit code: 3", "hello", "oops", "permission tier full")
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("command did not run in the workspace: %v", err)
	}
	target := filepath.Join(h.ws, "a", "b", "c.txt")
	h.mustOK("write_file", map[string]any{"path": "a/b/c.txt", "content": "first"})
	assertContent(t, target, "first")
	h.mustOK("write_file", map[string]any{"path": target, "content": "second"})
	assertContent(t, target, "second")
	if n := h.fg.count("POST /api/v1/permission/request"); n != 0 {
		t.Errorf("full tier sent %d permission requests, want 0", n)
	}
}

func TestWorkspaceTierApprovedCallRuns(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.decide = approveOn(3, "同意") // decided only after the gate polled a few times
	marker := filepath.Join(h.ws, "approved")
	out := h.mustOK("run_command", map[string]any{"command": "touch approved"})
	contains(t, out, "approved by alice", "exit code: 0")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("approved command did not run: %v", err)
	}
	reqs := h.fg.permissionRequests()
	if len(reqs) != 1 {
		t.Fatalf("want 1 permission request, got %d", len(reqs))
	}
	r := reqs[0]
	if r.SessionID != "s_1" || r.Tool != "run_command" || r.Scope != h.ws {
		t.Errorf("request session/tool/scope = %q/%q/%q", r.SessionID, r.Tool, r.Scope)
	}
	if !strings.HasPrefix(r.RelayKey, "gate:") || len(r.RelayKey) < 20 {
		t.Errorf("relay_key %q is not a gate key", r.RelayKey)
	}
	if r.ToolInput["command"] != "touch approved" || r.ToolInput["cwd"] != h.ws {
		t.Errorf("tool_input = %v", r.ToolInput)
	}
	if !strings.Contains(r.Context, "touch approved") || !strings.Contains(r.Question, h.ws) {
		t.Errorf("question/context do not show the command and directory: %q / %q", r.Question, r.Context)
	}
	if r.ExpiresAt == nil || time.Until(*r.ExpiresAt) < 10*time.Second {
		t.Errorf("expires_at %v should be about the wait bound ahead", r.ExpiresAt)
	}

	// write_file goes through the same gate.
	target := filepath.Join(h.ws, "w.txt")
	out = h.mustOK("write_file", map[string]any{"path": "w.txt", "content": "approved content"})
	contains(t, out, "Wrote 16 bytes", "approved by alice")
	assertContent(t, target, "approved content")
	reqs = h.fg.permissionRequests()
	if len(reqs) != 2 || reqs[1].Tool != "write_file" || reqs[1].ToolInput["path"] != target {
		t.Fatalf("write_file request: %+v", reqs)
	}
	if !strings.Contains(reqs[1].Context, "approved content") {
		t.Errorf("write_file context lacks the content preview: %q", reqs[1].Context)
	}
}

func TestWorkspaceTierDeniedCallTouchesNothing(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.decide = denyOn(1, "deny", "not on a Friday")
	marker := filepath.Join(h.ws, "denied")
	h.mustFail("run_command", map[string]any{"command": "touch denied"}, "denied by alice", "not on a Friday")
	assertAbsent(t, marker)

	existing := filepath.Join(h.ws, "keep.txt")
	if err := os.WriteFile(existing, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.mustFail("write_file", map[string]any{"path": existing, "content": "changed"}, "denied")
	assertContent(t, existing, "original")
}

// Only the gateway's verdict approved=true runs anything: a decision word
// that looks like approval but that the gateway judged a denial does not,
// and a decided state without approved=true does not either.
func TestOnlyTheApprovedVerdictRuns(t *testing.T) {
	cases := []struct {
		name   string
		decide func(p *client.Permission, polls int)
		runs   bool
	}{
		{"approved verdict", func(p *client.Permission, _ int) {
			p.Status, p.Approved, p.Decision = "approved", true, "yes"
		}, true},
		{"approval word but verdict false", func(p *client.Permission, _ int) {
			p.Status, p.Approved, p.Decision = "denied", false, "approve?? no wait"
		}, false},
		{"status approved but verdict false", func(p *client.Permission, _ int) {
			p.Status, p.Approved, p.Decision = "approved", false, "approve"
		}, false},
		{"empty decision", func(p *client.Permission, _ int) {
			p.Status, p.Approved, p.Decision = "denied", false, ""
		}, false},
		{"timeout decision", func(p *client.Permission, _ int) {
			p.Status, p.Approved, p.Decision, p.DecidedBy = "denied", false, "deny", "timeout"
		}, false},
		{"another request's approval", func(p *client.Permission, _ int) {
			p.Status, p.Approved, p.Decision, p.RelayKey = "approved", true, "approve", "gate:someone-else"
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, TierWorkspace)
			h.fg.decide = c.decide
			marker := filepath.Join(h.ws, "m")
			_, isErr := h.call("run_command", map[string]any{"command": "touch m"})
			_, statErr := os.Stat(marker)
			if c.runs && (isErr || statErr != nil) {
				t.Fatalf("want the command run; isError=%v stat=%v", isErr, statErr)
			}
			if !c.runs {
				if !isErr {
					t.Errorf("want a tool error")
				}
				assertAbsent(t, marker)
			}
		})
	}
}

func TestNoDecisionWithinTheWaitIsADenial(t *testing.T) {
	h := newHarness(t, TierWorkspace, withWait(150*time.Millisecond))
	marker := filepath.Join(h.ws, "late")
	h.mustFail("run_command", map[string]any{"command": "touch late"}, "no decision within", "denial")
	assertAbsent(t, marker)
}

func TestNoPersonToAskRefusesWithTheGatewaySuggestion(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.fail["POST /api/v1/permission/request"] = fakeErr{409, client.ErrorBody{Error: "no person takes part in this session", Code: "no_decider", Suggestion: "ask a person to join the session"}}
	marker := filepath.Join(h.ws, "x")
	h.mustFail("run_command", map[string]any{"command": "touch x"}, "409", "no person takes part", "ask a person to join the session")
	h.mustFail("write_file", map[string]any{"path": "y", "content": "y"}, "409")
	assertAbsent(t, marker)
	assertAbsent(t, filepath.Join(h.ws, "y"))
}

func TestGatewayFailureFailsClosed(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.fail["POST /api/v1/permission/request"] = fakeErr{503, client.ErrorBody{Error: "database unavailable", Code: "unavailable"}}
	h.mustFail("run_command", map[string]any{"command": "touch x"}, "fail closed")
	assertAbsent(t, filepath.Join(h.ws, "x"))

	// The gateway disappears altogether.
	h.fg.srv.Close()
	h.mustFail("write_file", map[string]any{"path": "y", "content": "y"}, "could not be reached", "fail closed")
	assertAbsent(t, filepath.Join(h.ws, "y"))
}

func TestWorkspaceTierWithoutSessionRefusesWithoutAsking(t *testing.T) {
	h := newHarness(t, TierWorkspace, withSession(""))
	h.mustFail("run_command", map[string]any{"command": "touch x"}, "no mail session")
	assertAbsent(t, filepath.Join(h.ws, "x"))
	if n := h.fg.count("POST /api/v1/permission/request"); n != 0 {
		t.Errorf("sent %d permission requests without a session", n)
	}
}

func TestAlwaysAllowGrantRunsWithoutAsking(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.grants = []client.Grant{
		{GrantID: "g1", Tool: "write_file", Scope: h.ws, GrantedBy: "alice"},
		{GrantID: "g2", Tool: "run_command", Scope: "/somewhere/else", GrantedBy: "alice"},
	}
	h.mustOK("write_file", map[string]any{"path": "granted.txt", "content": "ok"})
	assertContent(t, filepath.Join(h.ws, "granted.txt"), "ok")
	if n := h.fg.count("POST /api/v1/permission/request"); n != 0 {
		t.Errorf("a granted call asked anyway (%d requests)", n)
	}
	// A grant for another scope does not count: this asks (and is denied).
	h.fg.decide = denyOn(1, "deny", "")
	h.mustFail("run_command", map[string]any{"command": "touch nogrant"}, "denied")
	assertAbsent(t, filepath.Join(h.ws, "nogrant"))
	if n := h.fg.count("POST /api/v1/permission/request"); n != 1 {
		t.Errorf("want 1 permission request for the ungranted tool, got %d", n)
	}
}

func TestEveryCallHasItsOwnRelayKey(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.decide = approveOn(1, "approve")
	h.mustOK("run_command", map[string]any{"command": "true"})
	h.mustOK("run_command", map[string]any{"command": "true"})
	reqs := h.fg.permissionRequests()
	if len(reqs) != 2 || reqs[0].RelayKey == reqs[1].RelayKey {
		t.Fatalf("two identical calls must ask twice with distinct relay keys: %+v", reqs)
	}
	// Another process (another gate) never produces the same keys.
	g2 := &Gate{SessionID: h.srv.gate.SessionID}
	if k := g2.relayKey("run_command", map[string]any{"command": "true", "cwd": h.ws}, 1); k == reqs[0].RelayKey {
		t.Errorf("a second gate reproduced relay key %s", k)
	}
}

func TestParseTier(t *testing.T) {
	for in, want := range map[string]Tier{"": TierWorkspace, "plan": TierPlan, " FULL ": TierFull, "Workspace": TierWorkspace} {
		got, err := ParseTier(in)
		if err != nil || got != want {
			t.Errorf("ParseTier(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	got, err := ParseTier("yolo")
	if err == nil || got != TierPlan {
		t.Errorf("ParseTier(yolo) = %q, %v; want plan and an error", got, err)
	}
}

// A waiting call reports progress to a client that asked for it, so the
// client's tool timeout can follow the person's wait.
func TestWaitingCallReportsProgress(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.srv.gate.ProgressEvery = time.Millisecond
	h.fg.decide = approveOn(5, "approve")
	var mu sync.Mutex
	var msgs []string
	c := mcp.NewClient(&mcp.Implementation{Name: "progress", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			msgs = append(msgs, r.Params.Message)
			mu.Unlock()
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() { _ = h.srv.Run(ctx, st) }()
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "true"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	// Notifications may trail the answer; wait for them with a deadline.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), msgs...)
		mu.Unlock()
		if len(got) >= 2 {
			if !strings.Contains(got[0], "asked a person by mail") || !strings.Contains(got[1], "still waiting") {
				t.Errorf("progress messages %q", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress messages %q, want at least 2", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
