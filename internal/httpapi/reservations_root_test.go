package httpapi_test

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// Anybody may open a session in any directory with any agent: a person
// whose only sessions are rooted at "/" (or directly under it), or opened
// at the workspace itself with an agent that does not work there (delta
// registered nothing, gamma another directory), does not see, check or
// release the reservations other agents hold in it, and an agent in a
// session at the top cannot list them either; a person in a session with
// an agent that registered the workspace still sees and releases them.
func TestASessionReachesReservationsOnlyThroughAnAgentThatWorksThere(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	mallory := e.person("mallory")
	beta := e.agent("beta")
	e.agent("delta") // registered nowhere
	gamma := e.agent("gamma")
	if _, err := gamma.Register(e.ctx(), client.RegisterRequest{Name: "gamma", Platform: "test",
		Workspaces: []client.Workspace{{Name: "other", Path: "/w/other"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "work", Body: "go"}); err != nil {
		t.Fatal(err)
	}
	held := reserve(t, e, alpha, true, "refactor", "main.go")
	if len(held.Granted) != 1 {
		t.Fatalf("reserve = %+v", held)
	}
	id := held.Granted[0].ReservationID
	for _, to := range []string{"beta@/.new", "beta@/w.new", "delta@" + coRepo + ".new", "gamma@" + coRepo + ".new"} {
		if _, err := mallory.MeSend(e.ctx(), client.SendMailRequest{To: to, Subject: "hi", Body: "x"}); err != nil {
			t.Fatalf("mallory writes to %s: %v", to, err)
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

	dave := e.person("dave")
	if _, err := dave.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "review", Body: "look"}); err != nil {
		t.Fatal(err)
	}
	if l, err := dave.MeReservations(e.ctx(), coRepo); err != nil || len(l.Reservations) != 1 {
		t.Fatalf("dave's reservations = %+v, %v; want alpha's one", l, err)
	}
	if c, err := carol.MeCheckReservations(e.ctx(), client.ReservationCheckRequest{Workspace: coRepo, Paths: []string{"main.go"}}); err != nil || len(c.Blocking) != 1 {
		t.Fatalf("carol's check = %+v, %v; want alpha's one blocking", c, err)
	}

	if l, err := carol.MeReservations(e.ctx(), coRepo); err != nil || len(l.Reservations) != 1 {
		t.Fatalf("carol's reservations = %+v, %v; want alpha's one", l, err)
	}
	if err := carol.MeReleaseReservation(e.ctx(), id); err != nil {
		t.Fatalf("carol releases: %v", err)
	}
}

// An agent run by a bridge registers no workspace; it shows that it works at a session's
// directory by working in that very session: a reservation taken in it, or an answer there
// (a failure report does not count). A person whose session with it shows neither sees
// nothing of the workspace's reservations.
func TestABridgeAgentShowsItsPeopleTheReservationsWhereItWorks(t *testing.T) {
	e := newEnv(t)
	bravo := e.agent("bravo") // registered nowhere, like an agent run by a bridge
	carol := e.person("carol")
	mallory := e.person("mallory")
	work, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "bravo@" + coRepo + ".new", Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	probe, err := mallory.MeSend(e.ctx(), client.SendMailRequest{To: "bravo@" + coRepo + ".new", Subject: "hi", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	sees := func(c *client.Client) int {
		t.Helper()
		l, err := c.MeReservations(e.ctx(), "")
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Reservations)
	}
	if n := sees(carol); n != 0 {
		t.Fatalf("carol sees %d reservations before any was taken", n)
	}
	res, err := bravo.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"main.go"}, SessionID: work.SessionID, Reason: "refactor"})
	if err != nil || len(res.Granted) != 1 {
		t.Fatalf("bravo reserves in carol's session = %+v, %v", res, err)
	}
	if n := sees(carol); n != 1 {
		t.Errorf("carol sees %d reservations; want bravo's one, taken in her session", n)
	}
	if n := sees(mallory); n != 0 {
		t.Errorf("mallory sees %d reservations; want none: bravo neither answered nor reserved in her session", n)
	}
	_, err = mallory.MeReservations(e.ctx(), coRepo)
	wantStatus(t, err, 404, "workspace_not_found")
	if _, err := bravo.SendMail(e.ctx(), client.SendMailRequest{To: "mallory", ReplyTo: probe.MailID, Subject: "re: hi",
		Body: "could not start", MailType: client.MailTypeFailureReport}); err != nil {
		t.Fatal(err)
	}
	if n := sees(mallory); n != 0 {
		t.Errorf("after a failure report mallory sees %d reservations; want none", n)
	}
	if _, err := bravo.SendMail(e.ctx(), client.SendMailRequest{To: "mallory", ReplyTo: probe.MailID, Subject: "re: hi", Body: "hello"}); err != nil {
		t.Fatal(err)
	}
	if n := sees(mallory); n != 1 {
		t.Errorf("after bravo answered in her session mallory sees %d reservations; want bravo's one", n)
	}
}
