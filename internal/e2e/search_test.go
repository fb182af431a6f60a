package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// Full-text search over the started binary (issue 21 item 4), on the
// database of the run (SQLite, or PostgreSQL with
// AGENTMAIL_TEST_DATABASE=postgres): Chinese and English text found by the
// people's API and CLI and by an agent's search_mail tool over `agentmail
// mcp`; filters, phrases and prefixes; nobody finds mail that is not theirs.
func TestSearchChineseAndEnglishOverTheBinary(t *testing.T) {
	e := coSetup(t)
	_, claudeKey := e.agent("claude")
	_, codexKey := e.agent("codex")
	mc, mx := e.mcp("claude", claudeKey), e.mcp("codex", codexKey)
	dave := (&peopleAndAgents{t: t, ctx: e.ctx, g: e.g, admin: e.admin}).person("dave")

	att, err := e.carol.MeUploadAttachment(e.ctx, "plan.txt", strings.NewReader("the plan"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "claude@" + e.repo + ".new", Subject: "上线计划 release plan",
		Body: "请在周五之前把服务部署到生产环境。Check the <script>alert(1)</script> build cache.", AttachmentIDs: []string{att.AttachmentID}})
	if err != nil {
		t.Fatal(err)
	}
	mc.mustCall("send_mail", map[string]any{"to": "carol", "reply_to": first.MailID, "body": "部署完成 — deployed to production, café closed"}, "Sent")
	secret, err := dave.MeSend(e.ctx, client.SendMailRequest{To: "claude@" + e.repo + ".new", Subject: "dave 的部署", Body: "secret production credentials"})
	if err != nil {
		t.Fatal(err)
	}

	cliEnv := e.userCLIEnv(e.carol, "cli.json")
	search := func(args ...string) client.SearchResults {
		t.Helper()
		out, code := e.run(e.repo, cliEnv, e.bin, append([]string{"search", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("agentmail search %q: exit %d\n%s", args, code, out)
		}
		var r client.SearchResults
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("search --json: %v\n%s", err, out)
		}
		return r
	}
	subjects := func(r client.SearchResults) string {
		var s []string
		for _, h := range r.Hits {
			s = append(s, h.Mail.Subject)
		}
		return strings.Join(s, " | ")
	}
	for q, want := range map[string]string{
		"部署":                   "Re: 上线计划 release plan | 上线计划 release plan",
		"生产环境":                 "上线计划 release plan",
		"部署到生产环境":              "上线计划 release plan", // six character pairs, each hit checked for the word
		"生产部署":                 "",
		"production":           "Re: 上线计划 release plan",
		"CAFE":                 "Re: 上线计划 release plan",
		`"build cache"`:        "上线计划 release plan",
		"deploy*":              "Re: 上线计划 release plan",
		"has:attachment 计划":    "上线计划 release plan",
		"from:claude 部署":       "Re: 上线计划 release plan",
		"is:unread":            "Re: 上线计划 release plan",
		"secret":               "",
		"credentials dave":     "",
		"before:2000-01-01 部署": "",
	} {
		if got := subjects(search(q)); got != want {
			t.Errorf("carol %q: %q, want %q", q, got, want)
		}
	}
	// The plain output marks the matches; markup in a body stays text.
	out, code := e.run(e.repo, cliEnv, e.bin, "search", "script", "生产")
	if code != 0 || !strings.Contains(out, "«生产»") || !strings.Contains(out, "<«script»>alert(1)</«script»>") {
		t.Fatalf("agentmail search: exit %d\n%s", code, out)
	}
	// The agent finds its own mail, dave's included; codex finds none.
	text := mc.mustCall("search_mail", map[string]any{"query": "部署", "sort": "newest"}, secret.MailID, first.MailID, "«部署»")
	if strings.Index(text, secret.MailID) > strings.Index(text, first.MailID) {
		t.Fatalf("sort=newest is not newest first:\n%s", text)
	}
	mx.mustCall("search_mail", map[string]any{"query": "部署"}, "No mail of yours matches")
	mx.mustCall("search_mail", map[string]any{"query": "production"}, "No mail of yours matches")
	if text, isErr := mc.call("search_mail", map[string]any{"query": "is:read"}); !isErr || !strings.Contains(text, "is:unread") {
		t.Fatalf("a bad filter: %v %s", isErr, text)
	}
}

// userCLIEnv answers the environment of the people's CLI signed in as c
// with a new user key, its configuration in file under e.home.
func (e *coEnv) userCLIEnv(c *client.Client, file string) []string {
	e.t.Helper()
	key, err := c.CreateUserKey(e.ctx, client.CreateUserKeyRequest{Label: "e2e"})
	if err != nil {
		e.t.Fatal(err)
	}
	return []string{"AGENTMAIL_GATEWAY_URL=" + e.g.URL, "AGENTMAIL_USER_KEY=" + key.KeyToken, "AGENTMAIL_CONFIG=" + filepath.Join(e.home, file)}
}
