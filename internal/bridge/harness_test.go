package bridge_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/testkit"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
)

// wait is the generous deadline of every condition a test waits on.
const wait = 30 * time.Second

// timers is an injectable timer source: nothing fires until the test says
// so, so no test depends on how fast the machine is.
type timers struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []manualTimer
}

type manualTimer struct {
	d  time.Duration
	ch chan time.Time
}

func newTimers() *timers {
	t := &timers{}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *timers) After(d time.Duration) <-chan time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan time.Time, 1)
	t.pending = append(t.pending, manualTimer{d, ch})
	t.cond.Broadcast()
	return ch
}

// fire fires every pending timer of duration d and reports how many.
func (t *timers) fire(d time.Duration) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	kept := t.pending[:0]
	for _, p := range t.pending {
		if p.d == d {
			p.ch <- time.Now()
			n++
			continue
		}
		kept = append(kept, p)
	}
	t.pending = kept
	return n
}

// waitFire waits until a timer of duration d is pending, then fires it.
func (t *timers) waitFire(tb testing.TB, d time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if t.fire(d) > 0 {
			return
		}
		t.mu.Lock()
		w := time.AfterFunc(50*time.Millisecond, func() { t.mu.Lock(); t.cond.Broadcast(); t.mu.Unlock() })
		t.cond.Wait()
		w.Stop()
		t.mu.Unlock()
	}
	tb.Fatalf("no timer of %v became pending", d)
}

const (
	testBeat    = 30 * time.Second
	testVerdict = 60 * time.Second
	testRetry   = time.Second
)

// harness runs one Bridge against a fake gateway and a fake platform.
type harness struct {
	t      *testing.T
	gw     *fakeGateway
	fake   *fakeadapter.Fake
	logs   *testkit.Log
	timers *timers
	b      *bridge.Bridge
	cancel context.CancelFunc
	done   chan error
}

// startBridge starts a bridge; mod may change the configuration.
func startBridge(t *testing.T, gw *fakeGateway, fake *fakeadapter.Fake, mod func(*bridge.Config)) *harness {
	t.Helper()
	h := &harness{t: t, gw: gw, fake: fake, logs: &testkit.Log{}, timers: newTimers(), done: make(chan error, 1)}
	cfg := bridge.Config{
		Adapter:           fake,
		Gateway:           gw,
		Subscribe:         gw.Subscribe,
		Settings:          bridge.Settings{GatewayURL: "http://gateway.test", AgentKey: gw.key, Tier: bridge.TierWorkspace},
		HeartbeatInterval: testBeat,
		VerdictTimeout:    testVerdict,
		ReconnectMin:      testRetry,
		ReconnectMax:      testRetry,
		After:             h.timers.After,
		Logger:            slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mod != nil {
		mod(&cfg)
	}
	b, err := bridge.New(cfg)
	if err != nil {
		t.Fatalf("bridge.New: %v", err)
	}
	h.b = b
	gw.mu.Lock()
	subs, beats := len(gw.subscribe), len(gw.beats)
	gw.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- b.Run(ctx) }()
	select {
	case <-b.Ready():
	case err := <-h.done:
		t.Fatalf("bridge stopped at start: %v\n%s", err, h.logs)
	case <-time.After(wait):
		t.Fatalf("bridge not ready\n%s", h.logs)
	}
	t.Cleanup(func() { h.stop() })
	h.waitGW("the first subscription and heartbeat", func() bool {
		return len(gw.subscribe) > subs && len(gw.beats) > beats
	})
	return h
}

// stop shuts the bridge down and waits for Run to return.
func (h *harness) stop() {
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(wait):
		h.t.Fatalf("bridge did not stop\n%s", h.logs)
	}
	h.done <- nil // later stops return at once
}

// waitGW waits for a condition on the fake gateway (called locked).
func (h *harness) waitGW(what string, cond func() bool) {
	h.t.Helper()
	if !h.gw.waitFor(wait, cond) {
		h.t.Fatalf("timed out waiting for %s\nlog:\n%s", what, h.logs)
	}
}

// waitTurns waits for a condition on the fake platform's turns.
func (h *harness) waitTurns(what string, cond func([]fakeadapter.Turn) bool) {
	h.t.Helper()
	if !h.fake.WaitFor(wait, cond) {
		h.t.Fatalf("timed out waiting for %s\nlog:\n%s", what, h.logs)
	}
}

// waitLog waits until a log line containing substr appears n times.
func (h *harness) waitLog(substr string, n int) {
	h.t.Helper()
	deadline := time.Now().Add(wait)
	for h.logs.CountLines(substr) < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %d log lines with %q\nlog:\n%s", n, substr, h.logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// turnsDone counts finished turns.
func turnsDone(n int) func([]fakeadapter.Turn) bool {
	return func(ts []fakeadapter.Turn) bool {
		c := 0
		for _, t := range ts {
			if t.Done {
				c++
			}
		}
		return c >= n
	}
}

// workdir makes an existing absolute directory for mails to address.
func workdir(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
