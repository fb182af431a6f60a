package gateway

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

func TestAllowedModelsSetInOrderAndUnrestrictedWhenUnset(t *testing.T) {
	e := newServiceEnv(t)
	got, err := e.svc.AllowedModels(e.ctx, "bot")
	if err != nil || !got.ModelsUnrestricted || len(got.AllowedModels) != 0 {
		t.Fatalf("unset = %+v, %v; want unrestricted", got, err)
	}
	list := []client.ModelRef{{Provider: "p2", Model: "b"}, {Provider: "p1", Model: "a"}, {Provider: "p1", Model: "c"}}
	got, err = e.svc.SetAllowedModels(e.ctx, "bot", client.AllowedModels{AllowedModels: list})
	if err != nil || got.ModelsUnrestricted || !reflect.DeepEqual(got.AllowedModels, list) {
		t.Fatalf("set = %+v, %v", got, err)
	}
	hb, err := e.svc.Heartbeat(e.ctx, e.bot, client.HeartbeatRequest{})
	if err != nil || hb.ModelsUnrestricted || !reflect.DeepEqual(hb.AllowedModels, list) {
		t.Fatalf("heartbeat = %+v, %v", hb, err)
	}
	// An empty list allows nothing, which is not unrestricted.
	got, _ = e.svc.SetAllowedModels(e.ctx, "bot", client.AllowedModels{AllowedModels: []client.ModelRef{}})
	if got.ModelsUnrestricted || len(got.AllowedModels) != 0 {
		t.Errorf("empty list = %+v", got)
	}
	got, _ = e.svc.SetAllowedModels(e.ctx, "bot", client.AllowedModels{ModelsUnrestricted: true})
	if !got.ModelsUnrestricted {
		t.Errorf("unrestricted again = %+v", got)
	}
	for _, bad := range []client.AllowedModels{
		{ModelsUnrestricted: true, AllowedModels: list},
		{AllowedModels: []client.ModelRef{{Provider: "p", Model: ""}}},
		{AllowedModels: []client.ModelRef{{Provider: "p", Model: "m"}, {Provider: "p", Model: "m"}}},
	} {
		_, err := e.svc.SetAllowedModels(e.ctx, "bot", bad)
		wantCode(t, err, KindInvalid, "")
	}
	_, err = e.svc.SetAllowedModels(e.ctx, "ghost", client.AllowedModels{ModelsUnrestricted: true})
	wantCode(t, err, KindNotFound, "agent_not_found")
	if got, _ := e.svc.AllowedModels(e.ctx, "bot"); !got.ModelsUnrestricted {
		t.Errorf("a refused change changed the scope: %+v", got)
	}
}

func ts(s string) *time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return &t
}

func TestNormalizePlatformSessions(t *testing.T) {
	in := []client.PlatformSession{
		{PlatformID: "1", Slug: "fix-leak", UpdatedAt: ts("2026-09-01T10:00:00Z")},
		{PlatformID: "2", Slug: ""},
		{PlatformID: "3", Slug: "fix-leak", UpdatedAt: ts("2026-09-02T10:00:00Z")},
		{PlatformID: "4", Slug: " refactor ", UpdatedAt: nil},
		{PlatformID: "5", Slug: "refactor", UpdatedAt: nil},
		{PlatformID: "6", Slug: "docs", UpdatedAt: ts("2026-09-01T00:00:00Z")},
		{PlatformID: "6", Slug: "docs-2", UpdatedAt: ts("2026-09-03T00:00:00Z")},
	}
	got := NormalizePlatformSessions(in)
	var ids []string
	for _, p := range got {
		ids = append(ids, p.PlatformID+":"+p.Slug)
	}
	if want := "3:fix-leak,4:refactor,6:docs-2"; strings.Join(ids, ",") != want {
		t.Errorf("normalized = %v, want %s", ids, want)
	}
	if got := NormalizePlatformSessions(nil); len(got) != 0 {
		t.Errorf("nil → %v", got)
	}
}

func TestHeartbeatMirrorDropsNoSlugAndDuplicates(t *testing.T) {
	e := newServiceEnv(t)
	list := []client.PlatformSession{
		{PlatformID: "a", Workspace: "/w", Slug: "one", UpdatedAt: ts("2026-09-01T00:00:00Z")},
		{PlatformID: "b", Workspace: "/w", Slug: ""},
		{PlatformID: "c", Workspace: "/w", Slug: "one", UpdatedAt: ts("2026-09-02T00:00:00Z")},
	}
	hb, err := e.svc.Heartbeat(e.ctx, e.bot, client.HeartbeatRequest{PlatformSessions: &list})
	if err != nil {
		t.Fatal(err)
	}
	if hb.PlatformSessionsSynced != 1 {
		t.Errorf("synced = %d, want 1", hb.PlatformSessionsSynced)
	}
	d, _ := e.svc.AgentDetail(e.ctx, "bot", nil)
	if len(d.PlatformSessions) != 1 || d.PlatformSessions[0].PlatformID != "c" {
		t.Errorf("mirror = %+v", d.PlatformSessions)
	}
	// A person outside the mirror's sessions (and no admin) is not shown it
	// on the agent's page either: its title and workspace are the session's.
	if d, err := e.svc.AgentDetail(e.ctx, "bot", e.carol); err != nil || len(d.PlatformSessions) != 0 {
		t.Errorf("carol sees the mirror on the agent's page: %+v, %v", d, err)
	}
}

func TestSuggestResolveParticipantsContacts(t *testing.T) {
	e := newServiceEnv(t)
	e.alice.Role = RoleAdmin // an unbound mirrored platform session is offered to admins
	s := e.session()         // alice → bot@/work/proj (cc bob)
	mirror := []client.PlatformSession{{PlatformID: "p1", Workspace: "/work/other", Slug: "witty-planet", Title: "重构导入路径", UpdatedAt: ts("2026-09-02T09:00:00Z")}}
	if _, err := e.svc.Heartbeat(e.ctx, e.bot, client.HeartbeatRequest{PlatformSessions: &mirror}); err != nil {
		t.Fatal(err)
	}
	sl, err := e.svc.Suggest(e.ctx, e.alice, "bot", 10)
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[string]string{}
	for _, sg := range sl.Suggestions {
		addrs[sg.Address] = sg.Kind
	}
	sess, _ := e.svc.Read().GetSession(e.ctx, s.SessionID)
	for addr, kind := range map[string]string{
		"bot@/work/proj." + sess.Alias: SuggestSession,
		"bot@/work/other.witty-planet": SuggestSession,
		"bot@/work/proj":               SuggestAgent,
		"bot@/work/other":              SuggestWorkspace,
	} {
		if addrs[addr] != kind {
			t.Errorf("suggestion %s: kind %q, want %q (all: %v)", addr, addrs[addr], kind, addrs)
		}
	}
	// The most recent first: the mail session (10:00) before the mirror (09:00).
	if sl.Suggestions[0].Address != "bot@/work/proj."+sess.Alias {
		t.Errorf("first suggestion = %+v", sl.Suggestions[0])
	}
	// Title matches count too; limit holds.
	if sl, _ := e.svc.Suggest(e.ctx, e.alice, "重构", 10); len(sl.Suggestions) != 1 || sl.Suggestions[0].Alias != "witty-planet" {
		t.Errorf("title search = %+v", sl.Suggestions)
	}
	if sl, _ := e.svc.Suggest(e.ctx, e.alice, "", 2); len(sl.Suggestions) != 2 {
		t.Errorf("limit 2 gave %d", len(sl.Suggestions))
	}
	// carol takes part in nothing: she sees no mail session of alice's.
	sl, _ = e.svc.Suggest(e.ctx, e.carol, sess.Alias, 10)
	for _, sg := range sl.Suggestions {
		if sg.Alias == sess.Alias {
			t.Errorf("carol sees another's session: %+v", sg)
		}
	}

	// Resolve: previews, creates nothing.
	before := e.countMails("1 = 1")
	res, err := e.svc.Resolve(e.ctx, e.alice, "bot@/work/proj")
	if err != nil || !res.Exists || res.SessionID != s.SessionID || res.Session != "default" || res.Kind != "agent" {
		t.Errorf("resolve default = %+v, %v", res, err)
	}
	res, err = e.svc.Resolve(e.ctx, e.alice, "bot@/work/proj.new")
	if err != nil || res.Exists || res.Session != "new" {
		t.Errorf("resolve new = %+v, %v", res, err)
	}
	res, err = e.svc.Resolve(e.ctx, e.alice, "bot@/work/other.witty-planet")
	if err != nil || res.Exists || res.Session != "alias" || res.Workspace != "/work/other" {
		t.Errorf("resolve mirror slug = %+v, %v", res, err)
	}
	res, err = e.svc.Resolve(e.ctx, e.alice, "bob")
	if err != nil || res.Kind != "person" {
		t.Errorf("resolve person = %+v, %v", res, err)
	}
	_, err = e.svc.Resolve(e.ctx, e.alice, "bot@/work/proj.nope")
	wantCode(t, err, KindNotFound, "alias_not_found")
	_, err = e.svc.Resolve(e.ctx, e.alice, "ghost@/x")
	wantCode(t, err, KindNotFound, "recipient_not_found")
	_, err = e.svc.Resolve(e.ctx, e.alice, "bot")
	wantCode(t, err, KindInvalid, "")
	_, err = e.svc.Resolve(e.ctx, e.alice, "a@b@c")
	wantCode(t, err, KindInvalid, "")
	if after := e.countMails("1 = 1"); after != before {
		t.Errorf("resolve stored mails: %d → %d", before, after)
	}
	var nsess int
	e.svc.Read().QueryRow(e.ctx, `SELECT COUNT(*) FROM mail_sessions`).Scan(&nsess)
	if nsess != 1 {
		t.Errorf("%d sessions after resolving, want 1", nsess)
	}

	pl, err := e.svc.SessionParticipants(e.ctx, e.bot, s.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, p := range pl.Participants {
		parts = append(parts, p.Name+"="+p.Address)
	}
	want := "alice=alice@." + sess.Alias + ",bob=bob@." + sess.Alias + ",bot=bot@/work/proj." + sess.Alias
	if strings.Join(parts, ",") != want {
		t.Errorf("participants = %v, want %s", parts, want)
	}
	_, err = e.svc.SessionParticipants(e.ctx, e.carol, s.SessionID)
	wantCode(t, err, KindNotFound, "session_not_found")

	cl, _ := e.svc.Contacts(e.ctx, e.bot)
	var names []string
	for _, c := range cl.Contacts {
		names = append(names, c.Name+":"+c.Kind)
	}
	if strings.Join(names, ",") != "admin:person,alice:person,bob:person,bot:agent,carol:person" &&
		strings.Join(names, ",") != "alice:person,bob:person,bot:agent,carol:person" {
		t.Errorf("contacts = %v", names)
	}
}
