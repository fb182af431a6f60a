package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every send option value the gateway could not use as given is a usage
// error (exit 2) and nothing is sent: --ack-within 0 (it became the 24 h
// default), an unknown --importance (it exited 1 from the gateway's
// answer; inbox --importance and --sort alike), an --alias that would be
// rewritten or dropped, and an empty body
// from stdin. An --alias that is not used is said on stderr.
func TestSendRefusesUnusableOptions(t *testing.T) {
	gw := startGateway(t, t.TempDir())
	home := t.TempDir()
	mustCLI(t, home, "e2e-admin-password", "login", "--url", gw.URL, "--username", "admin", "--password-stdin")

	refused := []struct {
		args []string
		want string
	}{
		{[]string{"--ack", "--ack-within", "0"}, "--ack-within 0: give the minutes as 1 to 43200"},
		{[]string{"--ack", "--ack-within", "-7"}, "--ack-within -7"},
		{[]string{"--ack", "--ack-within", "43201"}, "--ack-within 43201"},
		{[]string{"--importance", "weird"}, `--importance "weird": use low, normal, high or urgent`},
		{[]string{"--budget", "-5"}, "--budget must be 0"},
		{[]string{"--alias", "new"}, `--alias "new" cannot name a session`},
		{[]string{"--alias", "../x"}, `--alias "../x": an alias cannot hold`},
		{[]string{"--alias", "Untitled"}, `--alias "Untitled" cannot name a session`},
	}
	for _, c := range refused {
		args := append([]string{"send", "--to", "admin", "--subject", "refused option", "--body", "b"}, c.args...)
		if r := runCLI(t, home, "", args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("send %s: exit %d, %q; want exit 2 mentioning %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
	if r := runCLI(t, home, "", "send", "--to", "bot@/srv/app.some-session", "--subject", "refused option", "--body", "b", "--alias", "fresh"); r.code != 2 ||
		!strings.Contains(r.stderr, "--alias only names a session the mail opens") {
		t.Errorf("send to an alias address with --alias: exit %d, %q", r.code, r.stderr)
	}
	for _, stdin := range []string{"", "  \n"} {
		if r := runCLI(t, home, stdin, "send", "--to", "admin", "--subject", "refused option"); r.code != 2 ||
			!strings.Contains(r.stderr, "the body read from stdin is empty, so nothing was sent") {
			t.Errorf("send with the stdin %q: exit %d, %q", stdin, r.code, r.stderr)
		}
	}
	for _, bad := range [][]string{{"--importance", "high,weird"}, {"--sort", "size"}} {
		if r := runCLI(t, home, "", append([]string{"inbox"}, bad...)...); r.code != 2 || !strings.Contains(r.stderr, bad[0]+" \"") {
			t.Errorf("inbox %s: exit %d, %q; want exit 2", strings.Join(bad, " "), r.code, r.stderr)
		}
	}
	mustCLI(t, home, "", "inbox", "--importance", "high, urgent", "--sort", "importance")
	if r := mustCLI(t, home, "", "inbox", "--all", "--json"); strings.Contains(r.stdout, "refused option") {
		t.Fatalf("a refused send was sent after all:\n%s", r.stdout)
	}

	// Accepted values still send; an alias that is not used is named.
	r := mustCLI(t, home, "the body\n", "send", "--to", "admin", "--subject", "first", "--alias", "Fix imports", "--ack", "--ack-within", "1", "--importance", "high", "--json")
	var first struct {
		SessionAlias string `json:"session_alias"`
		NewSession   bool   `json:"new_session"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &first); err != nil || !first.NewSession || first.SessionAlias != "fix-imports" || r.stderr != "" {
		t.Fatalf("send --alias 'Fix imports': %+v, %v, stderr %q", first, err, r.stderr)
	}
	r = mustCLI(t, home, "", "send", "--to", "admin", "--subject", "second", "--body", "b", "--alias", "other")
	if !strings.Contains(r.stderr, "--alias other was not used: the mail went to the existing session fix-imports") {
		t.Fatalf("send --alias into the default session: stderr %q, stdout %q", r.stderr, r.stdout)
	}
}
