package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// hostileReservation holds terminal escapes (an OSC 52 clipboard write,
// BEL, CR) and a bidirectional override in every string the gateway
// supplies about a reservation.
func hostileReservation() client.Reservation {
	return client.Reservation{
		ReservationID: "r1\x1b[2J", Workspace: "/w/repo\x1b]0;x\x07", Path: "{main.go,\x1b]52;c;cm0gLXJmIH4K\x07\r}",
		Holder: "alpha\u202e", Reason: "fix\x1b[31m red\r", Exclusive: true, ExpiresAt: time.Now().Add(time.Hour),
	}
}

// noRawEscapes fails when out holds a control character other than
// newline and tab, or a bidirectional override.
func noRawEscapes(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexFunc(out, func(r rune) bool {
		return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e')
	}); i >= 0 {
		t.Fatalf("%s prints a raw control character at %d: %q", what, i, out)
	}
	if !strings.Contains(out, `\u001b]52;c;cm0gLXJmIH4K\u0007\r`) {
		t.Fatalf("%s does not show the escape visibly: %q", what, out)
	}
}

// `agentmail reservations` prints what the gateway says about
// reservations with its escape sequences shown, never sent raw.
func TestReservationsListShowsGatewayEscapesInsteadOfSendingThem(t *testing.T) {
	g := newGateway(t)
	g.reply("GET /api/v1/me/reservations", 200, client.ReservationList{Reservations: []client.Reservation{hostileReservation()}})
	env, out, errb := testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "reservations"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	noRawEscapes(t, "agentmail reservations", out.String())
}

// The pre-commit guard names a blocking reservation with its pattern,
// holder and reason shown escaped.
func TestGuardCheckShowsGatewayEscapesInsteadOfSendingThem(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"add", "main.go"}} {
		if args[0] == "add" {
			if err := os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if b, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, b)
		}
	}
	g := newGateway(t)
	held := hostileReservation()
	g.reply("POST /api/v1/me/reservations/check", 200, client.ReservationCheck{Workspace: repo,
		Blocking: []client.ReservationConflict{{Path: "main.go\x1b[1A", Held: held}},
		Shared:   []client.ReservationConflict{{Path: "main.go\x1b[1A", Held: held}}})
	env, _, errb := testEnv(t, "", map[string]string{"HOME": t.TempDir()})
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "guard", "check", "--repo", repo); code != ExitConflict {
		t.Fatalf("exit %d, want %d: %s", code, ExitConflict, errb)
	}
	noRawEscapes(t, "agentmail guard check", errb.String())
	if !strings.Contains(errb.String(), `alpha\u202e`) || !strings.Contains(errb.String(), `fix\u001b[31m red`) {
		t.Fatalf("holder or reason not shown escaped: %q", errb)
	}
}
