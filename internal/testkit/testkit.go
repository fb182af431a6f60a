// Package testkit holds what AgentMail's test rigs share: a goroutine-safe log buffer for
// a process's output or a logger, and the repository root. Its subpackages are the rigs
// themselves:
//
//   - gatewayproc: the agentmail binary built once per test process, `agentmail serve`
//     started and its address read, any other subcommand as a process;
//   - scriptedmodel: the scripted model server the real platforms talk to;
//   - platforms: the installed platforms and an isolated environment for them;
//   - mailrig: gateway, scripted model and `agentmail bridge --platform NAME` as processes,
//     with the admin person's mailbox, for the mail-level tests of every platform;
//   - fakeadapter: an in-process platform for tests of the bridge core;
//   - adaptertest: helpers of the adapter tests that run one platform in-process.
//
// Only tests import these packages; `go list -deps ./cmd/agentmail` lists none of them.
package testkit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Log is a goroutine-safe buffer for a process's stderr or a logger's output. The zero
// value is ready to use.
type Log struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p; it never fails.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Count counts the occurrences of substr.
func (l *Log) Count(substr string) int { return strings.Count(l.String(), substr) }

// CountLines counts the lines that contain substr (a line with it twice counts once).
func (l *Log) CountLines(substr string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

// Tail returns at most the last n bytes, with "…" in front when it cut.
func (l *Log) Tail(n int) string {
	s := l.String()
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// RepoRoot returns the folder holding go.mod, searched upwards from the working directory
// (a test runs in its package's folder).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testkit: no go.mod above the working directory; run tests inside the repository")
		}
		dir = parent
	}
}
