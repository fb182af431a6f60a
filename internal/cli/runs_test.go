package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// `agentmail runs` names each run with what `agentmail stop` needs and the queue place in
// words; --all asks for every state; `agentmail stop` of a run that ended exits 4.
func TestRunsListsAndStopStops(t *testing.T) {
	g := newGateway(t)
	started := time.Now().Add(-42 * time.Second)
	g.reply("GET /api/v1/me/runs", 200, client.RunList{Runs: []client.Run{
		{RunID: "r1", AgentName: "claude", State: client.RunRunning, StartedAt: started, ToolCalls: 3, LastTool: "Bash", LastToolInput: "sleep 300"},
		{RunID: "r2", AgentName: "claude", State: client.RunQueued, QueuePosition: 2, MaxTurns: 4},
	}})
	env, out, errb := testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "runs"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "r1  claude  running  4") || !strings.Contains(lines[0], "3 tool calls  last: Bash sleep 300") ||
		lines[1] != "r2  claude  queued: waiting for a free turn, 2 ahead (the bridge runs at most 4 at once)" {
		t.Errorf("runs printed:\n%s", out)
	}
	if q := g.calls("GET /api/v1/me/runs")[0].Query; q != "" {
		t.Errorf("runs without --all asked %q", q)
	}
	env, _, _ = testEnv(t, "", nil)
	loggedIn(t, env, g)
	run(t, context.Background(), env, "runs", "--all")
	if q := g.calls("GET /api/v1/me/runs")[1].Query; q != "all=true" {
		t.Errorf("runs --all asked %q", q)
	}

	g.reply("POST /api/v1/me/runs/r1/stop", 202, client.RunStopResponse{Status: "stopping", Run: client.Run{RunID: "r1", AgentName: "claude"}})
	env, out, errb = testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "stop", "r1"); code != ExitOK || !strings.Contains(out.String(), "Stopping run r1 of claude") {
		t.Errorf("stop r1: exit %d, out %q, err %q", code, out, errb)
	}
	g.reply("POST /api/v1/me/runs/r9/stop", 409, client.ErrorBody{Error: "the run is finished: there is no turn to stop", Code: "run_not_running"})
	env, _, errb = testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "stop", "r9"); code != ExitConflict || !strings.Contains(errb.String(), "no turn to stop") {
		t.Errorf("stop r9: exit %d, err %q; want %d", code, errb, ExitConflict)
	}
}
