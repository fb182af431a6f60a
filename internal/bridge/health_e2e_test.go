package bridge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
)

// agentFailing answers how the gateway lists agent name to people:
// GET /api/v1/agents, the list the Agents page shows.
func agentFailing(t *testing.T, g *realGateway, name string) (status string, failing *client.AgentFailing) {
	t.Helper()
	l, err := g.Admin.Agents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range l.Agents {
		if a.Name == name {
			return a.Status, a.Failing
		}
	}
	t.Fatalf("agent %q not listed: %+v", name, l.Agents)
	return "", nil
}

// waitAgent polls GET /api/v1/agents until cond holds for name.
func waitAgent(t *testing.T, g *realGateway, name, what string, cond func(status string, f *client.AgentFailing) bool) *client.AgentFailing {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		st, f := agentFailing(t, g, name)
		if cond(st, f) {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s never %s: status %s, failing %+v", name, what, st, f)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 18 point 1: an agent whose recent turns all failed is listed as
// online and failing, with the cause and the platform's words; one turn
// that works makes it plain online again.
func TestE2EAnAgentWhoseTurnsFailIsListedFailing(t *testing.T) {
	g := startGateway(t)
	fake := fakeadapter.New()
	var failing atomic.Bool
	failing.Store(true)
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		if failing.Load() {
			return fakeadapter.Step{FailSilently: "Not logged in · Please run /login"}
		}
		return fakeadapter.Step{Text: "hello"}
	}
	startE2EBridge(t, g, fake, func(c *bridge.Config) { c.HeartbeatInterval = 50 * time.Millisecond }, nil)
	if st, f := agentFailing(t, g, "bot"); st != "online" || f != nil {
		t.Fatalf("before any turn: status %s, failing %+v; want online and not failing", st, f)
	}
	sent := g.send(t, addr(workdir(t, "p")), "say hello")
	g.WaitMail("the failure report", isRelayReplyTo(sent.MailID))
	f := waitAgent(t, g, "bot", "listed failing", func(st string, f *client.AgentFailing) bool { return st == "online" && f != nil })
	if f.Cause != client.FailingNotSignedIn || !strings.Contains(f.Reason, "not signed in") || f.Detail != "Not logged in · Please run /login" {
		t.Fatalf("failing = %+v", f)
	}

	failing.Store(false)
	sent = g.send(t, addr(workdir(t, "q")), "say hello again")
	g.WaitMail("the reply", isRelayReplyTo(sent.MailID))
	waitAgent(t, g, "bot", "listed plain online after a turn that worked", func(st string, f *client.AgentFailing) bool { return st == "online" && f == nil })

	// A cause outside the list is refused, naming the field.
	agent := client.New(g.URL, client.WithToken(g.botKey))
	_, err := agent.Heartbeat(context.Background(), client.HeartbeatRequest{Health: &client.AgentHealth{Cause: "sad"}})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Body.Field != "health.cause" {
		t.Fatalf("heartbeat with health.cause sad: %v, want 400 on health.cause", err)
	}
}

// The start-up check with the real Claude Code, signed in nowhere (a fresh
// HOME, no ANTHROPIC_API_KEY): the bridge logs the version and that it is
// not signed in with the fix, the agent is listed failing before any mail,
// and the failure report of the first mail names signing in first.
func TestE2EClaudeNotSignedInIsFoundAtStart(t *testing.T) {
	bin := platforms.Require(t, platforms.Claude)
	g := startGateway(t)
	env := platforms.NewEnv(t)
	env.Set("AGENTMAIL_CLAUDE_BIN", bin)
	env.Set("AGENTMAIL_GATEWAY_URL", g.URL)
	env.Set("AGENTMAIL_AGENT_KEY", g.botKey)
	env.Set("AGENTMAIL_SANDBOX", "off")
	p := startBridgeProcess(t, env.Environ(), "--platform", "claude")
	waitStderr(t, p, "connected to "+g.URL+" as bot")
	waitStderr(t, p, "platform claude 2.")
	waitStderr(t, p, "Claude Code is not signed in on this machine")
	waitStderr(t, p, "/login")
	f := waitAgent(t, g, "bot", "listed failing at start", func(st string, f *client.AgentFailing) bool { return st == "online" && f != nil })
	if f.Cause != client.FailingNotSignedIn {
		t.Fatalf("failing = %+v, want cause not_signed_in", f)
	}

	sent := g.send(t, addr(workdir(t, "p")), "Say hello")
	m := g.WaitMail("the failure report", isRelayReplyTo(sent.MailID))
	todo := m.Body[strings.Index(m.Body, "**What to do:**"):]
	if m.Subject != "Failed: Say hello" || !strings.HasPrefix(todo, "**What to do:** sign the platform in on the agent's machine") ||
		!strings.Contains(todo, "ANTHROPIC_API_KEY") {
		t.Fatalf("failure report:\n%s\n%s", m.Subject, m.Body)
	}
}

// Seed 004 sections 3 and 7 (issue 16 item 7): the build fingerprint. The
// bridge's heartbeat carries its own version and the platform program's
// `--version` answer from the start-up check; GET /api/v1/agents (the Agents
// page) shows both. A version that is not one plain line is refused.
func TestE2EHeartbeatCarriesTheBuildFingerprint(t *testing.T) {
	g := startGateway(t)
	bin := filepath.Join(t.TempDir(), "fakeplatform")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'fakeplatform 1.2.3 (build 42)'\necho 'second line'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	startE2EBridge(t, g, fakeadapter.New(), func(c *bridge.Config) {
		c.HeartbeatInterval = 50 * time.Millisecond
		c.Version = "agentmail v9.9.9-test"
		c.Bin = bin
	}, nil)
	deadline := time.Now().Add(wait)
	for {
		l, err := g.Admin.Agents(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var bot client.Agent
		for _, a := range l.Agents {
			if a.Name == "bot" {
				bot = a
			}
		}
		if bot.BridgeVersion == "agentmail v9.9.9-test" && bot.PlatformVersion == "fakeplatform 1.2.3 (build 42)" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent bot lists bridge_version %q, platform_version %q", bot.BridgeVersion, bot.PlatformVersion)
		}
		time.Sleep(20 * time.Millisecond)
	}
	agent := client.New(g.URL, client.WithToken(g.botKey))
	for field, req := range map[string]client.HeartbeatRequest{
		"platform_version": {PlatformVersion: "1.0\x1b[2J"},
		"bridge_version":   {BridgeVersion: strings.Repeat("v", client.MaxVersionText+1)},
	} {
		_, err := agent.Heartbeat(context.Background(), req)
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Body.Field != field {
			t.Fatalf("heartbeat with a bad %s: %v, want 400 on the field", field, err)
		}
	}
}
