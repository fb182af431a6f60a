package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/openapicheck"
)

// oaSampleRoutes exercises the generator on real wire types, independent of
// the gateway's route table.
func oaSampleRoutes() []OpenAPIRoute {
	return []OpenAPIRoute{
		{Method: "GET", Path: "/api/v1/me/mail/{id}", Auth: "person", Summary: "read a mail", Response: client.Mail{}, Errors: []int{404}},
		{Method: "POST", Path: "/api/v1/me/keys", Auth: "person", Request: client.CreateUserKeyRequest{}, Response: client.CreatedKey{}, Status: 201, Errors: []int{400}},
		{Method: "POST", Path: "/api/v1/permission/request", Auth: "agent", Request: client.PermissionRequest{}, Response: client.Permission{}, Errors: []int{400, 409}},
		{Method: "POST", Path: "/api/v1/agent/heartbeat", Auth: "agent", Request: client.HeartbeatRequest{}, Response: client.HeartbeatResponse{}},
		{Method: "POST", Path: "/api/v1/schedules", Auth: "agent", Request: client.CreateScheduleRequest{}, Response: client.Schedule{}, Status: 201},
		{Method: "DELETE", Path: "/api/v1/me/keys/{key_id:[a-z0-9-]+}", Auth: "person", Status: 204, Errors: []int{404}},
		{Method: "POST", Path: "/api/v1/attachments", Auth: "agent", RequestContentType: "multipart/form-data", Response: client.Attachment{}, Status: 201, Errors: []int{413}},
		{Method: "GET", Path: "/api/v1/attachments/{id}", Auth: "agent", ResponseContentType: "application/octet-stream"},
		{Method: "GET", Path: "/api/v1/events/stream", Auth: "agent", ResponseContentType: "text/event-stream"},
		{Method: "POST", Path: "/api/v1/mail/send", Auth: "agent", Request: client.SendMailRequest{}, Response: client.SendMailResponse{}, Errors: []int{400, 403, 404, 429}},
		{Method: "GET", Path: "/api/v1/me/mail/inbox", Auth: "person", Response: client.MailList{}, Query: []OpenAPIParam{
			{Name: "status", Enum: []string{"all", "unread", "read"}, Default: "all"}, {Name: "limit", Type: "integer"},
		}},
		{Method: "GET", Path: "/healthz", Auth: "none", Response: map[string]string{}},
	}
}

func oaBuildSample(t *testing.T) (raw []byte, doc map[string]any) {
	t.Helper()
	raw, err := BuildOpenAPI(oaSampleRoutes(), nil, client.ErrorBody{})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return raw, doc
}

// oaDig walks a decoded document by keys.
func oaDig(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("at %q: not an object: %v", k, v)
		}
		v, ok = m[k]
		if !ok {
			t.Fatalf("key %q missing (path %v)", k, keys)
		}
	}
	return v
}

func oaJSONOf(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestOpenAPISchemasFollowEncodingJSON(t *testing.T) {
	_, doc := oaBuildSample(t)
	schemas := oaDig(t, doc, "components", "schemas")

	// omitempty fields are not required; the others are.
	req := oaJSONOf(oaDig(t, schemas, "Mail", "required"))
	for _, name := range []string{`"mail_id"`, `"recipients"`, `"attachments"`, `"read"`} {
		if !strings.Contains(req, name) {
			t.Errorf("Mail.required %s lacks %s", req, name)
		}
	}
	for _, name := range []string{`"parent_mail_id"`, `"permission"`, `"relay"`} {
		if strings.Contains(req, name) {
			t.Errorf("Mail.required %s has the omitempty %s", req, name)
		}
	}
	// time.Time is a date-time string; a pointer is oaNullable; a named struct is a $ref.
	if got := oaJSONOf(oaDig(t, schemas, "Mail", "properties", "created_at")); got != `{"format":"date-time","type":"string"}` {
		t.Errorf("created_at %s", got)
	}
	if got := oaJSONOf(oaDig(t, schemas, "Permission", "properties", "decided_at")); got != `{"format":"date-time","type":["string","null"]}` {
		t.Errorf("decided_at %s", got)
	}
	if got := oaJSONOf(oaDig(t, schemas, "Mail", "properties", "permission")); got != `{"anyOf":[{"$ref":"#/components/schemas/Permission"},{"type":"null"}]}` {
		t.Errorf("permission %s", got)
	}
	if got := oaJSONOf(oaDig(t, schemas, "Mail", "properties", "recipients")); got != `{"items":{"$ref":"#/components/schemas/Recipient"},"type":"array"}` {
		t.Errorf("recipients %s", got)
	}
	// any is {}; map[string]any an open object; a pointer to a slice a oaNullable array.
	if got := oaJSONOf(oaDig(t, schemas, "CreateScheduleRequest", "properties", "remind_before_minutes")); got != `{}` {
		t.Errorf("remind_before_minutes %s", got)
	}
	if got := oaJSONOf(oaDig(t, schemas, "PermissionRequest", "properties", "tool_input")); got != `{"additionalProperties":{},"type":"object"}` {
		t.Errorf("tool_input %s", got)
	}
	if got := oaJSONOf(oaDig(t, schemas, "HeartbeatRequest", "properties", "models")); got != `{"items":{"$ref":"#/components/schemas/Model"},"maxItems":1000,"type":["array","null"]}` {
		t.Errorf("models %s", got)
	}
	// Embedded structs are promoted; the shallower key_id wins and is required once.
	ck := oaDig(t, schemas, "CreatedKey").(map[string]any)
	props := ck["properties"].(map[string]any)
	for _, name := range []string{"key_id", "key_token", "kind", "owner", "active", "created_at"} {
		if _, ok := props[name]; !ok {
			t.Errorf("CreatedKey lacks %s: %s", name, oaJSONOf(props))
		}
	}
	if n := strings.Count(oaJSONOf(ck["required"]), `"key_id"`); n != 1 {
		t.Errorf("CreatedKey.required has key_id %d times", n)
	}
	if _, ok := props["KeyInfo"]; ok {
		t.Error("the embedded struct appears as a property")
	}
}

func TestOpenAPIOperations(t *testing.T) {
	_, doc := oaBuildSample(t)
	paths := oaDig(t, doc, "paths").(map[string]any)
	if _, ok := paths["/api/v1/me/keys/{key_id}"]; !ok {
		t.Errorf("the chi regexp was not stripped: %v", reflect.ValueOf(paths).MapKeys())
	}
	del := oaDig(t, paths, "/api/v1/me/keys/{key_id}", "delete")
	if got := oaJSONOf(oaDig(t, del, "parameters")); got != `[{"in":"path","name":"key_id","required":true,"schema":{"type":"string"}}]` {
		t.Errorf("path parameters %s", got)
	}
	if _, ok := oaDig(t, del, "responses", "204").(map[string]any)["content"]; ok {
		t.Error("204 has content")
	}
	if got := oaJSONOf(oaDig(t, del, "security")); got != `[{"bearerAuth":[]},{"cookieAuth":[],"csrfToken":[]}]` {
		t.Errorf("person write security %s", got)
	}
	if got := oaJSONOf(oaDig(t, paths, "/api/v1/me/mail/{id}", "get", "security")); got != `[{"bearerAuth":[]},{"cookieAuth":[]}]` {
		t.Errorf("person read security %s", got)
	}
	if got := oaJSONOf(oaDig(t, paths, "/api/v1/events/stream", "get", "security")); got != `[{"bearerAuth":[]}]` {
		t.Errorf("agent security %s", got)
	}
	if got := oaJSONOf(oaDig(t, paths, "/healthz", "get", "security")); got != `[]` {
		t.Errorf("public security %s", got)
	}
	send := oaDig(t, paths, "/api/v1/mail/send", "post")
	if got := oaJSONOf(oaDig(t, send, "requestBody", "content", "application/json", "schema")); got != `{"$ref":"#/components/schemas/SendMailRequest"}` {
		t.Errorf("send request body %s", got)
	}
	for _, code := range []string{"400", "403", "404", "429", "default"} {
		if got := oaJSONOf(oaDig(t, send, "responses", code, "content", "application/json", "schema")); got != `{"$ref":"#/components/schemas/ErrorBody"}` {
			t.Errorf("send %s answer %s", code, got)
		}
	}
	if _, ok := oaDig(t, send, "responses", "429").(map[string]any)["headers"]; !ok {
		t.Error("429 does not document Retry-After")
	}
	if id := oaDig(t, paths, "/api/v1/me/mail/{id}", "get", "operationId"); id != "getMeMailById" {
		t.Errorf("operationId %v", id)
	}
	if got := oaJSONOf(oaDig(t, paths, "/api/v1/attachments", "post", "requestBody", "content", "multipart/form-data", "schema", "required")); got != `["file"]` {
		t.Errorf("upload schema required %s", got)
	}
	if _, ok := oaDig(t, paths, "/api/v1/events/stream", "get", "responses", "200", "content").(map[string]any)["text/event-stream"]; !ok {
		t.Error("the event stream is not text/event-stream")
	}
	q := oaJSONOf(oaDig(t, paths, "/api/v1/me/mail/inbox", "get", "parameters"))
	if !strings.Contains(q, `{"in":"query","name":"status","required":false,"schema":{"default":"all","enum":["all","unread","read"],"type":"string"}}`) {
		t.Errorf("query parameters %s", q)
	}
	if oaDig(t, doc, "openapi") != "3.1.0" {
		t.Error("not OpenAPI 3.1")
	}
}

// oaEnumSample has a nullable field with an enum tag.
type oaEnumSample struct {
	Level *string `json:"level,omitempty" enum:"low,high"`
}

func TestOpenAPIEnumTagsAndEvents(t *testing.T) {
	raw, err := BuildOpenAPI(oaSampleRoutes(), nil, client.ErrorBody{},
		OpenAPIEvent{Name: client.EventNewMail, Data: client.NewMailEvent{}},
		OpenAPIEvent{Name: "sample", Data: oaEnumSample{}})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := oaDig(t, doc, "components", "schemas")
	// An enum tag lists the values; a nullable field keeps null among them.
	if got := oaJSONOf(oaDig(t, schemas, "Mail", "properties", "from_kind")); got != `{"enum":["agent","person","system"],"type":"string"}` {
		t.Errorf("from_kind %s", got)
	}
	if got := oaJSONOf(oaDig(t, schemas, "oaEnumSample", "properties", "level")); got != `{"enum":["low","high",null],"type":["string","null"]}` {
		t.Errorf("level %s", got)
	}
	if got := oaJSONOf(oaDig(t, schemas, "Mail", "properties", "subject")); got != `{"type":"string"}` {
		t.Errorf("a field without the tag got %s", got)
	}
	// Events name the schema of their data, which becomes a component.
	if got := oaJSONOf(oaDig(t, doc, "x-agentmail-events")); got != `{"new_mail":{"$ref":"#/components/schemas/NewMailEvent"},"sample":{"$ref":"#/components/schemas/oaEnumSample"}}` {
		t.Errorf("x-agentmail-events %s", got)
	}
	if got := oaJSONOf(oaDig(t, schemas, "NewMailEvent", "properties", "role")); got != `{"enum":["to","cc","from"],"type":"string"}` {
		t.Errorf("NewMailEvent.role %s", got)
	}
	// Without events the document has no x-agentmail-events.
	if _, plain := oaBuildSample(t); plain["x-agentmail-events"] != nil {
		t.Error("x-agentmail-events without events")
	}
}

func TestOpenAPIOutputIsDeterministic(t *testing.T) {
	a, _ := oaBuildSample(t)
	for i := 0; i < 5; i++ {
		b, _ := oaBuildSample(t)
		if !bytes.Equal(a, b) {
			t.Fatal("two builds of the same routes differ")
		}
	}
}

func TestOpenAPIRefusesDuplicateRoutes(t *testing.T) {
	routes := append(oaSampleRoutes(), OpenAPIRoute{Method: "get", Path: "/api/v1/me/mail/{id:[0-9]+}"})
	if _, err := BuildOpenAPI(routes, nil, client.ErrorBody{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("got %v, want a duplicate route error", err)
	}
}

func TestResponseValidator(t *testing.T) {
	raw, _ := oaBuildSample(t)
	v, err := openapicheck.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	good := `{"mail_id":"m1","session_id":"s","session_alias":"a","from_name":"claude","from_kind":"agent","from_address":"claude@/x",
		"recipients":[{"name":"ann","kind":"person","role":"to","address":"ann"}],"subject":"s","body":"b","mail_type":"normal",
		"attachments":[],"created_at":"2026-11-30T12:00:00Z","read":false,"importance":"normal","ack_required":false}`
	if err := v.Validate("GET", "/api/v1/me/mail/{id}", 200, "application/json; charset=utf-8", []byte(good)); err != nil {
		t.Errorf("a valid Mail was refused: %v", err)
	}
	for name, body := range map[string]string{
		"missing required field": strings.Replace(good, `"mail_id":"m1",`, "", 1),
		"wrong type":             strings.Replace(good, `"read":false`, `"read":"no"`, 1),
		"bad date-time":          strings.Replace(good, `2026-11-30T12:00:00Z`, `yesterday`, 1),
		"null list":              strings.Replace(good, `"attachments":[]`, `"attachments":null`, 1),
		"value outside the enum": strings.Replace(good, `"from_kind":"agent"`, `"from_kind":"robot"`, 1),
		"not JSON":               `<html>`,
	} {
		if err := v.Validate("GET", "/api/v1/me/mail/{id}", 200, "application/json", []byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	errBody := `{"error":"no mail m9","code":"not_found"}`
	if err := v.Validate("GET", "/api/v1/me/mail/{id}", 404, "application/json", []byte(errBody)); err != nil {
		t.Errorf("404 ErrorBody refused: %v", err)
	}
	if err := v.Validate("GET", "/api/v1/me/mail/{id}", 500, "application/json", []byte(errBody)); err != nil {
		t.Errorf("a 500 ErrorBody (default) refused: %v", err)
	}
	if err := v.Validate("GET", "/api/v1/me/mail/{id}", 404, "application/json", []byte(`{"message":"x"}`)); err == nil {
		t.Error("a 404 without the ErrorBody shape was accepted")
	}
	if err := v.Validate("GET", "/api/v1/me/mail/{id}", 201, "application/json", []byte(good)); err == nil {
		t.Error("an undocumented success status was accepted")
	}
	if err := v.Validate("GET", "/api/v1/nowhere", 200, "application/json", []byte(`{}`)); err == nil {
		t.Error("an undocumented route was accepted")
	}
	if err := v.Validate("DELETE", "/api/v1/me/keys/{key_id:[a-z0-9-]+}", 204, "", nil); err != nil {
		t.Errorf("204 without body refused: %v", err)
	}
	if err := v.Validate("GET", "/api/v1/attachments/{id}", 200, "application/octet-stream", []byte{0, 1, 2}); err != nil {
		t.Errorf("download refused: %v", err)
	}
	if err := v.Validate("GET", "/api/v1/attachments/{id}", 200, "text/html", []byte("<p>")); err == nil {
		t.Error("a download answered as text/html was accepted")
	}
	if err := v.Validate("GET", "/healthz", 200, "application/json", []byte(`{"status":"ok"}`)); err != nil {
		t.Errorf("healthz refused: %v", err)
	}
	if p, ok := v.Pattern("DELETE", "/api/v1/me/keys/abc-1"); !ok || p != "/api/v1/me/keys/{key_id}" {
		t.Errorf("Pattern = %q, %v", p, ok)
	}
	if _, ok := v.Pattern("PATCH", "/api/v1/me/keys/abc-1"); ok {
		t.Error("Pattern matched an undocumented method")
	}

	rec := &oaRecordingT{}
	v.CheckResponse(rec, "GET", "/api/v1/me/mail/{id}", 200, []byte(`{}`))
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "mail_id") {
		t.Errorf("CheckResponse reported %q", rec.errs)
	}
}

// oaRecordingT records Errorf calls.
type oaRecordingT struct{ errs []string }

func (r *oaRecordingT) Helper() {}
func (r *oaRecordingT) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.TrimSpace(fmt.Sprintf(format, args...)))
}
