package gateway

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// choiceWorld is the fixture of TestChooseSession: sessions by name, the
// first mail of each (SessionAlias being the session's current alias), the
// former aliases of renamed sessions by name, and the principals that send.
type choiceWorld struct {
	e        *serviceEnv
	sessions map[string]client.SendMailResponse
	former   map[string]string
	who      map[string]*Principal
}

// newChoiceWorld builds, in a fresh gateway:
//   - "work": alice → bot@/work/proj (cc bob), bound to platform session p1,
//     which the heartbeat mirror lists as slug "bound-slug", then renamed
//     by alice to "work-now" (its first alias stays a former alias);
//   - "other": alice → bot@/work/other;
//   - "people": alice → bob, a people-only session;
//   - the mirror's unbound slug "loose-slug" (p2) at /work/proj;
//   - principals alice, bob, carol (no part in anything), bot, bot2 (an
//     agent in no session), admin (an admin in no session) and bot-turn (a
//     turn token of bot bound to "other").
func newChoiceWorld(t *testing.T) *choiceWorld {
	t.Helper()
	e := newServiceEnv(t)
	if _, err := e.svc.CreateAgentKey(e.ctx, client.CreateAgentKeyRequest{AgentName: "bot2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.CreateUser(e.ctx, client.CreateUserRequest{Username: "dave", Password: "password-123", Role: RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	w := &choiceWorld{e: e, sessions: map[string]client.SendMailResponse{}}
	w.sessions["work"] = *e.session()
	for name, req := range map[string]client.SendMailRequest{
		"other":  {To: "bot@/work/other.new", Subject: "other", Body: "b"},
		"people": {To: "bob", Subject: "lunch", Body: "b"},
	} {
		r, err := e.svc.Send(e.ctx, e.alice, req)
		if err != nil {
			t.Fatal(err)
		}
		w.sessions[name] = *r
	}
	e.mirrorBoundAndLoose(w.sessions["work"].SessionID)
	work, now := w.sessions["work"], "work-now"
	renamed, err := e.svc.UpdateSession(e.ctx, e.alice, work.SessionID, client.UpdateSessionRequest{Alias: &now})
	if err != nil || renamed.Alias != "work-now" || !reflect.DeepEqual(renamed.FormerAliases, []string{work.SessionAlias}) {
		t.Fatalf("renaming %q to work-now = %+v, %v", work.SessionAlias, renamed, err)
	}
	w.former = map[string]string{"work": work.SessionAlias}
	work.SessionAlias = renamed.Alias
	w.sessions["work"] = work
	w.who = map[string]*Principal{
		"alice": e.alice, "bob": e.bob, "carol": e.carol, "bot": e.bot,
		"bot2":  {Kind: PrincipalAgent, Name: "bot2", AuthKind: AuthAgentKey},
		"admin": {Kind: PrincipalPerson, Name: "dave", Role: RoleAdmin, AuthKind: AuthUserKey},
		"bot-turn": {Kind: PrincipalAgent, Name: "bot", AuthKind: AuthTurnToken,
			TurnSession: w.sessions["other"].SessionID},
	}
	return w
}

// choose runs the send path up to and including chooseSession, in one
// write transaction (rolled back on error), and answers the spec it used.
func (w *choiceWorld) choose(p *Principal, req client.SendMailRequest) (*sendSpec, store.SessionRow, bool, error) {
	e := w.e
	ctx := WithPrincipal(e.ctx, p)
	spec, err := e.svc.parseSend(p, req)
	if err != nil {
		return nil, store.SessionRow{}, false, err
	}
	if err := e.svc.resolveRecipients(ctx, spec); err != nil {
		return spec, store.SessionRow{}, false, err
	}
	var sess store.SessionRow
	var opened bool
	err = e.svc.Write(ctx, func(tx *Tx) error {
		parent, err := replyParent(ctx, tx.Q, p, spec)
		if err != nil {
			return err
		}
		senderKind := store.KindPerson
		if p.IsAgent() {
			senderKind = store.KindAgent
		}
		sess, opened, err = e.svc.chooseSession(ctx, tx, p, senderKind, spec, parent, sendTargets(spec))
		return err
	})
	return spec, sess, opened, err
}

func (w *choiceWorld) sessionCount() int {
	w.e.t.Helper()
	var n int
	if err := w.e.svc.Read().QueryRow(w.e.ctx, `SELECT COUNT(*) FROM mail_sessions`).Scan(&n); err != nil {
		w.e.t.Fatal(err)
	}
	return n
}

// TestChooseSession covers each branch of the session rule of a send
// (chooseSession, lookupSession): .new, .alias (membership, the platform
// mirror bound and unbound), no session part (reply, default, none yet,
// turn scope), relays and former aliases. In To, {work} stands for the
// current alias of the fixture session "work" and {former:work} for its
// former alias; replyTo names the fixture session whose first mail is
// answered. want names the fixture session the mail must land in (the
// chosen row carrying that session's current alias), or is "" for a
// session this send opens (with alias source wantSource). An error
// case names its code and field; every alias_not_found must be exactly the
// answer of an unknown alias for that address (aliasNotFound), so an alias
// one may not use tells nothing about its session. Nothing is stored by an
// error, and nothing is opened when an existing session is chosen.
func TestChooseSession(t *testing.T) {
	cases := []struct {
		name       string
		from       string
		req        client.SendMailRequest
		replyTo    string
		want       string
		wantSource string
		wantAlias  string
		wantCode   string
		wantField  string
		noResolve  bool // do not compare with GET /address/resolve
	}{
		// .new
		{name: "new to an agent opens a session named after the subject", from: "alice",
			req: client.SendMailRequest{To: "bot@/work/proj.new"}, wantSource: store.AliasSubject, wantAlias: "subject"},
		{name: "new with a person's alias is a manual alias", from: "alice",
			req: client.SendMailRequest{To: "bot@/work/proj.new", SessionAlias: "my-topic"}, wantSource: store.AliasManual, wantAlias: "my-topic"},
		{name: "new with an agent's alias stays auto", from: "bot",
			req: client.SendMailRequest{To: "alice@.new", SessionAlias: "bots-topic"}, wantSource: store.AliasAuto, wantAlias: "bots-topic"},
		{name: "new to an agent without a path never reaches the choice", from: "alice",
			req: client.SendMailRequest{To: "bot@.new"}, wantCode: "missing_path", wantField: "to"},
		// .alias and membership
		{name: "alias of a session the sender takes part in", from: "bob",
			req: client.SendMailRequest{To: "bot@/work/proj.{work}"}, want: "work"},
		{name: "alias of an existing session the sender takes no part in", from: "carol",
			req: client.SendMailRequest{To: "bot@/work/proj.{work}"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "alias that does not exist", from: "alice",
			req: client.SendMailRequest{To: "bot@/work/proj.no-such-alias"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "alias of a session the addressed agent takes no part in", from: "alice",
			req: client.SendMailRequest{To: "bot2@/work/proj.{work}"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "alias of a session, from the session's agent", from: "bot",
			req: client.SendMailRequest{To: "alice@.{work}"}, want: "work"},
		{name: "alias of a session outside a turn token's session", from: "bot-turn",
			req: client.SendMailRequest{To: "alice@.{work}"}, wantCode: "alias_not_found", wantField: "to"},
		// the platform-session mirror
		{name: "mirrored slug bound to a session the sender takes part in", from: "bob",
			req: client.SendMailRequest{To: "bot@/work/proj.bound-slug"}, want: "work"},
		{name: "mirrored slug bound to a session the sender takes no part in", from: "carol",
			req: client.SendMailRequest{To: "bot@/work/proj.bound-slug"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "unbound mirrored slug, admin: opens the bound session", from: "admin",
			req: client.SendMailRequest{To: "bot@/work/proj.loose-slug"}, wantSource: store.AliasPlatformSlug, wantAlias: "loose-slug"},
		{name: "unbound mirrored slug, not an admin", from: "alice",
			req: client.SendMailRequest{To: "bot@/work/proj.loose-slug"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "mirrored slug of a person is no alias", from: "alice",
			req: client.SendMailRequest{To: "bob@.loose-slug"}, wantCode: "alias_not_found", wantField: "to"},
		// no session part
		{name: "reply stays in the replied mail's session, not the default", from: "bot",
			req: client.SendMailRequest{To: "alice"}, replyTo: "work", want: "work"},
		{name: "default to an agent: its session at the path with the sender", from: "bob",
			req: client.SendMailRequest{To: "bot@/work/proj"}, want: "work"},
		// The send cleans the path; GET /address/resolve does not (it
		// previews no default session for /work/proj/), so it is not
		// compared here.
		{name: "default to an agent: the path is cleaned", from: "bob",
			req: client.SendMailRequest{To: "bot@/work/proj/"}, want: "work", noResolve: true},
		{name: "default to an agent with no session yet", from: "carol",
			req: client.SendMailRequest{To: "bot@/work/proj"}, wantSource: store.AliasSubject},
		{name: "default to an agent without a path never reaches the choice", from: "alice",
			req: client.SendMailRequest{To: "bot"}, wantCode: "missing_path", wantField: "to"},
		{name: "default from an agent to a person: the agent's session with the person", from: "bot",
			req: client.SendMailRequest{To: "bob"}, want: "work"},
		{name: "default from an agent to a person: the most recent of several", from: "bot",
			req: client.SendMailRequest{To: "alice"}, want: "other"},
		{name: "default from an agent to a person in none of its sessions", from: "bot",
			req: client.SendMailRequest{To: "carol"}, wantSource: store.AliasSubject},
		{name: "default between people: their people-only session", from: "bob",
			req: client.SendMailRequest{To: "alice"}, want: "people"},
		{name: "default outside a turn token's session is none", from: "bot-turn",
			req: client.SendMailRequest{To: "bob"}, wantSource: store.AliasSubject},
		// relays
		{name: "relay stays in the replied mail's session, not the default", from: "bot",
			req: client.SendMailRequest{To: "alice", Relay: client.RelaySummary, RelayKey: "k1"}, replyTo: "work", want: "work"},
		{name: "relay naming its own session's alias", from: "bot",
			req: client.SendMailRequest{To: "alice@.{work}", Relay: client.RelaySummary, RelayKey: "k3"}, replyTo: "work", want: "work"},
		{name: "relay cannot open a session", from: "bot",
			req: client.SendMailRequest{To: "alice@.new", Relay: client.RelaySummary, RelayKey: "k4"}, replyTo: "work", wantCode: "invalid_field", wantField: "to"},
		{name: "relay naming an alias it may not see", from: "bot",
			req: client.SendMailRequest{To: "alice@.{people}", Relay: client.RelaySummary, RelayKey: "k5"}, replyTo: "work", wantCode: "alias_not_found", wantField: "to"},
		// former aliases (issue 14): the session's people reach it as by its
		// current alias; to anyone else it is an unknown alias
		{name: "former alias of a session the sender takes part in", from: "bob",
			req: client.SendMailRequest{To: "bot@/work/proj.{former:work}"}, want: "work"},
		{name: "former alias of a session, from the session's agent", from: "bot",
			req: client.SendMailRequest{To: "alice@.{former:work}"}, want: "work"},
		{name: "former alias of a session, from the person who renamed it", from: "alice",
			req: client.SendMailRequest{To: "bot@/work/proj.{former:work}"}, want: "work"},
		{name: "former alias of a session the sender takes no part in", from: "carol",
			req: client.SendMailRequest{To: "bot@/work/proj.{former:work}"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "former alias of a session, from an admin who takes no part in it", from: "admin",
			req: client.SendMailRequest{To: "bot@/work/proj.{former:work}"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "former alias of a session the addressed agent takes no part in", from: "alice",
			req: client.SendMailRequest{To: "bot2@/work/proj.{former:work}"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "former alias of a session outside a turn token's session", from: "bot-turn",
			req: client.SendMailRequest{To: "alice@.{former:work}"}, wantCode: "alias_not_found", wantField: "to"},
		{name: "relay naming its own session's former alias", from: "bot",
			req: client.SendMailRequest{To: "alice@.{former:work}", Relay: client.RelaySummary, RelayKey: "k6"}, replyTo: "work", want: "work"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newChoiceWorld(t)
			req := c.req
			req.Subject, req.Body = "subject", "body"
			for name, old := range w.former {
				req.To = strings.ReplaceAll(req.To, "{former:"+name+"}", old)
			}
			for name, r := range w.sessions {
				req.To = strings.ReplaceAll(req.To, "{"+name+"}", r.SessionAlias)
			}
			if c.replyTo != "" {
				req.ReplyTo = w.sessions[c.replyTo].MailID
			}
			if c.replyTo == "" && !c.noResolve {
				w.checkResolveAgrees(t, c.from, req.To, c.want, c.wantCode)
			}
			before := w.sessionCount()
			spec, sess, opened, err := w.choose(w.who[c.from], req)
			after := w.sessionCount()

			if c.wantCode != "" {
				e := AsError(err)
				if e == nil || e.Code != c.wantCode || e.Field != c.wantField {
					t.Fatalf("%s -> %s: err = %v (%+v), want code %s field %s", c.from, req.To, err, e, c.wantCode, c.wantField)
				}
				if c.wantCode == "alias_not_found" {
					if unknown := aliasNotFound(spec.to).(*Error); !reflect.DeepEqual(e, unknown) {
						t.Errorf("%s -> %s answers %+v; an unknown alias answers %+v", c.from, req.To, e, unknown)
					}
				}
				if after != before {
					t.Errorf("a refused choice stored %d sessions", after-before)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s -> %s: %v", c.from, req.To, err)
			}
			if c.want != "" {
				if opened || sess.SessionID != w.sessions[c.want].SessionID {
					t.Errorf("%s -> %s landed in %s (opened %v), want the session %q (%s)", c.from, req.To,
						sess.SessionID, opened, c.want, w.sessions[c.want].SessionID)
				}
				if sess.Alias != w.sessions[c.want].SessionAlias {
					t.Errorf("%s -> %s answers alias %q, want the session's current alias %q", c.from, req.To,
						sess.Alias, w.sessions[c.want].SessionAlias)
				}
				if after != before {
					t.Errorf("choosing an existing session stored %d sessions", after-before)
				}
				return
			}
			if !opened || after != before+1 {
				t.Fatalf("%s -> %s: opened %v, sessions %d -> %d; want one new session", c.from, req.To, opened, before, after)
			}
			for name, r := range w.sessions {
				if sess.SessionID == r.SessionID {
					t.Fatalf("%s -> %s landed in the fixture session %q, want a new one", c.from, req.To, name)
				}
			}
			if sess.AliasSource != c.wantSource {
				t.Errorf("alias source = %q, want %q", sess.AliasSource, c.wantSource)
			}
			if c.wantAlias != "" && sess.Alias != c.wantAlias {
				t.Errorf("alias = %q, want %q", sess.Alias, c.wantAlias)
			}
			if c.wantSource == store.AliasPlatformSlug && sess.PlatformSessionID != "p2" {
				t.Errorf("platform session = %q, want the mirrored p2", sess.PlatformSessionID)
			}
		})
	}
}

// checkResolveAgrees checks that GET /address/resolve previews what the
// send's choice does for from -> to (lookupSession serves both): the same
// error code (field "address"), the same existing session (want) with its
// current alias (also for a former alias, issue 14; a mirrored slug
// answers the slug it names), or no session yet. Cases with a reply, and
// so every relay, are not compared: Resolve previews a mail without
// reply_to.
func (w *choiceWorld) checkResolveAgrees(t *testing.T, from, to, want, wantCode string) {
	t.Helper()
	p := w.who[from]
	res, err := w.e.svc.Resolve(WithPrincipal(w.e.ctx, p), p, to)
	if wantCode != "" {
		if e := AsError(err); e == nil || e.Code != wantCode || e.Field != "address" {
			t.Errorf("resolve %s for %s = %+v, %v; want code %s field address", to, from, res, err, wantCode)
		}
		return
	}
	switch {
	case err != nil:
		t.Errorf("resolve %s for %s: %v", to, from, err)
	case want == "" && res.Exists:
		t.Errorf("resolve %s for %s exists (%s); the send opens a new session", to, from, res.SessionID)
	case want != "" && (!res.Exists || res.SessionID != w.sessions[want].SessionID):
		t.Errorf("resolve %s for %s = %+v; want the session %q", to, from, res, want)
	case want != "":
		wantAlias := w.sessions[want].SessionAlias
		if strings.HasSuffix(to, ".bound-slug") {
			wantAlias = "bound-slug"
		}
		if res.Alias != wantAlias {
			t.Errorf("resolve %s for %s answers alias %q, want %q", to, from, res.Alias, wantAlias)
		}
	}
}

// TestChooseSessionOpensTheMirrorsSessionAtItsWorkspace checks the one
// effect of the unbound-mirror branch beyond the session: an address
// without a path takes the mirrored platform session's workspace as the
// recipient's path.
func TestChooseSessionOpensTheMirrorsSessionAtItsWorkspace(t *testing.T) {
	w := newChoiceWorld(t)
	admin := w.who["admin"]
	spec, err := w.e.svc.parseSend(admin, client.SendMailRequest{To: "bot@.loose-slug", Subject: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.e.svc.resolveRecipients(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	targets := sendTargets(spec)
	var opened bool
	err = w.e.svc.Write(w.e.ctx, func(tx *Tx) error {
		var err error
		_, opened, err = w.e.svc.chooseSession(w.e.ctx, tx, admin, store.KindPerson, spec, nil, targets)
		return err
	})
	if err != nil || !opened {
		t.Fatalf("admin -> bot@.loose-slug: opened %v, %v", opened, err)
	}
	if targets[0].addr.Path != "/work/proj" {
		t.Errorf("recipient path = %q, want the mirror's workspace /work/proj", targets[0].addr.Path)
	}
	if spec.sessionAlias != "loose-slug" {
		t.Errorf("session alias = %q, want the slug", spec.sessionAlias)
	}
}
