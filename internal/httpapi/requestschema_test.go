package httpapi_test

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// TestRequestsTheDocumentAllowsAreAccepted sends bodies that leave out what
// the OpenAPI document marks optional (issue 19 item 5): a person's send
// without body, a person created without role, the model scope's two
// shapes; and the 400s docs/API.md promises: both shapes at once (even
// with []), neither, and null for a field that is not nullable.
func TestRequestsTheDocumentAllowsAreAccepted(t *testing.T) {
	e := newEnv(t)
	e.agent("rs")
	key, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "schema test"})
	if err != nil {
		t.Fatal(err)
	}
	admin := key.KeyToken
	cases := []struct {
		name, method, path, body string
		status                   int
		code, field              string
	}{
		{"send without body", "POST", "/api/v1/me/mail/send", `{"to":"rs@/w","subject":"no body"}`, 200, "", ""},
		{"user without role", "POST", "/api/v1/admin/users", `{"username":"norole","password":"norole-password"}`, 201, "", ""},
		{"unrestricted alone", "PUT", "/api/v1/admin/agents/rs/models", `{"models_unrestricted":true}`, 200, "", ""},
		{"unrestricted with a null list", "PUT", "/api/v1/admin/agents/rs/models", `{"allowed_models":null,"models_unrestricted":true}`, 200, "", ""},
		{"an empty list alone", "PUT", "/api/v1/admin/agents/rs/models", `{"allowed_models":[]}`, 200, "", ""},
		{"a list with false", "PUT", "/api/v1/admin/agents/rs/models", `{"allowed_models":[],"models_unrestricted":false}`, 200, "", ""},
		{"both, with []", "PUT", "/api/v1/admin/agents/rs/models", `{"allowed_models":[],"models_unrestricted":true}`, 400, "invalid_field", "allowed_models"},
		{"neither", "PUT", "/api/v1/admin/agents/rs/models", `{}`, 400, "invalid_field", "allowed_models"},
		{"a bare list", "PUT", "/api/v1/admin/agents/rs/models", `[{"provider":"p","model":"m"}]`, 400, "wrong_type", "body"},
		{"null for a boolean", "PUT", "/api/v1/admin/agents/rs/models", `{"models_unrestricted":null}`, 400, "wrong_type", "models_unrestricted"},
		{"null for a string", "POST", "/api/v1/me/mail/send", `{"to":"rs@/w","subject":null}`, 400, "wrong_type", "subject"},
		{"null in a list", "POST", "/api/v1/me/mail/read", `{"mail_ids":[null]}`, 400, "wrong_type", "mail_ids[0]"},
		{"a null body", "POST", "/api/v1/me/mail/send", `null`, 400, "wrong_type", "body"},
		{"null for a nullable field", "POST", "/api/v1/me/mail/send", `{"to":"rs@/w","subject":"s","round_budget":null}`, 200, "", ""},
	}
	for _, c := range cases {
		status, body, _ := e.raw(c.method, c.path, admin, c.body)
		if status != c.status {
			t.Errorf("%s: %d %s; want %d", c.name, status, body, c.status)
			continue
		}
		if c.code != "" {
			eb := errorBody(t, body)
			if eb.Code != c.code || eb.Field != c.field {
				t.Errorf("%s: code %q field %q (%s); want %q %q", c.name, eb.Code, eb.Field, body, c.code, c.field)
			}
		}
	}
	// The Go client sends the two shapes, never null.
	if set, err := e.admin.AdminSetAgentModels(e.ctx(), "rs", client.AllowedModels{ModelsUnrestricted: true}); err != nil || !set.ModelsUnrestricted {
		t.Fatalf("client unrestricted: %+v %v", set, err)
	}
	if set, err := e.admin.AdminSetAgentModels(e.ctx(), "rs", client.AllowedModels{AllowedModels: []client.ModelRef{}}); err != nil || set.ModelsUnrestricted {
		t.Fatalf("client empty list: %+v %v", set, err)
	}
	if _, err := e.admin.AdminSetAgentModels(e.ctx(), "rs", client.AllowedModels{}); err == nil || !strings.Contains(err.Error(), "allowed_models") {
		t.Fatalf("client nil list: %v; want the 400 allowed_models is missing", err)
	}
}
