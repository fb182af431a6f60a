package bridge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
)

// The platform gets a token for the turn's session, never the agent key,
// and the token is revoked when the turn ends.
func TestTurnGetsASessionTokenNeverTheAgentKeyAndRevokesItAtTheEnd(t *testing.T) {
	const agentKey = "the-bridge-agent-key-0123456789"
	gw := newFakeGateway("bot", agentKey)
	fake := fakeadapter.New()
	activeDuringTurn := make(chan bool, 1)
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{Text: "done", Do: func(ctx context.Context, req bridge.TurnRequest) error {
			_, active, _ := gw.turnTokenState(req.ToolEnv[bridge.TurnTokenEnv])
			activeDuringTurn <- active
			return nil
		}}
	}
	h := startBridge(t, gw, fake, nil)
	if env := fmt.Sprintf("%+v", fake.Env()); strings.Contains(env, agentKey) {
		t.Fatalf("the adapter's Env carries the agent key: %s", env)
	}
	id := gw.deliverMail(mailOpts{from: "alice", subject: "fix", workspace: workdir(t, "p"), push: true})
	h.waitGW("the reply", func() bool { return len(gw.sends) == 1 })
	turns := fake.Turns()
	if len(turns) != 1 {
		t.Fatalf("turns = %d", len(turns))
	}
	req := turns[0].Req
	dump := fmt.Sprintf("%+v", req)
	if strings.Contains(dump, agentKey) {
		t.Fatalf("the turn request carries the agent key: %s", dump)
	}
	tok, active, ok := gw.turnTokenState(req.ToolEnv[bridge.TurnTokenEnv])
	if !ok || tok.SessionID != req.MailSessionID || req.MailID != id {
		t.Fatalf("ToolEnv %v: want the turn token issued for session %s", req.ToolEnv, req.MailSessionID)
	}
	if !<-activeDuringTurn {
		t.Fatal("the token was not active while the turn ran")
	}
	h.waitGW("the token's revocation", func() bool {
		_, active, _ = gw.turnTokenStateLocked(tok.Token)
		return !active
	})
}

// Without a turn token (an older gateway, a refusal) the turn still runs,
// with tools that hold no credentials: never the agent key instead.
func TestTurnWithoutATurnTokenNeverFallsBackToTheAgentKey(t *testing.T) {
	const agentKey = "the-bridge-agent-key-0123456789"
	gw := newFakeGateway("bot", agentKey)
	fake := fakeadapter.New()
	gw.turnErr = &client.APIError{Status: 404, Body: client.ErrorBody{Error: "no such route", Code: "not_found"}}
	h := startBridge(t, gw, fake, nil)
	gw.deliverMail(mailOpts{from: "alice", subject: "fix", workspace: workdir(t, "p"), push: true})
	h.waitTurns("the turn", func(ts []fakeadapter.Turn) bool { return len(ts) == 1 && ts[0].Done })
	req := fake.Turns()[0].Req
	if v, ok := req.ToolEnv[bridge.TurnTokenEnv]; ok || strings.Contains(fmt.Sprintf("%+v", req), agentKey) {
		t.Fatalf("ToolEnv %v (token %q): want neither a token nor the agent key", req.ToolEnv, v)
	}
	h.waitLog("no turn token for this turn", 1)
}

func TestPlatformEnvironDropsTheBridgesCredentials(t *testing.T) {
	got := bridge.PlatformEnviron([]string{"PATH=/bin", "AGENTMAIL_AGENT_KEY=k", "AGENTMAIL_AGENT_SECRET=s",
		"AGENTMAIL_TURN_TOKEN=amt_x", "AGENTMAIL_GATEWAY_URL=http://g", "HOME=/h"})
	if strings.Join(got, " ") != "PATH=/bin AGENTMAIL_GATEWAY_URL=http://g HOME=/h" {
		t.Fatalf("PlatformEnviron = %v", got)
	}
}
