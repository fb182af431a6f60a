package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/platforms"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The mail contract every agent platform keeps, shown over real processes: `agentmail
// serve`, `agentmail bridge --platform NAME`, the pinned platform it drives and the
// `agentmail mcp` tool servers the platform starts; only the model is scripted. One case
// of platformCases per platform; the scenario is the same for all (docs/ARCHITECTURE.md,
// "How to add a platform").
//
// The script keys on a tag in each mail's subject, which the bridge's prompt carries
// (B-3.4): [alpha] reads its mail through the AgentMail tools and answers; [beta] is the
// follow-up by alias in alpha's (idle) session; [gamma] and [delta] run the platform's
// shell (a permission mail each, approved and denied); [epsilon] is written while the
// bridge is down and runs on a broken model first; [zeta] runs when the broken model is
// the only one allowed.

const (
	alphaAnswer   = "Alpha answer: I read your mail about the parser."
	betaAnswer    = "Beta answer: continuing where we left off."
	gammaAnswer   = "Gamma answer: the command has finished."
	deltaAnswer   = "Delta answer: I was not allowed to run it."
	epsilonAnswer = "Epsilon answer: read after the restart."

	goodModel   = "fake-model"   // the scripted model that answers
	brokenModel = "broken-model" // the scripted model that answers HTTP 400
	denyNote    = "not in this folder"
)

// platformCase is what the mail contract needs to know of one platform.
type platformCase struct {
	// name names the subtest when the platform runs under another adapter (the ACP
	// agents: "acp-<agent>"); "" is the platform's name.
	name     string
	platform platforms.Platform
	agent    string
	// provider is the provider id under which the platform sees the scripted models, as
	// the admin's model scope names them.
	provider string
	// readInbox and shell are the names under which the model calls AgentMail's
	// read_inbox and the platform's own shell tool.
	readInbox, shell string
	// permissionTool is the tool a permission mail names when that is not shell (an ACP
	// agent that says only the ACP kind of the call: Codex's "execute").
	permissionTool string
	// shellInput is the shell tool's input that runs command.
	shellInput func(command string) map[string]any
	// configure points the platform in r.Env at r.Model, with goodModel as the default
	// and brokenModel offered too.
	configure func(t *testing.T, r *mailrig.Rig)
	// workdirInSystem is what the system prompt of a turn's first request says of the
	// turn's directory.
	workdirInSystem func(dir string) string
	// workdirInContext: the platform says it in a context message of its own rather than
	// in the system prompt (Codex; Qwen Code and Gemini CLI too); the phrase is looked for
	// in the whole request.
	workdirInContext bool
	// platformSession checks the platform session id the gateway session holds after a
	// turn for a mail to dir (B-3.1, B-3.3): "" when it is the platform's own, else what
	// is wrong.
	platformSession func(r *mailrig.Rig, id, dir string) string
	// aliasSettled, when set, must hold as well before the session's alias counts as
	// given (a platform that takes the alias back in with its own rename).
	aliasSettled func(r *mailrig.Rig, platformSessionID, alias string) bool
	// aliasOrigin checks where the alias comes from (D-5): "" when right, else what is
	// wrong.
	aliasOrigin func(alias string) string
	// namesSessions: the platform names its sessions itself (D-5 level 1), so its name
	// replaces the subject-derived first alias once, in the first turn.
	namesSessions bool
	// renameInPlatform, when set, renames platform session id to name the way a person does
	// in the platform's own interface, while the bridge br is stopped if the platform
	// needs that, and answers the bridge running afterwards. Nil when the platform cannot
	// rename its sessions or the test does not do it.
	renameInPlatform func(t *testing.T, r *mailrig.Rig, br *mailrig.Bridge, id, name string) *mailrig.Bridge
	// permissionKey, when set, checks the shape of a permission request's relay key (the
	// platform's own request id).
	permissionKey func(key string) bool
	// deniedIsError: the platform hands a denied tool call to the model as an error
	// result (opencode and pi hand it over as the tool's plain output).
	deniedIsError bool
	// denial says what a denied tool call does on an ACP agent, whose reject_once
	// carries no note: denialEndsTurn (the agent stops the turn at the refusal: no further
	// model request, no text after the tool call, so no reply, B-5.4), or
	// denialNoteLost (the model gets the refusal without the person's note and goes on).
	denialEndsTurn, denialNoteLost bool
	// replyKeyIsResponseID: the relay key of a reply is the model's last message id
	// (B-5.2), which the test can replay. False where the platform keys replies by an id
	// of its own the test does not see.
	replyKeyIsResponseID bool
	// requestsPerFailedAttempt is how many requests the platform sends to a model that
	// answers HTTP 400 before the attempt fails; 0 when the platform retries on its own
	// (any number from one on).
	requestsPerFailedAttempt int
	// persistentProcess: the platform's process outlives a turn, so a turn that ended
	// leaves its run idle (seed 004 section 1) until the session's next turn.
	persistentProcess bool
	// goodModel and brokenModel, when set, replace the scripted models' names (an agent
	// that warns in its answer about a model it does not know: Codex).
	goodModel, brokenModel string
	// finishedRun, when set, checks the platform facts of a finished run beyond its pid
	// (seed 004): "" when they hold.
	finishedRun func(run client.Run) string
}

// platformCases holds one case per platform the bridge drives.
var platformCases = []platformCase{
	{
		platform: platforms.Claude, agent: "claude", provider: "anthropic",
		readInbox: "mcp__agentmail__read_inbox", shell: "Bash",
		shellInput: func(command string) map[string]any {
			return map[string]any{"command": command, "description": "create a file"}
		},
		configure:       func(t *testing.T, r *mailrig.Rig) { r.Env.UseClaude(r.Model.URL) },
		workdirInSystem: func(dir string) string { return "Primary working directory: " + dir },
		platformSession: claudeTranscriptHasCwd,
		// D-5 level 3 without a rename: the alias comes from the subject.
		aliasOrigin:   aliasFromSubject,
		deniedIsError: true,
		// The relay key is the model's message id.
		replyKeyIsResponseID: true,
		// Claude Code retries a request the model refused before it reports the error.
		requestsPerFailedAttempt: 0,
		finishedRun: func(run client.Run) string {
			if run.ExitCode == nil || *run.ExitCode != 0 || run.BytesRead == 0 {
				return "want the claude process's exit code 0 and bytes read"
			}
			return ""
		},
	},
	{
		platform: platforms.OpenCode, agent: "coder", provider: platforms.FakeProvider,
		readInbox: "agentmail_read_inbox", shell: "bash",
		shellInput: func(command string) map[string]any {
			return map[string]any{"command": command, "description": "create a file"}
		},
		configure: func(t *testing.T, r *mailrig.Rig) {
			r.Env.UseOpenCode(r.Model.OpenAIBaseURL(), goodModel, brokenModel)
		},
		workdirInSystem: func(dir string) string { return dir },
		platformSession: func(r *mailrig.Rig, id, dir string) string {
			if !strings.HasPrefix(id, "ses_") {
				return "want opencode's ses_ id"
			}
			return ""
		},
		// D-5 level 1: the alias is opencode's slug, not one derived from the subject.
		aliasOrigin: func(alias string) string {
			if !openCodeSlug.MatchString(alias) || strings.Contains(alias, "alpha") {
				return "want opencode's slug"
			}
			return ""
		},
		namesSessions:     true,
		persistentProcess: true,
		permissionKey:     func(key string) bool { return strings.HasPrefix(key, "per_") },
		// Replies are keyed by opencode's own message id (msg_…).
		replyKeyIsResponseID:     false,
		requestsPerFailedAttempt: 1,
	},
	{
		platform: platforms.Pi, agent: "pibot", provider: platforms.FakeProvider,
		readInbox: "read_inbox", shell: "bash",
		shellInput: func(command string) map[string]any { return map[string]any{"command": command} },
		configure: func(t *testing.T, r *mailrig.Rig) {
			if _, err := r.Env.UsePi(r.Model.OpenAIBaseURL(), goodModel, brokenModel); err != nil {
				t.Fatal(err)
			}
		},
		workdirInSystem: func(dir string) string { return dir },
		platformSession: func(r *mailrig.Rig, id, dir string) string {
			if cwd, _ := piSession(r, id); cwd != dir {
				return "want a pi session stored for " + dir + ", its file says " + cwd
			}
			return ""
		},
		// D-5 level 3: pi names nothing; the alias comes from the subject and is written
		// back with pi's own rename.
		aliasSettled: func(r *mailrig.Rig, id, alias string) bool {
			_, name := piSession(r, id)
			return name == alias
		},
		aliasOrigin: aliasFromSubject,
		// A person renames a pi session in pi's own interface: a session_info entry in its
		// file, written while no pi process holds it; the next bridge's first heartbeat
		// mirrors it.
		renameInPlatform: func(t *testing.T, r *mailrig.Rig, br *mailrig.Bridge, id, name string) *mailrig.Bridge {
			br.Stop()
			appendPiSessionName(t, r, id, name)
			return r.StartBridge()
		},
		permissionKey:     func(key string) bool { return strings.Contains(key, ":bash:") },
		persistentProcess: true,
		// The relay key is the completion id of the last answer.
		replyKeyIsResponseID:     true,
		requestsPerFailedAttempt: 1,
	},
	{
		// opencode through the ACP adapter (`opencode acp`); opencode's own configuration
		// asks before bash and edits, as its operator sets it.
		name: "acp-opencode", platform: platforms.OpenCode, agent: "acpcoder", provider: platforms.FakeProvider,
		readInbox: "agentmail_read_inbox", shell: "bash",
		shellInput: func(command string) map[string]any {
			return map[string]any{"command": command, "description": "create a file"}
		},
		configure: func(t *testing.T, r *mailrig.Rig) {
			r.Env.UseOpenCodeACP(r.Model.OpenAIBaseURL(), goodModel, brokenModel)
			r.UseACP(acpCommand(r, platforms.OpenCode, "acp"))
		},
		workdirInSystem: func(dir string) string { return dir },
		platformSession: func(r *mailrig.Rig, id, dir string) string {
			if !strings.HasPrefix(id, "ses_") {
				return "want opencode's ses_ id"
			}
			return ""
		},
		// opencode reports no title over ACP: the alias comes from the subject (D-5 level 3).
		aliasOrigin: aliasFromSubject,
		// The relay key is "<ACP session id>:<toolCallId>" (B-8.1).
		permissionKey:            func(key string) bool { return strings.HasPrefix(key, "ses_") && strings.Contains(key, ":") },
		denialEndsTurn:           true,
		replyKeyIsResponseID:     false,
		requestsPerFailedAttempt: 1,
	},
	{
		// Claude through the Claude Agent SDK (`claude-agent-acp`), over the ACP adapter.
		name: "acp-claude", platform: platforms.ClaudeAgentACP, agent: "acpclaude", provider: "anthropic",
		readInbox: "mcp__agentmail__read_inbox", shell: "Bash",
		shellInput: func(command string) map[string]any {
			return map[string]any{"command": command, "description": "create a file"}
		},
		configure: func(t *testing.T, r *mailrig.Rig) {
			r.Env.UseClaude(r.Model.URL)
			r.UseACP(acpCommand(r, platforms.ClaudeAgentACP, ""))
		},
		workdirInSystem: func(dir string) string { return "Primary working directory: " + dir },
		platformSession: claudeTranscriptHasCwd,
		aliasOrigin:     aliasFromSubject,
		permissionKey:   func(key string) bool { return strings.Count(key, ":") == 1 },
		// Claude hands the refusal to the model as an error result, without the note.
		deniedIsError:            true,
		denialNoteLost:           true,
		replyKeyIsResponseID:     false,
		requestsPerFailedAttempt: 0,
	},
	{
		// Qwen Code (`qwen --acp`), over the ACP adapter.
		name: "acp-qwen", platform: platforms.Qwen, agent: "acpqwen", provider: "openai",
		readInbox: "mcp__agentmail__read_inbox", shell: "run_shell_command",
		shellInput: func(command string) map[string]any {
			return map[string]any{"command": command, "description": "create a file"}
		},
		configure: func(t *testing.T, r *mailrig.Rig) {
			if err := r.Env.UseQwen(r.Model.OpenAIBaseURL(), goodModel, brokenModel); err != nil {
				t.Fatal(err)
			}
			r.UseACP(acpCommand(r, platforms.Qwen, "--acp"))
		},
		// Qwen Code tells the model its directory in a context message of its own.
		workdirInSystem:  func(dir string) string { return "I'm currently working in the directory: " + dir },
		workdirInContext: true,
		platformSession: func(r *mailrig.Rig, id, dir string) string {
			if len(id) < 8 {
				return "want Qwen's session id"
			}
			return ""
		},
		aliasOrigin:              aliasFromSubject,
		permissionKey:            func(key string) bool { return strings.Count(key, ":") >= 1 },
		denialEndsTurn:           true,
		replyKeyIsResponseID:     false,
		requestsPerFailedAttempt: 0,
	},
	{
		// Gemini CLI (`gemini --acp`), over the ACP adapter with a process per mail session
		// (`--acp-process session`): its session/load in a new process loses the
		// conversation (docs/PLATFORMS.md, "ACP agents").
		name: "acp-gemini", platform: platforms.Gemini, agent: "acpgemini", provider: "google",
		readInbox: "mcp_agentmail_read_inbox", shell: "run_shell_command",
		shellInput: func(command string) map[string]any {
			return map[string]any{"command": command, "description": "create a file"}
		},
		configure: func(t *testing.T, r *mailrig.Rig) {
			if err := r.Env.UseGemini(r.Model.URL, goodModel); err != nil {
				t.Fatal(err)
			}
			r.UseACP(acpCommand(r, platforms.Gemini, "--acp"))
			r.BridgeArgs = append(r.BridgeArgs, "--acp-process", "session")
		},
		// Gemini CLI tells the model its directory in a context message of its own (the
		// phrase as the JSON request body writes it).
		workdirInSystem:  func(dir string) string { return `**Workspace Directories:**\n  - ` + dir },
		workdirInContext: true,
		platformSession: func(r *mailrig.Rig, id, dir string) string {
			if len(id) < 8 {
				return "want Gemini's session id"
			}
			return ""
		},
		aliasOrigin:   aliasFromSubject,
		permissionKey: func(key string) bool { return strings.Count(key, ":") >= 1 },
		// Gemini hands the refusal to the model as an error result, without the note.
		deniedIsError:            true,
		denialNoteLost:           true,
		persistentProcess:        true,
		replyKeyIsResponseID:     false,
		requestsPerFailedAttempt: 1,
	},
	{
		// OpenAI Codex (`codex-acp`), over the ACP adapter; its model ids are ones Codex
		// knows.
		name: "acp-codex", platform: platforms.CodexACP, agent: "acpcodex", provider: platforms.FakeProvider,
		goodModel: "gpt-5.4", brokenModel: "gpt-5.4-mini",
		readInbox: "mcp__agentmail__read_inbox", shell: "shell_command", permissionTool: "execute",
		shellInput: func(command string) map[string]any { return map[string]any{"command": command} },
		configure: func(t *testing.T, r *mailrig.Rig) {
			if err := r.Env.UseCodex(r.Model.OpenAIBaseURL(), "gpt-5.4"); err != nil {
				t.Fatal(err)
			}
			r.UseACP(acpCommand(r, platforms.CodexACP, ""))
		},
		// Codex tells the model its directory in an <environment_context> message.
		workdirInSystem:  func(dir string) string { return "<cwd>" + dir },
		workdirInContext: true,
		platformSession: func(r *mailrig.Rig, id, dir string) string {
			if len(id) < 8 {
				return "want Codex's session id"
			}
			return ""
		},
		aliasOrigin:              aliasFromSubject,
		permissionKey:            func(key string) bool { return strings.Count(key, ":") >= 1 },
		denialEndsTurn:           true,
		replyKeyIsResponseID:     false,
		requestsPerFailedAttempt: 1,
	},
}

// good is the scripted model that answers.
func (c platformCase) good() string { return orDefault(c.goodModel, goodModel) }

// broken is the scripted model that answers HTTP 400.
func (c platformCase) broken() string { return orDefault(c.brokenModel, brokenModel) }

// brokenText is the broken model's error message.
func (c platformCase) brokenText() string { return c.broken() + " is not available on this server" }

func orDefault(m, def string) string {
	if m != "" {
		return m
	}
	return def
}

// acpCommand is the --acp-command line that starts the rig's platform binary with args.
func acpCommand(r *mailrig.Rig, p platforms.Platform, args string) string {
	return "'" + r.Env.Get(platforms.BinEnv(p)) + "' " + args
}

// caseName is the subtest's name.
func (c platformCase) caseName() string {
	if c.name != "" {
		return c.name
	}
	return string(c.platform)
}

// openCodeSlug is opencode's generated slug (adjective-noun), as opposed to an alias
// derived from the subject.
var openCodeSlug = regexp.MustCompile(`^[a-z]+-[a-z]+$`)

// aliasFromSubject checks that an alias of [alpha]'s session is derived from its subject.
func aliasFromSubject(alias string) string {
	if !strings.Contains(alias, "parser") {
		return "want one derived from the subject"
	}
	return ""
}

// claudeTranscriptHasCwd finds Claude Code's own transcript of a session under the
// isolated HOME (~/.claude/projects/<folder of the cwd>/<id>.jsonl) and checks that it
// records dir as the cwd.
func claudeTranscriptHasCwd(r *mailrig.Rig, id, dir string) string {
	matches, _ := filepath.Glob(filepath.Join(r.Env.Home, ".claude", "projects", "*", id+".jsonl"))
	if len(matches) == 0 {
		return "want Claude Code's transcript of it"
	}
	data, err := os.ReadFile(matches[0])
	if err != nil || !strings.Contains(string(data), `"cwd":"`+dir+`"`) {
		return "its transcript " + matches[0] + " does not record the cwd " + dir
	}
	return ""
}

// piSession reads pi's session file of a session: the working directory in its header
// and the name of its last session_info entry ("" for what is not there).
func piSession(r *mailrig.Rig, id string) (cwd, name string) {
	files := piSessionFiles(r, id)
	if len(files) != 1 {
		return "", ""
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return "", ""
	}
	for i, line := range strings.Split(string(data), "\n") {
		var e struct {
			Type string `json:"type"`
			Name string `json:"name"`
			Cwd  string `json:"cwd"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		if i == 0 {
			cwd = e.Cwd
		}
		if e.Type == "session_info" {
			name = e.Name
		}
	}
	return cwd, name
}

// piSessionFiles lists pi's session files of a session in the rig's pi agent folder
// (sessions/<folder of the cwd>/<time>_<id>.jsonl); one when the session exists.
func piSessionFiles(r *mailrig.Rig, id string) []string {
	files, _ := filepath.Glob(filepath.Join(r.Env.Get("PI_CODING_AGENT_DIR"), "sessions", "*", "*_"+id+".jsonl"))
	return files
}

// script is the model's script of the scenario in c's tool names.
func (c platformCase) script() []scriptedmodel.Rule {
	shell := func(command string) scriptedmodel.Reply {
		return scriptedmodel.Reply{Text: "Creating the file.", ToolCalls: []scriptedmodel.ToolCall{{Name: c.shell, Input: c.shellInput(command)}}}
	}
	return []scriptedmodel.Rule{
		scriptedmodel.FailModel(c.broken(), 400, c.brokenText()),
		{Name: "alpha reads", UserContains: "[alpha]", Reply: scriptedmodel.Call(c.readInbox, map[string]any{})},
		{Name: "alpha answers", ToolResultFor: c.readInbox, Match: mailrig.UserHas("[alpha]"), Reply: scriptedmodel.Text(alphaAnswer)},
		{Name: "beta", UserContains: "[beta]", Reply: scriptedmodel.Text(betaAnswer)},
		{Name: "gamma runs", UserContains: "[gamma]", Reply: shell("touch approved.txt")},
		{Name: "gamma answers", ToolResultFor: c.shell, Match: mailrig.UserHas("[gamma]"), Reply: scriptedmodel.Text(gammaAnswer)},
		{Name: "delta runs", UserContains: "[delta]", Reply: shell("touch denied.txt")},
		{Name: "delta answers", ToolResultFor: c.shell, Match: mailrig.UserHas("[delta]"), Reply: scriptedmodel.Text(deltaAnswer)},
		{Name: "epsilon", UserContains: "[epsilon]", Model: c.good(), Reply: scriptedmodel.Text(epsilonAnswer)},
	}
}

// contract is one platform's run of the scenario.
type contract struct {
	t    *testing.T
	c    platformCase
	r    *mailrig.Rig
	dir1 string // the directory of [alpha]'s session
	// unanswered are the mails that rightly got no reply (a denial that ends the turn).
	unanswered map[string]bool
}

func TestPlatformMailContract(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	for _, c := range platformCases {
		t.Run(c.caseName(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := mailrig.New(t, c.platform, c.agent, c.script()...)
			c.configure(t, r)
			k := &contract{t: t, c: c, r: r}
			bridge1 := r.StartBridge()
			alpha := k.firstMail()
			beta := k.followUpByAlias(alpha)
			gamma, delta := k.permissions()
			// Every turn so far has finished its run: the stop interrupts nothing.
			k.waitEnded(gamma)
			k.waitEnded(delta)
			bridge1.Stop()
			k.catchUpAndFallback(alpha, beta, gamma, delta)
			k.failureReport()
			t.Logf("%s end to end: %d model requests, %v", c.platform, len(r.Model.ModelRequests()), time.Since(start).Round(time.Second))
		})
	}
}

// firstMail: a person's mail to agent@<dir>.new runs a turn in that directory that reads
// the mail through the AgentMail tools, and the answer comes back as a summary relay that
// uses no round (I-2), keyed so that a replay is a duplicate (B-5.2).
func (k *contract) firstMail() *client.SendMailResponse {
	t, c, r := k.t, k.c, k.r
	dir := mailrig.Workspace(t, "parser")
	k.dir1 = dir
	alpha := r.Send(c.agent+"@"+dir+".new", "[alpha] the parser", "Please look at the tokenizer bug in lexer.go.")
	rounds := r.Session(alpha.SessionID).UsedRounds
	reply := r.WaitMail("the reply to [alpha]", r.ReplyFrom(alpha.MailID, client.MailTypeNormal))
	if reply.Relay != client.RelaySummary || reply.Body != alphaAnswer || reply.SessionID != alpha.SessionID {
		t.Fatalf("reply to [alpha] = relay %q body %q session %s, want a summary relay of %q in %s",
			reply.Relay, reply.Body, reply.SessionID, alphaAnswer, alpha.SessionID)
	}
	s := r.Session(alpha.SessionID)
	if s.UsedRounds != rounds {
		t.Errorf("used_rounds went from %d to %d with the relayed reply; a relay uses no round (I-2)", rounds, s.UsedRounds)
	}
	turns := r.TurnsFor(alpha.MailID)
	if len(turns) != 1 {
		t.Fatalf("[alpha] opened %d model turns, want 1\n%s", len(turns), r.Dump())
	}
	told := turns[0].System
	if c.workdirInContext {
		// A phrase of the platform's own, which the bridge's prompt does not hold.
		told += string(turns[0].Body)
	}
	if !strings.Contains(told, c.workdirInSystem(dir)) {
		t.Errorf("the platform did not run in %s: its system prompt does not say %q", dir, c.workdirInSystem(dir))
	}
	if !slices.Contains(turns[0].Tools, c.readInbox) {
		t.Errorf("the AgentMail tools were not offered to the model: %v", turns[0].Tools)
	}
	reads := r.ToolResults(alpha.MailID, c.readInbox)
	if len(reads) != 1 || reads[0].IsError || !strings.Contains(reads[0].Content, "[alpha] the parser") ||
		!strings.Contains(reads[0].Content, "tokenizer bug in lexer.go") {
		t.Fatalf("read_inbox through agentmail mcp gave the model %+v, want the mail's subject and body", reads)
	}
	if s.PlatformSessionID == "" {
		t.Fatalf("the gateway session holds no platform session id (B-3.3)")
	}
	if bad := c.platformSession(r, s.PlatformSessionID, dir); bad != "" {
		t.Errorf("the gateway session holds platform session %q: %s (B-3.1, B-3.3)", s.PlatformSessionID, bad)
	}
	// The turn is a run backed by the platform's facts (seed 004).
	run := k.waitEnded(alpha)
	if run.PID <= 0 {
		t.Errorf("run of [alpha] = %+v, want the platform process's pid", run)
	}
	if c.finishedRun != nil {
		if bad := c.finishedRun(run); bad != "" {
			t.Errorf("run of [alpha] = %+v: %s", run, bad)
		}
	}
	if c.replyKeyIsResponseID {
		reqs := r.RequestsFor(alpha.MailID)
		last := reqs[len(reqs)-1].ResponseID
		k.wantDuplicateRelay(alpha.MailID, last, client.MailTypeNormal)
	}
	return alpha
}

// waitEnded waits until the turn of mail m ended well: its run is finished, or idle on a
// platform whose process outlives the turn (seed 004 section 1), never idle on one whose
// process ends with it.
func (k *contract) waitEnded(m *client.SendMailResponse) client.Run {
	k.t.Helper()
	want := client.RunFinished
	if k.c.persistentProcess {
		want = client.RunIdle
	}
	var found client.Run
	k.r.WaitFor("the run of mail "+m.MailID+" to end", func() bool {
		for _, run := range k.r.Runs(m.SessionID) {
			if run.MailID == m.MailID && (run.State == want || run.State == client.RunFinished) {
				found = run
				return true
			}
		}
		return false
	})
	return found
}

// wantDuplicateRelay replays a relay key in reply to mailID as the agent and expects the
// gateway to answer duplicate_relay.
func (k *contract) wantDuplicateRelay(mailID, key, mailType string) {
	k.t.Helper()
	dup, err := k.r.AgentClient.SendMail(context.Background(), client.SendMailRequest{To: "admin", Subject: "x", Body: "x",
		ReplyTo: mailID, Relay: client.RelaySummary, RelayKey: key, MailType: mailType})
	if err != nil || dup.Status != "duplicate_relay" {
		k.t.Errorf("replaying relay_key %q in reply to %s = %+v, %v; want duplicate_relay (B-5.2, B-6.3)", key, mailID, dup, err)
	}
}

// followUpByAlias: a mail to the session's alias lands in the same (idle) platform
// session and continues its conversation: a new turn, not a silent follow-up (9.11).
func (k *contract) followUpByAlias(alpha *client.SendMailResponse) *client.SendMailResponse {
	t, c, r := k.t, k.c, k.r
	s1 := r.Session(alpha.SessionID)
	var alias string
	r.WaitFor("the session alias of [alpha]", func() bool {
		alias = r.Session(alpha.SessionID).Alias
		return alias != "" && (c.aliasSettled == nil || c.aliasSettled(r, s1.PlatformSessionID, alias))
	})
	if bad := c.aliasOrigin(alias); bad != "" {
		t.Errorf("alias %q: %s (D-5)", alias, bad)
	}
	// The follow-up is urgent and asks for an acknowledgement: the prompt says both (issue 21 item 3).
	beta := r.SendRequest(client.SendMailRequest{To: c.agent + "@" + k.dir1 + "." + alias, Subject: "[beta] and the parser again",
		Body: "One more thing about the tokenizer.", Importance: "urgent", AckRequired: true})
	if beta.SessionID != alpha.SessionID {
		t.Fatalf("the mail to alias %q went to session %s, want %s", alias, beta.SessionID, alpha.SessionID)
	}
	reply := r.WaitMail("the reply to [beta]", r.ReplyFrom(beta.MailID, client.MailTypeNormal))
	if reply.Relay != client.RelaySummary || reply.Body != betaAnswer {
		t.Fatalf("reply to [beta] = relay %q body %q", reply.Relay, reply.Body)
	}
	if s := r.Session(alpha.SessionID); s.PlatformSessionID != s1.PlatformSessionID {
		t.Errorf("platform session after the follow-up = %q, want the same %q", s.PlatformSessionID, s1.PlatformSessionID)
	}
	turns := r.TurnsFor(beta.MailID)
	if len(turns) != 1 {
		t.Fatalf("[beta] opened %d model turns, want 1\n%s", len(turns), r.Dump())
	}
	history := conversationText(turns[0])
	if !strings.Contains(history, "mail_id "+alpha.MailID) || !strings.Contains(history, alphaAnswer) {
		t.Errorf("the follow-up did not continue the conversation; the model saw:\n%s", history)
	}
	if !strings.Contains(turns[0].UserText, "URGENT") || !strings.Contains(turns[0].UserText, "acknowledge_mail") {
		t.Errorf("the prompt of an urgent mail that asks for an acknowledgement does not say so; the model was told:\n%s", turns[0].UserText)
	}
	return beta
}

// permissions: the platform's shell becomes a permission mail that waits for a person;
// approval runs the command, denial does not and gives the model the person's note.
func (k *contract) permissions() (gamma, delta *client.SendMailResponse) {
	t, c, r := k.t, k.c, k.r
	ctx := context.Background()
	dir := mailrig.Workspace(t, "approve")
	gamma = r.Send(c.agent+"@"+dir+".new", "[gamma] make a file", "Create approved.txt, please.")
	ask := k.waitPermission("[gamma]", gamma.SessionID, "touch approved.txt")
	if _, err := os.Stat(filepath.Join(dir, "approved.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("approved.txt exists before anyone approved (stat: %v)", err)
	}
	if _, err := r.Admin.Decide(ctx, ask.MailID, client.DecideRequest{Decision: "approve"}); err != nil {
		t.Fatalf("approve: %v\n%s", err, r.Dump())
	}
	waitFile(r.Gateway, filepath.Join(dir, "approved.txt"))
	reply := r.WaitMail("the reply to [gamma]", r.ReplyFrom(gamma.MailID, client.MailTypeNormal))
	if reply.Body != gammaAnswer || reply.Relay != client.RelaySummary {
		t.Errorf("reply to [gamma] = relay %q body %q", reply.Relay, reply.Body)
	}
	if trs := r.ToolResults(gamma.MailID, c.shell); len(trs) != 1 || trs[0].IsError {
		t.Errorf("the approved %s gave the model %+v, want one successful result", c.shell, trs)
	}

	dir = mailrig.Workspace(t, "deny")
	delta = r.Send(c.agent+"@"+dir+".new", "[delta] make a file", "Create denied.txt, please.")
	ask = k.waitPermission("[delta]", delta.SessionID, "touch denied.txt")
	if _, err := r.Admin.Decide(ctx, ask.MailID, client.DecideRequest{Decision: "deny", Note: denyNote}); err != nil {
		t.Fatalf("deny: %v\n%s", err, r.Dump())
	}
	if c.denialEndsTurn {
		// The agent stops at the refusal: the turn ends without asking the model again,
		// and without text after the tool call there is no reply (B-5.4).
		r.WaitRun(delta.SessionID, delta.MailID, client.RunFinished)
		if trs := r.ToolResults(delta.MailID, c.shell); len(trs) != 0 {
			t.Errorf("the model was asked again after the denied %s: %+v", c.shell, trs)
		}
		if n := len(r.Matching(r.ReplyFrom(delta.MailID, client.MailTypeNormal))); n != 0 {
			t.Errorf("[delta] got %d replies, want none (no text after the denied call)", n)
		}
		k.unanswered = map[string]bool{delta.MailID: true}
	} else {
		reply = r.WaitMail("the reply to [delta]", r.ReplyFrom(delta.MailID, client.MailTypeNormal))
		if reply.Body != deltaAnswer {
			t.Errorf("reply to [delta] = %q", reply.Body)
		}
		trs := r.ToolResults(delta.MailID, c.shell)
		if len(trs) != 1 || trs[0].IsError != c.deniedIsError || (!c.denialNoteLost && !strings.Contains(trs[0].Content, denyNote)) {
			t.Errorf("the denied %s gave the model %+v, want one refused result (error: %v) with the person's note (unless lost: %v)", c.shell, trs, c.deniedIsError, c.denialNoteLost)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "denied.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("denied.txt exists although the person denied (stat: %v)", err)
	}
	return gamma, delta
}

// waitPermission waits for the permission mail of a session and checks that it is the
// agent's question about the shell running command.
func (k *contract) waitPermission(tag, sessionID, command string) client.Mail {
	t, c, r := k.t, k.c, k.r
	t.Helper()
	ask := r.WaitMail("the permission mail of "+tag, func(m client.Mail) bool {
		return m.SessionID == sessionID && m.MailType == client.MailTypePermissionRequest
	})
	tool := orDefault(c.permissionTool, c.shell)
	if ask.FromName != c.agent || ask.Permission == nil || ask.Permission.Tool != tool ||
		!strings.Contains(ask.Permission.Context+ask.Permission.Question, command) ||
		(c.permissionKey != nil && !c.permissionKey(ask.Permission.RelayKey)) {
		t.Fatalf("permission mail of %s = %+v (permission %+v), want %s: %s from %s", tag, ask, ask.Permission, tool, command, c.agent)
	}
	return ask
}

// setModels sets the agent's model scope to the scripted models, in order.
func (k *contract) setModels(models ...string) {
	k.t.Helper()
	var refs []client.ModelRef
	for _, m := range models {
		refs = append(refs, client.ModelRef{Provider: k.c.provider, Model: m})
	}
	if _, err := k.r.Admin.AdminSetAgentModels(context.Background(), k.c.agent, client.AllowedModels{AllowedModels: refs}); err != nil {
		k.t.Fatalf("setting the model scope: %v\n%s", err, k.r.Dump())
	}
}

// catchUpAndFallback (the bridge is down): the admin puts the broken model first and a
// mail arrives. The next bridge learns the scope at its first heartbeat (B-2.2), catches
// the mail up once (B-7), and falls back to the next model (D-3); a third bridge catches
// up nothing, and no earlier mail ran again.
func (k *contract) catchUpAndFallback(earlier ...*client.SendMailResponse) {
	t, c, r := k.t, k.c, k.r
	k.setModels(c.broken(), c.good())
	dir := mailrig.Workspace(t, "offline")
	epsilon := r.Send(c.agent+"@"+dir+".new", "[epsilon] while you were away", "Written while the bridge was down.")
	bridge2 := r.StartBridge()
	reply := r.WaitMail("the reply to [epsilon]", r.ReplyFrom(epsilon.MailID, client.MailTypeNormal))
	if reply.Body != epsilonAnswer || reply.Relay != client.RelaySummary {
		t.Errorf("reply to [epsilon] = relay %q body %q", reply.Relay, reply.Body)
	}
	r.WaitFor("bridge 2 to finish its catch-up", func() bool { return bridge2.Log.Count("caught up ") >= 1 })
	if bridge2.Log.Count(`msg="caught up 1 mails"`) != 1 {
		t.Errorf("bridge 2 did not catch up exactly the one mail\n%s", bridge2.Log)
	}
	fallback := c.provider + "/" + c.good() + " succeeded (after 1 failed: " + c.provider + "/" + c.broken() + ")"
	r.WaitFor("the fallback log line", func() bool { return bridge2.Log.Count(fallback) == 1 })
	bridge2.Stop()

	k.setModels(c.broken())
	bridge3 := r.StartBridge()
	r.WaitFor("bridge 3 to finish its catch-up", func() bool { return bridge3.Log.Count("caught up ") >= 1 })
	if bridge3.Log.Count(`msg="caught up 0 mails"`) != 1 {
		t.Errorf("bridge 3 caught up mails that were handled already\n%s", bridge3.Log)
	}
	models := map[string]int{}
	turns := r.TurnsFor(epsilon.MailID)
	for _, q := range turns {
		models[q.Model]++
	}
	broken := models[c.broken()] == c.requestsPerFailedAttempt || (c.requestsPerFailedAttempt == 0 && models[c.broken()] >= 1)
	if len(turns) != models[c.broken()]+1 || !broken || models[c.good()] != 1 {
		t.Errorf("[epsilon] turns by model %v across two restarts, want one attempt on each (%d requests to %s)\n%s",
			models, c.requestsPerFailedAttempt, c.broken(), r.Dump())
	}
	if n := len(r.Matching(r.ReplyFrom(epsilon.MailID, client.MailTypeNormal))); n != 1 {
		t.Errorf("[epsilon] got %d replies, want exactly 1", n)
	}
	runs := r.Runs(epsilon.SessionID)
	byModel := map[string]string{}
	for _, run := range runs {
		if run.MailID == epsilon.MailID {
			byModel[run.Model] = run.State
		}
	}
	if len(runs) != 2 || byModel[c.provider+"/"+c.broken()] != client.RunFailed || byModel[c.provider+"/"+c.good()] != client.RunFinished {
		t.Errorf("runs of [epsilon]'s session = %+v; want one failed on %s, then one finished on %s", runs, c.broken(), c.good())
	}
	for _, m := range earlier {
		if n := len(r.TurnsFor(m.MailID)); n != 1 {
			t.Errorf("mail %s ran %d turns after the restarts, want 1", m.MailID, n)
		}
		want := 1
		if k.unanswered[m.MailID] {
			want = 0
		}
		if n := len(r.Matching(r.ReplyFrom(m.MailID, client.MailTypeNormal))); n != want {
			t.Errorf("mail %s got %d replies, want %d", m.MailID, n, want)
		}
	}
}

// failureReport: with only the broken model allowed, a mail gets one failure mail, a
// summary relay keyed model-failure:<mail_id> that names the route and the model's error
// (B-6), and nothing else.
func (k *contract) failureReport() {
	t, c, r := k.t, k.c, k.r
	route := c.provider + "/" + c.broken()
	dir := mailrig.Workspace(t, "broken")
	zeta := r.Send(c.agent+"@"+dir+".new", "[zeta] on a broken model", "Anything at all.")
	fail := r.WaitMail("the failure mail of [zeta]", r.ReplyFrom(zeta.MailID, client.MailTypeFailureReport))
	if fail.Relay != client.RelaySummary || !strings.Contains(fail.Subject, "[zeta] on a broken model") ||
		!strings.Contains(fail.Body, route) || !strings.Contains(fail.Body, c.brokenText()) {
		t.Errorf("failure mail = relay %q subject %q body:\n%s\nwant a summary relay naming the route and the model's error", fail.Relay, fail.Subject, fail.Body)
	}
	if run := r.WaitRun(zeta.SessionID, zeta.MailID, client.RunFailed); !strings.Contains(run.Error, c.broken()+" is not available") || run.Model != route {
		t.Errorf("run of [zeta] = %+v, want failed on %s with the model's error", run, route)
	}
	reqs := r.RequestsFor(zeta.MailID)
	if len(reqs) == 0 {
		t.Fatalf("[zeta] never reached the model\n%s", r.Dump())
	}
	for _, q := range reqs {
		if q.Model != c.broken() || q.Status != 400 {
			t.Errorf("[zeta] request to model %q answered %d, want %s answered 400", q.Model, q.Status, c.broken())
		}
	}
	k.wantDuplicateRelay(zeta.MailID, "model-failure:"+zeta.MailID, client.MailTypeFailureReport)
	if n := len(r.Matching(func(m client.Mail) bool { return m.ParentMailID == zeta.MailID && m.FromName == c.agent })); n != 1 {
		t.Errorf("[zeta] got %d mails from the agent, want only the failure mail", n)
	}
}

// conversationText is the conversation a model request carries, one "role: text" line
// per message.
func conversationText(q scriptedmodel.Request) string {
	var b strings.Builder
	for _, m := range q.Messages {
		b.WriteString(m.Role + ": " + m.Text + "\n")
	}
	return b.String()
}

// waitFile waits until the file at path exists.
func waitFile(g *mailrig.Gateway, path string) {
	g.T.Helper()
	g.WaitFor(path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}
