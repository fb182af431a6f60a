package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// The delegation chain in `agentmail show` (issue 15 point 6), the real binary against a
// started gateway: alice asks bot; bot's turn delegates to helper; helper answers and asks a
// permission in the delegated session; bot relays the answer to alice. alice's show of the
// relay lists the delegated session with its own rounds; her show of the permission request
// (in the delegated session) names the chain up to her conversation; carol sees neither.
func TestCLIShowsTheDelegationChain(t *testing.T) {
	g := startGateway(t, t.TempDir())
	e := newPeopleAndAgents(t, g)
	ctx := e.ctx
	origin, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "clean the build", Body: "please"})
	if err != nil {
		t.Fatal(err)
	}
	tt, err := e.bot.CreateTurnToken(ctx, origin.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	botTurn := client.New(g.URL, client.WithHTTPClient(CheckedHTTPClient(t)), client.WithToken(tt.Token))
	deleg, err := botTurn.SendMail(ctx, client.SendMailRequest{To: "helper@/work/h.new", Subject: "sub T", Body: "compute T"})
	if err != nil || !deleg.NewSession {
		t.Fatalf("bot's delegating send = %+v, %v", deleg, err)
	}
	answer, err := e.helper.SendMail(ctx, client.SendMailRequest{To: "bot@/work/proj." + deleg.SessionAlias, ReplyTo: deleg.MailID, Body: "T = 42"})
	if err != nil {
		t.Fatal(err)
	}
	perm, err := e.helper.RequestPermission(ctx, client.PermissionRequest{Question: "run make?", SessionID: deleg.SessionID,
		RelayKey: "perm-1", Tool: "Bash", ToolInput: map[string]any{"command": "make"}})
	if err != nil {
		t.Fatal(err)
	}
	final, err := e.bot.SendMail(ctx, client.SendMailRequest{To: "alice@." + origin.SessionAlias, Body: "FINAL T = 42",
		ReplyTo: answer.MailID, Relay: client.RelaySummary, RelayKey: "final-1"})
	if err != nil || final.SessionID != origin.SessionID {
		t.Fatalf("bot's delegation relay = %+v, %v", final, err)
	}
	sub, err := e.alice.MeSession(ctx, deleg.SessionID)
	if err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	mustCLI(t, home, "alice-password\n", "login", "--url", g.URL, "--username", "alice", "--password-stdin")
	r := mustCLI(t, home, "", "show", final.MailID)
	want := "Delegated to helper: " + deleg.SessionAlias + " (2/" + strconv.Itoa(sub.BudgetMax) + " rounds)\n"
	if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "Delegated from:") {
		t.Errorf("alice's show of the relay:\n%s\nwant the line %q and no origin", r.stdout, want)
	}
	r = mustCLI(t, home, "", "show", perm.MailID)
	want = "Delegated from: " + origin.SessionAlias + " (bot) > " + deleg.SessionAlias + " (helper) (this session)\n"
	if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "Delegated to") {
		t.Errorf("alice's show of the permission request:\n%s\nwant the line %q", r.stdout, want)
	}

	// carol takes part in nothing: the mails are unknown to her.
	carolHome := t.TempDir()
	mustCLI(t, carolHome, "carol-password\n", "login", "--url", g.URL, "--username", "carol", "--password-stdin")
	for _, id := range []string{final.MailID, perm.MailID} {
		if r := runCLI(t, carolHome, "", "show", id); r.code == 0 || strings.Contains(r.stdout, "Delegated") {
			t.Errorf("carol's show of %s: exit %d\n%s", id, r.code, r.stdout)
		}
	}
}
