package store

import (
	"strings"
	"testing"
)

// A preview is plain text: the Markdown of a failure report or a reply
// does not show as **, #, ` or [..](..) in lists, cards and the tree
// (issue 18 point 10), and a snake_case name keeps its underscores.
func TestSnippetDropsMarkdown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Agent claude could not handle your mail: the model did not run.\n\n**What to do:** sign the platform in",
			"Agent claude could not handle your mail: the model did not run. What to do: sign the platform in"},
		{"## Stage\n- **Stage:** model\n- tried `claude-sonnet`\n> quoted", "Stage Stage: model tried claude-sonnet quoted"},
		{"see [the log](https://example.com/x) and ~~old~~ new", "see the log and old new"},
		{"```go\nfmt.Println(a_b * c)\n```\nrun_tests", "fmt.Println(a_b * c) run_tests"},
		{"#hashtag stays, 1. numbered stays", "#hashtag stays, 1. numbered stays"},
	} {
		if got := Snippet(c.in, 140); got != c.want {
			t.Errorf("Snippet(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A long body: only its start is read, and the preview is n runes.
	long := strings.Repeat("**界** ", 100000)
	if got := Snippet(long, 10); got != "界 界 界 界 界" {
		t.Errorf("Snippet of a long body = %q", got)
	}
}
