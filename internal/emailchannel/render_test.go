package emailchannel

import (
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"

	"github.com/agentmail/agentmail/client"
)

func testChannel(t *testing.T) *Channel {
	t.Helper()
	s, err := Config{Relay: "smtp://127.0.0.1:1", From: "AgentMail <agentmail@agents.test>", PublicURL: "https://agentmail.test/"}.check()
	if err != nil {
		t.Fatal(err)
	}
	return &Channel{cfg: s}
}

// Names and subjects come from agents: whatever they hold, the message
// keeps its header lines (no CR/LF gets through) and encodes non-ASCII.
func TestHeadersCannotBeInjected(t *testing.T) {
	c := testChannel(t)
	m := &client.Mail{MailID: "m1", SessionID: "s1", FromName: "claude\r\nBcc: victim@example.com", MailType: client.MailTypeNormal,
		Subject: "build done\r\nBcc: victim@example.com\n\nfake body 你好", Body: "body", CreatedAt: time.Unix(0, 0)}
	raw, err := c.encode(c.mailEmail(m, "en", "bob@example.com", "r+abc@agents.test", "", nil))
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
	for _, l := range strings.Split(head, "\r\n") {
		if strings.HasPrefix(strings.ToLower(l), "bcc:") {
			t.Fatalf("an injected header line: %q\n%s", l, head)
		}
	}
	r, err := mail.CreateReader(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	subj, _ := r.Header.Subject()
	if subj != "build done Bcc: victim@example.com fake body 你好" {
		t.Errorf("subject %q", subj)
	}
	from, _ := r.Header.AddressList("From")
	if len(from) != 1 || from[0].Address != "agentmail@agents.test" || from[0].Name != "claude Bcc: victim@example.com via AgentMail" {
		t.Errorf("From %+v", from)
	}
	if to, _ := r.Header.AddressList("To"); len(to) != 1 || to[0].Address != "bob@example.com" {
		t.Errorf("To %+v", to)
	}
}

// The HTML part is the cleaned Markdown: no script, no event handlers, no
// javascript: links, no remote images (they become links), no styles from
// the mail; the gateway's own inline styles only.
func TestMarkdownHTMLIsCleanedAndInlineStyled(t *testing.T) {
	in := "# Title\n\n**bold** and `code`\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n" +
		"[click](javascript:alert(1)) [ok](https://example.com/a)\n\n![chart](https://tracker.example/pixel.png)\n\n" +
		"<div style=\"position:fixed\">cover</div>\n\n```\nrm -rf /\n```\n"
	out := markdownHTML(in)
	for _, bad := range []string{"<script", "onerror", "javascript:", "<img", "position:fixed", "<style"} {
		if strings.Contains(out, bad) {
			t.Errorf("%q survived:\n%s", bad, out)
		}
	}
	for _, want := range []string{"<strong>bold</strong>", `href="https://example.com/a"`, `href="https://tracker.example/pixel.png"`,
		"[chart]", `<pre style="background:#f1f5f9`, `rel="nofollow noreferrer noopener"`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// A permission request's email is in the person's language (issue 18
// point 2) and leads with what will run (point 7): an English reader
// reads no Chinese, a Chinese reader the Chinese words.
func TestPermissionEmailFollowsThePersonsLanguage(t *testing.T) {
	c := testChannel(t)
	m := &client.Mail{MailID: "m1", SessionID: "s1", FromName: "claude", MailType: client.MailTypePermissionRequest,
		Subject: "Permission request: Bash", Body: "May I?", CreatedAt: time.Unix(0, 0),
		Attachments: []client.Attachment{{AttachmentID: "a1", Filename: "x.log", Size: 2048}},
		Permission:  &client.Permission{MailID: "m1", AgentName: "claude", Tool: "Bash", ToolSummary: "Bash: rm -rf build/", Question: "May I tidy up?"}}
	en := c.mailEmail(m, "en", "bob@example.com", "r+abc@agents.test", "", nil)
	if !strings.HasPrefix(en.text, "claude asks for permission: Bash: rm -rf build/\nReply APPROVE, ALWAYS or DENY") ||
		en.subject != "[Permission] Permission request: Bash" {
		t.Errorf("English email: %q\n%s", en.subject, en.text)
	}
	for _, part := range []string{en.text, en.html} {
		for _, r := range part {
			if r >= 0x4e00 && r <= 0x9fff {
				t.Fatalf("Chinese in the English email:\n%s", part)
			}
		}
	}
	zh := c.mailEmail(m, "zh", "bob@example.com", "r+abc@agents.test", "", nil)
	if !strings.HasPrefix(zh.text, "claude 请求权限：Bash: rm -rf build/\n回复 同意、一直同意 或 拒绝") ||
		!strings.Contains(zh.text, "打开对话") || !strings.Contains(zh.text, "附件（登录后下载）") || strings.Contains(zh.text, "Open the conversation") {
		t.Errorf("Chinese email:\n%s", zh.text)
	}
}

// The notice of a reply that came too late is in the person's language
// and names what the request would run.
func TestLateReplyNoticeFollowsThePersonsLanguage(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	p := &client.Permission{AgentName: "claude", ToolSummary: "Bash: make deploy", Approved: true, DecidedBy: "ann", DecidedAt: &at, Decision: "approve"}
	en := strings.Join(noticeParagraphs("en", p, false, "https://agentmail.test/inbox/s1"), "\n")
	if !strings.Contains(en, "The request: claude asks for permission: Bash: make deploy") || !strings.Contains(en, "approved, by ann on 2026-12-02 10:00 UTC") {
		t.Errorf("English notice:\n%s", en)
	}
	for _, r := range en {
		if r >= 0x4e00 && r <= 0x9fff {
			t.Fatalf("Chinese in the English notice:\n%s", en)
		}
	}
	zh := strings.Join(noticeParagraphs("zh", p, false, "https://agentmail.test/inbox/s1"), "\n")
	if !strings.HasPrefix(zh, "你的回复晚于") || !strings.Contains(zh, "claude 请求权限：Bash: make deploy") || !strings.Contains(zh, "已同意，由 ann 于 2026-12-02 10:00 UTC 作出") ||
		strings.Contains(zh, "The request") {
		t.Errorf("Chinese notice:\n%s", zh)
	}
}
