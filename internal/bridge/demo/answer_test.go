package demo

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// Every outcome of a write line reads in the reader's language; what the mail and the
// directory supplied stays inert.
func TestAnswerSpeaksEachLanguageAndQuotesInertly(t *testing.T) {
	a := answer{
		agent: "demo", cwd: "/work/proj",
		in: received{mail: client.Mail{Subject: "Hi `there`", Body: "line 1\n```\n# not a heading\nline 4\nline 5\nline 6\nline 7",
			Attachments: []client.Attachment{{}}}},
		writes: []writeOutcome{
			{w: WriteRequest{Path: "a.txt"}, abs: "/work/proj/a.txt", written: 4},
			{w: WriteRequest{Path: "b.txt"}, abs: "/work/proj/b.txt", written: -1, refused: refExists},
			{w: WriteRequest{Path: "c.txt"}, abs: "/work/proj/c.txt", written: -1, denied: true},
			{w: WriteRequest{Path: "../d"}, written: -1, refused: refDotDot},
			{w: WriteRequest{Path: "e.txt"}, abs: "/work/proj/e.txt", written: -1,
				notice: "this agent runs in the plan tier, where Write may not run. Describe the change instead of making it."},
			{w: WriteRequest{Path: "f.txt"}, abs: "/work/proj/f.txt", written: -1, notice: "the turn ended before a person decided."},
			{w: WriteRequest{Path: "g.txt"}, abs: "/work/proj/g.txt", written: 2, standing: bridge.AllowedByGrant},
			{w: WriteRequest{Path: "h.txt"}, abs: "/work/proj/h.txt", written: -1, refused: refLink, late: true},
		},
		entries: []string{"README.md", "src/"}, more: 3,
	}
	en, zh := a.render(english), a.render(chinese)
	for _, c := range []struct {
		text  string
		wants []string
	}{
		{en, []string{"`` Hi `there` ``", "````text\nline 1\n```\n# not a heading\nline 4\nline 5\n````", "(2 more lines not shown)", "1 attachment(s)",
			"`/work/proj/a.txt`: written (4 bytes)", "`/work/proj/b.txt`: refused and not asked for: a file of that name exists", "`/work/proj/c.txt`: not written: you denied it.",
			"`../d`: refused and not asked for: the path leaves the working directory",
			"`/work/proj/e.txt`: not written: the agent runs with AGENTMAIL_PERMISSION_MODE=plan, where nothing is written.",
			"`/work/proj/f.txt`: not written: the turn ended before a person decided.",
			"`/work/proj/g.txt`: written (2 bytes), allowed by a standing permission (approve --always) for this directory; nobody was asked this time.",
			"`/work/proj/h.txt`: approved, but not written: checked again before writing, a symbolic link is on the path",
			"- `src/`", "- … and 3 more", "Connect Claude Code"}},
		{zh, []string{"`` Hi `there` ``", "（还有 2 行未显示）", "1 个附件", "`/work/proj/a.txt`：已写入（4 字节）", "`/work/proj/b.txt`：已拒绝，未询问你：同名文件已存在",
			"`/work/proj/c.txt`：未写入：你拒绝了。", "`../d`：已拒绝，未询问你：路径离开了工作目录", "`/work/proj/e.txt`：未写入：该智能体以 AGENTMAIL_PERMISSION_MODE=plan 运行",
			"`/work/proj/f.txt`：未写入：这一轮在有人决定前结束了。",
			"`/work/proj/g.txt`：已写入（2 字节），依据对这个目录的长期许可", "`/work/proj/h.txt`：你同意了，但未写入：写入前再次检查时发现路径上有符号链接", "- ……还有 3 项", "连接真正的智能体"}},
	} {
		for _, w := range c.wants {
			if !strings.Contains(c.text, w) {
				t.Errorf("answer lacks %q:\n%s", w, c.text)
			}
		}
	}
	for _, english := range []string{"written", "denied", "refused", "Where I work", "Describe the change"} {
		if strings.Contains(zh, english) {
			t.Errorf("the Chinese answer holds %q:\n%s", english, zh)
		}
	}
	if strings.Contains(en, "Describe the change") {
		t.Errorf("the English answer passes on words meant for a model:\n%s", en)
	}

	unread := answer{agent: "demo", cwd: "/w", in: received{err: errors.New("gateway down")}, listErr: errors.New("permission denied")}
	if got := unread.render(english); !strings.Contains(got, "I could not read your mail's text: gateway down.") || !strings.Contains(got, "cannot be listed: permission denied") ||
		!strings.Contains(got, "write hello.txt: Hello, world") {
		t.Errorf("an unread mail's answer:\n%s", got)
	}
}
