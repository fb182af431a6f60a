package bridge

import (
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// The failure report as people read it (issue 18 points 1, 2 and 5). The
// seed's form (FailureSubject, FailureBody) stays the mail's own text, which
// agents read; people get one of these translations, chosen by the gateway
// from their language setting: English "Failed: <subject>", Chinese
// "处理失败: <subject>". Both lead with the cause and its own fix, in plain
// words, without rule numbers or endpoints.

// failureWords is one language's wording of the person-facing report.
type failureWords struct {
	subjectPrefix string
	headline      string // %s agent name, %s what stopped
	whatToDo      string
	tried         string
	otherPlaces   string // %s agent name
	stage         map[FailureStage]string
	because       map[failureCause]string // what stopped, when the cause is known (the headline names it)
	fix           map[failureCause]string // %s agent name where used
	dirReason     map[string]string       // unusableDir's English reasons
	noDirectory   string
	dirWas        string // %s directory
	fallbackWas   string
}

// failureCause is what a failure's reasons point to.
type failureCause int

const (
	causeUnknown failureCause = iota
	causeNotSignedIn
	causeNoCLI
	causeNoModelAllowed
	causeBusy
	causeNoDirectory
)

var failureLangs = map[string]failureWords{
	"en": {
		subjectPrefix: "Failed",
		headline:      "Agent %s could not handle your mail: %s.",
		whatToDo:      "**What to do:**",
		tried:         "**What was tried, in order:**",
		otherPlaces:   "Other places to look: the agent's models on the web page (Agents → %s), the platform's own settings and the bridge's log on the agent's machine.",
		stage: map[FailureStage]string{
			StageWorkspace: "its working directory is not usable",
			StageSession:   "the platform session could not be started",
			StageModel:     "the model did not run",
		},
		because: map[failureCause]string{
			causeNotSignedIn:    "the platform is not signed in on the agent's machine",
			causeNoCLI:          "the platform's program is missing on the agent's machine or does not run",
			causeNoModelAllowed: "no model is allowed for this agent",
			causeBusy:           "the model's provider was busy or limited the use",
		},
		fix: map[failureCause]string{
			causeNotSignedIn:    "sign the platform in on the agent's machine (for Claude Code: run `claude` there and type /login), or give the bridge an API key (for Claude Code: set ANTHROPIC_API_KEY), then send your mail again.",
			causeNoCLI:          "install the platform's command-line program on the agent's machine (or put it on the bridge's PATH), restart the bridge, then send your mail again.",
			causeNoModelAllowed: "ask an admin to allow a model for agent %s (web page: Agents → %s → models), then send your mail again.",
			causeBusy:           "wait a few minutes and send your mail again; the model's provider was busy or limited the use.",
			causeNoDirectory:    "create that directory on the agent's machine, or write to an address whose path is a directory that exists there (for example `%s@$PWD.new` written in a shell on that machine). AgentMail never creates directories.",
			causeUnknown:        "read the reasons below; if they do not help, send your mail again later or ask the agent's admin.",
		},
		dirReason: map[string]string{
			reasonNoDir:      "the mail's address names no directory",
			reasonRelative:   "the path is relative; an absolute path is needed",
			reasonNotExist:   "the directory does not exist",
			reasonNotDir:     "the path is not a directory",
			reasonUnreadable: "the directory cannot be read",
		},
		noDirectory: "its working directory is not usable",
		dirWas:      "- directory: `%s`",
		fallbackWas: "- the bridge has no usable fallback directory (AGENTMAIL_FALLBACK_DIR on the agent's machine)",
	},
	"zh": {
		subjectPrefix: failurePrefix,
		headline:      "智能体 %s 未能处理你的邮件：%s。",
		whatToDo:      "**怎么办：**",
		tried:         "**依次尝试过：**",
		otherPlaces:   "还可以查看：网页上该智能体的模型设置（智能体 → %s），以及智能体所在机器上的平台设置和桥接程序日志。",
		stage: map[FailureStage]string{
			StageWorkspace: "工作目录不可用",
			StageSession:   "平台会话未能启动",
			StageModel:     "模型没有运行",
		},
		because: map[failureCause]string{
			causeNotSignedIn:    "该平台在智能体所在的机器上尚未登录",
			causeNoCLI:          "智能体所在的机器上缺少该平台的程序，或它无法运行",
			causeNoModelAllowed: "没有为这个智能体允许任何模型",
			causeBusy:           "模型提供方繁忙或限制了用量",
		},
		fix: map[failureCause]string{
			causeNotSignedIn:    "在智能体所在的机器上登录该平台（Claude Code：在那台机器上运行 `claude` 并输入 /login），或为桥接程序设置 API 密钥（Claude Code：设置 ANTHROPIC_API_KEY），然后重新发送邮件。",
			causeNoCLI:          "在智能体所在的机器上安装该平台的命令行程序（或把它放进桥接程序的 PATH），重启桥接程序，然后重新发送邮件。",
			causeNoModelAllowed: "请管理员为智能体 %s 允许一个模型（网页：智能体 → %s → 模型），然后重新发送邮件。",
			causeBusy:           "等几分钟后重新发送邮件；模型提供方繁忙或限制了用量。",
			causeNoDirectory:    "在智能体所在的机器上创建该目录，或写信到路径为那台机器上已有目录的地址（例如在那台机器的终端里写 `%s@$PWD.new`）。AgentMail 从不创建目录。",
			causeUnknown:        "请阅读下面的原因；如果没有帮助，稍后重新发送邮件或联系该智能体的管理员。",
		},
		dirReason: map[string]string{
			reasonNoDir:      "邮件地址没有写目录",
			reasonRelative:   "路径是相对路径，需要绝对路径",
			reasonNotExist:   "目录不存在",
			reasonNotDir:     "该路径不是目录",
			reasonUnreadable: "目录无法读取",
		},
		noDirectory: "工作目录不可用",
		dirWas:      "- 目录：`%s`",
		fallbackWas: "- 桥接程序没有可用的备用目录（智能体所在机器上的 AGENTMAIL_FALLBACK_DIR）",
	},
}

// Keys of failureWords.dirReason: the reasons unusableDir and
// ResolveWorkspace give, by their English opening.
const (
	reasonNoDir      = "the mail's address names no directory"
	reasonRelative   = "the path is relative"
	reasonNotExist   = "the directory does not exist"
	reasonNotDir     = "the path is not a directory"
	reasonUnreadable = "the directory cannot be read"
)

// FailureTranslations answers the report's person-facing forms, English
// and Chinese, for SendMailRequest.Translations: the gateway stores the
// one in the reader's language when the reader is a person.
func FailureTranslations(subject string, r FailureReport) []client.MailTranslation {
	out := make([]client.MailTranslation, 0, 2)
	for _, lang := range []string{"en", "zh"} {
		w := failureLangs[lang]
		out = append(out, client.MailTranslation{Language: lang,
			Subject: w.subjectPrefix + ": " + StripReplyPrefixes(subject), Body: personFailureBody(w, r)})
	}
	return out
}

// failureCauseOf sorts a report by what its reasons point to, so the report
// can name that cause's own fix first.
func failureCauseOf(r FailureReport) failureCause {
	switch {
	case r.Stage == StageWorkspace:
		return causeNoDirectory
	case r.NoneAllowed:
		return causeNoModelAllowed
	}
	var all []string
	for _, a := range r.Attempts {
		all = append(all, a.Reason)
	}
	text := strings.ToLower(strings.Join(append(all, r.Detail), "\n"))
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(text, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("not logged in", "/login", "log in", "login required", "invalid api key", "api key", "authentication", "unauthorized", "401"):
		return causeNotSignedIn
	case has("executable file not found", "command not found", "no such file or directory"):
		return causeNoCLI
	case has("rate limit", "rate_limit", "overloaded", "429", "quota", "too many requests"):
		return causeBusy
	}
	return causeUnknown
}

func personFailureBody(w failureWords, r FailureReport) string {
	var b strings.Builder
	cause := failureCauseOf(r)
	// The headline names the reason itself when it is known, so a
	// preview's first line says why (issue 18 point 10).
	what := w.stage[r.Stage]
	if b, ok := w.because[cause]; ok {
		what = b
	}
	if r.Stage == StageWorkspace {
		what = w.noDirectory
		if reason := dirReasonIn(w, r.Workspace.Reason); reason != "" {
			what += " (" + reason + ")"
		}
	}
	fmt.Fprintf(&b, w.headline+"\n\n", r.AgentName, what)
	fix := w.fix[cause]
	if strings.Count(fix, "%s") == 2 {
		fix = fmt.Sprintf(fix, r.AgentName, r.AgentName)
	} else if strings.Contains(fix, "%s") {
		fix = fmt.Sprintf(fix, r.AgentName)
	}
	fmt.Fprintf(&b, "%s %s\n", w.whatToDo, fix)
	switch r.Stage {
	case StageWorkspace:
		b.WriteString("\n")
		fmt.Fprintf(&b, w.dirWas+"\n", orNone(r.Workspace.Expected))
		if strings.Contains(r.Detail, "AGENTMAIL_FALLBACK_DIR") {
			b.WriteString(w.fallbackWas + "\n")
		}
	default:
		if len(r.Attempts) > 0 {
			fmt.Fprintf(&b, "\n%s\n\n", w.tried)
			for i, a := range r.Attempts {
				fmt.Fprintf(&b, "%d. `%s`: %s\n", i+1, a.Model, oneLine(a.Reason))
			}
		}
		if r.Detail != "" {
			fmt.Fprintf(&b, "\n%s\n", r.Detail)
		}
		fmt.Fprintf(&b, "\n%s\n", fmt.Sprintf(w.otherPlaces, r.AgentName))
	}
	return b.String()
}

// dirReasonIn answers unusableDir's reason in w's language; "" when there
// is none.
func dirReasonIn(w failureWords, reason string) string {
	if reason == "" {
		return ""
	}
	for _, k := range []string{reasonNoDir, reasonRelative, reasonNotExist, reasonNotDir, reasonUnreadable} {
		if strings.HasPrefix(reason, k) {
			return w.dirReason[k]
		}
	}
	return reason
}
