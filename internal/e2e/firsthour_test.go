package e2e

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// A newcomer's first start (issue 18 point 11): `agentmail serve` on a busy
// port fails before it creates the data directory or an admin, so the
// generated admin password is not spent on a gateway that never ran, and
// the error says how to choose another port.
func TestServeOnBusyPortCreatesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	home := t.TempDir()
	dataDir := filepath.Join(home, "data")
	r := runCLIEnv(t, home, []string{"AGENTMAIL_ADDR=" + busy.Addr().String(), "AGENTMAIL_DATA_DIR=" + dataDir}, "", "serve")
	if r.code != 1 {
		t.Fatalf("serve on a busy port: exit %d, want 1\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"address already in use", "--addr", "AGENTMAIL_ADDR"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("serve on a busy port: stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "shown only this once") {
		t.Errorf("serve on a busy port printed an admin password:\n%s", r.stderr)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("serve on a busy port created the data directory %s (stat: %v)", dataDir, err)
	}
}

// ADMIN_PASSWORD on a data directory that already has accounts changes
// nothing; the gateway says so once instead of ignoring it silently.
func TestServeSaysAdminPasswordIsIgnored(t *testing.T) {
	dataDir := t.TempDir()
	gw := startGateway(t, dataDir)
	if strings.Contains(gw.Log.String(), "ADMIN_PASSWORD is set") {
		t.Fatalf("the first start created the admin, yet said ADMIN_PASSWORD is ignored:\n%s", gw.Log)
	}
	gw.Shutdown(t)
	gw = startGateway(t, dataDir)
	if !gw.WaitLog("ADMIN_PASSWORD is set but this data directory already has accounts", 10*time.Second) {
		t.Fatalf("the second start did not say ADMIN_PASSWORD changes nothing:\n%s", gw.Log)
	}
	if n := strings.Count(gw.Log.String(), "ADMIN_PASSWORD is set"); n != 1 {
		t.Fatalf("said %d times, want once:\n%s", n, gw.Log)
	}
}

// A newcomer's commands (issue 18 points 5, 9 and 13) over the real binary
// and gateway: --url without http://, --version, completion of --platform,
// a malformed request id is a usage error, an empty piped attachment is
// refused, a password changed from the command line, the suggestion for an
// agent that is not set up yet and for an unknown alias, and an empty
// Bearer token named as such.
func TestNewcomerCommands(t *testing.T) {
	gw := startGateway(t, t.TempDir())
	home := t.TempDir()
	host := strings.TrimPrefix(gw.URL, "http://")

	r := runCLI(t, home, "e2e-admin-password", "login", "--url", host, "--username", "admin", "--password-stdin")
	if r.code != 0 || !strings.Contains(r.stdout, "Logged in to "+gw.URL) {
		t.Fatalf("login --url %s: exit %d\n%s%s", host, r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, home, "x", "login", "--url", "ftp://"+host, "--username", "admin", "--password-stdin"); r.code != 2 ||
		!strings.Contains(r.stderr, "write it like http://127.0.0.1:8180") {
		t.Fatalf("login --url ftp://: exit %d, %q", r.code, r.stderr)
	}
	// The version names the build: a tagged version, or the revision, its
	// time and a modified tree, or that this build recorded none.
	if r = runCLI(t, home, "", "--version"); r.code != 0 || !regexp.MustCompile(
		`^agentmail version (v\d+\.\d+\.\d+\S*|devel [0-9a-f]{7}( \d{4}-\d\d-\d\dT\d\d:\d\dZ)?( \(modified\))?|devel \(no revision recorded in this build\))\n$`).MatchString(r.stdout) {
		t.Fatalf("--version: exit %d, %q", r.code, r.stdout)
	}
	if r = runCLI(t, home, "", "__complete", "bridge", "--platform", ""); r.code != 0 || !strings.Contains(r.stdout, "claude\n") || !strings.Contains(r.stdout, "opencode\n") ||
		!strings.Contains(r.stdout, "demo\n") {
		t.Fatalf("completion of --platform: exit %d, %q", r.code, r.stdout)
	}
	// Every people's command is a command of the binary (cli.Commands is the one list).
	for _, c := range []string{"runs", "stop", "search", "export", "passwd", "ack", "acks", "reservations", "guard"} {
		if r = runCLI(t, home, "", c, "--help"); r.code != 0 || !strings.Contains(r.stdout, "agentmail "+c+" ") {
			t.Errorf("%s --help: exit %d, %q", c, r.code, r.stderr)
		}
	}
	if r = runCLI(t, home, "", "runs"); r.code != 0 {
		t.Errorf("runs: exit %d, %q", r.code, r.stderr)
	}
	for _, c := range []string{"backup", "bench", "mcp", "completion", "passwd"} {
		if r = runCLI(t, home, "", c, "--help"); !strings.Contains(r.stdout, "Exit codes: 0") {
			t.Errorf("%s --help has no exit-code table:\n%s", c, r.stdout)
		}
	}
	if r = runCLI(t, home, "", "approve", "nonsense"); r.code != 2 || !strings.Contains(r.stderr, "is not a permission request id") {
		t.Fatalf("approve nonsense: exit %d, %q", r.code, r.stderr)
	}

	if r = runCLI(t, home, "", "send", "--to", "claude@srv/app.new", "--subject", "x", "--body", "y"); r.code != 2 ||
		!strings.Contains(r.stderr, `the path "srv/app" is not absolute`) || !strings.Contains(r.stderr, "claude@$PWD.new") {
		t.Fatalf("send to a relative path: exit %d, %q", r.code, r.stderr)
	}

	// An empty pipe is refused, and nothing is sent.
	if r = runCLI(t, home, "", "send", "--to", "admin", "--subject", "empty diff", "--body", "see diff", "--attach", "-"); r.code != 1 ||
		!strings.Contains(r.stderr, "stdin is empty, so nothing was sent") {
		t.Fatalf("send --attach - with an empty stdin: exit %d, %q", r.code, r.stderr)
	}
	if r = mustCLI(t, home, "", "inbox", "--json"); strings.Contains(r.stdout, "empty diff") {
		t.Fatalf("the mail was sent after all:\n%s", r.stdout)
	}

	// A mail to an agent that is not set up yet says how one is set up.
	dir := t.TempDir()
	r = runCLI(t, home, "", "send", "--to", "claude@"+dir+".new", "--subject", "hi", "--body", "hello")
	if r.code != 3 || !strings.Contains(r.stderr, `no person or agent named "claude"`) || !strings.Contains(r.stderr, "Admin → Agent keys") ||
		!strings.Contains(r.stderr, "agentmail bridge --platform") || strings.Contains(r.stderr, "/api/") {
		t.Fatalf("send to an agent without a key: exit %d, %q", r.code, r.stderr)
	}
	// An unknown alias: the suggestion reads "writing .new", not "writing.new".
	admin := client.New(gw.URL, client.WithCookieJar())
	if _, err := admin.Login(ctxT(t), client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatal(err)
	}
	ak, err := admin.CreateAgentKey(ctxT(t), client.CreateAgentKeyRequest{AgentName: "bot", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(gw.URL, client.WithToken(ak.KeyToken)).Register(ctxT(t), client.RegisterRequest{Name: "bot", Platform: "claude", Workspaces: []client.Workspace{}}); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, home, "", "send", "--to", "bot@"+dir+".nosuch", "--subject", "hi", "--body", "hello")
	if r.code != 3 || !strings.Contains(r.stderr, "writing .new instead") || strings.Contains(r.stderr, "/api/") || strings.Contains(r.stderr, "(N-") {
		t.Fatalf("send to an unknown alias: exit %d, %q", r.code, r.stderr)
	}
	// An unknown name: no endpoint or rule either (there is no command for GET /contacts).
	r = runCLI(t, home, "", "send", "--to", "nobody-here", "--subject", "hi", "--body", "hello")
	if r.code != 3 || !strings.Contains(r.stderr, `no person or agent named "nobody-here"`) || strings.Contains(r.stderr, "/api/") ||
		strings.Contains(r.stderr, "GET ") || regexp.MustCompile(`\b[A-Z]-\d`).MatchString(r.stderr) {
		t.Fatalf("send to an unknown name: exit %d, %q", r.code, r.stderr)
	}

	// An empty Bearer token is named as such.
	req, _ := http.NewRequest(http.MethodGet, gw.URL+"/api/v1/me/counts", nil)
	req.Header.Set("Authorization", "Bearer ")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 401 || !strings.Contains(string(body), "empty_bearer_token") || !strings.Contains(string(body), "carries no key") {
		t.Fatalf("empty Bearer: %d %s", res.StatusCode, body)
	}

	// The password changes from the command line; the new one signs in.
	if r = runCLI(t, home, "e2e-admin-password\nnew-admin-password-1\n", "passwd", "--password-stdin"); r.code != 0 || !strings.Contains(r.stdout, "Password changed for admin") {
		t.Fatalf("passwd: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := client.New(gw.URL, client.WithCookieJar()).Login(ctxT(t), client.LoginRequest{Username: "admin", Password: "new-admin-password-1"}); err != nil {
		t.Fatalf("sign-in with the new password: %v", err)
	}
	if r = runCLI(t, home, "wrong\nanother-password-1\n", "passwd", "--password-stdin"); r.code == 0 ||
		!strings.Contains(r.stderr, "the current password is wrong") || strings.Contains(r.stderr, "current_password") {
		t.Fatalf("passwd with a wrong current password: exit %d, %q", r.code, r.stderr)
	}
}
