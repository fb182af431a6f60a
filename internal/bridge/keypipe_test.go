package bridge_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmail/agentmail/internal/bridge"
)

func TestReexecWithoutKeyDoesNothingWithoutAKeyInTheEnvironment(t *testing.T) {
	// With a key this would replace the test binary; without one it returns at once.
	for _, env := range [][]string{{"PATH=/bin"}, {"PATH=/bin", "AGENTMAIL_AGENT_KEY="}, {"AGENTMAIL_AGENT_KEY=   "}} {
		if err := bridge.ReexecWithoutKey(os.Args, env); err != nil {
			t.Errorf("environment %v: %v", env, err)
		}
	}
}

func TestKeyFromPipeReadsAndClosesTheInheritedDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("amk_from_the_pipe\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// A copy the test does not own, as the re-executed bridge has it.
	n, err := syscall.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	fd := strconv.Itoa(n)
	key, err := bridge.KeyFromPipe(func(k string) string {
		if k == bridge.KeyFDEnv {
			return fd
		}
		return ""
	})
	if err != nil || key != "amk_from_the_pipe" {
		t.Fatalf("KeyFromPipe = %q, %v", key, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(n, &st); err == nil {
		t.Error("the key descriptor is still open after reading the key")
	}

	if key, err := bridge.KeyFromPipe(func(string) string { return "" }); key != "" || err != nil {
		t.Errorf("without %s: %q, %v; want nothing", bridge.KeyFDEnv, key, err)
	}
	for _, bad := range []string{"x", "0", "2", "-1"} {
		if _, err := bridge.KeyFromPipe(func(string) string { return bad }); err == nil || !strings.Contains(err.Error(), bridge.KeyFDEnv) {
			t.Errorf("%s=%s: err %v, want one naming the variable", bridge.KeyFDEnv, bad, err)
		}
	}
}
