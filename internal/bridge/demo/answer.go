package demo

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/modeltext"
)

// Bounds of the quoted mail in the answer.
const (
	quoteLines     = 5   // first lines of the body quoted
	quoteLineRunes = 160 // each cut to this many characters
	subjectRunes   = 200
)

// words is one language's wording of the demo's answer.
type words struct {
	hello       string // %s agent name
	noModel     string
	yourMail    string
	subject     string // %s subject
	noSubject   string
	emptyBody   string
	moreLines   string // %d lines not shown
	attachments string // %d attachments
	unreadable  string // %s reason
	whereIWork  string // %s directory
	holds       string
	empty       string
	andMore     string // %d more entries
	unlistable  string // %s reason
	files       string
	written     string            // %s path, %d bytes
	writtenBy   map[string]string // by PermissionAnswer.Standing: %s path, %d bytes
	refusedLate string            // %s path, %s reason
	denied      string            // %s path
	notAsked    string            // %s path, %s reason (noticeIn)
	refused     string            // %s path, %s reason (English)
	writeFailed string            // %s path, %s reason (English)
	howToWrite  string
	connectReal string
	lang        string // "en" or "zh"
}

var (
	english = words{
		hello:       "Hello! This is **%s**, the AgentMail demo agent.",
		noModel:     "I have no model behind me: I do not understand your mail or do its work. I only show that the way there and back works: your mail reached an agent, ran as a turn in its directory, and this answer came back.",
		yourMail:    "**Your mail, as I received it:**",
		subject:     "- subject: %s",
		noSubject:   "- no subject",
		emptyBody:   "- the body is empty",
		moreLines:   "(%d more lines not shown)",
		attachments: "- %d attachment(s), which I do not open",
		unreadable:  "I could not read your mail's text: %s.",
		whereIWork:  "**Where I work:** %s",
		holds:       "It holds:",
		empty:       "It is empty.",
		andMore:     "- … and %d more",
		unlistable:  "Its entries cannot be listed: %s.",
		files:       "**Files you asked me to write:**",
		written:     "- %s: written (%d bytes), with your permission.",
		writtenBy: map[string]string{
			bridge.AllowedByGrant: "- %s: written (%d bytes), allowed by a standing permission (approve --always) for this directory; nobody was asked this time.",
			bridge.AllowedByTier:  "- %s: written (%d bytes), without asking: this agent runs with AGENTMAIL_PERMISSION_MODE=full.",
		},
		refusedLate: "- %s: approved, but not written: checked again before writing, %s.",
		denied:      "- %s: not written: you denied it.",
		notAsked:    "- %s: not written: %s.",
		refused:     "- %s: refused and not asked for: %s.",
		writeFailed: "- %s: approved, but writing failed: %s.",
		howToWrite:  "To see a permission request, put a line like `write hello.txt: Hello, world` in a mail to me: I ask you first, as every agent asks before it changes a file, and write the file only when you approve.",
		lang:        "en",
		connectReal: "**Connect a real agent:** on a machine where Claude Code (or opencode, pi, an ACP agent) is installed and signed in, start `agentmail bridge --platform claude` instead of this one; the README's section \"Connect Claude Code\" says how.",
	}
	chinese = words{
		hello:       "你好！这里是 **%s**，AgentMail 的演示智能体。",
		noModel:     "我背后没有模型：我看不懂你的邮件，也不会替你做事。我只演示一来一回的路径是通的：你的邮件到达了智能体，在它的目录里作为一轮运行，然后这封回复回到了你这里。",
		yourMail:    "**我收到的邮件：**",
		subject:     "- 主题：%s",
		noSubject:   "- 没有主题",
		emptyBody:   "- 正文为空",
		moreLines:   "（还有 %d 行未显示）",
		attachments: "- %d 个附件，我不会打开",
		unreadable:  "我没能读取你邮件的正文：%s。",
		whereIWork:  "**我的工作目录：**%s",
		holds:       "其中有：",
		empty:       "它是空的。",
		andMore:     "- ……还有 %d 项",
		unlistable:  "无法列出其中的内容：%s。",
		files:       "**你要求写入的文件：**",
		written:     "- %s：已写入（%d 字节），经你同意。",
		writtenBy: map[string]string{
			bridge.AllowedByGrant: "- %s：已写入（%d 字节），依据对这个目录的长期许可（approve --always），这次没有询问任何人。",
			bridge.AllowedByTier:  "- %s：已写入（%d 字节），未询问：该智能体以 AGENTMAIL_PERMISSION_MODE=full 运行。",
		},
		refusedLate: "- %s：你同意了，但未写入：写入前再次检查时发现%s。",
		denied:      "- %s：未写入：你拒绝了。",
		notAsked:    "- %s：未写入：%s。",
		refused:     "- %s：已拒绝，未询问你：%s。",
		writeFailed: "- %s：你同意了，但写入失败：%s。",
		howToWrite:  "想看看权限请求，就在给我的邮件里写一行，例如 `write hello.txt: Hello, world`：我会先问你，就像每个智能体修改文件前都会问一样，只有你同意后才写入该文件。",
		lang:        "zh",
		connectReal: "**连接真正的智能体：**在已安装并登录 Claude Code（或 opencode、pi、ACP 智能体）的机器上，改为运行 `agentmail bridge --platform claude`；做法见 README 的 \"Connect Claude Code\" 一节。",
	}
)

// answer is what one turn tells the person.
type answer struct {
	agent   string
	cwd     string
	in      received
	writes  []writeOutcome
	entries []string
	more    int
	listErr error
}

// render writes the answer in w's language as Markdown. Everything the
// mail or the directory supplied is shown inert: names and the subject as
// code spans on one line, the body's first lines in a fenced block.
func (a answer) render(w words) string {
	var b strings.Builder
	fmt.Fprintf(&b, w.hello+"\n\n", nonEmpty(a.agent, Name))
	b.WriteString(w.noModel + "\n\n")

	b.WriteString(w.yourMail + "\n\n")
	if a.in.err != nil {
		fmt.Fprintf(&b, w.unreadable+"\n\n", oneLine(a.in.err.Error(), 300))
	} else {
		m := a.in.mail
		if s := strings.TrimSpace(m.Subject); s != "" {
			fmt.Fprintf(&b, w.subject+"\n", modeltext.CodeSpan(oneLine(s, subjectRunes)))
		} else {
			b.WriteString(w.noSubject + "\n")
		}
		if n := len(m.Attachments); n > 0 {
			fmt.Fprintf(&b, w.attachments+"\n", n)
		}
		lines, rest := firstLines(m.Body)
		if len(lines) == 0 {
			b.WriteString(w.emptyBody + "\n\n")
		} else {
			b.WriteString("\n" + modeltext.CodeBlock("text", strings.Join(lines, "\n")) + "\n")
			if rest > 0 {
				fmt.Fprintf(&b, w.moreLines+"\n", rest)
			}
			b.WriteString("\n")
		}
	}

	fmt.Fprintf(&b, w.whereIWork+"\n\n", modeltext.CodeSpan(oneLine(a.cwd, 500)))
	switch {
	case a.listErr != nil:
		fmt.Fprintf(&b, w.unlistable+"\n\n", oneLine(a.listErr.Error(), 300))
	case len(a.entries) == 0:
		b.WriteString(w.empty + "\n\n")
	default:
		b.WriteString(w.holds + "\n\n")
		for _, e := range a.entries {
			b.WriteString("- " + modeltext.CodeSpan(oneLine(e, 120)) + "\n")
		}
		if a.more > 0 {
			fmt.Fprintf(&b, w.andMore+"\n", a.more)
		}
		b.WriteString("\n")
	}

	if len(a.writes) > 0 {
		b.WriteString(w.files + "\n\n")
		for _, o := range a.writes {
			name := modeltext.CodeSpan(oneLine(o.w.Path, MaxPath))
			if o.abs != "" {
				name = modeltext.CodeSpan(oneLine(o.abs, 500))
			}
			switch {
			case o.written >= 0 && w.writtenBy[o.standing] != "":
				fmt.Fprintf(&b, w.writtenBy[o.standing]+"\n", name, o.written)
			case o.written >= 0:
				fmt.Fprintf(&b, w.written+"\n", name, o.written)
			case o.refused != "" && o.late:
				fmt.Fprintf(&b, w.refusedLate+"\n", name, o.refused.in(w.lang))
			case o.refused != "":
				fmt.Fprintf(&b, w.refused+"\n", name, o.refused.in(w.lang))
			case o.denied:
				fmt.Fprintf(&b, w.denied+"\n", name)
			case o.failed != "":
				fmt.Fprintf(&b, w.writeFailed+"\n", name, oneLine(o.failed, 300))
			default:
				fmt.Fprintf(&b, w.notAsked+"\n", name, noticeIn(w.lang, o.notice))
			}
		}
		b.WriteString("\n")
	} else {
		b.WriteString(w.howToWrite + "\n\n")
	}
	b.WriteString(w.connectReal + "\n")
	return b.String()
}

// notices words the refusals of the core's permission path that come
// without a person's decision, by the opening of their English text
// (permission.go, which writes them for a model): the plan tier, a request
// that reached nobody, the bridge stopping, the turn ending.
var notices = []struct{ opening, en, zh string }{
	{"this agent runs in the plan tier", "the agent runs with AGENTMAIL_PERMISSION_MODE=plan, where nothing is written", "该智能体以 AGENTMAIL_PERMISSION_MODE=plan 运行，不写入任何文件"},
	{"the permission request could not reach a person", "", "权限请求未能送达任何人"},
	{"the bridge is shutting down", "", "桥接程序正在关闭"},
	{"the bridge stopped before a person decided", "", "桥接程序在有人决定前停止了"},
	{"the turn ended before a person decided", "", "这一轮在有人决定前结束了"},
	{"the platform gave this permission ask no id", "", "权限请求缺少编号"},
	{"permission requests are off", "", "这个桥接程序没有开启权限请求，所以不写入"},
}

// noticeIn answers a refusal without a person's decision in language
// lang, on one line without its final full stop; an unknown one in
// Chinese keeps its English words after a Chinese opening.
func noticeIn(lang, notice string) string {
	en := strings.TrimSuffix(oneLine(nonEmpty(notice, "no permission"), 300), ".")
	for _, n := range notices {
		if !strings.HasPrefix(strings.ToLower(en), n.opening) {
			continue
		}
		switch {
		case lang == "zh":
			return n.zh
		case n.en != "":
			return n.en
		}
		return en
	}
	if lang == "zh" {
		return "未获许可（" + en + "）"
	}
	return en
}

// firstLines answers the body's first quoteLines lines (trailing blank
// lines dropped), each cut to quoteLineRunes, and how many lines follow.
func firstLines(body string) ([]string, int) {
	all := strings.Split(strings.TrimRight(strings.ReplaceAll(body, "\r\n", "\n"), " \t\n"), "\n")
	if len(all) == 1 && strings.TrimSpace(all[0]) == "" {
		return nil, 0
	}
	n := min(len(all), quoteLines)
	out := make([]string, n)
	for i := range n {
		out[i] = oneLine(all[i], quoteLineRunes)
	}
	return out, len(all) - n
}

// oneLine renders s on one line (control and bidirectional characters
// escaped), cut to n characters with "…".
func oneLine(s string, n int) string {
	s = modeltext.OneLine(s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
