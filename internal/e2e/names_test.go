package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Look-alike names over the real binary: with bob and agent alpha existing,
// bоb (Cyrillic о), ｂob (full width), аlpha and ａlpha are 409
// name_confusable naming the existing name, 张san is allowed; after a
// restart on a database whose names have no skeletons yet (as before
// migration 0014, with two old look-alikes), the gateway fills them in and
// still refuses new look-alikes.
func TestLookAlikeNamesOverTheBinary(t *testing.T) {
	dataDir := t.TempDir()
	gw := startGateway(t, dataDir)
	ctx := ctxT(t)
	admin := client.New(gw.URL, client.WithCookieJar())
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("login: %v\n%s", err, gw.Log.String())
	}
	if _, err := admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "bob", Password: "bob-password"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "alpha", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatal(err)
	}
	refused := func(field, name, existing string) {
		t.Helper()
		refuseLookAlike(t, ctx, admin, field, name, existing)
	}
	refused("username", "bоb", "bob")
	refused("username", "ｂob", "bob")
	refused("agent_name", "аlpha", "alpha")
	refused("agent_name", "ａlpha", "alpha")
	if _, err := admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "张san", Password: "12345678"}); err != nil {
		t.Fatalf("create 张san: %v", err)
	}
	gw.Shutdown(t)

	// As before migration 0014: no skeletons, and two old look-alikes.
	st, err := store.Open(context.Background(), store.Options{DataDir: dataDir, DatabaseURL: e2eDatabaseURL(t, dataDir)})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Write(ctx, func(q *store.Q) error {
		if _, err := q.Exec(ctx, `UPDATE names SET skeleton = NULL`); err != nil {
			return err
		}
		_, err := q.ClaimName(ctx, "dаve" /* Cyrillic а */, store.KindPerson, time.Now())
		if err == nil {
			_, err = q.ClaimName(ctx, "dave", store.KindPerson, time.Now().Add(time.Second))
		}
		return err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	gw = startGateway(t, dataDir)
	admin = client.New(gw.URL, client.WithCookieJar())
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatalf("login after restart: %v\n%s", err, gw.Log.String())
	}
	refused("username", "ｂob", "bob")
	refused("agent_name", "ａlpha", "alpha")
	refused("agent_name", "ｄave", "dаve")
	if !strings.Contains(gw.Log.String(), "two names look alike") {
		t.Fatalf("no warning about the old look-alikes dave and dаve:\n%s", gw.Log.String())
	}
	gw.Shutdown(t)
}

// refuseLookAlike has admin create the person (field "username") or agent
// ("agent_name") name and fails unless the answer is 409 name_confusable
// for that field, naming the existing name.
func refuseLookAlike(t *testing.T, ctx context.Context, admin *client.Client, field, name, existing string) {
	t.Helper()
	var err error
	if field == "username" {
		_, err = admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: name, Password: "12345678"})
	} else {
		_, err = admin.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: name, Lifecycle: client.LifecyclePermanent})
	}
	ae := wantStatus(t, err, 409, "name_confusable")
	if ae.Body.Field != field || !strings.Contains(ae.Body.Error, `"`+existing+`"`) {
		t.Fatalf("%s %q: %+v, want field %s naming %q", field, name, ae.Body, field, existing)
	}
}
