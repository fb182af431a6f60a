package bridge

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A person's failure report names the cause's own fix first, in their
// language (issue 18 points 1 to 3 and What to build 1): signing the
// platform in, installing its program, creating the directory, allowing a
// model. The English one carries no Chinese; neither names an endpoint,
// a rule or the mail's id, and a missing directory is said once.
func TestFailureReportNamesTheCausesFixFirst(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	choice, err := ResolveWorkspace(missing, "")
	if err == nil {
		t.Fatal("a missing directory was usable")
	}
	model := func(reason string) FailureReport {
		return FailureReport{AgentName: "claude", MailID: "m1", Stage: StageModel,
			Attempts: []AttemptFailure{{Model: "platform default", Reason: reason}}}
	}
	for _, c := range []struct {
		name     string
		r        FailureReport
		en, zh   string // the start of "What to do"
		enReason string // in the headline
	}{
		{"not signed in", model("Not logged in · Please run /login"),
			"sign the platform in on the agent's machine", "在智能体所在的机器上登录该平台", "the platform is not signed in on the agent's machine"},
		{"no program", model(`exec: "claude": executable file not found in $PATH`),
			"install the platform's command-line program", "在智能体所在的机器上安装该平台的命令行程序", "the platform's program is missing on the agent's machine or does not run"},
		{"no model allowed", FailureReport{AgentName: "claude", MailID: "m1", Stage: StageModel, NoneAllowed: true},
			"ask an admin to allow a model for agent claude", "请管理员为智能体 claude 允许一个模型", "no model is allowed for this agent"},
		{"busy", model("429 Too Many Requests: rate limit"),
			"wait a few minutes", "等几分钟后重新发送邮件", "the model's provider was busy or limited the use"},
		{"other", model("400 model does not exist"),
			"read the reasons below", "请阅读下面的原因", "the model did not run"},
		{"no directory", FailureReport{AgentName: "claude", MailID: "m1", Stage: StageWorkspace, Workspace: choice, Detail: err.Error()},
			"create that directory on the agent's machine", "在智能体所在的机器上创建该目录", "its working directory is not usable (the directory does not exist)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := FailureTranslations("Re: Say hello", c.r)
			if len(tr) != 2 || tr[0].Language != "en" || tr[1].Language != "zh" {
				t.Fatalf("translations = %+v", tr)
			}
			en, zh := tr[0], tr[1]
			if en.Subject != "Failed: Say hello" || zh.Subject != "处理失败: Say hello" {
				t.Errorf("subjects %q, %q", en.Subject, zh.Subject)
			}
			head := "Agent claude could not handle your mail: " + c.enReason + ".\n\n**What to do:** " + c.en
			if !strings.HasPrefix(en.Body, head) {
				t.Errorf("English report does not lead with the cause and its fix %q:\n%s", head, en.Body)
			}
			if !strings.Contains(zh.Body, "**怎么办：** "+c.zh) || !strings.HasPrefix(zh.Body, "智能体 claude 未能处理你的邮件") {
				t.Errorf("Chinese report does not lead with the fix %q:\n%s", c.zh, zh.Body)
			}
			if regexp.MustCompile(`[\p{Han}]`).MatchString(en.Body + en.Subject) {
				t.Errorf("Chinese in the English report:\n%s", en.Body)
			}
			for _, body := range []string{en.Body, zh.Body} {
				for _, dev := range []string{"/api/", "B-6", "D-6", "N-3", "mail m1", "Where to adjust"} {
					if strings.Contains(body, dev) {
						t.Errorf("the report shows %q:\n%s", dev, body)
					}
				}
			}
			if n := strings.Count(en.Body, "does not exist"); c.r.Stage == StageWorkspace && n != 1 {
				t.Errorf("the missing directory is said %d times:\n%s", n, en.Body)
			}
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the report created %s", missing)
	}
}
