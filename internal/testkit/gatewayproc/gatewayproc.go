// Package gatewayproc runs the real agentmail binary as processes for tests: Binary builds
// cmd/agentmail once per test process, Serve starts `agentmail serve` and waits for its
// address and /readyz, Start runs any other subcommand (`bridge`, `mcp`, …). Every process
// writes its stderr into a testkit.Log and is stopped when its test ends.
package gatewayproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit"
)

// BinaryEnv names an agentmail binary to use instead of building one (for example a build
// of the last commit while the working tree is half-changed).
const BinaryEnv = "AGENTMAIL_TEST_BIN"

// StopWait bounds how long a process may take to exit after SIGTERM before it is killed.
const StopWait = 30 * time.Second

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Binary builds cmd/agentmail once per test process into a fresh temporary directory and
// returns its path, or returns the binary BinaryEnv names. A failed build fails t.
func Binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv(BinaryEnv); b != "" {
		return b
	}
	buildOnce.Do(func() {
		root, err := testkit.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		if buildDir, err = os.MkdirTemp("", "agentmail-test-bin-"); err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(buildDir, "agentmail")
		cmd := exec.Command("go", "build", "-o", buildBin, "./cmd/agentmail")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/agentmail: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("gatewayproc: %v", buildErr)
	}
	return buildBin
}

// RemoveBuild deletes what Binary built; call it from TestMain after m.Run.
func RemoveBuild() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Main runs the tests and removes the build: `func TestMain(m *testing.M) { os.Exit(gatewayproc.Main(m)) }`.
func Main(m *testing.M) int {
	code := m.Run()
	RemoveBuild()
	return code
}

// Options describe one process of the binary.
type Options struct {
	Bin  string   // the executable; "" is Binary(t)
	Args []string // the subcommand and its flags
	// Env is added to the test's own environment, or is the whole environment when Clean.
	Env   []string
	Clean bool
	Dir   string // working directory; "" is the test's
	// Group starts the process in its own process group, so that a kill reaches the
	// platform processes it started too.
	Group bool
	// StopWait bounds the stop at the end of the test; StopWait (the constant) when 0.
	StopWait time.Duration
	// CheckExit makes the stop at the end of the test fail it when the process exits with
	// an error after SIGTERM; without it only a process that had to be killed fails it.
	CheckExit bool
}

// Proc is one running process of the binary.
type Proc struct {
	Cmd *exec.Cmd
	Log *testkit.Log // stderr

	exited chan struct{}
	err    error
}

// Start starts the process and registers a cleanup that stops it (SIGTERM, then SIGKILL
// after o.StopWait with an error on t; see o.CheckExit). It fails t when the process
// cannot start.
func Start(t testing.TB, o Options) *Proc {
	t.Helper()
	bin := o.Bin
	if bin == "" {
		bin = Binary(t)
	}
	p := &Proc{Cmd: exec.Command(bin, o.Args...), Log: &testkit.Log{}, exited: make(chan struct{})}
	if o.Clean {
		p.Cmd.Env = append([]string{}, o.Env...)
	} else {
		p.Cmd.Env = append(os.Environ(), o.Env...)
	}
	p.Cmd.Dir = o.Dir
	p.Cmd.Stdout = io.Discard
	p.Cmd.Stderr = p.Log
	if o.Group {
		p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := p.Cmd.Start(); err != nil {
		t.Fatalf("gatewayproc: starting %s %v: %v", filepath.Base(bin), o.Args, err)
	}
	go func() {
		p.err = p.Cmd.Wait()
		close(p.exited)
	}()
	wait := o.StopWait
	if wait == 0 {
		wait = StopWait
	}
	t.Cleanup(func() {
		if err := p.Stop(wait); errors.Is(err, ErrNoStop) || (err != nil && o.CheckExit) {
			t.Errorf("%s %v after SIGTERM: %v\n%s", filepath.Base(bin), o.Args, err, p.Log.Tail(6000))
		}
	})
	return p
}

// PID is the process id (of the group leader when Options.Group was set).
func (p *Proc) PID() int { return p.Cmd.Process.Pid }

// ErrNoStop is Stop's error when the process outlived SIGTERM and was killed.
var ErrNoStop = errors.New("did not stop on SIGTERM and was killed")

// Exited is closed when the process has ended.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is the exit error (nil for exit status 0); valid once Exited is closed.
func (p *Proc) Err() error { return p.err }

// Running reports whether the process has not ended yet.
func (p *Proc) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// WaitExit waits up to d for the process to end and returns its exit error; ok is false
// when it still runs.
func (p *Proc) WaitExit(d time.Duration) (err error, ok bool) {
	select {
	case <-p.exited:
		return p.err, true
	case <-time.After(d):
		return nil, false
	}
}

// Stop sends SIGTERM and waits up to d. It returns the exit error, or ErrNoStop after
// killing a process (and its group) that did not end in time. A process that has ended
// already returns nil, so Stop is safe to call twice.
func (p *Proc) Stop(d time.Duration) error {
	if !p.Running() {
		return nil
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	if err, ok := p.WaitExit(d); ok {
		return err
	}
	if p.Cmd.SysProcAttr != nil && p.Cmd.SysProcAttr.Setpgid {
		_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	} else {
		_ = p.Cmd.Process.Kill()
	}
	<-p.exited
	return ErrNoStop
}

// WaitLog waits up to d for substr in the log; false when it did not come.
func (p *Proc) WaitLog(substr string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for p.Log.Count(substr) == 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// Gateway is a running `agentmail serve`.
type Gateway struct {
	*Proc
	URL string // http://127.0.0.1:PORT, from the "agentmail gateway on" line
}

var listenLine = regexp.MustCompile(`agentmail gateway on (http://\S+)`)

// Serve starts `agentmail serve` followed by o.Args and waits until it prints its address
// (60 s) and /readyz answers (30 s); either failing fails t with the gateway's log. The test chooses the listen
// address, data directory and admin (flags or AGENTMAIL_* variables), so each start says
// what it configures; it should listen on 127.0.0.1:0.
func Serve(t testing.TB, o Options) *Gateway {
	t.Helper()
	o.Args = append([]string{"serve"}, o.Args...)
	g := &Gateway{Proc: Start(t, o)}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := listenLine.FindStringSubmatch(g.Log.String()); m != nil {
			g.URL = m[1]
			break
		}
		if !g.Running() {
			t.Fatalf("the gateway exited at start: %v\n%s", g.Err(), g.Log)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not print its address within 60 s\n%s", g.Log)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := client.New(g.URL)
	deadline = time.Now().Add(30 * time.Second)
	for c.Ready(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway's /readyz was not ready within 30 s\n%s", g.Log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return g
}

// Shutdown ends the gateway with SIGTERM and fails t unless it exits with status 0 within
// StopWait.
func (g *Gateway) Shutdown(t testing.TB) {
	t.Helper()
	if err := g.Proc.Stop(StopWait); err != nil {
		t.Fatalf("the gateway after SIGTERM: %v\n%s", err, g.Log)
	}
}
