package gateway

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// mirrorBoundAndLoose binds the mail session sessionID to bot's platform
// session p1 and has bot's heartbeat mirror list p1 as slug "bound-slug"
// and the unbound p2 as "loose-slug", both at /work/proj.
func (e *serviceEnv) mirrorBoundAndLoose(sessionID string) {
	e.t.Helper()
	if _, err := e.svc.BindPlatformSession(e.ctx, e.bot, sessionID, client.BindPlatformSessionRequest{PlatformSessionID: "p1"}); err != nil {
		e.t.Fatal(err)
	}
	mirror := []client.PlatformSession{
		{PlatformID: "p1", Workspace: "/work/proj", Slug: "bound-slug", UpdatedAt: ts("2026-09-02T09:00:00Z")},
		{PlatformID: "p2", Workspace: "/work/proj", Slug: "loose-slug", UpdatedAt: ts("2026-09-02T09:00:00Z")},
	}
	if _, err := e.svc.Heartbeat(e.ctx, e.bot, client.HeartbeatRequest{PlatformSessions: &mirror}); err != nil {
		e.t.Fatal(err)
	}
}

// The platform-session mirror follows the membership rule: a platform
// session bound to a mail session is suggested to, resolved for and
// addressed by that mail session's participants only (and a mail to its
// slug goes into the bound session); an unbound one is offered to admins
// only. Everybody else gets what an unknown alias answers.
func TestMirrorVisibleToBoundSessionsPeopleOnly(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session() // alice → bot@/work/proj (cc bob)
	e.mirrorBoundAndLoose(s.SessionID)
	admin := &Principal{Kind: PrincipalPerson, Name: "carol", Role: RoleAdmin, AuthKind: AuthUserKey}
	suggested := func(p *Principal) map[string]bool {
		t.Helper()
		sl, err := e.svc.Suggest(e.ctx, p, "slug", 50)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, sg := range sl.Suggestions {
			out[sg.Alias] = true
		}
		return out
	}
	if got := suggested(e.alice); !got["bound-slug"] || got["loose-slug"] {
		t.Errorf("alice (participant, not admin) is offered %v, want bound-slug only", got)
	}
	if got := suggested(e.carol); len(got) != 0 {
		t.Errorf("carol (no part, not admin) is offered %v, want nothing", got)
	}
	if got := suggested(admin); got["bound-slug"] || !got["loose-slug"] {
		t.Errorf("an admin outside the session is offered %v, want loose-slug only", got)
	}

	res, err := e.svc.Resolve(e.ctx, e.bob, "bot@/work/proj.bound-slug")
	if err != nil || !res.Exists || res.SessionID != s.SessionID {
		t.Errorf("bob resolves the bound slug = %+v, %v; want the bound session", res, err)
	}
	_, err = e.svc.Resolve(e.ctx, e.carol, "bot@/work/proj.bound-slug")
	wantCode(t, err, KindNotFound, "alias_not_found")
	_, err = e.svc.Resolve(e.ctx, admin, "bot@/work/proj.bound-slug")
	wantCode(t, err, KindNotFound, "alias_not_found")
	_, err = e.svc.Resolve(e.ctx, e.carol, "bot@/work/proj.loose-slug")
	wantCode(t, err, KindNotFound, "alias_not_found")

	before := e.countMails("1 = 1")
	_, err = e.svc.Send(e.ctx, e.carol, client.SendMailRequest{To: "bot@/work/proj.bound-slug", Subject: "in", Body: "x"})
	wantCode(t, err, KindNotFound, "alias_not_found")
	_, err = e.svc.Send(e.ctx, e.carol, client.SendMailRequest{To: "bot@/work/proj.loose-slug", Subject: "in", Body: "x"})
	wantCode(t, err, KindNotFound, "alias_not_found")
	if after := e.countMails("1 = 1"); after != before {
		t.Errorf("refused sends stored mails: %d → %d", before, after)
	}
	r, err := e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "bot@/work/proj.bound-slug", Subject: "more", Body: "x"})
	if err != nil || r.SessionID != s.SessionID || r.NewSession {
		t.Errorf("bob's mail to the bound slug = %+v, %v; want it in the bound session", r, err)
	}
	r, err = e.svc.Send(e.ctx, admin, client.SendMailRequest{To: "bot@/work/proj.loose-slug", Subject: "pick up", Body: "x"})
	if err != nil || !r.NewSession {
		t.Errorf("the admin's mail to the unbound slug = %+v, %v; want a new bound session", r, err)
	}
}
