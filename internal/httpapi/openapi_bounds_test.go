package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/httpapi"
)

// The bounds the gateway enforces on reservations and acknowledgements are
// in the OpenAPI document's request schemas, with the values of the code.
func TestOpenAPIStatesTheCoordinationBounds(t *testing.T) {
	raw, err := httpapi.OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	prop := func(schema, name string) map[string]any {
		p := doc.Components.Schemas[schema].Properties[name]
		if p == nil {
			t.Fatalf("%s.%s is not in the document", schema, name)
		}
		return p
	}
	num := func(v any) int { f, _ := v.(float64); return int(f) }
	for _, c := range []struct {
		schema, field, key string
		want               int
	}{
		{"ReserveRequest", "paths", "maxItems", client.MaxReservationPaths},
		{"ReserveRequest", "paths", "minItems", 1},
		{"ReserveRequest", "ttl_minutes", "maximum", client.MaxReservationTTLMinutes},
		{"ReserveRequest", "reason", "maxLength", client.MaxReservationReasonRunes},
		{"ReservationSelect", "paths", "maxItems", client.MaxReservationPaths},
		{"ReservationSelect", "reservation_ids", "maxItems", client.MaxReservationsPerAgent},
		{"ReservationSelect", "ttl_minutes", "maximum", client.MaxReservationTTLMinutes},
		{"ReservationCheckRequest", "paths", "maxItems", client.MaxCheckPaths},
		{"SendMailRequest", "ack_within_minutes", "maximum", client.MaxAckWithinMinutes},
		// Lengths of kept text (gateway textbounds.go).
		{"SendMailRequest", "session_alias", "maxLength", gateway.MaxAliasInputRunes},
		{"UpdateSessionRequest", "alias", "maxLength", gateway.MaxAliasInputRunes},
		{"HeartbeatRequest", "models", "maxItems", gateway.MaxHeartbeatModels},
		{"Model", "provider", "maxLength", gateway.MaxModelRunes},
		{"Model", "model", "maxLength", gateway.MaxModelRunes},
		{"Model", "display_name", "maxLength", gateway.MaxModelRunes},
		{"PlatformSessionInput", "platform_id", "maxLength", gateway.MaxPlatformIDRunes},
		{"PlatformSessionInput", "workspace", "maxLength", gateway.MaxWorkspacePathRunes},
		{"PlatformSessionInput", "slug", "maxLength", gateway.MaxSlugRunes},
		{"PlatformSessionInput", "title", "maxLength", gateway.MaxSubjectRunes},
		{"RunInput", "model", "maxLength", gateway.MaxModelRunes},
		{"RunInput", "error", "maxLength", gateway.MaxRunErrorRunes},
		{"BridgeInstance", "id", "maxLength", client.MaxInstanceID},
		{"BridgeInstance", "host", "maxLength", client.MaxInstanceHost},
	} {
		if got := num(prop(c.schema, c.field)[c.key]); got != c.want {
			t.Errorf("%s.%s %s = %d, want %d", c.schema, c.field, c.key, got, c.want)
		}
	}
	items, _ := prop("ReserveRequest", "paths")["items"].(map[string]any)
	if num(items["maxLength"]) != client.MaxReservationPathBytes {
		t.Errorf("ReserveRequest.paths items = %v, want maxLength %d", items, client.MaxReservationPathBytes)
	}
}
