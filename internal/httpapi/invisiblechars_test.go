package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// invisible answers the format characters (bidirectional controls,
// zero-width characters) s holds, as "U+XXXX" strings.
func invisible(s string) []string {
	var out []string
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) {
			out = append(out, fmt.Sprintf("U+%04X", r))
		}
	}
	return out
}

// A hostile agent asks for a command whose bidirectional controls make it
// read, on the page and in the mail, as harmless: `ls # ; rm -rf ~/work ;`
// (everything after ls commented out) while the shell runs rm -rf ~/work.
// What will run is what the person decides on, so the gateway shows every
// invisible format character as a visible code point in the tool summary,
// in the request mail's subject and in its body (the arguments block
// included), and the arguments' hash stays that of the real input.
func TestPermissionShowsInvisibleCharactersOfWhatWillRun(t *testing.T) {
	e := newEnv(t)
	alice := e.person("alice")
	dsh := e.agent("dsh")
	sent, err := alice.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/src/app.new", Subject: "tidy up", Body: "please"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := "ls \u202e\u2066 ; rm -rf ~/work ; \u2069\u2066 #\u2069\u200b"
	input := map[string]any{"command": cmd}
	p, err := dsh.RequestPermission(e.ctx(), client.PermissionRequest{Question: "List the files?", SessionID: sent.SessionID,
		RelayKey: "bidi-1", Tool: "Bash\u200e", ToolInput: input})
	if err != nil {
		t.Fatal(err)
	}
	if got := invisible(p.ToolSummary); len(got) > 0 {
		t.Errorf("tool_summary %q carries invisible characters %v; want them shown", p.ToolSummary, got)
	}
	for _, want := range []string{"rm -rf ~/work", "<U+202E>", "<U+2066>", "<U+2069>", "<U+200B>"} {
		if !strings.Contains(p.ToolSummary, want) {
			t.Errorf("tool_summary %q does not show %q", p.ToolSummary, want)
		}
	}
	hash, err := gateway.ArgsHash(input)
	if err != nil {
		t.Fatal(err)
	}
	if p.ArgsHash != hash {
		t.Errorf("args_hash %s, want the hash of the real input %s", p.ArgsHash, hash)
	}

	m, err := alice.MeGetMail(e.ctx(), p.MailID)
	if err != nil {
		t.Fatal(err)
	}
	if got := invisible(m.Subject); len(got) > 0 {
		t.Errorf("request subject %q carries invisible characters %v", m.Subject, got)
	}
	if got := invisible(m.Body); len(got) > 0 {
		t.Errorf("request body carries invisible characters %v:\n%s", got, m.Body)
	}
	if !strings.Contains(m.Body, `\u202e`) || !strings.Contains(m.Body, "<U+202E>") {
		t.Errorf("request body shows neither the escaped argument nor the marked summary:\n%s", m.Body)
	}

	list, err := alice.MePermissions(e.ctx(), "pending")
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Permissions) != 1 || len(invisible(list.Permissions[0].ToolSummary)) > 0 {
		t.Errorf("the person's list shows %+v; want one request whose summary has no invisible character", list.Permissions)
	}
}
