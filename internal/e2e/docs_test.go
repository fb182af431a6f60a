package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docs/API.md and docs/TOOLS.md describe what the started binary offers
// (issue 21 "Done when": the new tools and endpoints are described): every
// operation of the OpenAPI document the gateway serves has a row in
// API.md's route tables (method and path), and every tool `agentmail mcp`
// lists has a row in TOOLS.md's tool table.
func TestDocsDescribeEveryEndpointAndTool(t *testing.T) {
	e := coSetup(t)
	_, key := e.agent("alpha")

	res, err := http.Get(e.g.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /api/v1/openapi.json: %d %v", res.StatusCode, err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	api := readDoc(t, "API.md")
	// A route row: "| GET, POST | `/path?query` | ..." (or "POST/GET").
	rowRe := regexp.MustCompile("(?m)^\\| ([A-Z, /]+) \\| `([^`?]+)[`?]")
	documented := map[string]bool{}
	for _, m := range rowRe.FindAllStringSubmatch(api, -1) {
		for _, method := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == '/' }) {
			documented[strings.TrimSpace(method)+" "+strings.TrimSuffix(strings.TrimSpace(m[2]), " (no prefix)")] = true
		}
	}
	var missing []string
	operations := 0
	for path, ops := range doc.Paths {
		short := strings.TrimPrefix(path, "/api/v1")
		for method := range ops {
			method = strings.ToUpper(method)
			switch method {
			case "GET", "POST", "PUT", "PATCH", "DELETE":
			default:
				continue // HEAD is GET's, parameters are not operations
			}
			operations++
			if !documented[method+" "+short] && !documented[method+" "+path] {
				missing = append(missing, method+" "+short)
			}
		}
	}
	sort.Strings(missing)
	if operations < 50 {
		t.Fatalf("the served OpenAPI document has only %d operations", operations)
	}
	if len(missing) > 0 {
		t.Errorf("docs/API.md has no route row for %d of the %d operations the gateway serves:\n%s", len(missing), operations, strings.Join(missing, "\n"))
	}

	tools := readDoc(t, "TOOLS.md")
	m := e.mcp("alpha", key)
	list, err := m.cs.ListTools(e.ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	missing = nil
	for _, tool := range list.Tools {
		if !strings.Contains(tools, "\n| `"+tool.Name+"` |") {
			missing = append(missing, tool.Name)
		}
	}
	if len(list.Tools) < 20 {
		t.Fatalf("agentmail mcp lists only %d tools", len(list.Tools))
	}
	for _, want := range []string{"reserve_paths", "renew_reservations", "release_reservations", "list_reservations",
		"acknowledge_mail", "list_unacknowledged", "search_mail"} {
		found := false
		for _, tool := range list.Tools {
			found = found || tool.Name == want
		}
		if !found {
			t.Errorf("agentmail mcp does not list %s", want)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/TOOLS.md has no row for the tools %s", strings.Join(missing, ", "))
	}
}

// readDoc reads a file of docs/.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
