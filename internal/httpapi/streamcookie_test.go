package httpapi_test

import (
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpapi"
)

// An event stream opened with a cookie carries the person's new mail
// (subjects, senders), permission requests and decisions, so it must end
// with the sign-in it was opened with: at once when that cookie signs out,
// and at the next heartbeat when the cookie session was ended otherwise (a
// password change ends the person's other sign-ins) or the account was
// disabled. Before, such a stream went on delivering every event for as
// long as the connection lived.
func TestCookieStreamsEndWithTheirSignIn(t *testing.T) {
	t.Run("SignOut", func(t *testing.T) {
		e := newEnvWith(t, httpapi.Options{SSEHeartbeat: time.Hour})
		alice := e.person("alice")
		s, err := alice.Stream(longCtx(t), client.StreamOptions{People: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := alice.Logout(e.ctx()); err != nil {
			t.Fatal(err)
		}
		if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "alice", Subject: "after sign-out", Body: "x"}); err != nil {
			t.Fatal(err)
		}
		streamEnds(t, s, "the stream of the signed-out cookie")
	})

	t.Run("PasswordChangedElsewhereAndAccountDisabled", func(t *testing.T) {
		e := newEnvWith(t, httpapi.Options{SSEHeartbeat: 50 * time.Millisecond})
		alice := e.person("alice")
		laptop := e.login("alice", "alice-password")
		s, err := alice.Stream(longCtx(t), client.StreamOptions{People: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		kept, err := laptop.Stream(longCtx(t), client.StreamOptions{People: true})
		if err != nil {
			t.Fatal(err)
		}
		defer kept.Close()
		if err := laptop.ChangePassword(e.ctx(), client.ChangePasswordRequest{CurrentPassword: "alice-password", NewPassword: "a-new-password"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "alice", Subject: "after the password change", Body: "x"}); err != nil {
			t.Fatal(err)
		}
		streamEnds(t, s, "the stream of the sign-in the password change ended")
		if ev := nextEvent(t, kept); ev.Type != client.EventNewMail {
			t.Fatalf("the sign-in that changed the password got %s, want its new_mail", ev.Type)
		}

		bob := e.person("bob")
		bs, err := bob.Stream(longCtx(t), client.StreamOptions{People: true})
		if err != nil {
			t.Fatal(err)
		}
		defer bs.Close()
		disabled := true
		if _, err := e.admin.AdminUpdateUser(e.ctx(), "bob", client.UpdateUserRequest{Disabled: &disabled}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "bob", Subject: "after disabling", Body: "x"}); err != nil {
			t.Fatal(err)
		}
		streamEnds(t, bs, "the cookie stream of a disabled account")
	})

	// A sign-in that ended without this gateway doing it (by time here;
	// on another replica alike) ends its stream at the next heartbeat.
	t.Run("ExpiredAtTheHeartbeat", func(t *testing.T) {
		e := newEnvWith(t, httpapi.Options{SSEHeartbeat: 50 * time.Millisecond})
		alice := e.person("alice")
		s, err := alice.Stream(longCtx(t), client.StreamOptions{People: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		e.clock.Advance(15 * 24 * time.Hour) // past the cookie's 14 days
		streamEnds(t, s, "the stream of an expired cookie session")
	})
}
