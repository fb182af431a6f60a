package httpapi_test

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// Anybody may open a session in any directory, "/" included: a person whose
// only session is rooted at "/" (or directly under it) does not see,
// check or release the reservations other agents hold in their
// workspaces, and an agent in that session cannot list them either; a
// person who works in the workspace still sees and releases them.
func TestASessionRootedAtTheTopDoesNotReachOtherReservations(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	mallory := e.person("mallory")
	beta := e.agent("beta")
	if _, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "work", Body: "go"}); err != nil {
		t.Fatal(err)
	}
	held := reserve(t, e, alpha, true, "refactor", "main.go")
	if len(held.Granted) != 1 {
		t.Fatalf("reserve = %+v", held)
	}
	id := held.Granted[0].ReservationID
	for _, top := range []string{"/", "/w"} {
		if _, err := mallory.MeSend(e.ctx(), client.SendMailRequest{To: "beta@" + top + ".new", Subject: "hi " + top, Body: "x"}); err != nil {
			t.Fatalf("mallory opens a session at %s: %v", top, err)
		}
	}

	if l, err := mallory.MeReservations(e.ctx(), ""); err != nil || len(l.Reservations) != 0 {
		t.Errorf("mallory's reservations = %+v, %v; want none", l, err)
	}
	_, err := mallory.MeReservations(e.ctx(), coRepo)
	wantStatus(t, err, 404, "workspace_not_found")
	if c, err := mallory.MeCheckReservations(e.ctx(), client.ReservationCheckRequest{Workspace: coRepo, Paths: []string{"main.go"}}); err != nil || len(c.Blocking) != 0 {
		t.Errorf("mallory's check = %+v, %v; want nothing blocking", c, err)
	}
	wantStatus(t, mallory.MeReleaseReservation(e.ctx(), id), 404, "reservation_not_found")
	_, err = beta.Reservations(e.ctx(), coRepo)
	wantStatus(t, err, 404, "workspace_not_found")

	if l, err := carol.MeReservations(e.ctx(), coRepo); err != nil || len(l.Reservations) != 1 {
		t.Fatalf("carol's reservations = %+v, %v; want alpha's one", l, err)
	}
	if err := carol.MeReleaseReservation(e.ctx(), id); err != nil {
		t.Fatalf("carol releases: %v", err)
	}
}
