package gateway

import (
	"context"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// TestRevocationThroughTheServiceTakesEffectAtOnce checks that a key
// revoked, or a person disabled, through this Service is refused at the
// very next request although the key was just served from the key cache.
func TestRevocationThroughTheServiceTakesEffectAtOnce(t *testing.T) {
	e := newServiceEnv(t)
	k, err := e.svc.CreateUserKey(e.ctx, e.alice, client.CreateUserKeyRequest{Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second answer comes from the cache
		if p, err := e.svc.AuthKey(e.ctx, k.KeyToken); err != nil || p.Name != "alice" {
			t.Fatalf("AuthKey = %+v, %v", p, err)
		}
	}
	if err := e.svc.RevokeKey(e.ctx, KeyUser, "alice", k.KeyID); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.AuthKey(e.ctx, k.KeyToken)
	wantCode(t, err, KindUnauthorized, "key_revoked")

	k2, err := e.svc.CreateUserKey(e.ctx, e.bob, client.CreateUserKeyRequest{Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.AuthKey(e.ctx, k2.KeyToken); err != nil {
		t.Fatal(err)
	}
	yes := true
	if _, err := e.svc.UpdateUser(e.ctx, nil, "bob", client.UpdateUserRequest{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.AuthKey(e.ctx, k2.KeyToken)
	wantCode(t, err, KindUnauthorized, "account_disabled")
}

// TestRevocationElsewhereTakesEffectWithinTheKeyCacheTTL revokes a key in
// the database behind this Service's back (what another replica does): the
// cached key keeps working for at most Config.KeyCacheTTL on the service
// clock, then it is refused.
func TestRevocationElsewhereTakesEffectWithinTheKeyCacheTTL(t *testing.T) {
	e := newServiceEnv(t)
	k, err := e.svc.CreateUserKey(e.ctx, e.alice, client.CreateUserKeyRequest{Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.AuthKey(e.ctx, k.KeyToken); err != nil {
		t.Fatal(err)
	}
	err = e.svc.Store.Write(e.ctx, func(q *store.Q) error {
		_, err := q.RevokeKey(e.ctx, k.KeyID, KeyUser, "", e.clock.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.AuthKey(e.ctx, k.KeyToken); err != nil {
		t.Fatalf("within the TTL the cached key still answers: %v", err)
	}
	e.clock.Advance(e.svc.Config.KeyCacheTTL)
	_, err = e.svc.AuthKey(e.ctx, k.KeyToken)
	wantCode(t, err, KindUnauthorized, "key_revoked")
}

// TestReplicaSeesARevocationWithinTheKeyCacheTTL: a key revoked on one
// replica is refused by the other once KeyCacheTTL has passed (PostgreSQL).
func TestReplicaSeesARevocationWithinTheKeyCacheTTL(t *testing.T) {
	a, b, clock := twoReplicas(t)
	ctx := context.Background()
	k, err := a.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "bot", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AuthKey(ctx, k.KeyToken); err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeKey(ctx, KeyAgent, "", k.KeyID); err != nil {
		t.Fatal(err)
	}
	_, err = a.AuthKey(ctx, k.KeyToken)
	wantCode(t, err, KindUnauthorized, "key_revoked")
	clock.Advance(b.Config.KeyCacheTTL)
	_, err = b.AuthKey(ctx, k.KeyToken)
	wantCode(t, err, KindUnauthorized, "key_revoked")
}

// TestNoKeyCacheWithANegativeTTL: KeyCacheTTL < 0 reads the database at
// every request, so a revocation elsewhere is seen at once.
func TestNoKeyCacheWithANegativeTTL(t *testing.T) {
	e := newServiceEnv(t)
	e.svc.Config.KeyCacheTTL = -1
	k, err := e.svc.CreateUserKey(e.ctx, e.alice, client.CreateUserKeyRequest{Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.AuthKey(e.ctx, k.KeyToken); err != nil {
		t.Fatal(err)
	}
	err = e.svc.Store.Write(e.ctx, func(q *store.Q) error {
		_, err := q.RevokeKey(e.ctx, k.KeyID, KeyUser, "", e.clock.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.AuthKey(e.ctx, k.KeyToken)
	wantCode(t, err, KindUnauthorized, "key_revoked")
}
