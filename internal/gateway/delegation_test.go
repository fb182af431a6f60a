package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// delegationWorld is alice's session with bot (cc bob, /work/proj: the
// origin) and bot's turn in it delegating to agent helper at /work/h.
type delegationWorld struct {
	e          *serviceEnv
	origin     *client.SendMailResponse
	helper     *Principal
	botTurn    context.Context // bot's turn token of the origin session
	delegated  *client.SendMailResponse
	helperMail *client.SendMailResponse // helper's answer in the delegated session
}

func turnCtx(e *serviceEnv, agent, sessionID string) (context.Context, *Principal) {
	p := &Principal{Kind: PrincipalAgent, Name: agent, AuthKind: AuthTurnToken, TurnSession: sessionID}
	return WithPrincipal(e.ctx, p), p
}

func newDelegationWorld(t *testing.T) *delegationWorld {
	t.Helper()
	e := newServiceEnv(t)
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "helper", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	w := &delegationWorld{e: e, origin: e.session(), helper: &Principal{Kind: PrincipalAgent, Name: "helper", AuthKind: AuthAgentKey}}
	ctx, bot := turnCtx(e, "bot", w.origin.SessionID)
	w.botTurn = ctx
	var err error
	w.delegated, err = e.svc.Send(ctx, bot, client.SendMailRequest{To: "helper@/work/h.new", Subject: "sub T", Body: "compute T"})
	if err != nil || !w.delegated.NewSession {
		t.Fatalf("bot's delegating send = %+v, %v", w.delegated, err)
	}
	in, err := e.svc.Inbox(e.ctx, w.helper, InboxQuery{Status: "all", Limit: 10})
	if err != nil || len(in.Mails) != 1 {
		t.Fatalf("helper's inbox = %+v, %v", in, err)
	}
	reply := in.Mails[0].FromAddress
	if want := "bot@/work/proj." + w.delegated.SessionAlias; reply != want {
		t.Fatalf("bot's address in the delegated session = %q, want %q (its own workspace)", reply, want)
	}
	w.helperMail, err = e.svc.Send(e.ctx, w.helper, client.SendMailRequest{To: reply, ReplyTo: w.delegated.MailID, Body: "T = 42"})
	if err != nil || w.helperMail.SessionID != w.delegated.SessionID {
		t.Fatalf("helper's answer = %+v, %v", w.helperMail, err)
	}
	return w
}

// TestDelegatedSessionRecordsItsOrigin: a send from a turn opens a
// delegated session whose origin is the turn's session, whose sender path
// is the origin's workspace (the answer reaches bot at /work/proj), and
// which the turn token covers; outside a turn nothing changes.
func TestDelegatedSessionRecordsItsOrigin(t *testing.T) {
	w := newDelegationWorld(t)
	e := w.e
	row, err := e.svc.Read().GetSession(e.ctx, w.delegated.SessionID)
	if err != nil || row.OriginSessionID != w.origin.SessionID || row.AgentName != "helper" || row.Workspace != "/work/h" {
		t.Fatalf("delegated session = %+v, %v", row, err)
	}
	evs := e.events("bot", client.EventNewMail)
	last := evs[len(evs)-1]
	var nm client.NewMailEvent
	if err := json.Unmarshal(last.Data, &nm); err != nil {
		t.Fatal(err)
	}
	if nm.MailID != w.helperMail.MailID || nm.ToWorkspace != "/work/proj" ||
		nm.SelfAddress != "bot@/work/proj."+w.delegated.SessionAlias {
		t.Fatalf("bot's event of the answer = %+v; want to_workspace /work/proj", nm)
	}
	// The turn token of the origin covers the delegated session.
	_, bot := turnCtx(e, "bot", w.origin.SessionID)
	if _, err := e.svc.GetSession(w.botTurn, bot, w.delegated.SessionID); err != nil {
		t.Fatalf("the origin's turn token reading the delegated session: %v", err)
	}
	if _, err := e.svc.Send(w.botTurn, bot, client.SendMailRequest{To: "helper@/work/h." + w.delegated.SessionAlias,
		ReplyTo: w.helperMail.MailID, Body: "thanks"}); err != nil {
		t.Fatalf("the origin's turn token writing into the delegated session: %v", err)
	}
	// ... but a token of the delegated session does not cover its origin.
	hctx, hp := turnCtx(e, "helper", w.delegated.SessionID)
	_, err = e.svc.GetSession(hctx, hp, w.origin.SessionID)
	wantCode(t, err, KindNotFound, "session_not_found")
	// Outside a turn an agent opens an ordinary session.
	plain, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "helper@/work/h.new", Subject: "plain", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if row, _ := e.svc.Read().GetSession(e.ctx, plain.SessionID); row.OriginSessionID != "" {
		t.Fatalf("a send outside any turn recorded origin %q", row.OriginSessionID)
	}
}

// TestDelegationNeedsTheTurnsAgentAndIsBounded: only the turn session's
// own agent delegates (403), and a chain deeper than DelegationDepth is a
// 400 that creates nothing.
func TestDelegationNeedsTheTurnsAgentAndIsBounded(t *testing.T) {
	w := newDelegationWorld(t)
	e := w.e
	// bot takes part in the delegated session but is not its agent.
	ctx, bot := turnCtx(e, "bot", w.delegated.SessionID)
	_, err := e.svc.Send(ctx, bot, client.SendMailRequest{To: "helper@/work/x.new", Subject: "x", Body: "x"})
	wantCode(t, err, KindForbidden, "delegation_not_agent")

	e.svc.Config.DelegationDepth = 2
	hctx, hp := turnCtx(e, "helper", w.delegated.SessionID)
	second, err := e.svc.Send(hctx, hp, client.SendMailRequest{To: "bot@/work/b2.new", Subject: "depth 2", Body: "x"})
	if err != nil {
		t.Fatalf("a second delegation (depth 2 of 2): %v", err)
	}
	var before int
	_ = e.svc.Read().QueryRow(e.ctx, `SELECT COUNT(*) FROM mail_sessions`).Scan(&before)
	ctx3, bot3 := turnCtx(e, "bot", second.SessionID)
	_, err = e.svc.Send(ctx3, bot3, client.SendMailRequest{To: "helper@/work/b3.new", Subject: "depth 3", Body: "x"})
	wantCode(t, err, KindInvalid, "delegation_too_deep")
	var after int
	_ = e.svc.Read().QueryRow(e.ctx, `SELECT COUNT(*) FROM mail_sessions`).Scan(&after)
	if after != before {
		t.Fatalf("a refused delegation created sessions: %d -> %d", before, after)
	}
}

// TestDelegatedSessionVisibleToOriginPeople: alice and bob (the origin's
// people) read the delegated session and decide its permission requests
// without being its participants; carol answers as for an unknown session.
func TestDelegatedSessionVisibleToOriginPeople(t *testing.T) {
	w := newDelegationWorld(t)
	e := w.e
	for _, p := range []*Principal{e.alice, e.bob} {
		if _, err := e.svc.GetSession(e.ctx, p, w.delegated.SessionID); err != nil {
			t.Fatalf("%s reading the delegated session: %v", p.Name, err)
		}
		if _, err := e.svc.Read().Participant(e.ctx, w.delegated.SessionID, p.Name); err == nil {
			t.Fatalf("%s became a participant of the delegated session", p.Name)
		}
	}
	_, err := e.svc.GetSession(e.ctx, e.carol, w.delegated.SessionID)
	wantCode(t, err, KindNotFound, "session_not_found")
	mails, err := e.svc.SessionMails(e.ctx, e.alice, w.delegated.SessionID, 10, "")
	if err != nil || len(mails.Mails) != 2 {
		t.Fatalf("alice reading the delegated session's mails = %+v, %v; want bot's and helper's", mails, err)
	}
	budget := 7
	if s, err := e.svc.UpdateSession(e.ctx, e.bob, w.delegated.SessionID, client.UpdateSessionRequest{BudgetMax: &budget}); err != nil || s.BudgetMax != 7 {
		t.Fatalf("bob changing the delegated session's budget = %+v, %v", s, err)
	}
	_, err = e.svc.UpdateSession(e.ctx, e.carol, w.delegated.SessionID, client.UpdateSessionRequest{BudgetMax: &budget})
	wantCode(t, err, KindNotFound, "session_not_found")

	perm, err := e.svc.RequestPermission(e.ctx, w.helper, client.PermissionRequest{Question: "run rm -rf build?",
		SessionID: w.delegated.SessionID, RelayKey: "perm-1", Tool: "run_command"})
	if err != nil {
		t.Fatalf("a permission request in a delegated session: %v", err)
	}
	list, err := e.svc.ListPermissions(e.ctx, e.alice, "")
	if err != nil || len(list.Permissions) != 1 || list.Permissions[0].MailID != perm.MailID {
		t.Fatalf("alice's pending requests = %+v, %v", list, err)
	}
	if _, err := e.svc.Read().Participant(e.ctx, w.delegated.SessionID, "alice"); err == nil {
		t.Fatal("the permission request made alice a participant of the delegated session")
	}
	_, err = e.svc.Decide(e.ctx, e.carol, perm.MailID, client.DecideRequest{Decision: "approve"})
	wantCode(t, err, KindNotFound, "")
	got, err := e.svc.Decide(e.ctx, e.alice, perm.MailID, client.DecideRequest{Decision: "approve"})
	if err != nil || !got.Approved || got.DecidedBy != "alice" {
		t.Fatalf("alice deciding = %+v, %v", got, err)
	}
}

// TestDelegationRelay is rule (b): bot's relay answering helper's mail
// lands in the origin session, to its person, free of rounds, at most one
// per received mail; it never reaches an agent, and nobody else relays
// into the origin.
func TestDelegationRelay(t *testing.T) {
	w := newDelegationWorld(t)
	e := w.e
	rounds := func(id string) int {
		row, err := e.svc.Read().GetSession(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return row.UsedRounds
	}
	o0, d0 := rounds(w.origin.SessionID), rounds(w.delegated.SessionID)
	relay := func(p *Principal, to, key string) (*client.SendMailResponse, error) {
		return e.svc.Send(e.ctx, p, client.SendMailRequest{To: to, Subject: "Re: clean the build", Body: "FINAL T = 42",
			ReplyTo: w.helperMail.MailID, Relay: client.RelaySummary, RelayKey: key})
	}
	got, err := relay(e.bot, "alice@."+w.origin.SessionAlias, "k1")
	if err != nil || got.SessionID != w.origin.SessionID {
		t.Fatalf("the delegation relay = %+v, %v; want it in the origin session", got, err)
	}
	if o, d := rounds(w.origin.SessionID), rounds(w.delegated.SessionID); o != o0 || d != d0 {
		t.Fatalf("rounds after the relay: origin %d->%d, delegated %d->%d; a delegation relay is free", o0, o, d0, d)
	}
	_, err = relay(e.bot, "alice@."+w.origin.SessionAlias, "k2")
	wantCode(t, err, KindConflict, "relay_already_answered")
	if again, err := relay(e.bot, "alice@."+w.origin.SessionAlias, "k1"); err != nil || again.Status != SendStatusDuplicate {
		t.Fatalf("the same relay_key again = %+v, %v", again, err)
	}
	// A fresh received mail, to check the refusals against a free slot.
	w.helperMail, err = e.svc.Send(e.ctx, w.helper, client.SendMailRequest{To: "bot@/work/proj." + w.delegated.SessionAlias,
		ReplyTo: w.delegated.MailID, Body: "one more"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Write(e.ctx, func(tx *Tx) error {
		return tx.AddParticipant(e.ctx, store.ParticipantRow{SessionID: w.origin.SessionID, Name: "helper", Kind: store.KindAgent, Workspace: "/work/h"})
	}); err != nil {
		t.Fatal(err)
	}
	_, err = relay(e.bot, "helper@/work/h."+w.origin.SessionAlias, "k3")
	wantCode(t, err, KindInvalid, "relay_recipient")
	// helper, the delegated session's agent, is no agent of the origin.
	_, err = e.svc.Send(e.ctx, w.helper, client.SendMailRequest{To: "alice@." + w.origin.SessionAlias, Body: "x",
		ReplyTo: w.delegated.MailID, Relay: client.RelaySummary, RelayKey: "h1"})
	wantCode(t, err, KindInvalid, "relay_other_session")
}

// TestDelegatedSessionSpendsItsOwnRounds is the budget rule of delegated
// sessions: the mails in a delegated session use its own rounds (its
// budget is the delegate's default_rounds, like any session the delegate
// is the agent of), the origin is charged nothing, a spent delegated
// budget refuses further mails there while the origin goes on, and the
// delegation relay stays free.
func TestDelegatedSessionSpendsItsOwnRounds(t *testing.T) {
	w := newDelegationWorld(t)
	e := w.e
	row := func(id string) store.SessionRow {
		r, err := e.svc.Read().GetSession(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	helperAgent, err := e.svc.Read().GetAgent(e.ctx, "helper")
	if err != nil {
		t.Fatal(err)
	}
	o, d := row(w.origin.SessionID), row(w.delegated.SessionID)
	if o.UsedRounds != 0 || d.UsedRounds != 2 || d.BudgetMax != helperAgent.DefaultRounds {
		t.Fatalf("after bot's delegating mail and helper's answer: origin %d used, delegated %d/%d; want 0 and 2/%d",
			o.UsedRounds, d.UsedRounds, d.BudgetMax, helperAgent.DefaultRounds)
	}
	budget := 2
	if _, err := e.svc.UpdateSession(e.ctx, e.alice, w.delegated.SessionID, client.UpdateSessionRequest{BudgetMax: &budget}); err != nil {
		t.Fatal(err)
	}
	_, bot := turnCtx(e, "bot", w.origin.SessionID)
	_, err = e.svc.Send(w.botTurn, bot, client.SendMailRequest{To: "helper@/work/h." + w.delegated.SessionAlias,
		ReplyTo: w.helperMail.MailID, Body: "and U?"})
	wantCode(t, err, KindForbidden, "budget_exhausted")
	if got := row(w.origin.SessionID).UsedRounds; got != 0 {
		t.Fatalf("the origin was charged %d rounds for its delegated session", got)
	}
	// The delegation relay is free even with the delegated budget spent.
	relay, err := e.svc.Send(e.ctx, e.bot, client.SendMailRequest{To: "alice@." + w.origin.SessionAlias, Body: "T = 42",
		ReplyTo: w.helperMail.MailID, Relay: client.RelaySummary, RelayKey: "k-budget"})
	if err != nil || relay.SessionID != w.origin.SessionID {
		t.Fatalf("the delegation relay with the delegated budget spent = %+v, %v", relay, err)
	}
	// The origin goes on with its own budget.
	if _, err := e.svc.Send(w.botTurn, bot, client.SendMailRequest{To: "alice@." + w.origin.SessionAlias, Subject: "more", Body: "more to come"}); err != nil {
		t.Fatalf("bot writing in the origin with the delegated budget spent: %v", err)
	}
	if o, d := row(w.origin.SessionID).UsedRounds, row(w.delegated.SessionID).UsedRounds; o != 1 || d != 2 {
		t.Fatalf("used rounds: origin %d, delegated %d; want 1 (bot's own mail there) and 2", o, d)
	}
}

// TestDelegationChainRelaysEachLevel: alice -> bot -> helper -> third.
// third answers helper in the second delegated session; helper's relay of
// it lands in the first delegated session, to bot (the agent that
// delegated it) and to nobody else, free and once; bot's relay of that
// lands in the origin, to alice.
func TestDelegationChainRelaysEachLevel(t *testing.T) {
	w := newDelegationWorld(t)
	e := w.e
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "third", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	third := &Principal{Kind: PrincipalAgent, Name: "third", AuthKind: AuthAgentKey}
	hctx, hp := turnCtx(e, "helper", w.delegated.SessionID)
	second, err := e.svc.Send(hctx, hp, client.SendMailRequest{To: "third@/work/t.new", Subject: "sub U", Body: "compute U"})
	if err != nil || !second.NewSession {
		t.Fatalf("helper's delegating send = %+v, %v", second, err)
	}
	answer, err := e.svc.Send(e.ctx, third, client.SendMailRequest{To: "helper@/work/h." + second.SessionAlias,
		ReplyTo: second.MailID, Body: "U = 7"})
	if err != nil {
		t.Fatal(err)
	}
	rounds := func(id string) int {
		r, err := e.svc.Read().GetSession(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r.UsedRounds
	}
	d1, d2 := rounds(w.delegated.SessionID), rounds(second.SessionID)
	relay := func(p *Principal, to, replyTo, key string) (*client.SendMailResponse, error) {
		return e.svc.Send(e.ctx, p, client.SendMailRequest{To: to, Body: "FINAL U = 7", ReplyTo: replyTo,
			Relay: client.RelaySummary, RelayKey: key})
	}
	// Only bot, the agent that delegated the first delegated session.
	_, err = relay(hp, "third@."+w.delegated.SessionAlias, answer.MailID, "h0")
	wantCode(t, err, KindInvalid, "relay_recipient")
	_, err = relay(hp, "alice@."+w.delegated.SessionAlias, answer.MailID, "h0")
	wantCode(t, err, KindInvalid, "relay_recipient")
	up, err := relay(hp, "bot@."+w.delegated.SessionAlias, answer.MailID, "h1")
	if err != nil || up.SessionID != w.delegated.SessionID {
		t.Fatalf("helper's relay into its origin = %+v, %v", up, err)
	}
	in, err := e.svc.Inbox(e.ctx, e.bot, InboxQuery{Status: "all", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var got *client.Mail
	for i := range in.Mails {
		if in.Mails[i].MailID == up.MailID {
			got = &in.Mails[i]
		}
	}
	if got == nil || got.Recipients[0].Workspace != "/work/proj" {
		t.Fatalf("bot's copy of helper's relay = %+v; want it at bot's path /work/proj", got)
	}
	if a, b := rounds(w.delegated.SessionID), rounds(second.SessionID); a != d1 || b != d2 {
		t.Fatalf("rounds after helper's relay: %d->%d, %d->%d; a delegation relay is free", d1, a, d2, b)
	}
	_, err = relay(hp, "bot@."+w.delegated.SessionAlias, answer.MailID, "h2")
	wantCode(t, err, KindConflict, "relay_already_answered")
	// bot relays helper's relay into the origin, to alice; never to helper.
	_, err = relay(e.bot, "helper@."+w.origin.SessionAlias, up.MailID, "b0")
	if err == nil {
		t.Fatal("bot's relay to helper in the origin was accepted")
	}
	top, err := relay(e.bot, "alice@."+w.origin.SessionAlias, up.MailID, "b1")
	if err != nil || top.SessionID != w.origin.SessionID {
		t.Fatalf("bot's relay into the origin = %+v, %v", top, err)
	}
	if rounds(w.origin.SessionID) != 0 {
		t.Fatal("the origin was charged a round for the relays")
	}
}

// TestDelegationLinks: the origin's answer lists its delegated sessions
// with their own rounds, the delegated session's answer names its origin,
// and neither reveals a session the viewer may not see.
func TestDelegationLinks(t *testing.T) {
	w := newDelegationWorld(t)
	e := w.e
	o, err := e.svc.GetSession(e.ctx, e.alice, w.origin.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Delegations) != 1 {
		t.Fatalf("the origin's delegations = %+v, want the one delegated session", o.Delegations)
	}
	if d := o.Delegations[0]; d.SessionID != w.delegated.SessionID || d.AgentName != "helper" || d.Alias != w.delegated.SessionAlias ||
		d.Subject != "sub T" || d.UsedRounds != 2 || d.BudgetMax == 0 {
		t.Fatalf("the origin's delegation = %+v; want helper's session with 2 rounds used of its own budget", d)
	}
	if o.Origin != nil {
		t.Fatalf("the origin names an origin: %+v", o.Origin)
	}
	d, err := e.svc.GetSession(e.ctx, e.bob, w.delegated.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Origin == nil || d.Origin.SessionID != w.origin.SessionID || d.Origin.Alias != w.origin.SessionAlias {
		t.Fatalf("the delegated session's origin for bob = %+v, want %s", d.Origin, w.origin.SessionID)
	}
	// helper takes no part in the origin: its answer names none.
	hd, err := e.svc.GetSession(e.ctx, w.helper, w.delegated.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if hd.Origin != nil || hd.OriginSessionID != w.origin.SessionID {
		t.Fatalf("helper's view of the delegated session: origin %+v (id %q); want no link, the id only", hd.Origin, hd.OriginSessionID)
	}
	// A session delegated from the delegated one shows on it, and only to who may see it.
	hctx, hp := turnCtx(e, "helper", w.delegated.SessionID)
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "third", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	second, err := e.svc.Send(hctx, hp, client.SendMailRequest{To: "third@/work/t.new", Subject: "sub U", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	d, err = e.svc.GetSession(e.ctx, e.alice, w.delegated.SessionID)
	if err != nil || len(d.Delegations) != 1 || d.Delegations[0].SessionID != second.SessionID || d.Delegations[0].UsedRounds != 1 {
		t.Fatalf("the delegated session's delegations for alice = %+v, %v", d, err)
	}
	// bot's turn of the origin sees both levels below it.
	_, bot := turnCtx(e, "bot", w.origin.SessionID)
	bo, err := e.svc.GetSession(w.botTurn, bot, w.origin.SessionID)
	if err != nil || len(bo.Delegations) != 1 {
		t.Fatalf("bot's turn reading the origin = %+v, %v", bo, err)
	}
}
