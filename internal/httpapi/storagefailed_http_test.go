package httpapi_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// Once an fsync of the SQLite write-ahead log failed, a send answers 503
// storage_failed in plain words (not 507 "nothing was stored": the write
// may have been kept), every later send is refused the same way although
// the disk answers again, reads still work, and /readyz answers 503.
func TestFailedWALFlushRefusesWritesAndFailsReadiness(t *testing.T) {
	if storetest.Postgres() {
		t.Skip("the WAL syncer is SQLite's (synchronous=full)")
	}
	e := newEnv(t)
	alice := e.person("alice")
	e.person("bob")
	send := func(subject string) error {
		_, err := alice.MeSend(e.ctx(), client.SendMailRequest{To: "bob", Subject: subject, Body: "b"})
		return err
	}
	if err := send("before"); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := e.raw("GET", "/readyz", "", ""); code != 200 {
		t.Fatalf("/readyz before the failure: %d %s", code, body)
	}
	e.st.FailWALFlushesForTest(syscall.ENOSPC) // a flush may fail as a full disk, too
	refused := func(what string, err error) {
		t.Helper()
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != 503 || ae.Body.Code != "storage_failed" {
			t.Fatalf("%s answered %v, want 503 storage_failed", what, err)
		}
		if !strings.Contains(ae.Body.Suggestion, "restart") || strings.Contains(ae.Body.Error, "/api/") {
			t.Errorf("%s: %q / %q", what, ae.Body.Error, ae.Body.Suggestion)
		}
	}
	refused("the send whose flush failed", send("failed"))
	e.st.FailWALFlushesForTest(nil)
	refused("a send after the failed flush", send("after"))
	if code, body, _ := e.raw("GET", "/readyz", "", ""); code != 503 || !strings.Contains(body, "storage failed") {
		t.Fatalf("/readyz after the failure: %d %s, want 503 storage failed", code, body)
	}
	if _, err := alice.Me(e.ctx()); err != nil {
		t.Fatalf("a read after the failure: %v", err)
	}
}
