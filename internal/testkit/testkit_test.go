package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// The binary links no test code: neither the testing packages nor any test rig of
// internal/testkit reach cmd/agentmail.
func TestTheBinaryLinksNoTestCode(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/agentmail")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/agentmail: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps ./cmd/agentmail listed only %v", deps)
	}
	for _, p := range deps {
		if p == "testing" || strings.HasPrefix(p, "testing/") || p == "net/http/httptest" ||
			strings.HasPrefix(p, "github.com/agentmail/agentmail/internal/testkit") {
			t.Errorf("cmd/agentmail links %s, a package for tests", p)
		}
	}
}

func TestLogCountsOccurrencesAndLines(t *testing.T) {
	var l Log
	l.Write([]byte("a caught up a\nb\n"))
	l.Write([]byte("caught up again\n"))
	if n := l.Count("caught up"); n != 2 {
		t.Errorf("Count = %d, want 2", n)
	}
	if n := l.Count("a"); n != 6 {
		t.Errorf("Count(a) = %d, want 6", n)
	}
	if n := l.CountLines("a"); n != 2 {
		t.Errorf("CountLines(a) = %d, want 2", n)
	}
	if got := l.Tail(6); got != "…again\n" {
		t.Errorf("Tail(6) = %q", got)
	}
}
