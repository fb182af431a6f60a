package bridge_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
)

// One bridge per agent (the bridge lease): while a bridge of "bot" runs a turn, a
// second `agentmail bridge` started with the same agent key is refused before it
// lists the agent's runs. It exits with words that say which host and process
// hold the agent, since when and what to do, and the first bridge's live run is
// not ended as lost: its turn finishes and answers.
func TestE2ESecondBridgeOfAnAgentIsRefusedAndLeavesTheFirstsRunAlone(t *testing.T) {
	g := startGateway(t)
	fake := fakeadapter.New()
	hold := make(chan struct{})
	fake.Script = func(req bridge.TurnRequest) fakeadapter.Step {
		return fakeadapter.Step{Hold: hold, Text: "the long answer"}
	}
	first := startE2EBridge(t, g, fake, nil, nil)
	sent := g.send(t, addr(workdir(t, "proj")), "a long turn")
	g.WaitRun(sent.SessionID, sent.MailID, client.RunRunning)

	second := startBridgeProcess(t, bridgeEnv(t, g, t.TempDir()), "--platform", "claude")
	err := waitExit(t, second)
	host, _ := os.Hostname()
	out := second.Log.String()
	for _, want := range []string{`another bridge of agent "bot" is running`, "host " + `"` + host + `"`,
		"connected from", "stop the other bridge first", "only one bridge may serve an agent"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refused bridge's words lack %q", want)
		}
	}
	if err == nil || t.Failed() {
		t.Fatalf("the second bridge: exit %v, want a failure saying why\n%s", err, out)
	}
	if runs := g.Runs(sent.SessionID); len(runs) != 1 || runs[0].State != client.RunRunning {
		t.Fatalf("the first bridge's run after the second bridge tried: %+v, want it running still", runs)
	}
	close(hold)
	g.WaitRun(sent.SessionID, sent.MailID, client.RunFinished)
	g.WaitMail("the first bridge's answer", isRelayReplyTo(sent.MailID))
	first.stop()
}

// A bridge restarted on its host connects at once, its killed predecessor's lease
// notwithstanding: it finds that process gone and replaces its instance. While the
// predecessor ran, a bridge of another home (another machine's key file) was refused.
func TestE2EBridgeRestartedAfterAKillTakesItsLeaseAtOnce(t *testing.T) {
	g := startGateway(t)
	home := t.TempDir()
	env := bridgeEnv(t, g, home)
	p := startBridgeProcess(t, env, "--platform", "claude")
	waitStderr(t, p, "connected to "+g.URL+" as bot")

	other := startBridgeProcess(t, bridgeEnv(t, g, t.TempDir()), "--platform", "claude")
	if err := waitExit(t, other); err == nil || !strings.Contains(other.Log.String(), "another bridge of agent") {
		t.Fatalf("a second bridge while the first runs: %v\n%s", err, other.Log)
	}
	if err := p.Cmd.Process.Kill(); err != nil { // SIGKILL: nothing is reported
		t.Fatal(err)
	}
	_ = waitExit(t, p)
	again := startBridgeProcess(t, env, "--platform", "claude")
	waitStderr(t, again, "connected to "+g.URL+" as bot")
	if strings.Contains(again.Log.String(), "another bridge of agent") {
		t.Fatalf("the restarted bridge was refused\n%s", again.Log)
	}
	again.Cmd.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, again); err != nil {
		t.Fatalf("SIGTERM exit: %v\n%s", err, again.Log)
	}
}

// bridgeEnv is the environment of `agentmail bridge --platform claude` as "bot"
// with home as HOME (its key file and instance record) and no real platform.
func bridgeEnv(t *testing.T, g *realGateway, home string) []string {
	t.Helper()
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AGENTMAIL_GATEWAY_URL=" + g.URL,
		"AGENTMAIL_AGENT_NAME=bot", "AGENTMAIL_AGENT_KEY=" + g.botKey, "AGENTMAIL_CLAUDE_BIN=/bin/true"}
}
