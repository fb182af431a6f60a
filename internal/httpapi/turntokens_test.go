package httpapi_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// turnFixture is carol with two sessions with agent tta (a and b) and a
// turn token of tta for session a.
type turnFixture struct {
	e        *env
	carol    *client.Client
	agent    *client.Client // the agent key
	tt       *client.Client // the turn token
	token    *client.TurnToken
	a, b     *client.SendMailResponse // carol's opening mails
	aliasOfB string
}

func newTurnFixture(t *testing.T) *turnFixture {
	t.Helper()
	e := newEnv(t)
	f := &turnFixture{e: e, carol: e.person("carol"), agent: e.agent("tta")}
	var err error
	if f.a, err = f.carol.MeSend(e.ctx(), client.SendMailRequest{To: "tta@/home/carol/a.new", Subject: "first job", Body: "do a"}); err != nil {
		t.Fatal(err)
	}
	if f.b, err = f.carol.MeSend(e.ctx(), client.SendMailRequest{To: "tta@/home/carol/b.new", Subject: "second job", Body: "do b"}); err != nil {
		t.Fatal(err)
	}
	f.aliasOfB = f.b.SessionAlias
	if f.token, err = f.agent.CreateTurnToken(e.ctx(), f.a.SessionID); err != nil {
		t.Fatal(err)
	}
	if f.token.SessionID != f.a.SessionID || f.token.Token == "" || f.token.TokenID == "" ||
		!f.token.ExpiresAt.Equal(e.clock.Now().Add(gateway.DefaultTurnTokenTTL)) {
		t.Fatalf("turn token = %+v", f.token)
	}
	f.tt = client.New(e.url, client.WithToken(f.token.Token))
	return f
}

// sameError fails unless both errors are the same API error (status and
// the whole body), so a refused session tells nothing an unknown one does
// not.
func sameError(t *testing.T, what string, got, unknown error, status int, code string) {
	t.Helper()
	g := wantStatus(t, got, status, code)
	u := wantStatus(t, unknown, status, code)
	if !reflect.DeepEqual(g.Body, u.Body) {
		t.Fatalf("%s: refused %+v, unknown %+v: the answers differ", what, g.Body, u.Body)
	}
}

func TestTurnTokenWorksInItsSession(t *testing.T) {
	f := newTurnFixture(t)
	e, ctx := f.e, f.e.ctx()
	if s, err := f.tt.GetSession(ctx, f.a.SessionID); err != nil || s.SessionID != f.a.SessionID {
		t.Fatalf("session = %+v, %v", s, err)
	}
	if m, err := f.tt.GetMail(ctx, f.a.MailID); err != nil || m.Body != "do a" {
		t.Fatalf("mail = %+v, %v", m, err)
	}
	if th, err := f.tt.Thread(ctx, f.a.MailID); err != nil || len(th.Mails) != 1 {
		t.Fatalf("thread = %+v, %v", th, err)
	}
	if ps, err := f.tt.Participants(ctx, f.a.SessionID); err != nil || len(ps.Participants) != 2 {
		t.Fatalf("participants = %+v, %v", ps, err)
	}
	r, err := f.tt.SendMail(ctx, client.SendMailRequest{To: "carol", ReplyTo: f.a.MailID, Body: "working on a"})
	if err != nil || r.SessionID != f.a.SessionID {
		t.Fatalf("reply = %+v, %v", r, err)
	}
	if _, err := f.tt.SendMail(ctx, client.SendMailRequest{To: "carol@." + f.a.SessionAlias, Subject: "note", Body: "by alias"}); err != nil {
		t.Fatalf("send by alias: %v", err)
	}
	p, err := f.tt.RequestPermission(ctx, client.PermissionRequest{SessionID: f.a.SessionID, Question: "may I run make?",
		RelayKey: "tt-1", Tool: "run_command", ToolInput: map[string]any{"command": "make"}})
	if err != nil {
		t.Fatalf("permission request: %v", err)
	}
	if got, err := f.tt.GetPermission(ctx, p.MailID); err != nil || got.MailID != p.MailID {
		t.Fatalf("permission = %+v, %v", got, err)
	}
	if _, err := f.tt.Grants(ctx, f.a.SessionID, "run_command"); err != nil {
		t.Fatalf("grants: %v", err)
	}
	if res, err := f.tt.Resolve(ctx, "carol@."+f.a.SessionAlias); err != nil || !res.Exists || res.SessionID != f.a.SessionID {
		t.Fatalf("resolve = %+v, %v", res, err)
	}
	if _, err := f.tt.AllowedModels(ctx); err != nil {
		t.Fatalf("allowed models: %v", err)
	}
	_ = e
}

func TestTurnTokenAnswersOtherSessionsAsUnknown(t *testing.T) {
	f := newTurnFixture(t)
	ctx := f.e.ctx()
	const unknownID = "01J00000000000000000000000"
	// The agent key itself sees session b: the refusals below are the
	// token's, not the agent's.
	if _, err := f.agent.GetSession(ctx, f.b.SessionID); err != nil {
		t.Fatalf("agent key, session b: %v", err)
	}
	_, got := f.tt.GetSession(ctx, f.b.SessionID)
	_, unk := f.tt.GetSession(ctx, unknownID)
	sameError(t, "GET session", got, unk, 404, "session_not_found")

	_, got = f.tt.Participants(ctx, f.b.SessionID)
	_, unk = f.tt.Participants(ctx, unknownID)
	sameError(t, "participants", got, unk, 404, "session_not_found")

	_, got = f.tt.GetMail(ctx, f.b.MailID)
	_, unk = f.tt.GetMail(ctx, unknownID)
	sameError(t, "GET mail", got, unk, 404, "mail_not_found")

	_, got = f.tt.Thread(ctx, f.b.MailID)
	_, unk = f.tt.Thread(ctx, unknownID)
	sameError(t, "thread", got, unk, 404, "mail_not_found")

	_, got = f.tt.SendMail(ctx, client.SendMailRequest{To: "carol", ReplyTo: f.b.MailID, Body: "into b"})
	_, unk = f.tt.SendMail(ctx, client.SendMailRequest{To: "carol", ReplyTo: unknownID, Body: "into b"})
	sameError(t, "reply into b", got, unk, 404, "mail_not_found")

	_, got = f.tt.SendMail(ctx, client.SendMailRequest{To: "carol@." + f.aliasOfB, Subject: "x", Body: "into b"})
	_, unk = f.tt.SendMail(ctx, client.SendMailRequest{To: "carol@.no-such-alias-here", Subject: "x", Body: "into b"})
	wantStatus(t, got, 404, "alias_not_found")
	wantStatus(t, unk, 404, "alias_not_found")

	_, got = f.tt.SendMail(ctx, client.SendMailRequest{To: "carol", Relay: client.RelaySummary, RelayKey: "sum-b", ReplyTo: f.b.MailID, Body: "summary of b"})
	_, unk = f.tt.SendMail(ctx, client.SendMailRequest{To: "carol", Relay: client.RelaySummary, RelayKey: "sum-x", ReplyTo: unknownID, Body: "summary of b"})
	sameError(t, "summary relay into b", got, unk, 404, "mail_not_found")

	perm := func(sid, key string) error {
		_, err := f.tt.RequestPermission(ctx, client.PermissionRequest{SessionID: sid, Question: "may I?", RelayKey: key, Tool: "run_command"})
		return err
	}
	sameError(t, "permission request", perm(f.b.SessionID, "k-b"), perm(unknownID, "k-x"), 404, "session_not_found")

	// A request the agent key made in session b is not the token's either.
	pb, err := f.agent.RequestPermission(ctx, client.PermissionRequest{SessionID: f.b.SessionID, Question: "may I in b?", RelayKey: "agent-b", Tool: "run_command"})
	if err != nil {
		t.Fatal(err)
	}
	_, got = f.tt.GetPermission(ctx, pb.MailID)
	_, unk = f.tt.GetPermission(ctx, unknownID)
	sameError(t, "GET permission", got, unk, 404, "permission_not_found")

	_, got = f.tt.Grants(ctx, f.b.SessionID, "run_command")
	_, unk = f.tt.Grants(ctx, unknownID, "run_command")
	sameError(t, "grants", got, unk, 404, "session_not_found")

	resB, err := f.tt.Resolve(ctx, "carol@."+f.aliasOfB)
	if err == nil && (resB.Exists || resB.SessionID != "") {
		t.Fatalf("resolve b = %+v: the token sees session b", resB)
	}
	if sug, err := f.tt.Suggest(ctx, f.aliasOfB, 20); err == nil {
		for _, s := range sug.Suggestions {
			if s.Alias == f.aliasOfB {
				t.Fatalf("suggest shows session b: %+v", s)
			}
		}
	}

	// The inbox lists the token's session only, and marking another
	// session's mail read does nothing.
	in, err := f.tt.Inbox(ctx, client.InboxQuery{Status: "all", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	sawA := false
	for _, m := range in.Mails {
		if m.SessionID != f.a.SessionID {
			t.Fatalf("the inbox shows a mail of another session: %+v", m)
		}
		sawA = sawA || m.MailID == f.a.MailID
	}
	if !sawA {
		t.Fatalf("the inbox lacks the turn's own mail: %+v", in.Mails)
	}
	if mr, err := f.tt.MarkRead(ctx, client.MarkReadRequest{MailIDs: []string{f.b.MailID}}); err != nil || mr.Marked != 0 {
		t.Fatalf("mark read of session b's mail = %+v, %v", mr, err)
	}

	// A mail that opens a session opens one delegated from the turn's
	// session (issue 15): its origin is session a, the sender's path in it
	// a's workspace, and the turn token covers it.
	del, err := f.tt.SendMail(ctx, client.SendMailRequest{To: "carol@.new", Subject: "asking carol", Body: "a question"})
	if err != nil || !del.NewSession {
		t.Fatalf("a delegated send = %+v, %v", del, err)
	}
	ds, err := f.tt.GetSession(ctx, del.SessionID)
	if err != nil || ds.OriginSessionID != f.a.SessionID {
		t.Fatalf("the delegated session through the turn token = %+v, %v; want origin %s", ds, err, f.a.SessionID)
	}
	if m, err := f.carol.MeGetMail(ctx, del.MailID); err != nil || m.FromAddress != "tta@/home/carol/a."+del.SessionAlias {
		t.Fatalf("the delegated mail's sender address = %+v, %v; want tta@/home/carol/a.%s", m, err, del.SessionAlias)
	}
}

func TestTurnTokenCannotActAsTheAgentKey(t *testing.T) {
	f := newTurnFixture(t)
	e, ctx := f.e, f.e.ctx()
	_, err := f.tt.Register(ctx, client.RegisterRequest{Name: "tta", Platform: "test", Workspaces: []client.Workspace{}})
	wantStatus(t, err, 403, "turn_token_not_allowed")
	_, err = f.tt.Heartbeat(ctx, client.HeartbeatRequest{})
	wantStatus(t, err, 403, "turn_token_not_allowed")
	_, err = f.tt.CreateTurnToken(ctx, f.a.SessionID)
	wantStatus(t, err, 403, "turn_token_not_allowed")
	err = f.tt.RevokeTurnToken(ctx, f.token.TokenID)
	wantStatus(t, err, 403, "turn_token_not_allowed")
	_, err = f.tt.CreateSchedule(ctx, client.CreateScheduleRequest{})
	wantStatus(t, err, 403, "turn_token_not_allowed")
	_, err = f.tt.Forward(ctx, f.a.MailID, client.ForwardRequest{To: "carol"})
	wantStatus(t, err, 403, "turn_token_not_allowed")
	if status, body, _ := e.raw(http.MethodGet, "/api/v1/events/stream", f.token.Token, ""); status != 403 {
		t.Fatalf("event stream: %d %s", status, body)
	}
	// Keys: a turn token is an agent, never a person or an admin.
	_, err = f.tt.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "x"})
	wantStatus(t, err, 403, "person_only")
	_, err = f.tt.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "tta", KeyToken: "another-key-0123456789abcdef"})
	wantStatus(t, err, 403, "admin_only")
	if n := e.count("api_keys"); n != 1 {
		t.Fatalf("api_keys = %d, want the one agent key", n)
	}
}

func TestTurnTokenRevokedAndExpired(t *testing.T) {
	f := newTurnFixture(t)
	e, ctx := f.e, f.e.ctx()
	if err := f.agent.RevokeTurnToken(ctx, f.token.TokenID); err != nil {
		t.Fatal(err)
	}
	_, err := f.tt.GetSession(ctx, f.a.SessionID)
	wantStatus(t, err, 401, "turn_token_revoked")
	_, err = f.tt.SendMail(ctx, client.SendMailRequest{To: "carol", ReplyTo: f.a.MailID, Body: "after the turn"})
	wantStatus(t, err, 401, "turn_token_revoked")
	wantStatus(t, f.agent.RevokeTurnToken(ctx, f.token.TokenID), 404, "turn_token_not_found")

	// Another agent cannot revoke tta's token.
	other := e.agent("ttb")
	tok, err := f.agent.CreateTurnToken(ctx, f.a.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, other.RevokeTurnToken(ctx, tok.TokenID), 404, "turn_token_not_found")
	// Nor mint one for a session it does not take part in.
	_, err = other.CreateTurnToken(ctx, f.a.SessionID)
	wantStatus(t, err, 404, "session_not_found")

	// Expiry on the service clock.
	tt := client.New(e.url, client.WithToken(tok.Token))
	e.clock.Advance(gateway.DefaultTurnTokenTTL - time.Second)
	if _, err := tt.GetSession(ctx, f.a.SessionID); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	e.clock.Advance(time.Second)
	_, err = tt.GetSession(ctx, f.a.SessionID)
	wantStatus(t, err, 401, "turn_token_expired")

	// Revoking the agent key ends its turn tokens.
	tok2, err := f.agent.CreateTurnToken(ctx, f.a.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := e.admin.ListAgentKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys.Keys {
		if k.Owner == "tta" {
			if err := e.admin.DeleteAgentKey(ctx, k.KeyID); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, err = client.New(e.url, client.WithToken(tok2.Token)).GetSession(ctx, f.a.SessionID)
	wantStatus(t, err, 401, "key_revoked")
}
