package bridge

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
)

// --- B-1.1 key resolution

func TestResolveAgentKeyPrefersEnvThenFileThenGenerates(t *testing.T) {
	home := t.TempDir()
	k, src, err := ResolveAgentKey(" from-env ", home)
	if err != nil || k != "from-env" || src != KeyFromEnv {
		t.Fatalf("env key = %q %q %v", k, src, err)
	}
	k1, src, err := ResolveAgentKey("", home)
	if err != nil || src != KeyFromGenerated || !strings.HasPrefix(k1, "amk_") || len(k1) != 4+48 {
		t.Fatalf("generated key = %q %q %v", k1, src, err)
	}
	st, err := os.Stat(KeyFile(home))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v; want 0600", st.Mode().Perm(), err)
	}
	dst, _ := os.Stat(filepath.Dir(KeyFile(home)))
	if dst.Mode().Perm() != 0o700 {
		t.Fatalf("key folder mode = %v, want 0700", dst.Mode().Perm())
	}
	k2, src, err := ResolveAgentKey("", home)
	if err != nil || k2 != k1 || src != KeyFromFile {
		t.Fatalf("second start read %q %q %v, want the saved key %q from the file", k2, src, err, k1)
	}
}

func TestResolveAgentKeyRefusesAnEmptyFile(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Dir(KeyFile(home)), 0o700)
	os.WriteFile(KeyFile(home), []byte("\n"), 0o600)
	if _, _, err := ResolveAgentKey("", home); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("err = %v, want an error naming the empty file", err)
	}
}

// The hint names the web page's place and a command to paste with the
// name and key filled in, and no endpoint (issue 18 point 4).
func TestRegistrationHintNamesTheWebPageAndACommand(t *testing.T) {
	h := RegistrationHint("http://gw", "bot", "/home/b/.agentmail/agent.key")
	for _, want := range []string{"Admin → Agent keys", "agentmail keys register-agent --agent bot --key-file /home/b/.agentmail/agent.key\n",
		"agentmail keys register-agent --agent bot --key -", "agentmail login --url http://gw"} {
		if !strings.Contains(h, want) {
			t.Fatalf("hint %q lacks %q", h, want)
		}
	}
	if strings.Contains(h, "/api/") || strings.Contains(h, "--key amk_") {
		t.Fatalf("hint %q names an endpoint or puts the key on a command line", h)
	}
	if h := RegistrationHint("http://gw", "my bot's", "/home/my dir/agent.key"); !strings.Contains(h, `--agent 'my bot'\''s' --key-file '/home/my dir/agent.key'`) ||
		!strings.Contains(h, `--agent 'my bot'\''s' --key -`) {
		t.Fatalf("a name or path with a space is not quoted for the shell: %q", h)
	}
	if h := RegistrationHint("http://gw", "bot", ""); strings.Contains(h, "--key-file") || !strings.Contains(h, "--key -") {
		t.Fatalf("without a key file the hint gives the standard input form only: %q", h)
	}
}

// --- item 6 configuration

func TestLoadSettingsDefaultsAndTiers(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	s, err := LoadSettings(get)
	if err != nil || s.GatewayURL != DefaultGatewayURL || s.Tier != TierWorkspace {
		t.Fatalf("defaults = %+v %v", s, err)
	}
	env["AGENTMAIL_GATEWAY_URL"] = "http://10.0.0.1:9000/"
	env["AGENTMAIL_PERMISSION_MODE"] = "PLAN"
	env["AGENTMAIL_FALLBACK_DIR"] = "/srv/x"
	env["AGENTMAIL_AGENT_NAME"] = "bot"
	s, err = LoadSettings(get)
	if err != nil || s.GatewayURL != "http://10.0.0.1:9000" || s.Tier != TierPlan || s.FallbackDir != "/srv/x" || s.AgentName != "bot" {
		t.Fatalf("settings = %+v %v", s, err)
	}
	env["AGENTMAIL_PERMISSION_MODE"] = "yolo"
	if _, err := LoadSettings(get); err == nil || !strings.Contains(err.Error(), "AGENTMAIL_PERMISSION_MODE") {
		t.Fatalf("unknown tier error = %v", err)
	}
}

func TestFindPlatformBinPrefersTheVariable(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "myclaude")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	if BinEnvVar("claude") != "AGENTMAIL_CLAUDE_BIN" || BinEnvVar("open-code") != "AGENTMAIL_OPEN_CODE_BIN" {
		t.Fatal("BinEnvVar")
	}
	got, err := FindPlatformBin("claude", "claude", func(k string) string {
		if k == "AGENTMAIL_CLAUDE_BIN" {
			return bin
		}
		return ""
	})
	if err != nil || got != bin {
		t.Fatalf("FindPlatformBin = %q %v", got, err)
	}
	t.Setenv("PATH", dir)
	got, err = FindPlatformBin("x", "myclaude", func(string) string { return "" })
	if err != nil || got != bin {
		t.Fatalf("PATH lookup = %q %v", got, err)
	}
	if _, err := FindPlatformBin("x", "nothere", func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "AGENTMAIL_X_BIN") {
		t.Fatalf("missing bin error = %v", err)
	}
}

func TestMCPCommandIsTheRunningBinaryPlusMcp(t *testing.T) {
	cmd, err := MCPCommand()
	if err != nil || len(cmd) != 2 || cmd[1] != "mcp" || !filepath.IsAbs(cmd[0]) {
		t.Fatalf("MCPCommand = %v %v", cmd, err)
	}
}

// --- D-6 workspace

func TestResolveWorkspace(t *testing.T) {
	existing := t.TempDir()
	fallback := t.TempDir()
	file := filepath.Join(existing, "f")
	os.WriteFile(file, nil, 0o644)
	missing := filepath.Join(existing, "missing", "deeper")
	for _, tc := range []struct {
		name, to, fb, want string
		fell, err          bool
	}{
		{"existing absolute", existing, fallback, existing, false, false},
		{"missing falls back", missing, fallback, fallback, true, false},
		{"relative refused", "rel/x", fallback, fallback, true, false},
		{"dot-relative refused", "./x", fallback, fallback, true, false},
		{"empty uses fallback", "", fallback, fallback, true, false},
		{"a file is not a directory", file, fallback, fallback, true, false},
		{"no fallback is an error", missing, "", "", true, true},
		{"relative fallback is an error", missing, "fb", "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ResolveWorkspace(tc.to, tc.fb)
			if (err != nil) != tc.err || c.Dir != tc.want || c.FellBack != tc.fell {
				t.Fatalf("ResolveWorkspace(%q, %q) = %+v, %v", tc.to, tc.fb, c, err)
			}
			if c.Expected != tc.to {
				t.Fatalf("Expected = %q", c.Expected)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(existing, "missing")); !os.IsNotExist(err) {
		t.Fatal("ResolveWorkspace created a directory (N-2)")
	}
}

// --- D-5 names

func TestIsUnusableName(t *testing.T) {
	for _, s := range []string{"", "  ", "New session", "New session - 2026-09-02T11:41:16.744Z", "新会话", "处理邮件",
		"The user is asking me to generate a title for a coding-agent",
		"我们只需要生成标题，不包含其他内容。标题应反映请求内容：测试opencode的源。简短：最",
		"line one\nline two", "1234", "---", strings.Repeat("long ", 20)} {
		if !IsUnusableName(s) {
			t.Errorf("IsUnusableName(%q) = false", s)
		}
	}
	for _, s := range []string{"Refactor imports", "重构导入路径", "Where is the bug", "fix-leak", "witty-planet"} {
		if IsUnusableName(s) {
			t.Errorf("IsUnusableName(%q) = true", s)
		}
	}
}

func TestSanitizeAliasRemovesSeparators(t *testing.T) {
	for in, want := range map[string]string{
		"Fix the leak":              "fix-the-leak",
		"a.b@c/d":                   "a-b-c-d",
		"重构 导入.路径":                  "重构-导入-路径",
		"  --x--  ":                 "x",
		strings.Repeat("word ", 20): "word-word-word-word-word-word-word-word",
	} {
		got := SanitizeAlias(in)
		if got != want {
			t.Errorf("SanitizeAlias(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(got, ".@/") {
			t.Errorf("alias %q keeps a separator (W-7.1)", got)
		}
	}
}

func TestProposeAliasLadder(t *testing.T) {
	for _, tc := range []struct {
		slug, title, subject string
		alias, ptitle        string
		level                AliasLevel
	}{
		{"witty-planet", "Refactor imports", "x", "witty-planet", "Refactor imports", AliasSlug},
		{"", "Refactor imports", "x", "refactor-imports", "Refactor imports", AliasTitle},
		{"", "New session - 2026", "Re: Fix the leak", "fix-the-leak", "", AliasFromMail},
		{"", "The user is asking me to generate a title", "Fwd: RE: 重构导入路径", "重构导入路径", "", AliasFromMail},
		{"", "", "新会话", "", "", AliasNone},
	} {
		p := ProposeAlias(tc.slug, tc.title, tc.subject)
		if p.Alias != tc.alias || p.Title != tc.ptitle || p.Level != tc.level {
			t.Errorf("ProposeAlias(%q, %q, %q) = %+v, want %q %q level %d", tc.slug, tc.title, tc.subject, p, tc.alias, tc.ptitle, tc.level)
		}
	}
	a, b := ProposeAlias("", "", "one"), ProposeAlias("", "", "two")
	if a.Fingerprint() == b.Fingerprint() || a.Fingerprint() != ProposeAlias("", "", "one").Fingerprint() {
		t.Fatal("fingerprints must differ by content and repeat for the same content")
	}
	if !ProposeAlias("", "", "").Empty() {
		t.Fatal("level 4 proposal is not empty")
	}
}

// --- S-1..S-4

func TestApplySnapshotRules(t *testing.T) {
	at := func(m int) *time.Time { x := time.Date(2026, 9, 2, 10, m, 0, 0, time.UTC); return &x }
	var in []ListedSession
	add := func(id, slug, title string, m int, parent string, sub bool) {
		in = append(in, ListedSession{PlatformSession: client.PlatformSession{PlatformID: id, Slug: slug, Title: title, UpdatedAt: at(m)},
			ParentID: parent, Subagent: sub})
	}
	add("a", "fix-leak", "", 1, "", false)
	add("b", "fix-leak", "", 3, "", false)                        // S-3: newer wins
	add("c", "", "", 9, "", false)                                // S-1
	add("d", "audit", "You are auditing ONE file", 8, "a", false) // S-2 parent
	add("e", "audit-2", "", 7, "", true)                          // S-2 flag
	add("f", "", "Refactor imports", 5, "", false)                // slug from title
	add("g", "x.y@z", "New session - 1", 2, "", false)            // sanitized slug, placeholder title dropped
	out := ApplySnapshotRules(in, func(id string) bool { return id == "f" })
	var got []string
	for _, s := range out {
		got = append(got, s.PlatformID+":"+s.Slug+":"+s.Title)
	}
	want := "f:refactor-imports:Refactor imports b:fix-leak: g:x-y-z:"
	if strings.Join(got, " ") != want {
		t.Fatalf("snapshot = %v, want %s", got, want)
	}
	if !out[0].MailDriven || out[1].MailDriven {
		t.Fatal("mail_driven flags")
	}
	var many []ListedSession
	for i := 0; i < 250; i++ {
		many = append(many, ListedSession{PlatformSession: client.PlatformSession{PlatformID: "p", Slug: fmt.Sprintf("s%d", i), UpdatedAt: at(i % 60)}})
	}
	if n := len(ApplySnapshotRules(many, nil)); n != MaxSnapshotSessions {
		t.Fatalf("cap = %d, want %d (S-4)", n, MaxSnapshotSessions)
	}
	if out := ApplySnapshotRules(nil, nil); out == nil || len(out) != 0 {
		t.Fatal("an empty platform must give [] (W-3), not nil")
	}
}

func TestCleanModels(t *testing.T) {
	out := CleanModels([]client.Model{{Provider: "p", Model: "a"}, {Provider: "p", Model: "a"}, {Provider: "p"}, {Provider: "q", Model: "a"}})
	if len(out) != 2 || out[1].Provider != "q" {
		t.Fatalf("CleanModels = %+v", out)
	}
	if out := CleanModels(nil); out == nil {
		t.Fatal("CleanModels(nil) must be [] (a real empty catalogue)")
	}
}

// --- B-7 selection

func TestSelectCatchUp(t *testing.T) {
	base := time.Date(2026, 9, 2, 10, 0, 0, 0, time.UTC)
	var mails []client.Mail
	for i := 9; i >= 0; i-- { // newest first, as the inbox answers
		mt := client.MailTypeNormal
		if i == 3 {
			mt = client.MailTypePermissionDecision
		}
		mails = append(mails, client.Mail{MailID: string(rune('a' + i)), MailType: mt, CreatedAt: base.Add(time.Duration(i) * time.Minute)})
	}
	got := SelectCatchUp(mails, func(id string) bool { return id == "b" }, MaxCatchUp)
	var ids []string
	for _, m := range got {
		ids = append(ids, m.MailID)
	}
	if strings.Join(ids, "") != "acefg" {
		t.Fatalf("SelectCatchUp = %v, want a c e f g (oldest first, normal only, not delivered, at most 5)", ids)
	}
}

// --- D-3 order, B-6 report

func TestAttemptOrder(t *testing.T) {
	a := []client.ModelRef{{Provider: "p", Model: "1"}, {Provider: "p", Model: "2"}}
	lbl := func(o []*client.ModelRef) string {
		var s []string
		for _, m := range o {
			s = append(s, ModelLabel(m))
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		scope ModelScope
		c13   bool
		want  string
	}{
		{ModelScope{Known: true, Allowed: a}, true, "p/1,p/2"},
		{ModelScope{Known: true, Allowed: a}, false, "platform default"},
		{ModelScope{Known: true, Unrestricted: true}, true, "platform default"},
		{ModelScope{}, true, "platform default"},
		{ModelScope{Known: true}, true, ""},
	} {
		if got := lbl(AttemptOrder(tc.scope, tc.c13)); got != tc.want {
			t.Errorf("AttemptOrder(%+v, %v) = %q, want %q", tc.scope, tc.c13, got, tc.want)
		}
	}
}

func TestFailureReportShape(t *testing.T) {
	if s := FailureSubject("Re: 重构导入路径"); s != "处理失败: 重构导入路径" {
		t.Fatalf("subject = %q", s)
	}
	if k := FailureRelayKey("m1"); k != "model-failure:m1" {
		t.Fatalf("relay key = %q", k)
	}
	body := FailureBody(FailureReport{AgentName: "bot", MailID: "m1", Stage: StageModel,
		Attempts: []AttemptFailure{{"p/a", "401\nbad key"}, {"q/b", ""}}})
	for _, want := range []string{"1. `p/a`: 401 bad key", "2. `q/b`: (no reason given", "Where to adjust", "Agents → bot → models"} {
		if !strings.Contains(body, want) {
			t.Fatalf("body lacks %q:\n%s", want, body)
		}
	}
	ws := FailureBody(FailureReport{AgentName: "bot", MailID: "m1", Stage: StageWorkspace,
		Workspace: WorkspaceChoice{Expected: "/home/porgram/x", Reason: "the directory does not exist"}})
	if !strings.Contains(ws, "/home/porgram/x") || !strings.Contains(ws, "AGENTMAIL_FALLBACK_DIR") {
		t.Fatalf("workspace report:\n%s", ws)
	}
}

// --- B-3.4 / B-3.5 prompt

func TestBuildPrompt(t *testing.T) {
	p := BuildPrompt(PromptInput{MailID: "m1", From: "alice", Subject: "fix", ReplyAddress: "alice@.fix", Workspace: "/w"})
	for _, want := range []string{"m1", "read_inbox", "do not call send_mail", "alice@.fix", "/w"} {
		if !strings.Contains(p, want) {
			t.Fatalf("prompt lacks %q:\n%s", want, p)
		}
	}
	a := BuildPrompt(PromptInput{MailID: "m2", From: "peer", FromIsAgent: true, ReplyAddress: "peer@/x.s"})
	if !strings.Contains(a, "nothing is sent back automatically") || !strings.Contains(a, "send_mail to peer@/x.s with reply_to m2") {
		t.Fatalf("agent prompt:\n%s", a)
	}
	d := BuildPrompt(PromptInput{MailID: "m3", From: "pi", FromIsAgent: true, ReplyAddress: "pi@/y.sub-t", DelegatedAlias: "sub-t", DelegatedOpener: "alice"})
	if strings.Contains(d, "nothing is sent back automatically") || !strings.Contains(d, `answer in session "sub-t"`) ||
		!strings.Contains(d, "sent automatically to alice, who opened this conversation") || !strings.Contains(d, "send_mail to pi@/y.sub-t with reply_to m3") {
		t.Fatalf("delegation answer prompt:\n%s", d)
	}
}

// --- B-5.3 judged on the gateway's record

func TestModelMailedThread(t *testing.T) {
	start := time.Date(2026, 9, 2, 10, 0, 0, 0, time.UTC)
	thread := []client.Mail{
		{MailID: "old", FromName: "bot", CreatedAt: start.Add(-time.Hour)},
		{MailID: "relay", FromName: "bot", Relay: "summary", CreatedAt: start.Add(time.Minute)},
		{MailID: "person", FromName: "alice", CreatedAt: start.Add(time.Minute)},
	}
	if ModelMailedThread(thread, "bot", map[string]bool{"old": true, "relay": true}, start) {
		t.Fatal("relays and earlier mails must not count")
	}
	withNew := append(thread, client.Mail{MailID: "new", FromName: "bot", CreatedAt: start.Add(-500 * time.Millisecond)})
	if !ModelMailedThread(withNew, "bot", map[string]bool{"old": true}, start) {
		t.Fatal("a mail not in the turn-start record counts")
	}
	if !ModelMailedThread(withNew, "bot", nil, start) {
		t.Fatal("without a record, a mail at the turn start (stored time precision) counts")
	}
	if ModelMailedThread(thread, "bot", nil, start) {
		t.Fatal("without a record, an old mail does not count")
	}
}

// --- B-8.4 summary

func TestAskSummary(t *testing.T) {
	s := AskSummary(PermissionAsk{ToolName: "Bash", Input: map[string]any{"command": "rm -rf build/", "timeout": 5,
		"long": strings.Repeat("x", 400)}})
	if !strings.HasPrefix(s, "Bash command=rm -rf build/, long=") || !strings.Contains(s, "timeout=5") || !strings.Contains(s, "…") {
		t.Fatalf("summary = %q", s)
	}
	if AskSummary(PermissionAsk{ToolName: "x", Summary: "given"}) != "given" {
		t.Fatal("the adapter's own summary wins")
	}
}

// --- scheduler

func TestSlotsKeepOrderPerSessionAndDirectory(t *testing.T) {
	s := newSlots(2)
	t1, st := s.enqueue("s1", "/a")
	if st.Waiting {
		t.Fatal("first ticket waits")
	}
	t2, st := s.enqueue("s1", "/a") // same session: waits
	if !st.Waiting || !st.SessionBusy {
		t.Fatalf("second ticket of s1 = %+v", st)
	}
	t3, st := s.enqueue("s2", "/a") // same directory, queued behind t2
	if !st.Waiting || !st.DirBusy {
		t.Fatalf("ticket in a busy directory = %+v", st)
	}
	t4, st := s.enqueue("s3", "/b")
	if st.Waiting {
		t.Fatalf("free directory and slot but waiting: %+v", st)
	}
	t5, st := s.enqueue("s4", "/c")
	if !st.Waiting || !st.Full {
		t.Fatalf("over the cap = %+v", st)
	}
	ctx := context.Background()
	s.release(t1)
	if !s.wait(ctx, t2) {
		t.Fatal("t2 not granted")
	}
	select {
	case <-t3.ready:
		t.Fatal("t3 overtook in a busy directory")
	default:
	}
	s.release(t4)
	if !s.wait(ctx, t5) {
		t.Fatal("t5 not granted after a slot freed")
	}
	s.release(t2)
	s.release(t5)
	if !s.wait(ctx, t3) {
		t.Fatal("t3 never granted")
	}
	s.release(t3)
	if r, q := s.stats(); r != 0 || q != 0 {
		t.Fatalf("stats = %d running %d queued", r, q)
	}
	// A waiter whose context ends leaves the queue.
	a, _ := s.enqueue("x", "/x")
	b, _ := s.enqueue("x", "/x")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if s.wait(cctx, b) {
		t.Fatal("cancelled wait granted")
	}
	s.release(a)
	if r, q := s.stats(); r != 0 || q != 0 {
		t.Fatalf("after cancel: %d running %d queued", r, q)
	}
}

func TestDeliveredSetIsBounded(t *testing.T) {
	d := newDeliveredSet()
	if !d.add("a") || d.add("a") || !d.has("a") {
		t.Fatal("add/has")
	}
	for i := 0; i < maxDelivered; i++ {
		d.add(string(rune(0x4e00 + i)))
	}
	if d.has("a") {
		t.Fatal("the oldest id was not forgotten")
	}
}

// --- N-12: the shared core depends on no platform

func TestCoreImportsNoPlatformPackage(t *testing.T) {
	for f, p := range nonTestImports(t, "*.go") {
		if !strings.Contains(p, ".") {
			continue // standard library
		}
		if p != "github.com/agentmail/agentmail/client" && p != "github.com/google/uuid" && p != modelTextPackage {
			t.Errorf("%s imports %s: the core may use only the public client (N-12)", f, p)
		}
	}
	// The one internal package the core may use renders others' text for a
	// model; it must stay free of every other package of the project.
	for f, p := range nonTestImports(t, "../modeltext/*.go") {
		if strings.HasPrefix(p, "github.com/agentmail/agentmail/") {
			t.Errorf("%s imports %s: %s must depend on no package of the project, since the core uses it (N-12)", f, p, modelTextPackage)
		}
	}
}

// nonTestImports yields (file, import path) for every import of the non-test
// Go files matching pattern; no such file fails the test.
func nonTestImports(t *testing.T, pattern string) iter.Seq2[string, string] {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files match %s (%v)", pattern, err)
	}
	fset := token.NewFileSet()
	return func(yield func(string, string) bool) {
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				if !yield(f, strings.Trim(imp.Path.Value, `"`)) {
					return
				}
			}
		}
	}
}

// modelTextPackage renders text written by others into a model's prompt; the
// core may import it because it imports nothing of the project.
const modelTextPackage = "github.com/agentmail/agentmail/internal/modeltext"

// What the gateway would refuse a whole heartbeat for is kept out of it: a model
// with an over-long name or provider is dropped and a long display name cut; a
// platform session with an over-long id, slug or workspace is dropped and its title
// stays within the bound; a run's long error is cut (runs.go).
func TestHeartbeatListsStayWithinTheGatewaysBounds(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n+1) }
	models := CleanModels([]client.Model{{Provider: "p", Model: long(client.MaxModelRunes)}, {Provider: long(client.MaxModelRunes), Model: "m"},
		{Provider: "p", Model: "ok", DisplayName: long(client.MaxModelRunes)}})
	if len(models) != 1 || models[0].Model != "ok" || utf8.RuneCountInString(models[0].DisplayName) != client.MaxModelRunes {
		t.Fatalf("CleanModels = %+v", models)
	}
	many := make([]client.Model, client.MaxHeartbeatModels+5)
	for i := range many {
		many[i] = client.Model{Provider: "p", Model: fmt.Sprintf("m%d", i)}
	}
	if n := len(CleanModels(many)); n != client.MaxHeartbeatModels {
		t.Fatalf("%d models kept, want %d", n, client.MaxHeartbeatModels)
	}
	ls := func(ps client.PlatformSession) ListedSession { return ListedSession{PlatformSession: ps} }
	out := ApplySnapshotRules([]ListedSession{
		ls(client.PlatformSession{PlatformID: long(client.MaxPlatformIDRunes), Slug: "a"}),
		ls(client.PlatformSession{PlatformID: "b", Slug: "b", Workspace: "/w/" + long(client.MaxPlatformWorkspaceRunes)}),
		ls(client.PlatformSession{PlatformID: "c", Slug: "c", Title: strings.Repeat("Refactor the imports ", 30)}),
	}, nil)
	if len(out) != 1 || out[0].PlatformID != "c" || utf8.RuneCountInString(out[0].Title) > client.MaxPlatformTitleRunes {
		t.Fatalf("snapshot = %+v", out)
	}
	if got := cutRunes(long(client.MaxRunErrorRunes), client.MaxRunErrorRunes); utf8.RuneCountInString(got) != client.MaxRunErrorRunes {
		t.Fatalf("a run's error is cut to %d characters", utf8.RuneCountInString(got))
	}
}
