package bridge_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// Run control (issue 16) over real processes, for every platform of platformCases: in
// tier full a turn runs `sleep 300` through the platform's own shell; a person stops it
// through the API ([stop-api]) and with a mail whose whole text is "stop" ([stop-mail]).
// Each time, within 10 s, the sleep process is gone (checked by pid), the run ends finished with
// stop_reason "stopped", stopped_by and quiescence "proven", the thread has the stop
// notice with the transcript attached and no summary relay of the cut turn, and the next
// mail ([after]) starts a normal turn in the same platform session. A platform whose
// process outlives a turn reports its run idle between turns; Claude Code never does.

const (
	// longCommand runs sleep 300 through a shell that execs it: Claude Code refuses a
	// standalone `sleep 300` in its Bash tool, and Qwen Code also one that a shell
	// wrapper (`sh -c 'sleep 300'`) runs as its first command.
	longCommand = "sh -c 'exec sleep 300'"
	sleeper     = "sleep 300"
	cutText     = "This text of a stopped turn must never be relayed."
	afterAnswer = "After the stop: continuing in the same conversation."
)

// stopScript is the model's script of the stop scenario in c's tool names.
func (c platformCase) stopScript() []scriptedmodel.Rule {
	sleep := scriptedmodel.Reply{Text: "Running the long command.", ToolCalls: []scriptedmodel.ToolCall{{Name: c.shell, Input: c.shellInput(longCommand)}}}
	return []scriptedmodel.Rule{
		{Name: "stop-api runs", UserContains: "[stop-api]", Reply: sleep},
		{Name: "stop-mail runs", UserContains: "[stop-mail]", Reply: sleep},
		{Name: "a cut turn's result", ToolResultFor: c.shell, Reply: scriptedmodel.Text(cutText)},
		{Name: "after", UserContains: "[after]", Reply: scriptedmodel.Text(afterAnswer)},
	}
}

func TestPlatformStopContract(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	for _, c := range platformCases {
		t.Run(c.caseName(), func(t *testing.T) {
			t.Parallel()
			r := mailrig.New(t, c.platform, c.agent, c.stopScript()...)
			c.configure(t, r)
			r.Env.Set("AGENTMAIL_PERMISSION_MODE", "full")
			r.Env.Set("AGENTMAIL_RUNS_DIR", filepath.Join(r.Env.Home, "runs"))
			br := r.StartBridge()
			persistent := c.persistentProcess

			dir := mailrig.Workspace(t, "stopme")
			first := r.Send(c.agent+"@"+dir+".new", "[stop-api] a long command", "Run the long command, please.")
			stopped := stopWhileSleeping(t, r, br, first, func(run client.Run) {
				resp, err := r.Admin.MeStopRun(context.Background(), run.RunID)
				if err != nil || resp.Status != "stopping" || resp.Run.StoppedBy != "admin" {
					t.Fatalf("POST /me/runs/%s/stop = %+v, %v; want 202 stopping by admin", run.RunID, resp, err)
				}
			})
			// A run that ended cannot be stopped again.
			var ae *client.APIError
			if _, err := r.Admin.MeStopRun(context.Background(), stopped.RunID); !errors.As(err, &ae) || ae.Status != 409 {
				t.Errorf("stopping the ended run again = %v, want 409", err)
			}
			psid := r.Session(first.SessionID).PlatformSessionID
			if psid == "" {
				t.Fatalf("the stopped turn left no platform session bound\n%s", r.Dump())
			}

			after := reply(t, r, c.agent, first, "[after] go on", "Please go on.")
			got := r.WaitMail("the reply to [after]", r.ReplyFrom(after.MailID, client.MailTypeNormal))
			if got.Body != afterAnswer || got.Relay != client.RelaySummary {
				t.Errorf("reply to [after] = relay %q body %q, want the summary relay of %q", got.Relay, got.Body, afterAnswer)
			}
			if s := r.Session(first.SessionID); s.PlatformSessionID != psid {
				t.Errorf("platform session after the stop = %q, want the same %q", s.PlatformSessionID, psid)
			}
			if persistent {
				r.WaitRun(first.SessionID, after.MailID, client.RunIdle)
			}

			second := reply(t, r, c.agent, first, "[stop-mail] the long command again", "Run it once more.")
			stopWhileSleeping(t, r, br, second, func(client.Run) {
				word := reply(t, r, c.agent, first, "Re: [stop-mail]", "  STOP  ")
				t.Cleanup(func() {
					if n := len(r.TurnsFor(word.MailID)); n != 0 {
						t.Errorf("the stop mail started %d model turns, want none", n)
					}
				})
			})
			if persistent {
				// The [after] run was idle until the next turn of its session began.
				r.WaitRun(first.SessionID, after.MailID, client.RunFinished)
			} else {
				for _, run := range r.Runs(first.SessionID) {
					if run.State == client.RunIdle {
						t.Errorf("run %+v is idle on %s, whose process ends with its turn", run, c.caseName())
					}
				}
			}
		})
	}
}

// stopWhileSleeping waits until the turn of mail m runs the long command (its run shows
// the tool call), calls stop, and checks the stop's facts; it answers the stopped run.
func stopWhileSleeping(t *testing.T, r *mailrig.Rig, br *mailrig.Bridge, m *client.SendMailResponse, stop func(client.Run)) client.Run {
	t.Helper()
	var running client.Run
	var sleepers []int
	t.Cleanup(func() {
		if t.Failed() {
			for _, q := range r.RequestsFor(m.MailID) {
				t.Logf("tool results of %s: %+v", m.MailID, q.LastToolResults)
			}
		}
	})
	r.WaitFor("the turn to run "+longCommand, func() bool {
		running, _ = runningTool(r, m)
		sleepers = processesRunning(br.PID(), sleeper)
		return running.RunID != "" && len(sleepers) > 0
	})
	if !strings.Contains(running.LastToolInput, sleeper) || running.LastTool == "" {
		t.Errorf("live progress of the running turn = %+v, want the last tool and its input %q", running, longCommand)
	}
	asked := time.Now()
	stop(running)
	var run client.Run
	r.WaitFor("the stopped run", func() bool {
		for _, x := range r.Runs(m.SessionID) {
			if x.RunID == running.RunID && x.State != client.RunRunning {
				run = x
				return true
			}
		}
		return false
	})
	took := time.Since(asked)
	t.Logf("stop of %s took %v", running.RunID, took.Round(100*time.Millisecond))
	if took > 10*time.Second {
		t.Errorf("the stop of %s took %v; want the run ended, its processes proven gone, within 10 s", running.RunID, took.Round(100*time.Millisecond))
	}
	if run.State != client.RunFinished || run.StopReason != client.StopReasonStopped || run.StoppedBy != "admin" ||
		run.Quiescence != client.QuiescenceProven || run.StopRequestedAt == nil {
		t.Errorf("stopped run = %+v, want finished, stop_reason stopped, stopped_by admin, quiescence proven", run)
	}
	for _, pid := range sleepers {
		if processAlive(pid) {
			t.Errorf("pid %d (%s) still runs after the stop", pid, sleeper)
		}
	}
	notice := r.WaitMail("the stop notice", r.ReplyFrom(m.MailID, client.MailTypeNormal))
	if notice.Relay != client.RelaySummary || !strings.Contains(notice.Body, "Stopped by admin after") ||
		!strings.Contains(notice.Body, "1 tool call") || len(notice.Attachments) != 1 {
		t.Errorf("stop notice = relay %q body %q attachments %+v, want a summary relay naming admin and 1 tool call with the transcript",
			notice.Relay, notice.Body, notice.Attachments)
	}
	if run.TranscriptAttachmentID == "" || len(notice.Attachments) == 1 && notice.Attachments[0].AttachmentID != run.TranscriptAttachmentID {
		t.Errorf("run transcript %q, notice attachments %+v: want the same transcript on both", run.TranscriptAttachmentID, notice.Attachments)
	} else {
		body, _, err := r.Admin.MeDownloadAttachment(context.Background(), run.TranscriptAttachmentID)
		if err != nil {
			t.Fatalf("downloading the transcript: %v", err)
		}
		text, _ := io.ReadAll(body)
		body.Close()
		if !strings.Contains(string(text), "## Prompt") || !strings.Contains(string(text), sleeper) || !strings.Contains(string(text), "Stopped by admin") {
			t.Errorf("transcript:\n%s\nwant the prompt, the tool call with %q and the stop", text, longCommand)
		}
	}
	for _, x := range r.Matching(func(x client.Mail) bool { return x.ParentMailID == m.MailID }) {
		if strings.Contains(x.Body, cutText) {
			t.Errorf("the cut turn's text was relayed: %+v", x)
		}
	}
	return run
}

// runningTool answers the run of mail m while it runs and has called a tool.
func runningTool(r *mailrig.Rig, m *client.SendMailResponse) (client.Run, bool) {
	for _, run := range r.Runs(m.SessionID) {
		if run.MailID == m.MailID && run.State == client.RunRunning && run.ToolCalls >= 1 {
			return run, true
		}
	}
	return client.Run{}, false
}

// reply sends a person's reply to m in m's session.
func reply(t *testing.T, r *mailrig.Rig, agent string, m *client.SendMailResponse, subject, body string) *client.SendMailResponse {
	t.Helper()
	resp, err := r.Admin.MeSend(context.Background(), client.SendMailRequest{To: agent, ReplyTo: m.MailID, Subject: subject, Body: body})
	if err != nil || resp.SessionID != m.SessionID {
		t.Fatalf("reply %q in session %s = %+v, %v", subject, m.SessionID, resp, err)
	}
	return resp
}

// processesRunning lists the live descendants of root whose command line ends with
// command.
func processesRunning(root int, command string) []int {
	parent := map[int]int{}
	cmdline := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cmdline[pid] = strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))
	}
	var out []int
	for pid, cl := range cmdline {
		if !strings.HasSuffix(cl, command) {
			continue
		}
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// processAlive reports whether pid runs (and is not a zombie).
func processAlive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}
