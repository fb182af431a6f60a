package gateway

import (
	"context"

	"github.com/agentmail/agentmail/internal/store"
)

// personWords is one language's wording of the mails the gateway writes
// for people (issue 18 point 2): permission requests, decision mails and
// reminders. The decision words themselves (同意, approve, ...) are
// understood in every language.
type personWords struct {
	permSubject   string // "Permission request"
	willRun       string
	noToolCall    string
	tool          string
	arguments     string
	scope         string
	argsHash      string
	agentsWords   string
	unansweredBy  string // %s time
	howToAnswer   string // %s options
	deniedTimeout string
	closedByStop  string // %s the person who stopped the run
	closedLate    string // %s the person who stopped the run
	closedLateFix string
	approvedAlway string // %s agent, %s tool, %s workspace, %s person
	approvedOnce  string
	approved      string
	denied        string
	readAs        string // %q answer, %s reading
	reminder      string // %s title
	when          string // %s time
	inMinutes     string // %d minutes
}

var personLangs = map[string]personWords{
	LangEnglish: {
		permSubject:   "Permission request",
		willRun:       "**Will run:**",
		noToolCall:    "**The agent names no tool call**: nothing below says what would run; only its own words do.",
		tool:          "Tool",
		arguments:     "Arguments",
		scope:         "Scope",
		argsHash:      "Arguments hash",
		agentsWords:   "The agent's own words (not checked by AgentMail):",
		unansweredBy:  "Unanswered by %s, it is denied.",
		howToAnswer:   "Options: %s. Reply with approve or yes to allow once, or always to allow this tool in this scope from now on; any other answer denies.",
		deniedTimeout: "Denied: nobody decided before the request expired.",
		closedByStop:  "Closed: %s stopped the turn this request belongs to before anyone decided, so nothing of it runs.",
		closedLate:    "This request was closed because %s stopped the turn it belongs to; your answer changes nothing and nothing of it runs",
		closedLateFix: "to have the agent do it after all, write it a new mail",
		approvedAlway: "Approved, always: %s may use `%s` in `%s` from now on, without asking, in sessions where %s is the only person.",
		approvedOnce:  "Approved once: no always-allow grant was stored, because the request names no tool or the agent has no workspace in this session.",
		approved:      "Approved.",
		denied:        "Denied.",
		readAs:        "The answer %q was %s.",
		reminder:      "Reminder: %s",
		when:          "When: %s",
		inMinutes:     " (in %d minutes)",
	},
	LangChinese: {
		permSubject:   "权限请求",
		willRun:       "**将要运行：**",
		noToolCall:    "**智能体没有写明工具调用**：下面没有内容说明会运行什么，只有它自己的话。",
		tool:          "工具",
		arguments:     "参数",
		scope:         "范围",
		argsHash:      "参数哈希",
		agentsWords:   "智能体自己的话（AgentMail 未核实）：",
		unansweredBy:  "如在 %s 前无人回答，即视为拒绝。",
		howToAnswer:   "选项：%s。回复“同意”允许这一次，回复“一直同意”从此在这个范围内允许该工具；其他任何回答都是拒绝。",
		deniedTimeout: "已拒绝：请求过期前无人作出决定。",
		closedByStop:  "已关闭：在有人作出决定之前，%s 停止了这条请求所在的一轮，所以它不会运行。",
		closedLate:    "这条请求已关闭，因为 %s 停止了它所在的一轮；你的回答不会改变什么，它也不会运行",
		closedLateFix: "如果仍想让智能体去做，请给它写一封新邮件",
		approvedAlway: "已一直同意：从现在起，在 %[4]s 是唯一参与者的会话中，%[1]s 可以在 `%[3]s` 中使用 `%[2]s`，不再询问。",
		approvedOnce:  "已同意这一次：没有保存“一直同意”授权，因为请求没有写明工具，或智能体在这个会话中没有工作目录。",
		approved:      "已同意。",
		denied:        "已拒绝。",
		readAs:        "回答 %q 的理解：%s。",
		reminder:      "提醒：%s",
		when:          "时间：%s",
		inMinutes:     "（%d 分钟后）",
	},
}

// wordsFor answers the wording in the language the named people share;
// English when they differ or there is nobody.
func wordsFor(ctx context.Context, q *store.Q, people []string) (personWords, string, error) {
	lang, _, err := readersLanguage(ctx, q, people)
	if err != nil {
		return personWords{}, "", err
	}
	return personLangs[lang], lang, nil
}

// readingIn answers what the gateway understood an answer as, in lang:
// ReadDecision's own reason in English, a short Chinese one otherwise.
func readingIn(lang, word string) string {
	v := ReadDecision(word)
	if lang != LangChinese {
		return v.Reason
	}
	switch {
	case v.Always:
		return "一直同意"
	case v.Approved:
		return "同意这一次"
	}
	return "拒绝（同意需要第一行以 同意、一直同意、approve 或 yes 开头，且这一行没有相反的话）"
}

// partyNames answers the names of the people among parties.
func partyNames(parties []Party) []string {
	var out []string
	for _, p := range parties {
		if p.Kind == store.KindPerson {
			out = append(out, p.Name)
		}
	}
	return out
}
