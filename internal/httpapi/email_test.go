package httpapi_test

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// A gateway without a relay keeps its old behaviour: GET /me says email is
// unavailable (default preference), and the email routes answer 503
// email_unavailable, storing nothing.
func TestEmailRoutesWithoutARelay(t *testing.T) {
	e := newEnv(t)
	me, err := e.admin.Me(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if me.EmailAvailable || me.Email != "" || me.EmailNotify != "permission" {
		t.Errorf("Me %+v", me)
	}
	addr := "admin@example.com"
	if _, err := e.admin.UpdateMe(e.ctx(), client.UpdateMeRequest{Email: &addr}); client.CodeOf(err) != "email_unavailable" {
		t.Errorf("PATCH /me without a relay: %v", err)
	}
	if _, err := e.admin.VerifyEmail(e.ctx(), client.VerifyEmailRequest{Code: "123456"}); client.CodeOf(err) != "email_unavailable" {
		t.Errorf("verify without a relay: %v", err)
	}
	if me, _ := e.admin.Me(e.ctx()); me.Email != "" || me.EmailPending != "" {
		t.Errorf("something was stored: %+v", me)
	}
}
