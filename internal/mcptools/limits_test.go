package mcptools

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// The limits the descriptions state are the gateway's.
func TestToolLimitsMatchTheGateway(t *testing.T) {
	for _, c := range []struct {
		name     string
		tool, gw int
	}{
		{"suggest default", suggestLimitDefault, gateway.DefaultSuggestLimit},
		{"suggest max", suggestLimitMax, gateway.MaxSuggestLimit},
		{"subject", maxSubjectRunes, gateway.MaxSubjectRunes},
		{"body", maxBodyBytes, gateway.MaxBodyBytes},
		{"remind before", maxRemindBeforeMinutes, gateway.MaxRemindBeforeMinutes},
		{"schedules", defaultScheduleLimit, gateway.DefaultScheduleLimit},
		{"search default", searchLimitDefault, gateway.SearchDefaultLimit},
		{"search max", searchLimitMax, gateway.SearchMaxLimit},
		{"search query", maxSearchRunes, gateway.MaxSearchRunes},
	} {
		if c.tool != c.gw {
			t.Errorf("%s: the tools say %d, the gateway enforces %d", c.name, c.tool, c.gw)
		}
	}
}

// Issue 19 item 3: every integer argument states its range (and its
// default where it has one) in the schema and the description, and a value
// outside it is refused with that same range.
func TestIntegerArgumentsStateTheirRange(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tool := range res.Tools {
		schema, _ := tool.InputSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			p, _ := p.(map[string]any)
			if p["type"] != "integer" {
				continue
			}
			n++
			lo, hi := p["minimum"], p["maximum"]
			desc, _ := p["description"].(string)
			if lo == nil || hi == nil || !strings.Contains(desc, fmt.Sprintf("%v to %v", lo, hi)) {
				t.Errorf("%s.%s: range not stated: %v", tool.Name, name, p)
			}
			if def, ok := p["default"]; ok && !strings.Contains(desc, fmt.Sprintf("(default %v)", def)) {
				t.Errorf("%s.%s: default %v not in the description %q", tool.Name, name, def, desc)
			}
		}
	}
	if n < 5 {
		t.Errorf("only %d integer arguments found", n)
	}
	for _, limit := range []int{0, 1000} {
		h.mustFail("suggest_address", map[string]any{"query": "a", "limit": limit}, "limit must be from 1 to 50 (default 10)")
	}
	h.mustFail("create_schedule", map[string]any{"title": "x", "event_time": "2030-01-01T09:00:00Z", "remind_before_minutes": -1},
		"remind_before_minutes must be from 0 to 527040")
}

// Arguments that are not an object are named as such, never as a Go type.
func TestNonObjectArgumentsNameTheProblem(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	for _, a := range []any{"text", []any{1, 2}, 7} {
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_contacts", Arguments: a})
		var text string
		if err != nil {
			text = err.Error()
		} else {
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
		}
		if strings.Contains(text, "mcptools") || strings.Contains(text, "Go value") || !strings.Contains(text, "JSON object") {
			t.Errorf("arguments %v: %q", a, text)
		}
	}
}

// A 401 tells the model what it can do, never to sign in.
func TestUnauthorizedSaysWhatAnAgentCanDo(t *testing.T) {
	text := RenderAPIError(&client.APIError{Status: 401, Body: client.ErrorBody{Code: "invalid_key", Error: "unknown key",
		Suggestion: "sign in again or use a valid key; do not retry with the same credentials"}})
	if strings.Contains(strings.ToLower(text), "sign in") || !strings.Contains(text, "admin") {
		t.Errorf("401 for the model: %q", text)
	}
}
