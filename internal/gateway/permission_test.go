package gateway

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

func (e *serviceEnv) request(sessionID, key string) *client.Permission {
	e.t.Helper()
	p, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "Delete build/?", Context: "rm -rf build/",
		SessionID: sessionID, RelayKey: key, Tool: "Bash", ToolInput: map[string]any{"command": "rm -rf build/"}})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func TestPermissionRequestMailsThePeopleOnceAndUsesNoRound(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	before, _ := e.svc.Read().GetSession(e.ctx, s.SessionID)
	p := e.request(s.SessionID, "perm-1")
	if p.Status != PermissionStatusPending || p.Duplicate || p.AgentName != "bot" || p.RelayKey != "perm-1" {
		t.Fatalf("permission = %+v", p)
	}
	if strings.Join(p.Options, ",") != "approve,always,deny" {
		t.Errorf("default options = %v", p.Options)
	}
	wantHash, _ := ArgsHash(map[string]any{"command": "rm -rf build/"})
	if p.ArgsHash != wantHash {
		t.Errorf("args_hash = %q, want %q", p.ArgsHash, wantHash)
	}
	m, err := e.svc.GetMail(e.ctx, e.alice, p.MailID)
	if err != nil {
		t.Fatal(err)
	}
	if m.MailType != client.MailTypePermissionRequest || m.Relay != client.RelayPermission || m.Permission == nil {
		t.Fatalf("request mail = %+v", m)
	}
	names := []string{}
	for _, r := range m.Recipients {
		names = append(names, r.Name+":"+r.Kind)
	}
	if strings.Join(names, ",") != "alice:person,bob:person" {
		t.Errorf("request mail recipients = %v, want the two people", names)
	}
	after, _ := e.svc.Read().GetSession(e.ctx, s.SessionID)
	if after.UsedRounds != before.UsedRounds {
		t.Errorf("used_rounds %d → %d: a permission request must not use a round (B-8.5)", before.UsedRounds, after.UsedRounds)
	}
	if n := len(e.events("alice", client.EventPermissionRequest)); n != 1 {
		t.Errorf("alice got %d permission_request events, want 1", n)
	}
	// Replay: same request, Duplicate, no second mail.
	again := e.request(s.SessionID, "perm-1")
	if !again.Duplicate || again.MailID != p.MailID {
		t.Fatalf("replay = %+v, want duplicate of %s", again, p.MailID)
	}
	if n := e.countMails("mail_type = ?", client.MailTypePermissionRequest); n != 1 {
		t.Errorf("%d permission_request mails after a replay, want 1", n)
	}
	// The agent sees its request; the stranger carol does not.
	if _, err := e.svc.GetPermission(e.ctx, e.bot, p.MailID); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.GetPermission(e.ctx, e.carol, p.MailID)
	wantCode(t, err, KindNotFound, "permission_not_found")
	pending, _ := e.svc.ListPermissions(e.ctx, e.bob, "")
	if len(pending.Permissions) != 1 {
		t.Errorf("bob's pending list = %+v", pending)
	}
}

func TestPermissionRequestBadInputStoresNothing(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	past := e.clock.Now().Add(-time.Minute)
	cases := []struct {
		req   client.PermissionRequest
		kind  Kind
		field string
	}{
		{client.PermissionRequest{SessionID: s.SessionID, RelayKey: "k"}, KindInvalid, "question"},
		{client.PermissionRequest{Question: "q", RelayKey: "k"}, KindInvalid, "session_id"},
		{client.PermissionRequest{Question: "q", SessionID: s.SessionID}, KindInvalid, "relay_key"},
		{client.PermissionRequest{Question: "q", SessionID: s.SessionID, RelayKey: "k", ExpiresAt: &past}, KindInvalid, "expires_at"},
		{client.PermissionRequest{Question: "q", SessionID: s.SessionID, RelayKey: "k", Options: []string{"ok", " "}}, KindInvalid, "options[1]"},
		{client.PermissionRequest{Question: "q", SessionID: "nope", RelayKey: "k"}, KindNotFound, ""},
	}
	for _, c := range cases {
		_, err := e.svc.RequestPermission(e.ctx, e.bot, c.req)
		ae := AsError(err)
		if ae == nil || ae.Kind != c.kind || ae.Field != c.field {
			t.Errorf("%+v: err = %v, want kind %d field %q", c.req, err, c.kind, c.field)
		}
	}
	if n := e.countMails("mail_type = ?", client.MailTypePermissionRequest); n != 0 {
		t.Errorf("%d request mails stored by bad requests", n)
	}
}

func TestPermissionRequestWithoutPersonIs409(t *testing.T) {
	e := newServiceEnv(t)
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "helper", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	r, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "helper@/work/lib.new", Subject: "help", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "q", SessionID: r.SessionID, RelayKey: "k"})
	wantCode(t, err, KindConflict, "no_person_to_decide")
	if AsError(err).Suggestion == "" {
		t.Error("409 without a suggestion (seed 003 hands it to the model)")
	}
	if n := e.countMails("mail_type = ?", client.MailTypePermissionRequest); n != 0 {
		t.Errorf("%d request mails stored", n)
	}
}

func TestDecideByAPIFirstWinsAndSendsTheEvent(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "perm-api")
	got, err := e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "同意", Note: "go ahead"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != PermissionStatusApproved || !got.Approved || got.Always || got.DecidedBy != "alice" || got.DecidedVia != DecidedViaAPI {
		t.Fatalf("decided = %+v", got)
	}
	dm, err := e.svc.GetMail(e.ctx, e.bot, got.DecisionMailID)
	if err != nil {
		t.Fatal(err)
	}
	if dm.MailType != client.MailTypePermissionDecision || dm.ParentMailID != p.MailID || dm.SessionID != s.SessionID {
		t.Fatalf("decision mail = %+v", dm)
	}
	evs := e.events("bot", client.EventPermissionDecision)
	if len(evs) != 1 {
		t.Fatalf("bot got %d permission_decision events", len(evs))
	}
	var ev client.PermissionDecisionEvent
	json.Unmarshal(evs[0].Data, &ev)
	want := client.PermissionDecisionEvent{MailID: p.MailID, DecisionMailID: got.DecisionMailID, Decision: "同意", Approved: true,
		Note: "go ahead", DecidedBy: "alice", DecidedVia: "api", SessionID: s.SessionID, RelayKey: "perm-api", RelayKind: "permission", ArgsHash: p.ArgsHash}
	if ev != want {
		t.Errorf("event = %+v\nwant    %+v", ev, want)
	}
	// The same decision again by the same person answers the state; a
	// conflicting one is a 409 and changes nothing.
	if _, err := e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "同意", Note: "go ahead"}); err != nil {
		t.Errorf("repeating the same decision: %v", err)
	}
	_, err = e.svc.Decide(e.ctx, e.bob, p.MailID, client.DecideRequest{Decision: "deny"})
	wantCode(t, err, KindConflict, "already_decided")
	now, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID)
	if !now.Approved || now.DecidedBy != "alice" {
		t.Errorf("after the conflicting decision: %+v", now)
	}
	if n := e.countMails("mail_type = ?", client.MailTypePermissionDecision); n != 1 {
		t.Errorf("%d decision mails, want 1", n)
	}
	_, err = e.svc.Decide(e.ctx, e.carol, p.MailID, client.DecideRequest{Decision: "yes"})
	wantCode(t, err, KindNotFound, "permission_not_found")
}

func TestUnknownWordDenies(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	for i, word := range []string{"", "ok", "sure thing", "不同意"} {
		p := e.request(s.SessionID, "perm-word-"+string(rune('a'+i)))
		got, err := e.svc.Decide(e.ctx, e.bob, p.MailID, client.DecideRequest{Decision: word})
		if err != nil {
			t.Fatal(err)
		}
		if got.Approved || got.Status != PermissionStatusDenied {
			t.Errorf("decision %q: %+v, want denied", word, got)
		}
	}
}

// soloSession has person write to bot in /work/proj in a new session of
// their own.
func (e *serviceEnv) soloSession(person *Principal) *client.SendMailResponse {
	e.t.Helper()
	r, err := e.svc.Send(e.ctx, person, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "work of " + person.Name, Body: "please"})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// grantsIn answers the grants that apply to bot's Bash requests in a session.
func (e *serviceEnv) grantsIn(sessionID string) []client.Grant {
	e.t.Helper()
	gl, err := e.svc.SessionGrants(e.ctx, e.bot, sessionID, "Bash")
	if err != nil {
		e.t.Fatal(err)
	}
	return gl.Grants
}

func TestAlwaysGrantIsThePersonsAndAppliesOnlyWhereTheyAreAlone(t *testing.T) {
	e := newServiceEnv(t)
	mine := e.soloSession(e.alice)
	p := e.request(mine.SessionID, "perm-always")
	got, err := e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "一直同意"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Approved || !got.Always {
		t.Fatalf("decided = %+v", got)
	}
	gl := e.grantsIn(mine.SessionID)
	if len(gl) != 1 || gl[0].Tool != "Bash" || gl[0].Scope != "/work/proj" || gl[0].GrantedBy != "alice" {
		t.Fatalf("grants in alice's own session = %+v", gl)
	}
	// Another session of alice's alone with bot in the same directory: applies.
	if again := e.grantsIn(e.soloSession(e.alice).SessionID); len(again) != 1 {
		t.Errorf("alice's second session sees %d grants, want 1", len(again))
	}
	// carol's own session with the same agent in the same directory: alice's
	// "always" does not reach it.
	if theirs := e.grantsIn(e.soloSession(e.carol).SessionID); len(theirs) != 0 {
		t.Errorf("carol's session is covered by alice's grant: %+v", theirs)
	}
	// A session alice shares with bob: the people there are asked.
	if shared := e.grantsIn(e.session().SessionID); len(shared) != 0 {
		t.Errorf("a session with two people is covered by a grant: %+v", shared)
	}
	// A session another agent opened with bot and alice: that agent may
	// speak for someone else, so alice's grant does not apply there.
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "beta", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	beta := &Principal{Kind: PrincipalAgent, Name: "beta", AuthKind: AuthAgentKey}
	viaBeta, err := e.svc.Send(e.ctx, beta, client.SendMailRequest{To: "bot@/work/proj.new", Cc: "alice", Subject: "run it", Body: "for carol"})
	if err != nil {
		t.Fatal(err)
	}
	if relayed := e.grantsIn(viaBeta.SessionID); len(relayed) != 0 {
		t.Errorf("a session with another agent is covered by alice's grant: %+v", relayed)
	}
	if other, _ := e.svc.SessionGrants(e.ctx, e.bot, mine.SessionID, "Write"); len(other.Grants) != 0 {
		t.Errorf("filter by tool returned %+v", other)
	}
	_, err = e.svc.SessionGrants(e.ctx, e.bot, "", "Bash")
	wantCode(t, err, KindInvalid, "")

	// The grant is listed and revoked by the person who gave it only.
	if l, _ := e.svc.PersonGrants(e.ctx, e.alice); len(l.Grants) != 1 {
		t.Errorf("alice lists %d grants, want 1", len(l.Grants))
	}
	for _, other := range []*Principal{e.bob, e.carol} {
		if l, _ := e.svc.PersonGrants(e.ctx, other); len(l.Grants) != 0 {
			t.Errorf("%s lists %d grants of alice's", other.Name, len(l.Grants))
		}
		wantCode(t, e.svc.RevokeGrant(e.ctx, other, gl[0].GrantID), KindNotFound, "grant_not_found")
	}
	if err := e.svc.RevokeGrant(e.ctx, e.alice, gl[0].GrantID); err != nil {
		t.Fatal(err)
	}
	if left := e.grantsIn(mine.SessionID); len(left) != 0 {
		t.Errorf("grant still applies after revoke: %+v", left)
	}
}

func TestGrantScopeIsTheWorkspaceNotTheAgentsScope(t *testing.T) {
	e := newServiceEnv(t)
	s := e.soloSession(e.alice)
	for _, scope := range []string{"/", "/work", "/work/project", "/work/proj/../other"} {
		_, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "Write?", SessionID: s.SessionID,
			RelayKey: "scope-" + scope, Tool: "write_file", Scope: scope})
		wantCode(t, err, KindInvalid, "")
		if ae := AsError(err); ae == nil || ae.Field != "scope" {
			t.Errorf("scope %q: error %v does not name the field scope", scope, err)
		}
	}
	p, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "Write?", SessionID: s.SessionID,
		RelayKey: "scope-inside", Tool: "write_file", Scope: "/work/proj/src"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "always"}); err != nil {
		t.Fatal(err)
	}
	l, _ := e.svc.PersonGrants(e.ctx, e.alice)
	if len(l.Grants) != 1 || l.Grants[0].Scope != "/work/proj" {
		t.Fatalf("grant = %+v, want scope /work/proj (the workspace)", l.Grants)
	}
}

func TestReplyDecidesAndBecomesTheDecisionMail(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "perm-reply")
	r, err := e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "bot", ReplyTo: p.MailID, Body: "approve\nbut only build/\n> quoted request"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID)
	if !got.Approved || got.DecidedVia != DecidedViaReply || got.DecidedBy != "bob" || got.DecisionMailID != r.MailID ||
		got.Decision != "approve" || got.Note != "but only build/" {
		t.Fatalf("after reply: %+v", got)
	}
	m, _ := e.svc.GetMail(e.ctx, e.bot, r.MailID)
	if m.MailType != client.MailTypePermissionDecision {
		t.Errorf("reply mail type = %q", m.MailType)
	}
	for _, ev := range e.events("bot", client.EventNewMail) {
		var nm client.NewMailEvent
		json.Unmarshal(ev.Data, &nm)
		if nm.MailID == r.MailID && nm.MailType != client.MailTypePermissionDecision {
			t.Errorf("new_mail event of the reply has mail_type %q; a bridge would run a turn on it", nm.MailType)
		}
	}
	if n := len(e.events("bot", client.EventPermissionDecision)); n != 1 {
		t.Errorf("%d permission_decision events", n)
	}
	// A second reply with another verdict is a conflicting decision: 409,
	// nothing stored, nothing changed.
	mails := e.countMails("1=1")
	_, err = e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot", ReplyTo: p.MailID, Body: "deny"})
	wantCode(t, err, KindConflict, "already_decided")
	if n := e.countMails("1=1"); n != mails {
		t.Errorf("the conflicting reply stored %d mails", n-mails)
	}
	// A second reply with the same verdict is an ordinary mail.
	r2, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot", ReplyTo: p.MailID, Body: "yes, fine by me too"})
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := e.svc.GetMail(e.ctx, e.bot, r2.MailID)
	after, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID)
	if m2.MailType != client.MailTypeNormal || !after.Approved || after.DecidedBy != "bob" {
		t.Errorf("agreeing second reply: mail %q, permission %+v", m2.MailType, after)
	}
	if n := len(e.events("bot", client.EventPermissionDecision)); n != 1 {
		t.Errorf("%d permission_decision events after the second replies", n)
	}
}

// TestReplyDecisionEventsPrecedeTheSendersOwnNewMail pins the order of the
// after-mail steps of a send (sendTx): a person's reply first decides the
// permission request, then the sender's own streams get the sent mail, so
// the replier's permission_decision event has the lower event id.
func TestReplyDecisionEventsPrecedeTheSendersOwnNewMail(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "perm-order")
	r, err := e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "bot", ReplyTo: p.MailID, Body: "approve"})
	if err != nil {
		t.Fatal(err)
	}
	decisions := e.events("bob", client.EventPermissionDecision)
	if len(decisions) != 1 {
		t.Fatalf("bob got %d permission_decision events, want 1", len(decisions))
	}
	var own *store.EventRow
	for _, ev := range e.events("bob", client.EventNewMail) {
		var nm client.NewMailEvent
		if err := json.Unmarshal(ev.Data, &nm); err != nil {
			t.Fatal(err)
		}
		if nm.MailID == r.MailID && nm.Role == RoleFrom {
			own = &ev
		}
	}
	if own == nil {
		t.Fatalf("bob got no new_mail event with role from for his reply %s", r.MailID)
	}
	if decisions[0].ID >= own.ID {
		t.Errorf("permission_decision event %d comes after the sender's new_mail event %d; the reply's decision must come first",
			decisions[0].ID, own.ID)
	}
}

// TestReplyConflictingWithAnAPIDecisionIs409 checks that a decision by
// reply after an API decision is refused with 409 when its verdict differs
// (the reply is not stored), and that an API decision after a reply
// decision is refused the same way: a second conflicting decision is a 409
// either way. After an expiry only a reply that approves conflicts.
func TestReplyConflictingWithAnAPIDecisionIs409(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "perm-api-first")
	if _, err := e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	mails := e.countMails("1=1")
	for _, body := range []string{"deny", "no", "always", ""} {
		_, err := e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "bot", ReplyTo: p.MailID, Subject: "Re", Body: body})
		wantCode(t, err, KindConflict, "already_decided")
	}
	if n := e.countMails("1=1"); n != mails {
		t.Fatalf("conflicting replies stored %d mails", n-mails)
	}
	if got, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID); !got.Approved || got.Always || got.DecidedVia != DecidedViaAPI {
		t.Fatalf("permission changed: %+v", got)
	}

	p2 := e.request(s.SessionID, "perm-reply-first")
	if _, err := e.svc.Send(e.ctx, e.bob, client.SendMailRequest{To: "bot", ReplyTo: p2.MailID, Body: "deny"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Decide(e.ctx, e.alice, p2.MailID, client.DecideRequest{Decision: "approve"})
	wantCode(t, err, KindConflict, "already_decided")

	exp := e.clock.Now().Add(time.Minute)
	p3, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "q", SessionID: s.SessionID, RelayKey: "perm-late", ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Minute) // expired, not yet swept
	_, err = e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot", ReplyTo: p3.MailID, Subject: "Re", Body: "yes"})
	wantCode(t, err, KindConflict, "permission_expired")
	if _, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot", ReplyTo: p3.MailID, Subject: "Re", Body: "no, never mind"}); err != nil {
		t.Fatalf("a denying reply after the expiry: %v", err)
	}
}

func TestReplyWithUnknownTextDenies(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "perm-reply-no")
	if _, err := e.svc.Send(e.ctx, e.alice, client.SendMailRequest{To: "bot", ReplyTo: p.MailID, Body: "hmm, what is build/ for?"}); err != nil {
		t.Fatal(err)
	}
	got, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID)
	if got.Status != PermissionStatusDenied || got.Approved {
		t.Errorf("unknown reply text: %+v", got)
	}
}

func TestExpiredRequestIsDeniedByTimeout(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	exp := e.clock.Now().Add(5 * time.Minute)
	p, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "q", SessionID: s.SessionID, RelayKey: "perm-exp", ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.ExpirePermissions(e.ctx); err != nil || n != 0 {
		t.Fatalf("before expiry: %d, %v", n, err)
	}
	e.clock.Advance(5 * time.Minute)
	_, err = e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "yes"})
	wantCode(t, err, KindConflict, "permission_expired")
	if n, err := e.svc.ExpirePermissions(e.ctx); err != nil || n != 1 {
		t.Fatalf("at expiry: %d, %v", n, err)
	}
	got, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID)
	if got.Status != PermissionStatusDenied || got.DecidedBy != DecidedByTimeout || got.DecidedVia != DecidedViaTimeout {
		t.Fatalf("after expiry: %+v", got)
	}
	evs := e.events("bot", client.EventPermissionDecision)
	if len(evs) != 1 {
		t.Fatalf("%d decision events", len(evs))
	}
	var ev client.PermissionDecisionEvent
	json.Unmarshal(evs[0].Data, &ev)
	if ev.DecidedBy != "timeout" || ev.Approved || ev.RelayKey != "perm-exp" {
		t.Errorf("event = %+v", ev)
	}
	if n, _ := e.svc.ExpirePermissions(e.ctx); n != 0 {
		t.Errorf("a second sweep decided %d again", n)
	}
	_, err = e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "yes"})
	wantCode(t, err, KindConflict, "already_decided")
}

// TestPendingCountsOfPersonAndSession checks the pending permission counts
// of GET /me/counts and of the session view.
func TestPendingCountsOfPersonAndSession(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	e.request(s.SessionID, "c1")
	p2 := e.request(s.SessionID, "c2")
	c, err := e.svc.Counts(e.ctx, e.alice)
	if err != nil || c.PendingPermissions != 2 {
		t.Fatalf("pending for alice = %+v, %v", c, err)
	}
	e.svc.Decide(e.ctx, e.alice, p2.MailID, client.DecideRequest{Decision: "no"})
	if v, err := e.svc.GetSession(e.ctx, e.alice, s.SessionID); err != nil || v.PendingPermits != 1 {
		t.Errorf("pending in session = %+v, %v; want 1", v, err)
	}
}

func TestConcurrentDecisionsFirstWinsByConstraint(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "perm-race")
	// Two deciders that both read the request as pending before either
	// wrote: the primary key of the decision lets only the first through,
	// and the loser's decision mail is rolled back with it.
	stale, err := e.svc.Read().GetPermission(e.ctx, p.MailID)
	if err != nil {
		t.Fatal(err)
	}
	decide := func(who string, word string) error {
		return e.svc.Write(e.ctx, func(tx *Tx) error {
			_, err := e.svc.decideTx(e.ctx, tx, stale, decisionInput{word: word, decidedBy: who, via: DecidedViaAPI,
				from: Party{Name: who, Kind: store.KindPerson}})
			return err
		})
	}
	if err := decide("alice", "yes"); err != nil {
		t.Fatal(err)
	}
	if err := decide("bob", "deny"); err != errDecisionLost {
		t.Fatalf("second decision err = %v, want errDecisionLost", err)
	}
	got, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID)
	if !got.Approved || got.DecidedBy != "alice" {
		t.Errorf("state = %+v", got)
	}
	if n := e.countMails("mail_type = ?", client.MailTypePermissionDecision); n != 1 {
		t.Errorf("%d decision mails, want 1 (the loser's rolled back)", n)
	}
	if n := len(e.events("bot", client.EventPermissionDecision)); n != 1 {
		t.Errorf("%d decision events, want 1", n)
	}
}

// TestForwardingARequestDoesNotDecideIt checks that a person forwarding a
// permission request (T-5: a new thread whose parent link is the request)
// neither decides it nor conflicts with its decision: only a reply does.
func TestForwardingARequestDoesNotDecideIt(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	p := e.request(s.SessionID, "perm-fwd")
	if _, err := e.svc.Forward(e.ctx, e.alice, p.MailID, client.ForwardRequest{To: "carol", Body: "what do you think?"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.svc.GetPermission(e.ctx, e.bot, p.MailID); got.Status != PermissionStatusPending {
		t.Fatalf("the forward decided the request: %+v", got)
	}
	if _, err := e.svc.Decide(e.ctx, e.alice, p.MailID, client.DecideRequest{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Forward(e.ctx, e.bob, p.MailID, client.ForwardRequest{To: "carol", Body: "fyi"}); err != nil {
		t.Fatalf("forwarding a decided request: %v", err)
	}
}

// A request that expires undecided keeps its place under the pending cap
// for an hour after it was asked, so an agent cannot flood the people of a
// session with requests of one-second expiry.
func TestShortExpiriesDoNotFreeThePendingCap(t *testing.T) {
	e := newServiceEnv(t)
	s := e.soloSession(e.alice)
	ask := func(i int) error {
		exp := e.clock.Now().Add(time.Second)
		_, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "Run it?", SessionID: s.SessionID,
			RelayKey: "short-" + strconv.Itoa(i), Tool: "Bash", ExpiresAt: &exp})
		return err
	}
	for i := 0; i < DefaultMaxPendingPermissions; i++ {
		if err := ask(i); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	e.clock.Advance(2 * time.Second)
	if n, err := e.svc.ExpirePermissions(e.ctx); err != nil || n != DefaultMaxPendingPermissions {
		t.Fatalf("expired %d, %v", n, err)
	}
	wantCode(t, ask(100), KindRateLimited, "too_many_pending_permissions")
	e.clock.Advance(time.Hour)
	if err := ask(101); err != nil {
		t.Errorf("an hour later the expired requests still hold the cap: %v", err)
	}
}

// A request mail leads with what will run, as the gateway computes it from
// the arguments, not with the agent's question: a harmless question for a
// dangerous command shows the command first, in the subject and in the
// body, and the question only after, quoted as the agent's words, so that
// neither its newlines nor its fences can leave the quote.
func TestPermissionMailLeadsWithTheToolCallNotTheAgentsWords(t *testing.T) {
	e := newServiceEnv(t)
	s := e.session()
	question := "May I tidy the log folder?\n\n```\n**Will run:** ls logs/\n```\nAll safe."
	p, err := e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: question, Context: "routine clean-up",
		SessionID: s.SessionID, RelayKey: "harmless-words", Tool: "Bash", ToolInput: map[string]any{"command": "rm -rf /srv/data ```"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.svc.GetMail(e.ctx, e.alice, p.MailID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Permission request: Bash: rm -rf /srv/data ```" {
		t.Errorf("subject %q; want it to name the call", m.Subject)
	}
	lead := "**Will run:**\n\n````text\nBash: rm -rf /srv/data ```\n````\n"
	if !strings.HasPrefix(m.Body, lead) {
		t.Errorf("body does not lead with the call:\n%s", m.Body)
	}
	words := strings.Index(m.Body, "The agent's own words (not checked by AgentMail):\n\n")
	if words < 0 || words < strings.Index(m.Body, "Arguments:") {
		t.Fatalf("the agent's words are not marked, or come before the arguments:\n%s", m.Body)
	}
	quote := "> May I tidy the log folder?\n>\n> ```\n> **Will run:** ls logs/\n> ```\n> All safe.\n>\n> routine clean-up\n"
	if !strings.Contains(m.Body[words:], quote) {
		t.Errorf("the question and context are not quoted line by line:\n%s", m.Body[words:])
	}

	// Without tool or input the body says so, and the subject falls back
	// to the question's first line.
	p, err = e.svc.RequestPermission(e.ctx, e.bot, client.PermissionRequest{Question: "Go on?\nmore", SessionID: s.SessionID, RelayKey: "no-tool"})
	if err != nil {
		t.Fatal(err)
	}
	m, err = e.svc.GetMail(e.ctx, e.alice, p.MailID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Permission request: Go on?" || !strings.HasPrefix(m.Body, "**The agent names no tool call**") {
		t.Errorf("request without a tool: subject %q, body:\n%s", m.Subject, m.Body)
	}
}
