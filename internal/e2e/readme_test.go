package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/gatewayproc"
)

// The README's examples run as written on any machine (issue 18 point 3):
// they write to claude@$PWD.new, not to a directory most machines lack, and
// the answer it quotes for an agent without a key is the binary's own; a
// person reads it without endpoints or rule numbers (point 5).
func TestREADMEExamplesAndQuotes(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	if strings.Contains(readme, "/srv/app") || !strings.Contains(readme, `--to "claude@$PWD.new"`) {
		t.Error("README examples should write to claude@$PWD.new")
	}
	const quoted = `no person or agent named "claude"`
	if !strings.Contains(readme, quoted) {
		t.Fatalf("README no longer quotes %q", quoted)
	}
	if !strings.Contains(readme, "about a minute") || !strings.Contains(readme, "./agentmail") {
		t.Error("README should mention the first build's minute and ./agentmail")
	}
	// Connecting an agent needs no admin user key in a shell variable: the
	// bridge's own key is registered with the command it prints (point 4).
	if !strings.Contains(readme, "agentmail keys register-agent --agent claude --key-file ~/.agentmail/agent.key") ||
		!strings.Contains(readme, "agentmail keys register-agent --agent claude --key -") || strings.Contains(readme, "$ADMIN_USER_KEY") {
		t.Error("README should connect an agent with agentmail keys register-agent reading the key (--key-file, --key -), not curl with $ADMIN_USER_KEY")
	}

	gw := startGateway(t, t.TempDir())
	ctx := ctxT(t)
	admin := client.New(gw.URL, client.WithHTTPClient(CheckedHTTPClient(t)))
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("admin login: %v\n%s", err, gw.Log.String())
	}
	home, pwd := t.TempDir(), t.TempDir()
	mustCLI(t, home, "e2e-admin-password\n", "login", "--url", gw.URL, "--username", "admin", "--password-stdin")
	r := runCLI(t, home, "", "send", "--to", "claude@"+pwd+".new", "--subject", "Review this", "--body", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, quoted) {
		t.Fatalf("send to an agent without a key: exit %d, stderr %q; want the README's words %q", r.code, r.stderr, quoted)
	}
	if strings.Contains(r.stderr, "/api/v1") || strings.Contains(r.stderr, "GET ") {
		t.Errorf("a person reads an endpoint: %q", r.stderr)
	}
}

// The README's "No model account yet?" step runs as written (issue 18): its shell
// lines, in order, in a fresh home with the binary as ./agentmail, against a started
// gateway (its address put in for http://127.0.0.1:8180, the demo's folder made under
// the test's temporary directory): the bridge makes its key in ~/.agentmail/demo.key and
// waits, the pasted registration connects it, the mail's permission request is listed
// by inbox, and approving it writes the file and brings the answer.
func TestREADMEDemoStepRunsAsWritten(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := readmeShellLines(t, string(raw), "### No model account yet?")
	gw := startGateway(t, t.TempDir())
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.Symlink(gatewayproc.Binary(t), filepath.Join(cwd, "agentmail")); err != nil {
		t.Fatal(err)
	}
	demoDir := filepath.Join(t.TempDir(), "agentmail-demo")
	env := append(cliEnv(home), "AGENTMAIL_GATEWAY_URL="+gw.URL)
	expand := func(line string) string {
		line = strings.ReplaceAll(line, "http://127.0.0.1:8180", gw.URL)
		return strings.ReplaceAll(line, "/tmp/agentmail-demo", demoDir)
	}
	run := func(line, stdin string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", expand(line))
		cmd.Dir, cmd.Env, cmd.Stdin = cwd, env, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README line %q: %v\n%s", line, err, out)
		}
		return string(out)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var bridge *gatewayproc.Proc
	var permissionID string
	for _, line := range lines {
		switch {
		case line == "go build -o agentmail ./cmd/agentmail":
			// The test's binary stands in for it (./agentmail).
		case strings.HasPrefix(line, "./agentmail login "):
			run(line, "e2e-admin-password\n")
		case line == "./agentmail bridge --platform demo":
			bridge = gatewayproc.Start(t, gatewayproc.Options{Bin: "sh", Args: []string{"-c", "exec " + line},
				Env: env, Clean: true, Dir: cwd, Group: true, CheckExit: true})
			waitFor("the demo bridge to wait for its key", func() bool {
				return strings.Contains(bridge.Log.String(), "waiting for an admin to register the agent key")
			})
			if _, err := os.Stat(filepath.Join(home, ".agentmail", "demo.key")); err != nil {
				t.Fatalf("the demo's key file: %v\n%s", err, bridge.Log)
			}
		case strings.HasPrefix(line, "./agentmail keys register-agent "):
			run(strings.ReplaceAll(line, "~/", home+"/"), "")
			waitFor("the demo bridge to connect", func() bool {
				return strings.Contains(bridge.Log.String(), "connected to "+gw.URL+" as demo")
			})
		case strings.HasPrefix(line, "./agentmail inbox"):
			// The list cuts a long subject; the test's folder is longer than the README's.
			want := "Permission request: Write: " + demoDir[:min(len(demoDir), 20)]
			last := ""
			defer func() {
				if permissionID == "" {
					t.Logf("last inbox:\n%s\nbridge log:\n%s", last, bridge.Log)
				}
			}()
			waitFor("the permission request in the inbox", func() bool {
				last = run(line, "")
				for _, l := range strings.Split(last, "\n") {
					if f := strings.Fields(l); strings.Contains(l, want) && len(f) > 1 {
						permissionID = f[1] // "*  ID  DATE ..."
						return true
					}
				}
				return false
			})
		case strings.HasPrefix(line, "./agentmail approve ID"):
			run(strings.Replace(line, "ID", permissionID, 1), "")
		default:
			run(line, "")
		}
	}
	if bridge == nil || permissionID == "" {
		t.Fatalf("the README's demo step lacks the bridge or the inbox line: %q", lines)
	}
	target := filepath.Join(demoDir, "hello.txt")
	waitFor("hello.txt", func() bool {
		b, err := os.ReadFile(target)
		return err == nil && string(b) == "Hello from AgentMail\n"
	})
	waitFor("the demo's answer in the inbox", func() bool {
		return strings.Contains(run("./agentmail inbox", ""), "Re: Hello")
	})
}

// readmeShellLines answers the lines of the ```sh blocks of the README section
// that starts with heading, without their trailing comments (two spaces and #).
func readmeShellLines(t *testing.T, readme, heading string) []string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading)
	if i < 0 {
		t.Fatalf("README has no section %q", heading)
	}
	section := readme[i+1:]
	if j := strings.Index(section[len(heading):], "\n#"); j >= 0 {
		section = section[:len(heading)+j]
	}
	var out []string
	in := false
	for _, l := range strings.Split(section, "\n") {
		switch {
		case l == "```sh":
			in = true
		case l == "```":
			in = false
		case in:
			if k := strings.Index(l, "  #"); k >= 0 {
				l = l[:k]
			}
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}
