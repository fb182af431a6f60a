package httpapi_test

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// Minting keys is bounded: a person holds at most MaxUserKeysPerPerson
// working keys (the next is 409 too_many_keys and stores nothing; revoking
// one makes room), and a label over MaxKeyLabelRunes is 400, for user and
// agent keys alike.
func TestKeyMintingIsBounded(t *testing.T) {
	e := newEnv(t)
	bob := e.person("bob")
	var first string
	for i := 0; i < gateway.MaxUserKeysPerPerson; i++ {
		k, err := bob.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "k"})
		if err != nil {
			t.Fatalf("key %d: %v", i+1, err)
		}
		if i == 0 {
			first = k.KeyID
		}
	}
	before := e.count("api_keys")
	_, err := bob.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "one more"})
	wantStatus(t, err, 409, "too_many_keys")
	if n := e.count("api_keys"); n != before {
		t.Fatalf("a refused key was stored: %d keys, want %d", n, before)
	}
	if err := bob.DeleteUserKey(e.ctx(), first); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "after revoking one"}); err != nil {
		t.Fatalf("after revoking a key: %v", err)
	}

	long := strings.Repeat("é", gateway.MaxKeyLabelRunes+1)
	_, err = e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: long})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "label" {
		t.Errorf("long label: field %q, want label", ae.Body.Field)
	}
	_, err = e.admin.CreateAgentKey(e.ctx(), client.CreateAgentKeyRequest{AgentName: "dsh", Label: long, Lifecycle: client.LifecyclePermanent})
	if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "label" {
		t.Errorf("long agent key label: field %q, want label", ae.Body.Field)
	}
	if _, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: strings.Repeat("é", gateway.MaxKeyLabelRunes)}); err != nil {
		t.Errorf("a label of exactly %d characters: %v", gateway.MaxKeyLabelRunes, err)
	}
}
