package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
