package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// The agent's bridge lease: the instance that registered first holds it while its
// heartbeats come; another instance is refused on register, heartbeat and the runs
// listing (409 bridge_instance_conflict naming the holder's host, process and
// connection time), and so is an older bridge (no instance) on register and the
// listing, while its heartbeat is answered as before. The lease passes to another
// instance once the holder was silent longer than the online time, at once when
// the registration replaces the holder (the holder then is the refused one), and
// at once when the holder releases it.
func TestBridgeLeaseRefusesASecondInstanceUntilItExpiresOrIsReplaced(t *testing.T) {
	e := newEnv(t)
	dsh := e.agent("dsh") // registered without an instance: no lease yet
	a := &client.BridgeInstance{ID: "inst-a", Host: "build-1", PID: 4242}
	b := &client.BridgeInstance{ID: "inst-b", Host: "laptop", PID: 77}
	reg := func(in *client.BridgeInstance, replaces string) error {
		_, err := dsh.Register(e.ctx(), client.RegisterRequest{Platform: "test", Instance: in, Replaces: replaces})
		return err
	}
	beat := func(in *client.BridgeInstance) error {
		_, err := dsh.Heartbeat(e.ctx(), client.HeartbeatRequest{Instance: in})
		return err
	}
	if err := reg(a, ""); err != nil {
		t.Fatal(err)
	}
	since := "at 2026-09-02T10:00:00Z" // when the holder connected
	conflict := func(what string, err error) {
		t.Helper()
		ae := wantStatus(t, err, 409, client.CodeBridgeInstanceConflict)
		for _, want := range []string{`host "build-1"`, "process 4242", "connected from", since} {
			if !strings.Contains(ae.Body.Error, want) {
				t.Errorf("%s: message %q lacks %q", what, ae.Body.Error, want)
			}
		}
		if !strings.Contains(ae.Body.Suggestion, "stop the other bridge") {
			t.Errorf("%s: suggestion %q says not what to do", what, ae.Body.Suggestion)
		}
	}
	conflict("register", reg(b, ""))
	conflict("register replacing an instance that does not hold it", reg(b, "inst-x"))
	conflict("heartbeat", beat(b))
	_, err := dsh.OpenRuns(e.ctx(), "inst-b")
	conflict("runs", err)
	conflict("an older bridge's register", reg(nil, ""))
	_, err = dsh.OpenRuns(e.ctx(), "")
	conflict("an older bridge's runs", err)
	if err := beat(nil); err != nil {
		t.Fatalf("an older bridge's heartbeat: %v, want it answered as before", err)
	}
	if _, err := dsh.OpenRuns(e.ctx(), "inst-a"); err != nil {
		t.Fatalf("the holder's runs: %v", err)
	}

	// Heartbeats keep the lease past the online time; silence lets it go.
	e.clock.Advance(gateway.DefaultOnlineWithin - 1)
	if err := beat(a); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(gateway.DefaultOnlineWithin - 1)
	conflict("register after a renewal", reg(b, ""))
	e.clock.Advance(2)
	if err := reg(b, ""); err != nil {
		t.Fatalf("register after the holder's lease expired: %v", err)
	}
	ae := wantStatus(t, beat(a), 409, client.CodeBridgeInstanceConflict)
	if !strings.Contains(ae.Body.Error, `host "laptop"`) {
		t.Fatalf("the former holder's heartbeat: %q, want it to name the new holder", ae.Body.Error)
	}
	// A restart on the holder's host replaces its ended instance at once.
	if err := reg(a, "inst-b"); err != nil {
		t.Fatalf("register replacing the holder: %v", err)
	}
	if err := beat(b); err == nil {
		t.Fatal("the replaced instance's heartbeat was answered")
	}
	// A bridge that stops releases its lease: the next one connects at once.
	if _, err := dsh.Heartbeat(e.ctx(), client.HeartbeatRequest{Instance: b, Release: true}); err != nil {
		t.Fatal(err)
	}
	since = "at " + e.clock.Now().UTC().Format(time.RFC3339)
	conflict("register after a release by a non-holder", reg(b, ""))
	if _, err := dsh.Heartbeat(e.ctx(), client.HeartbeatRequest{Instance: a, Release: true}); err != nil {
		t.Fatal(err)
	}
	if err := reg(b, ""); err != nil {
		t.Fatalf("register after the holder released its lease: %v", err)
	}
	_, err = dsh.Heartbeat(e.ctx(), client.HeartbeatRequest{Release: true})
	wantStatus(t, err, 400, "")

	for field, in := range map[string]*client.BridgeInstance{
		"instance.id":    {ID: "no spaces"},
		"instance.id ":   {ID: strings.Repeat("x", client.MaxInstanceID+1)},
		"instance.host":  {ID: "ok", Host: "a\nb"},
		"instance.host ": {ID: "ok", Host: "build-\u202e1"},
		"instance.pid":   {ID: "ok", PID: -1},
	} {
		if ae := wantStatus(t, reg(in, ""), 400, ""); ae.Body.Field != strings.TrimSpace(field) {
			t.Errorf("%q: field %q", field, ae.Body.Field)
		}
	}
}
