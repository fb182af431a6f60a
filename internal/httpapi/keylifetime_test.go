package httpapi_test

import (
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// Key lifetimes (trust boundary, point 7): a key creates only keys that
// expire no later than itself, a one-time key creates none, and a person
// signed in with the password (cookie) creates any. Refusals are 403s
// naming the field and store nothing.
func TestKeysCreateOnlyKeysThatDieNoLaterThanThemselves(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx()
	now := e.clock.Now()
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	keyClient := func(req client.CreateUserKeyRequest) *client.Client {
		t.Helper()
		k, err := e.admin.CreateUserKey(ctx, req) // the cookie session creates any key
		if err != nil {
			t.Fatalf("cookie creates %s key: %v", req.Lifecycle, err)
		}
		return client.New(e.url, client.WithToken(k.KeyToken))
	}
	keyCount := func() int {
		t.Helper()
		l, err := e.admin.ListUserKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Keys)
	}
	permanent := keyClient(client.CreateUserKeyRequest{Label: "permanent", Lifecycle: client.LifecyclePermanent})
	timed := keyClient(client.CreateUserKeyRequest{Label: "timed", Lifecycle: client.LifecycleTimed, ExpiresAt: at(time.Hour)})
	oneTime := keyClient(client.CreateUserKeyRequest{Label: "once", Lifecycle: client.LifecycleOneTime})
	before := keyCount()

	refusals := []struct {
		name        string
		by          *client.Client
		user        *client.CreateUserKeyRequest
		agent       *client.CreateAgentKeyRequest
		code, field string
	}{
		{"one-time key creates a permanent key", oneTime, &client.CreateUserKeyRequest{Label: "x", Lifecycle: client.LifecyclePermanent}, nil,
			"key_cannot_create_keys", "Authorization"},
		{"timed key creates a permanent key", timed, &client.CreateUserKeyRequest{Label: "x", Lifecycle: client.LifecyclePermanent}, nil,
			"key_outlives_creator", "lifecycle"},
		{"timed key creates a one-time key", timed, &client.CreateUserKeyRequest{Label: "x", Lifecycle: client.LifecycleOneTime}, nil,
			"key_outlives_creator", "lifecycle"},
		{"timed key creates a longer timed key", timed, &client.CreateUserKeyRequest{Label: "x", Lifecycle: client.LifecycleTimed, ExpiresAt: at(2 * time.Hour)}, nil,
			"key_outlives_creator", "expires_at"},
		{"timed key registers a permanent agent key", timed, nil, &client.CreateAgentKeyRequest{AgentName: "alpha", Lifecycle: client.LifecyclePermanent},
			"key_outlives_creator", "lifecycle"},
	}
	for _, c := range refusals {
		var err error
		if c.user != nil {
			_, err = c.by.CreateUserKey(ctx, *c.user)
		} else {
			_, err = c.by.CreateAgentKey(ctx, *c.agent)
		}
		ae := wantStatus(t, err, 403, c.code)
		if ae.Body.Field != c.field || ae.Body.Suggestion == "" {
			t.Errorf("%s: field %q suggestion %q, want field %q and a suggestion", c.name, ae.Body.Field, ae.Body.Suggestion, c.field)
		}
	}
	if n := keyCount(); n != before {
		t.Fatalf("refused creations stored keys: %d keys, had %d", n, before)
	}
	if l, err := e.admin.ListAgentKeys(ctx); err != nil || len(l.Keys) != 0 {
		t.Fatalf("a refused agent key was stored: %+v, %v", l, err)
	}

	// Allowed: a timed key creates keys dying by its own end, a permanent
	// key and the cookie create any.
	if _, err := timed.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "shorter", Lifecycle: client.LifecycleTimed, ExpiresAt: at(30 * time.Minute)}); err != nil {
		t.Fatalf("timed key creates a shorter key: %v", err)
	}
	if _, err := timed.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "as long", Lifecycle: client.LifecycleTimed, ExpiresAt: at(time.Hour)}); err != nil {
		t.Fatalf("timed key creates a key ending with it: %v", err)
	}
	if _, err := permanent.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "p2", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatalf("permanent key creates a permanent key: %v", err)
	}
	if _, err := permanent.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "beta", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatalf("permanent admin key registers an agent key: %v", err)
	}
	if _, err := e.admin.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "gamma", Lifecycle: client.LifecyclePermanent}); err != nil {
		t.Fatalf("cookie registers an agent key: %v", err)
	}
	if n := keyCount(); n != before+3 {
		t.Fatalf("%d keys, want %d", n, before+3)
	}
}

// An account with a password, or a new password or role, outlives any key:
// only the signed-in person or a permanent key may create or set them, so a
// timed or one-time admin key can neither mint a lasting admin nor take
// over another person.
func TestShortLivedKeysCannotCreateAccountsOrSetPasswords(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx()
	now := e.clock.Now()
	exp := now.Add(time.Hour)
	mk := func(req client.CreateUserKeyRequest) *client.Client {
		t.Helper()
		k, err := e.admin.CreateUserKey(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return client.New(e.url, client.WithToken(k.KeyToken))
	}
	if _, err := e.admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: "bob", Password: "bob-password-1", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	pw, admin := "stolen-password-1", "admin"
	// A one-time key is spent by its one request, so each try gets its own.
	for _, by := range []struct {
		name string
		key  func() *client.Client
	}{
		{"timed", func() *client.Client {
			return mk(client.CreateUserKeyRequest{Label: "timed", Lifecycle: client.LifecycleTimed, ExpiresAt: &exp})
		}},
		{"one-time", func() *client.Client {
			return mk(client.CreateUserKeyRequest{Label: "once", Lifecycle: client.LifecycleOneTime})
		}},
	} {
		_, err := by.key().AdminCreateUser(ctx, client.CreateUserRequest{Username: "mallory", Password: "mallory-password-1", Role: "admin"})
		if ae := wantStatus(t, err, 403, "key_cannot_create_credentials"); ae.Body.Field != "Authorization" {
			t.Errorf("%s key: field %q", by.name, ae.Body.Field)
		}
		_, err = by.key().AdminUpdateUser(ctx, "bob", client.UpdateUserRequest{Password: &pw})
		wantStatus(t, err, 403, "key_cannot_create_credentials")
		_, err = by.key().AdminUpdateUser(ctx, "bob", client.UpdateUserRequest{Role: &admin})
		wantStatus(t, err, 403, "key_cannot_create_credentials")
	}
	if _, err := client.New(e.url).Login(ctx, client.LoginRequest{Username: "mallory", Password: "mallory-password-1"}); err == nil {
		t.Fatal("mallory was created")
	}
	if _, err := client.New(e.url).Login(ctx, client.LoginRequest{Username: "bob", Password: pw}); err == nil {
		t.Fatal("bob's password was changed")
	}
	// A permanent key and the signed-in admin still may.
	perm := mk(client.CreateUserKeyRequest{Label: "permanent", Lifecycle: client.LifecyclePermanent})
	if _, err := perm.AdminCreateUser(ctx, client.CreateUserRequest{Username: "carol", Password: "carol-password-1", Role: "user"}); err != nil {
		t.Errorf("permanent key creates a user: %v", err)
	}
	if _, err := e.admin.AdminUpdateUser(ctx, "bob", client.UpdateUserRequest{Password: &pw}); err != nil {
		t.Errorf("signed-in admin sets a password: %v", err)
	}
}
