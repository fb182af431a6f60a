package bridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/fakeadapter"
)

// A bridge whose heartbeat learns that another bridge of the agent holds its lease
// now (it was not heard from for longer than the lease, and the other one took over
// and ended its runs) stops: Run returns an error that says so, and it sends no
// release of a lease it does not hold. A bridge that stops
// by itself releases its lease with one last heartbeat naming its instance.
func TestBridgeStopsWhenAnotherTookItsLeaseAndReleasesItOtherwise(t *testing.T) {
	gw := newFakeGateway("bot", "k")
	fake := fakeadapter.New()
	h := startBridge(t, gw, fake, nil)
	gw.mu.Lock()
	first := gw.beats[0].Instance
	gw.mu.Unlock()
	if first == nil || first.ID == "" || first.PID == 0 {
		t.Fatalf("the heartbeat names no instance: %+v", first)
	}
	h.stop()
	gw.mu.Lock()
	last := gw.beats[len(gw.beats)-1]
	gw.mu.Unlock()
	if !last.Release || last.Instance == nil || last.Instance.ID != first.ID {
		t.Fatalf("the last heartbeat of a bridge that stops = %+v, want a release of instance %s", last, first.ID)
	}

	gw2 := newFakeGateway("bot", "k")
	h2 := startBridge(t, gw2, fakeadapter.New(), nil)
	gw2.mu.Lock()
	gw2.beatErr = &client.APIError{Status: 409, Body: client.ErrorBody{Code: client.CodeBridgeInstanceConflict,
		Error: `another bridge of agent "bot" is running: it connected from host "laptop"`}}
	beats := len(gw2.beats)
	gw2.mu.Unlock()
	h2.timers.waitFire(t, testBeat)
	select {
	case err := <-h2.done:
		if err == nil || !strings.Contains(err.Error(), "another bridge of this agent took over") || !strings.Contains(err.Error(), `host "laptop"`) {
			t.Fatalf("Run returned %v, want the take-over named", err)
		}
		h2.done <- nil
	case <-time.After(wait):
		t.Fatalf("the bridge did not stop after its lease was taken\n%s", h2.logs)
	}
	gw2.mu.Lock()
	defer gw2.mu.Unlock()
	for _, b := range gw2.beats[beats:] {
		if b.Release {
			t.Fatal("a bridge whose lease was taken released it")
		}
	}
}
