package openapicheck

import (
	"strings"
	"testing"
)

// TestSchemasCompileReportsABrokenRef checks that a $ref to a missing
// component is reported with its operation, and a sound one is counted.
func TestSchemasCompileReportsABrokenRef(t *testing.T) {
	doc := `{"openapi":"3.1.0","paths":{"/a":{"get":{"responses":{
		"200":{"description":"OK","content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}},
		"404":{"description":"Not Found","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Missing"}}}}}}}},
		"components":{"schemas":{"A":{"type":"object"}}}}`
	v, err := New([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	n, err := v.SchemasCompile()
	if n != 2 || err == nil || !strings.Contains(err.Error(), "get /a 404") || strings.Contains(err.Error(), "get /a 200") {
		t.Errorf("SchemasCompile = %d, %v; want 2 and an error naming only get /a 404", n, err)
	}
	if err := v.Validate("GET", "/a", 200, "application/json", []byte(`{}`)); err != nil {
		t.Errorf("the sound schema refused {}: %v", err)
	}
}
