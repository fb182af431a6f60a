package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
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
