package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// dynamicTexts are texts the CLI translates that the code builds at run
// time (states and kinds the gateway answers, verdicts chosen by a
// switch), so that no literal names them where they are translated.
var dynamicTexts = []string{
	"pending", "approved", "denied", // permission states
	"queued", "running", "idle", "done", "failed", "stopped", // run states
	"permission_request", "permission_decision", "failure_report", "reminder", "normal", // mail types
	"api", "reply", "timeout", // how a request was decided
	"permanent", "one_time", "timed", // key lifecycles
	"active", "revoked", "expired", "used", "inactive", // key states
	"Approved", "Denied", "Always allowed", // decide verdicts
	"LOW", "HIGH", "URGENT", // importance
	"1 new mail", "%d new mails", "1 session", "%d sessions", // export counts
	"Gateway URL", "Username", "gateway url", "username", // login prompts
	"Current password", "New password", "New password again", // passwd prompts
	"the duration must be positive", "give a duration like 24h or a time like 2026-12-31T18:00:00Z", "the time is in the past",
}

// cliTexts collects every text of the CLI's own that goes through the
// translation: the first argument of S, F, outf, outln, errf and
// usageErr, the format of errorf, the Msg of an Error literal, word(...)
// conversions and the texts of apiWords.
func cliTexts(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	add := func(e ast.Expr) {
		if s, ok := stringValue(e); ok {
			out[s] = fset.Position(e.Pos()).String()
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "lang_zh.go" {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				switch name {
				case "S", "F", "outf", "outln", "errf", "usageErr", "word":
					if len(n.Args) > 0 {
						add(n.Args[0])
					}
				case "errorf":
					if len(n.Args) > 2 {
						add(n.Args[2])
					}
				case "exactArgs", "minArgs":
					if len(n.Args) > 1 {
						add(n.Args[1])
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && (k.Name == "Msg" || k.Name == "text") {
					add(n.Value)
				}
			case *ast.CompositeLit:
				if m, ok := n.Type.(*ast.MapType); ok {
					if v, ok := m.Value.(*ast.Ident); ok && v.Name == "word" {
						for _, el := range n.Elts {
							add(el.(*ast.KeyValueExpr).Value)
						}
					}
				}
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if name.Name == "suggestAgentNotSetUp" {
						add(n.Values[i])
					}
				}
			}
			return true
		})
	}
	for _, s := range dynamicTexts {
		out[s] = "dynamicTexts"
	}
	return out
}

// stringValue evaluates a string literal or a sum of them.
func stringValue(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok1 := stringValue(e.X)
		b, ok2 := stringValue(e.Y)
		return a + b, ok1 && ok2
	case *ast.ParenExpr:
		return stringValue(e.X)
	}
	return "", false
}

var (
	hasWords = regexp.MustCompile(`[A-Za-z]{2,}`)
	verb     = regexp.MustCompile(`%(?:\[\d+\])?[-+# 0]*\d*(?:\.\d+)?[a-zA-Z%]`)
	verbIdx  = regexp.MustCompile(`\[\d+\]`)
)

// The Chinese of the CLI is complete (issue 18 point 2): every text of the
// CLI's own has its Chinese, with the same format verbs, and the catalog
// holds nothing the code no longer says.
func TestChineseIsComplete(t *testing.T) {
	texts := cliTexts(t)
	var missing []string
	for s, where := range texts {
		if !hasWords.MatchString(verb.ReplaceAllString(s, "")) {
			continue
		}
		zh, ok := zhText[s]
		if !ok {
			missing = append(missing, where+": "+strconv.Quote(s))
			continue
		}
		if a, b := verbsOf(s), verbsOf(zh); a != b {
			t.Errorf("%s: the Chinese of %q has the verbs %s, the English %s", where, s, b, a)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		if os.Getenv("CLI_LIST_MISSING") != "" {
			for _, m := range missing {
				t.Log(m)
			}
		}
		t.Errorf("%d texts have no Chinese (CLI_LIST_MISSING=1 lists them), first: %s", len(missing), missing[0])
	}
	for s := range zhText {
		if _, ok := texts[s]; !ok {
			t.Errorf("zhText holds %q, which the CLI no longer says", s)
		}
	}
}

// verbsOf answers the format verbs of s, sorted, without explicit indexes.
func verbsOf(s string) string {
	vs := verb.FindAllString(s, -1)
	for i, v := range vs {
		vs[i] = verbIdx.ReplaceAllString(v, "")
	}
	sort.Strings(vs)
	return strings.Join(vs, " ")
}
