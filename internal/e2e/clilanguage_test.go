package e2e

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// The people's commands speak the signed-in person's language and say in
// plain words what is wrong and what to do (issue 18 points 2 and 5, and
// the known gaps after them), over the real binary and gateway: ann reads
// English, li Chinese (the account's setting, read by the CLI from the
// gateway). Neither ever reads an API field name, code or endpoint.
func TestCLISpeaksThePersonsLanguage(t *testing.T) {
	gw := startGateway(t, t.TempDir())
	ctx := ctxT(t)
	admin := client.New(gw.URL, client.WithCookieJar())
	if _, err := admin.Login(ctx, client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	key, err := admin.CreateAgentKey(ctx, client.CreateAgentKeyRequest{AgentName: "claude", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	agent := client.New(gw.URL, client.WithToken(key.KeyToken))
	if _, err := agent.Register(ctx, client.RegisterRequest{Name: "claude", Platform: "e2e", Workspaces: []client.Workspace{{Name: "app", Path: ws}}}); err != nil {
		t.Fatal(err)
	}

	type person struct {
		name, lang, home string
		want             map[string]string // what each step must say
	}
	people := []person{
		{name: "ann", lang: "en", want: map[string]string{
			"inbox":    "No unread mail.",
			"wrong":    "the current password is wrong, so nothing was changed",
			"same":     "the new password is the one you have now",
			"unknown":  "there is no permission request with this id that you may decide",
			"args":     "show: give one mail id (you gave 0)",
			"agentkey": "this key belongs to an agent, not to a person",
			"guard":    "this directory is not in a git repository",
			"approved": "Approved ",
			"again":    "Already decided, nothing changed: approved by ann",
			"other":    "approved by ann",
			"sent":     "Sent ",
			"badflag":  "there is no option --bogus",
			"admin":    "only an admin may do this, and you are not one",
		}},
		{name: "li", lang: "zh", want: map[string]string{
			"inbox":    "没有未读邮件。",
			"wrong":    "当前密码不对，所以什么都没有改",
			"same":     "新密码就是你现在的密码",
			"unknown":  "没有你可以决定的、这个 ID 的权限请求",
			"args":     "show：请给出一个邮件 ID（你给了 0 个）",
			"agentkey": "这个密钥属于智能体，不属于人",
			"guard":    "这个目录不在 git 仓库里",
			"approved": "已同意 ",
			"again":    "早已决定，没有任何改变：已由 li",
			"other":    "已由 li",
			"sent":     "已发送 ",
			"badflag":  "没有 --bogus 这个选项",
			"admin":    "只有管理员可以这样做，而你不是管理员",
		}},
	}
	for i := range people {
		p := &people[i]
		p.home = t.TempDir()
		if _, err := admin.AdminCreateUser(ctx, client.CreateUserRequest{Username: p.name, Password: p.name + "-password-1", Role: "user"}); err != nil {
			t.Fatal(err)
		}
		c := client.New(gw.URL, client.WithCookieJar())
		if _, err := c.Login(ctx, client.LoginRequest{Username: p.name, Password: p.name + "-password-1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpdateMe(ctx, client.UpdateMeRequest{Language: &p.lang}); err != nil {
			t.Fatal(err)
		}
		mustCLI(t, p.home, p.name+"-password-1", "login", "--url", gw.URL, "--username", p.name, "--password-stdin")
	}

	// Nothing a person reads names the API.
	api := []string{"current_password", "new_password", "mail_id", "person_only", "wrong_password", "permission_not_found",
		"/api/", "field:", "arg(s)", "fatal:", "rev-parse", "endpoint"}
	check := func(t *testing.T, p person, step string, r cliResult, code int) {
		t.Helper()
		out := r.stdout + r.stderr
		if r.code != code || !strings.Contains(out, p.want[step]) {
			t.Errorf("%s, %s: exit %d (want %d), want %q in:\n%s", p.name, step, r.code, code, p.want[step], out)
		}
		for _, bad := range api {
			if strings.Contains(out, bad) {
				t.Errorf("%s, %s: the output shows %q:\n%s", p.name, step, bad, out)
			}
		}
	}
	for _, p := range people {
		t.Run(p.name, func(t *testing.T) {
			check(t, p, "inbox", runCLI(t, p.home, "", "inbox"), 0)
			check(t, p, "wrong", runCLI(t, p.home, "wrong-password\nanother-password-1\n", "passwd", "--password-stdin"), 1)
			pw := p.name + "-password-1"
			check(t, p, "same", runCLI(t, p.home, pw+"\n"+pw+"\n", "passwd", "--password-stdin"), 2)
			check(t, p, "unknown", runCLI(t, p.home, "", "approve", "01a23576-1901-7d7f-9571-dd068307ecbb"), 3)
			check(t, p, "args", runCLI(t, p.home, "", "show"), 2)
			check(t, p, "badflag", runCLI(t, p.home, "", "inbox", "--bogus"), 2)
			check(t, p, "admin", runCLI(t, p.home, "", "keys", "register-agent", "--agent", "claude", "--key", "amk_"+p.name), 5)
			check(t, p, "agentkey", runCLIEnv(t, p.home, []string{"AGENTMAIL_USER_KEY=" + key.KeyToken}, "", "inbox"), 5)
			guard := runCLIEnv(t, p.home, nil, "", "guard", "install", "--repo", t.TempDir())
			if guard.code != 2 || strings.Contains(guard.stderr, "fatal:") {
				t.Errorf("%s: guard install outside a repository: exit %d, %q", p.name, guard.code, guard.stderr)
			}

			// A mail to the agent, its permission request, decided twice.
			check(t, p, "sent", runCLI(t, p.home, "", "send", "--to", "claude@"+ws+".new", "--subject", "hello", "--body", "hi"), 0)
			inbox, err := agent.Inbox(ctx, client.InboxQuery{Status: "all"})
			if err != nil || len(inbox.Mails) == 0 {
				t.Fatalf("agent inbox: %v", err)
			}
			var session string
			for _, m := range inbox.Mails {
				if m.FromName == p.name {
					session = m.SessionID
				}
			}
			perm, err := agent.RequestPermission(ctx, client.PermissionRequest{Question: "may I?", SessionID: session, RelayKey: "perm-" + p.name,
				Tool: "Bash", ToolInput: map[string]any{"command": "make test"}})
			if err != nil {
				t.Fatal(err)
			}
			check(t, p, "approved", runCLI(t, p.home, "", "approve", perm.MailID), 0)
			// The same decision again changes nothing and says so.
			check(t, p, "again", runCLI(t, p.home, "", "approve", perm.MailID), 0)
			// Another decision: the first stands, by whom and what.
			check(t, p, "other", runCLI(t, p.home, "", "deny", perm.MailID), 4)
		})
	}
}
