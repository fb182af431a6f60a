package httpapi_test

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// Registering "/" or a directory right under it as a workspace is refused
// with 400 naming the field, so that an agent key cannot make itself a
// worker of every workspace; two levels deep is accepted.
func TestRegisteringTheRootOrAOneLevelWorkspaceIsRefused(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	carol := e.person("carol")
	if _, err := carol.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@" + coRepo + ".new", Subject: "work", Body: "go"}); err != nil {
		t.Fatal(err)
	}
	reserve(t, e, alpha, true, "secret refactor", "internal/billing/secret.go")
	evil := e.agent("evil")
	for _, top := range []string{"/", "/w", "/home/", " /w ", "/w/.."} {
		_, err := evil.Register(e.ctx(), client.RegisterRequest{Name: "evil", Platform: "x",
			Workspaces: []client.Workspace{{Name: "ok", Path: "/w/evil"}, {Name: "all", Path: top}}})
		ae := wantStatus(t, err, 400, "")
		if ae.Body.Field != "workspaces[1].path" || !strings.Contains(ae.Body.Error, "two levels") && !strings.Contains(ae.Body.Suggestion, "two levels") {
			t.Errorf("register %q: %+v; want a 400 on workspaces[1].path that says how deep", top, ae.Body)
		}
	}
	_, err := evil.Reservations(e.ctx(), coRepo)
	wantStatus(t, err, 404, "workspace_not_found")
	ex := true
	_, err = evil.Reserve(e.ctx(), client.ReserveRequest{Workspace: "/w/other", Paths: []string{"**"}, Exclusive: &ex, Reason: "mine"})
	wantStatus(t, err, 404, "workspace_not_found")
	if _, err := evil.Register(e.ctx(), client.RegisterRequest{Name: "evil", Platform: "x",
		Workspaces: []client.Workspace{{Name: "own", Path: "/w/evil"}}}); err != nil {
		t.Fatalf("a two-level workspace: %v", err)
	}
	if _, err := evil.Reserve(e.ctx(), client.ReserveRequest{Workspace: "/w/evil", Paths: []string{"**"}, Exclusive: &ex}); err != nil {
		t.Fatalf("reserving in its own workspace: %v", err)
	}
}

// Reservation paths, workspaces and reasons holding a control character
// (ESC, BEL, CR, newline), a line separator or a Unicode format character
// (a bidirectional override or mark, a zero-width space) are refused with
// 400 naming the field, and nothing is reserved.
func TestReservationTextWithControlOrFormatCharactersIsRefused(t *testing.T) {
	e := newEnv(t)
	alpha := coAgent(e, "alpha")
	ex := true
	bad := []string{"\x1b]52;c;cm0gLXJmIH4K\x07", "a\rb", "a\nb", "a\u2028b", "gpj.\u202eexe", "a\u200fb", "a\u200bb"}
	for _, s := range bad {
		_, err := alpha.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"ok.go", "{main.go," + s + "}"}, Exclusive: &ex})
		if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "paths[1]" {
			t.Errorf("path %q: field %q, want paths[1]", s, ae.Body.Field)
		}
		_, err = alpha.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"main.go"}, Exclusive: &ex, Reason: "x" + s})
		if ae := wantStatus(t, err, 400, ""); ae.Body.Field != "reason" {
			t.Errorf("reason %q: field %q, want reason", s, ae.Body.Field)
		}
	}
	if l, err := alpha.Reservations(e.ctx(), coRepo); err != nil || len(l.Reservations) != 0 {
		t.Fatalf("after the refusals alpha holds %+v, %v; want none", l, err)
	}
	// Letters of any script are kept.
	r, err := alpha.Reserve(e.ctx(), client.ReserveRequest{Workspace: coRepo, Paths: []string{"文档/说明.md"}, Exclusive: &ex, Reason: "改写说明"})
	if err != nil || len(r.Granted) != 1 || r.Granted[0].Path != "文档/说明.md" {
		t.Fatalf("plain non-ASCII text: %+v, %v", r, err)
	}
}
