package httpapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// An unknown name reads differently for a person and for an agent (issue
// 18 point 5): the person gets plain words, the agent the endpoint to call.
func TestUnknownNameSuggestionForPeopleAndAgents(t *testing.T) {
	e := newEnv(t)
	alice := e.person("alice")
	bot := e.agent("bot")
	suggestion := func(err error) string {
		t.Helper()
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != 404 {
			t.Fatalf("err = %v, want a 404", err)
		}
		return ae.Body.Suggestion
	}
	_, err := alice.MeSend(e.ctx(), client.SendMailRequest{To: "nobody", Subject: "s", Body: "b"})
	if ps := suggestion(err); strings.Contains(ps, "/api/") || !strings.Contains(ps, "spelling") {
		t.Errorf("person's suggestion %q", ps)
	}
	_, err = bot.SendMail(e.ctx(), client.SendMailRequest{To: "nobody", Subject: "s", Body: "b"})
	if as := suggestion(err); !strings.Contains(as, "GET /api/v1/contacts") {
		t.Errorf("agent's suggestion %q", as)
	}
}

// The metrics and /readyz carry the disk's state (issue 18 point 12): no
// write found the disk full, so the gauge is 0 and /readyz names nothing.
func TestStorageFullGaugeAndReadiness(t *testing.T) {
	e := newEnv(t)
	if code, body, _ := e.raw("GET", "/metrics", "", ""); code != 200 || !strings.Contains(body, "\nagentmail_storage_full 0\n") {
		t.Errorf("/metrics: %d, no agentmail_storage_full 0", code)
	}
	if code, body, _ := e.raw("GET", "/readyz", "", ""); code != 200 || strings.Contains(body, "storage") {
		t.Errorf("/readyz: %d %s", code, body)
	}
}
