package e2e

import (
	"net"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// One set of variables for every command (issue 18 points 6 and 7): the
// CLI takes AGENTMAIL_GATEWAY_URL and AGENTMAIL_USER_KEY without a login,
// still reads the old AGENTMAIL_URL with a note, and a gateway it cannot
// reach is named with what to check.
func TestCLIVariablesAndUnreachableGateway(t *testing.T) {
	gw := startGateway(t, t.TempDir())
	ctx := ctxT(t)
	admin := client.New(gw.URL, client.WithHTTPClient(CheckedHTTPClient(t)))
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("admin login: %v\n%s", err, gw.Log.String())
	}
	key, err := admin.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "env", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	userKey := "AGENTMAIL_USER_KEY=" + key.KeyToken

	r := runCLIEnv(t, home, []string{userKey, "AGENTMAIL_GATEWAY_URL=" + gw.URL}, "", "inbox")
	if r.code != 0 || strings.Contains(r.stderr, "note:") {
		t.Fatalf("inbox with AGENTMAIL_GATEWAY_URL and AGENTMAIL_USER_KEY: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLIEnv(t, home, []string{userKey, "AGENTMAIL_URL=" + gw.URL}, "", "inbox")
	if r.code != 0 || strings.Count(r.stderr, "AGENTMAIL_URL is the old name of AGENTMAIL_GATEWAY_URL") != 1 {
		t.Fatalf("inbox with the old AGENTMAIL_URL: exit %d, stderr %q", r.code, r.stderr)
	}

	// A port nobody listens on any more.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	r = runCLIEnv(t, home, []string{userKey, "AGENTMAIL_GATEWAY_URL=" + closed}, "", "inbox")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot reach the gateway at "+closed) ||
		!strings.Contains(r.stderr, "AGENTMAIL_GATEWAY_URL") || strings.Contains(r.stderr, "dial tcp") {
		t.Fatalf("inbox with the gateway down: exit %d, stderr %q", r.code, r.stderr)
	}
}
