package e2e

import (
	"net/http"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/mailtest"
)

// readyzAs answers the body of GET /readyz sent with the bearer token ("":
// no credentials).
func readyzAs(t *testing.T, url, token string) map[string]string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/readyz", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]string
	decodeBody(t, resp, &body)
	return body
}

// While the email relay fails, /readyz tells everyone that it fails, but the
// relay's own error text only to an admin: a caller without credentials, or
// a person who is not an admin, sees the status and no details.
func TestReadyzShowsTheRelaysErrorToAdminsOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway and mailpit; skipped with -short")
	}
	mp := mailtest.StartMailpit(t)
	gw, _ := startEmailGateway(t, mp, t.TempDir())
	ctx := ctxT(t)
	admin := client.New(gw.URL)
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: "e2e-admin-password"}); err != nil {
		t.Fatal(err)
	}
	adminKey, err := admin.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	bob := personFor(t, ctx, gw.URL, admin, "bob")
	bobKey, err := bob.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	verifyAddress(t, ctx, mp, bob, "bob@example.com")
	ws := realTempDir(t)
	agent, _ := agentFor(t, ctx, gw.URL, admin, "claude", ws)
	sent, err := bob.MeSend(ctx, client.SendMailRequest{To: "claude@" + ws, Subject: "work", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	mp.Stop()
	if _, err := agent.RequestPermission(ctx, client.PermissionRequest{SessionID: sent.SessionID, Question: "may I run make?",
		RelayKey: "make", Tool: "Bash", ToolInput: map[string]any{"command": "make"}}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, gw, func(r map[string]string) bool { return r["email_relay"] == "failing" })

	for who, token := range map[string]string{"no credentials": "", "a person's key": bobKey.KeyToken} {
		r := readyzAs(t, gw.URL, token)
		if r["status"] != "ready" || r["email_relay"] != "failing" {
			t.Errorf("/readyz with %s = %v, want ready with email_relay failing", who, r)
		}
		if e, shown := r["email_relay_error"]; shown {
			t.Errorf("/readyz with %s shows the relay's error %q", who, e)
		}
	}
	if r := readyzAs(t, gw.URL, adminKey.KeyToken); r["email_relay_error"] == "" {
		t.Errorf("/readyz with an admin's key = %v, want the relay's error", r)
	}
	if gw.Log.Count("the email relay is failing") == 0 {
		t.Errorf("the gateway log lacks the relay's failure:\n%s", gw.Log.String())
	}
}
