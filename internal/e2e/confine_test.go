package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// Issue 12, point 9, through each platform's OWN shell tool (not run_command): the
// model makes Claude Code's Bash, opencode's bash and pi's bash read every process's
// environment, the agent key file and the gateway's data directory, and look for the
// bridge's process. The bridge (`agentmail bridge`, a real process started with
// AGENTMAIL_AGENT_KEY in its environment and the same key in ~/.agentmail/agent.key)
// must leave the key nowhere in what the tool hands back to the model, which the
// scripted model receives in its next request.
//
// [open] runs with AGENTMAIL_SANDBOX=off: the key file is read (the probe works) and
// the bridge's process is visible, yet its environment holds no key (the bridge
// re-executed itself without it). [confined] runs with the sandbox: the key file, the
// data directory and the bridge's process are gone as well.

// confineProbe is the shell command the model runs: every process's environment (each
// line once), then the agent key file and the gateway's data directory as the bridge
// knows them ($HOME and $AGENTMAIL_DATA_DIR reach the platform from the bridge's
// environment), then every bridge process of this test's gateway it can see. Other
// tests' processes on the machine may show up unconfined; only this test's key and
// bridge count ("platfor[m]" keeps the probe's own command line from matching).
const confineProbe = `cat /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep AGENTMAIL | sort -u; ` +
	`echo "--- files in $HOME and $AGENTMAIL_DATA_DIR"; ` +
	`cat "$HOME/.agentmail/agent.key" 2>&1; ` +
	`ls -A "$AGENTMAIL_DATA_DIR" 2>/dev/null | sed 's/^/data:/'; ` +
	`for p in /proc/[0-9]*; do { tr '\0' ' ' < $p/cmdline | grep -q 'agentmail bridge --platfor[m]' && ` +
	`tr '\0' '\n' < $p/environ | grep -qx "AGENTMAIL_GATEWAY_URL=$AGENTMAIL_GATEWAY_URL" && echo "bridge:$p"; } 2>/dev/null; done; ` +
	`echo probe-done`

// confinePlatform is one row of the table: how the platform is pointed at the scripted
// model and how its shell tool is called.
type confinePlatform struct {
	platform platforms.Platform
	tool     string
	use      func(r *mailrig.Rig) error
	call     func(command string) map[string]any
}

var confinePlatforms = []confinePlatform{
	{platforms.Claude, "Bash", func(r *mailrig.Rig) error { r.Env.UseClaude(r.Model.URL); return nil },
		func(c string) map[string]any { return map[string]any{"command": c, "description": "look around"} }},
	{platforms.OpenCode, "bash", func(r *mailrig.Rig) error { r.Env.UseOpenCode(r.Model.OpenAIBaseURL()); return nil },
		func(c string) map[string]any { return map[string]any{"command": c, "description": "look around"} }},
	{platforms.Pi, "bash", func(r *mailrig.Rig) error { _, err := r.Env.UsePi(r.Model.OpenAIBaseURL()); return err },
		func(c string) map[string]any { return map[string]any{"command": c} }},
}

func TestPlatformsOwnShellFindsNoAgentKey(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real platforms")
	}
	platforms.RequireBwrap(t)
	for _, p := range confinePlatforms {
		t.Run(string(p.platform), func(t *testing.T) {
			rules := []scriptedmodel.Rule{
				{Name: "probe answers", ToolResultFor: p.tool, Reply: scriptedmodel.Text("looked around")},
				{Name: "probe", UserContains: "look around", Reply: scriptedmodel.Reply{ToolCalls: []scriptedmodel.ToolCall{{Name: p.tool, Input: p.call(confineProbe)}}}},
			}
			r := mailrig.New(t, p.platform, "shellprobe", rules...)
			if err := p.use(r); err != nil {
				t.Fatal(err)
			}
			keyFile := filepath.Join(r.Env.Home, ".agentmail", "agent.key")
			if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(keyFile, []byte(r.AgentKey+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			r.Env.Set("AGENTMAIL_DATA_DIR", r.DataDir)

			for _, mode := range []string{"off", "auto"} {
				tag := map[string]string{"off": "[open]", "auto": "[confined]"}[mode]
				r.Env.Set("AGENTMAIL_SANDBOX", mode)
				b := r.StartBridge()
				environ, err := os.ReadFile("/proc/" + strconv.Itoa(b.PID()) + "/environ")
				if err != nil || strings.Contains(string(environ), r.AgentKey) || !strings.Contains(string(environ), "AGENTMAIL_GATEWAY_URL=") {
					t.Fatalf("%s: the bridge's own /proc/<pid>/environ (err %v) holds the agent key or is not the bridge's", tag, err)
				}
				if mode == "auto" && b.Log.Count("the platform runs in a bubblewrap sandbox") != 1 {
					t.Errorf("%s: the bridge did not say once that the platform is confined:\n%s", tag, b.Log)
				}
				if mode == "off" && b.Log.Count("the platform runs without a sandbox") != 1 {
					t.Errorf("%s: the bridge did not say once that the platform runs unconfined:\n%s", tag, b.Log)
				}
				dir := mailrig.Workspace(t, mode)
				sent := r.Send("shellprobe@"+dir+".new", tag+" look around", "Please look around this machine.")
				approveUntilReply(t, r, sent)
				trs := r.ToolResults(sent.MailID, p.tool)
				if len(trs) != 1 || !strings.Contains(trs[0].Content, "probe-done") {
					t.Fatalf("%s: the model got %+v from %s, want the probe's whole output\n%s", tag, trs, p.tool, r.Dump())
				}
				out := trs[0].Content
				t.Logf("%s %s: what %s gave the model:\n%s", p.platform, tag, p.tool, out)
				environs, files, ok := strings.Cut(out, "--- files in "+r.Env.Home+" and "+r.DataDir)
				if !ok || !strings.Contains(environs, "AGENTMAIL_GATEWAY_URL=") {
					t.Fatalf("%s: the probe read no process environment, or not the bridge's paths, so it proves nothing:\n%s", tag, out)
				}
				if strings.Contains(environs, r.AgentKey) {
					t.Errorf("%s: a process environment holds the agent key:\n%s", tag, out)
				}
				if mode == "off" {
					// Control: unconfined, the same probe reads the key file, the data
					// directory and sees the bridge, so what the sandbox hides is real.
					if !strings.Contains(files, r.AgentKey) || !strings.Contains(files, "data:agentmail.db") || !strings.Contains(files, "bridge:/proc/"+strconv.Itoa(b.PID())+"\n") {
						t.Errorf("%s: unconfined, the probe should read the key file and the data directory and see the bridge:\n%s", tag, out)
					}
				} else if strings.Contains(out, r.AgentKey) || strings.Contains(files, "data:") || strings.Contains(files, "bridge:") {
					t.Errorf("%s: confined, the agent key, the gateway's data or the bridge's process reached the model through %s:\n%s", tag, p.tool, out)
				}
				b.Stop()
			}
		})
	}
}

// approveUntilReply approves every permission request of sent's session (opencode asks
// external_directory before bash) until the agent's reply to sent arrives.
func approveUntilReply(t *testing.T, r *mailrig.Rig, sent *client.SendMailResponse) client.Mail {
	t.Helper()
	decided := map[string]bool{}
	var reply client.Mail
	r.WaitFor("the reply to mail "+sent.MailID, func() bool {
		for _, m := range r.Mails() {
			switch {
			case m.SessionID == sent.SessionID && m.MailType == client.MailTypePermissionRequest && !decided[m.MailID]:
				decided[m.MailID] = true
				if _, err := r.Admin.Decide(context.Background(), m.MailID, client.DecideRequest{Decision: "approve"}); err != nil {
					t.Fatalf("approving %s: %v\n%s", m.MailID, err, r.Dump())
				}
			case r.ReplyFrom(sent.MailID, client.MailTypeFailureReport)(m):
				t.Fatalf("the turn failed: %s\n%s", m.Body, r.Dump())
			case r.ReplyFrom(sent.MailID, client.MailTypeNormal)(m):
				reply = m
				return true
			}
		}
		return false
	})
	return reply
}

// A bridge given its key in the environment re-executes itself without it before
// anything else; usage errors still exit 2 with the same words, and the key is never
// printed.
func TestBridgeWithTheKeyInItsEnvironmentKeepsItsExitCodes(t *testing.T) {
	bin := gatewayproc.Binary(t)
	const key = "amk_exit_code_probe_0123"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bridge", "--platform", "nosuch"}, `--platform "nosuch"`},
		{[]string{"bridge", "--platform", "claude", "--log-level", "loud"}, "--log-level"},
	} {
		for _, env := range [][]string{{"AGENTMAIL_AGENT_KEY=" + key}, nil} {
			cmd := exec.Command(bin, c.args...)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) || strings.Contains(string(out), key) {
				t.Errorf("agentmail %v with %v: %v\n%s\nwant exit 2 naming %s, no key", c.args, env, err, out, c.want)
			}
		}
	}
}
