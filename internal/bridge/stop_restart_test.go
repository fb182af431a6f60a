package bridge_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// Run control across a bridge restart (issue 16), over real processes for Claude Code
// (one process per turn) and pi (a process that outlives its turns). Three turns run
// `sleep 300` in three sessions when the bridge is killed (SIGKILL: no end is reported).
// While it is down a person stops the first through the API and the second with a
// "stop" mail; the third is left alone. The bridge that starts next, whose event stream
// replays nothing (N-11), ends all three: the first two finished, stop_reason stopped,
// stopped_by the person, the third failed; all with quiescence "unproven" and a notice
// in the thread that says the bridge restarted and the turn's processes could not be
// checked. The "stop" mail starts no turn, although catch-up finds it unread; a "stop"
// mail sent when nothing runs is an ordinary mail with a turn of its own. A stop for a
// run the new bridge never held is answered the same way.

const (
	restartTag   = "[restart]"
	plainStopTag = "[plain-stop]"
	plainAnswer  = "An ordinary turn for a mail that says stop."
)

// restartScript is the model's script of the restart scenario in c's tool names.
func (c platformCase) restartScript() []scriptedmodel.Rule {
	sleep := scriptedmodel.Reply{Text: "Running the long command.", ToolCalls: []scriptedmodel.ToolCall{{Name: c.shell, Input: c.shellInput(longCommand)}}}
	return []scriptedmodel.Rule{
		{Name: "plain stop", UserContains: plainStopTag, Reply: scriptedmodel.Text(plainAnswer)},
		{Name: "restart runs", UserContains: restartTag, Reply: sleep},
		{Name: "a cut turn's result", ToolResultFor: c.shell, Reply: scriptedmodel.Text(cutText)},
	}
}

func TestPlatformStopAcrossABridgeRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	for _, c := range platformCases {
		if name := c.caseName(); name != "claude" && name != "pi" {
			continue
		}
		t.Run(c.caseName(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := mailrig.New(t, c.platform, c.agent, c.restartScript()...)
			c.configure(t, r)
			r.Env.Set("AGENTMAIL_PERMISSION_MODE", "full")
			first := r.StartBridge()

			// The first mail may reach the bridge through its catch-up, which delivers one
			// mail after another; the next two come over the event stream once it runs.
			byAPI := r.Send(c.agent+"@"+mailrig.Workspace(t, "byapi")+".new", restartTag+" stopped through the API", "Run the long command, please.")
			r.WaitFor("the first turn to run", func() bool { _, ok := runningTool(r, byAPI); return ok })
			byMail := r.Send(c.agent+"@"+mailrig.Workspace(t, "bymail")+".new", restartTag+" stopped by a mail", "Run the long command, please.")
			alone := r.Send(c.agent+"@"+mailrig.Workspace(t, "alone")+".new", restartTag+" left alone", "Run the long command, please.")
			sent := []*client.SendMailResponse{byAPI, byMail, alone}
			running := map[string]client.Run{}
			r.WaitFor("three turns running "+longCommand, func() bool {
				for _, m := range sent {
					if run, ok := runningTool(r, m); ok {
						running[m.MailID] = run
					}
				}
				return len(running) == 3 && len(processesRunning(first.PID(), sleeper)) == 3
			})
			// Everything the bridge started, to be killed once the bridge is gone: its
			// platform processes lead process groups of their own and outlive it.
			orphans := processesRunning(first.PID(), "")
			if err := syscall.Kill(-first.PID(), syscall.SIGKILL); err != nil {
				t.Fatalf("killing the bridge: %v", err)
			}
			if _, ok := first.WaitExit(mailrig.Wait); !ok {
				t.Fatal("the killed bridge did not exit")
			}
			for _, pid := range orphans {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			for _, m := range sent {
				if run := r.WaitRun(m.SessionID, m.MailID, client.RunRunning); run.RunID != running[m.MailID].RunID {
					t.Fatalf("run of %s = %+v, want %s still running on the gateway", m.MailID, run, running[m.MailID].RunID)
				}
			}

			// While no bridge runs: a stop through the API, and a stop mail.
			if resp, err := r.Admin.MeStopRun(ctx, running[byAPI.MailID].RunID); err != nil || resp.Status != "stopping" {
				t.Fatalf("stop while the bridge is down = %+v, %v; want 202 stopping", resp, err)
			}
			word := reply(t, r, c.agent, byMail, "Re: stop it", "stop")

			second := r.StartBridge()
			for _, m := range []*client.SendMailResponse{byAPI, byMail} {
				run := r.WaitRun(m.SessionID, m.MailID, client.RunFinished)
				if run.RunID != running[m.MailID].RunID || run.StopReason != client.StopReasonStopped || run.StoppedBy != "admin" ||
					run.Quiescence != client.QuiescenceUnproven || run.StopRequestedAt == nil || run.EndedAt == nil {
					t.Errorf("run of %q after the restart = %+v; want it finished, stopped by admin, quiescence unproven", m.MailID, run)
				}
				notice := r.WaitMail("the notice of "+m.MailID, r.ReplyFrom(m.MailID, client.MailTypeNormal))
				if notice.Relay != client.RelaySummary || !strings.HasPrefix(notice.Body, "Stopped by admin. The agent's bridge restarted while this turn ran") ||
					!strings.Contains(notice.Body, "its processes could not be checked") {
					t.Errorf("notice of %s = relay %q body %q; want the summary relay saying admin stopped it, the bridge restarted and the processes could not be checked",
						m.MailID, notice.Relay, notice.Body)
				}
			}
			lost := r.WaitRun(alone.SessionID, alone.MailID, client.RunFailed)
			if lost.Quiescence != client.QuiescenceUnproven || !strings.Contains(lost.Error, "the bridge restarted") || lost.StopReason == client.StopReasonStopped {
				t.Errorf("the run left alone after the restart = %+v; want failed, the bridge restarted, quiescence unproven", lost)
			}
			notice := r.WaitMail("the notice of the run left alone", r.ReplyFrom(alone.MailID, client.MailTypeNormal))
			if notice.Relay != client.RelaySummary || !strings.HasPrefix(notice.Body, "This turn ended without an answer: the agent's bridge restarted") ||
				!strings.Contains(notice.Body, "could not be checked") || !strings.Contains(notice.Body, "Send your mail again") {
				t.Errorf("notice of the run left alone = relay %q body %q", notice.Relay, notice.Body)
			}
			// The stop mail was a stop: handled, no model turn, though catch-up saw it unread.
			if !second.WaitLog("stop mail handled", mailrig.Wait) || !strings.Contains(second.Log.String(), "mail_id="+word.MailID) {
				t.Fatalf("the new bridge did not handle the stop mail %s\n%s", word.MailID, r.Dump())
			}
			if n := len(r.TurnsFor(word.MailID)); n != 0 {
				t.Errorf("the stop mail started %d model turns, want none", n)
			}

			// With nothing running, a mail that says stop is an ordinary mail.
			plain := reply(t, r, c.agent, alone, plainStopTag+" nothing runs", "stop")
			got := r.WaitMail("the answer to the plain stop mail", r.ReplyFrom(plain.MailID, client.MailTypeNormal))
			if got.Body != plainAnswer || got.Relay != client.RelaySummary {
				t.Errorf("answer to a stop mail with nothing running = relay %q body %q, want the summary %q", got.Relay, got.Body, plainAnswer)
			}

			// A stop for a run this bridge never held (as an earlier bridge would have left
			// it, reported running) ends it the same way.
			stray := client.Run{RunID: "stray-" + byAPI.MailID, SessionID: byAPI.SessionID, State: client.RunRunning,
				StartedAt: time.Now().Add(-time.Minute).UTC(), Attempt: 1}
			if _, err := r.AgentClient.PutRun(ctx, stray); err != nil {
				t.Fatalf("reporting a stray run: %v", err)
			}
			if _, err := r.Admin.MeStopRun(ctx, stray.RunID); err != nil {
				t.Fatalf("stopping the stray run: %v", err)
			}
			var ended client.Run
			r.WaitFor("the stray run to end", func() bool {
				for _, run := range r.Runs(byAPI.SessionID) {
					if run.RunID == stray.RunID && run.State != client.RunRunning {
						ended = run
						return true
					}
				}
				return false
			})
			if ended.State != client.RunFinished || ended.StopReason != client.StopReasonStopped || ended.StoppedBy != "admin" ||
				ended.Quiescence != client.QuiescenceUnproven {
				t.Errorf("stray run after its stop = %+v; want finished, stopped by admin, quiescence unproven", ended)
			}
			for _, m := range sent {
				for _, x := range r.Matching(func(x client.Mail) bool { return x.ParentMailID == m.MailID }) {
					if strings.Contains(x.Body, cutText) {
						t.Errorf("the cut turn's text was relayed: %+v", x)
					}
				}
			}
		})
	}
}
