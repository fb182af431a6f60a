package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// wantConfusable fails unless err is a 409 name_confusable on field that
// names the existing name.
func wantConfusable(t *testing.T, err error, field, existing string) {
	t.Helper()
	ae := wantStatus(t, err, 409, "name_confusable")
	if ae.Body.Field != field || !strings.Contains(ae.Body.Error, `"`+existing+`"`) || ae.Body.Suggestion == "" {
		t.Fatalf("409 = %+v, want field %s, a message naming %q and a suggestion", ae.Body, field, existing)
	}
}

func TestLookAlikePersonNamesAreRefused(t *testing.T) {
	e := newEnv(t)
	e.person("bob")
	before := e.count("names")
	for _, name := range []string{"bоb" /* Cyrillic о */, "ｂob" /* full-width b */, "ＢＯＢ", "b0b"} {
		_, err := e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: name, Password: "12345678"})
		wantConfusable(t, err, "username", "bob")
		// A person's look-alike cannot become an agent either.
		_, err = e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: name, Lifecycle: client.LifecyclePermanent})
		wantConfusable(t, err, "agent_name", "bob")
	}
	if n := e.count("names"); n != before {
		t.Fatalf("names = %d after refusals, want %d (nothing claimed)", n, before)
	}
	// The same name in another case is still the name itself.
	_, err := e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: "Bob", Password: "12345678"})
	wantStatus(t, err, 409, "name_taken")

	// Latin with Han stays allowed; Latin with Cyrillic is refused even
	// when it looks like no one.
	if _, err := e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: "张san", Password: "12345678"}); err != nil {
		t.Fatalf("create 张san: %v", err)
	}
	e.login("张san", "12345678")
	_, err = e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: "bоris", Password: "12345678"})
	ae := wantStatus(t, err, 400, "name_mixed_scripts")
	if ae.Body.Field != "username" || !strings.Contains(ae.Body.Error, "Cyrillic") {
		t.Fatalf("400 = %+v, want field username naming Cyrillic", ae.Body)
	}
}

func TestLookAlikeAgentNamesAreRefused(t *testing.T) {
	e := newEnv(t)
	alpha := e.agent("alpha")
	for _, name := range []string{"аlpha" /* Cyrillic а */, "ａlpha" /* full-width a */, "αlpha" /* Greek */} {
		_, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: name, Lifecycle: client.LifecyclePermanent})
		wantConfusable(t, err, "agent_name", "alpha")
		_, err = e.admin.AdminCreateUser(e.ctx(), client.CreateUserRequest{Username: name, Password: "12345678"})
		wantConfusable(t, err, "username", "alpha")
	}
	// The agent itself keeps working: another key under its name in any
	// case, and registering as Alpha.
	if _, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "Alpha", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatalf("second key for alpha: %v", err)
	}
	if _, err := alpha.Register(e.ctx(), client.RegisterRequest{Name: "Alpha", Platform: "test"}); err != nil {
		t.Fatalf("register as Alpha: %v", err)
	}
	if _, err := e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "张bot", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatalf("agent 张bot: %v", err)
	}
}

// Names claimed before look-alikes were refused get their skeleton at
// start; two such names that already look alike both stay, and a third
// look-alike is refused naming the older.
func TestNameSkeletonBackfill(t *testing.T) {
	e := newEnv(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := e.st.Write(e.ctx(), func(q *store.Q) error {
		for i, n := range []string{"dave", "dаve" /* Cyrillic а */} {
			if ok, err := q.ClaimName(e.ctx(), n, store.KindPerson, now.Add(time.Duration(i)*time.Second)); err != nil || !ok {
				t.Fatalf("claim %s: %v %v", n, ok, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // a second run changes nothing
		if err := e.svc.BackfillNameSkeletons(e.ctx()); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "ｄave", Lifecycle: client.LifecyclePermanent})
	wantConfusable(t, err, "agent_name", "dave")
	var nulls int
	if err := e.st.Read().QueryRow(e.ctx(), `SELECT COUNT(*) FROM names WHERE skeleton IS NULL`).Scan(&nulls); err != nil {
		t.Fatal(err)
	}
	if nulls != 1 {
		t.Fatalf("names without skeleton = %d, want 1 (the later of the two old look-alikes)", nulls)
	}
}
