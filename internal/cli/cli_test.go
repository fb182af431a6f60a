package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/testkit"
	"github.com/spf13/cobra"
)

// call is one request the fake gateway received.
type call struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// gateway is a fake AgentMail gateway: handlers per "METHOD /path", every
// request recorded.
type gateway struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	log []call
	mux map[string]http.HandlerFunc
}

func newGateway(t *testing.T) *gateway {
	g := &gateway{t: t, mux: map[string]http.HandlerFunc{}}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		g.mu.Lock()
		g.log = append(g.log, call{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		h := g.mux[r.Method+" "+r.URL.Path]
		g.mu.Unlock()
		if h == nil {
			writeJSON(w, 404, client.ErrorBody{Error: "no route " + r.URL.Path, Code: "not_found"})
			return
		}
		h(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *gateway) handle(route string, h http.HandlerFunc) {
	g.mu.Lock()
	g.mux[route] = h
	g.mu.Unlock()
}

// reply answers route with status and v as JSON.
func (g *gateway) reply(route string, status int, v any) {
	g.handle(route, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, status, v) })
}

// calls returns the recorded requests to "METHOD /path".
func (g *gateway) calls(route string) []call {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []call
	for _, c := range g.log {
		if c.Method+" "+c.Path == route {
			out = append(out, c)
		}
	}
	return out
}

func (g *gateway) total() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.log)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

// testEnv is an Env over buffers with a config file in a temp dir.
func testEnv(t *testing.T, stdin string, vars map[string]string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	env := &Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv:          func(k string) string { return vars[k] },
		Hostname:        func() (string, error) { return "testhost", nil },
		UserConfigDir:   func() (string, error) { return dir, nil },
		StdinIsTerminal: func() bool { return false },
	}
	return env, &out, &errb
}

// loggedIn writes a config for the gateway and returns its path.
func loggedIn(t *testing.T, env *Env, g *gateway) string {
	t.Helper()
	path, err := env.saveConfig(&Config{URL: g.srv.URL, Token: "am_user_key", Username: "ann", KeyID: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// run executes one command line and returns its exit code; the error text
// goes to the env's Stderr as main would print it.
func run(t *testing.T, ctx context.Context, env *Env, args ...string) int {
	t.Helper()
	root := &cobra.Command{Use: "agentmail", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(Commands(env)...)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		io.WriteString(env.Stderr, "agentmail: "+err.Error()+"\n")
	}
	return ExitCode(err)
}

func TestLoginCreatesKeyAndStoresItWithMode0600(t *testing.T) {
	g := newGateway(t)
	g.handle("POST /api/v1/auth/login", func(w http.ResponseWriter, r *http.Request) {
		var req client.LoginRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Username != "ann" || req.Password != "s3cret pw" {
			writeJSON(w, 401, client.ErrorBody{Error: "wrong username or password", Code: "unauthorized"})
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "agentmail_session", Value: "c1", Path: "/"})
		writeJSON(w, 200, client.LoginResponse{Username: "ann", Role: "user", CSRFToken: "csrf9"})
	})
	g.handle("POST /api/v1/me/keys", func(w http.ResponseWriter, r *http.Request) {
		if ck, _ := r.Cookie("agentmail_session"); ck == nil || r.Header.Get("X-CSRF-Token") != "csrf9" {
			writeJSON(w, 403, client.ErrorBody{Error: "missing csrf", Code: "csrf"})
			return
		}
		writeJSON(w, 201, client.CreatedKey{KeyID: "k9", KeyToken: "am_new_token_123"})
	})
	g.handle("POST /api/v1/auth/logout", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })

	env, out, errb := testEnv(t, "s3cret pw\n", nil)
	code := run(t, context.Background(), env, "login", "--url", g.srv.URL+"/", "--username", "ann", "--password-stdin")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var req client.CreateUserKeyRequest
	_ = json.Unmarshal(g.calls("POST /api/v1/me/keys")[0].Body, &req)
	if req.Label != "cli@testhost" || req.Lifecycle != client.LifecyclePermanent || req.ExpiresAt != nil {
		t.Errorf("key request %+v", req)
	}
	if len(g.calls("POST /api/v1/auth/logout")) != 1 {
		t.Error("the cookie session was not closed")
	}
	path, _ := env.ConfigPath()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", st.Mode().Perm())
	}
	if dst, _ := os.Stat(filepath.Dir(path)); dst.Mode().Perm() != 0o700 {
		t.Errorf("config dir mode %v, want 0700", dst.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg.URL != g.srv.URL || cfg.Token != "am_new_token_123" || cfg.KeyID != "k9" || cfg.Username != "ann" {
		t.Errorf("stored %s (%v)", raw, err)
	}
	if !strings.Contains(out.String(), "Logged in to "+g.srv.URL+" as ann") || strings.Contains(out.String(), "am_new_token_123") {
		t.Errorf("output %q (must not print the whole token)", out)
	}
}

func TestLoginPromptsForWhatFlagsDoNotGive(t *testing.T) {
	g := newGateway(t)
	g.reply("POST /api/v1/auth/login", 200, client.LoginResponse{Username: "bob", Role: "admin", CSRFToken: "x"})
	g.reply("POST /api/v1/me/keys", 201, client.CreatedKey{KeyID: "k2", KeyToken: "am_tok_abcdefgh"})
	g.handle("POST /api/v1/auth/logout", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	env, _, errb := testEnv(t, g.srv.URL+"\nbob\npw\n", map[string]string{"AGENTMAIL_CONFIG": filepath.Join(t.TempDir(), "x", "c.json")})
	if code := run(t, context.Background(), env, "login"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, p := range []string{"Gateway URL [" + DefaultURL + "]: ", "Username: ", "Password: "} {
		if !strings.Contains(errb.String(), p) {
			t.Errorf("prompts %q lack %q", errb, p)
		}
	}
	var req client.LoginRequest
	_ = json.Unmarshal(g.calls("POST /api/v1/auth/login")[0].Body, &req)
	if req.Username != "bob" || req.Password != "pw" {
		t.Errorf("login request %+v", req)
	}
	if _, err := os.Stat(env.Getenv("AGENTMAIL_CONFIG")); err != nil {
		t.Errorf("AGENTMAIL_CONFIG not used: %v", err)
	}
}

func TestLoginWrongPasswordExitsAuthWithMessage(t *testing.T) {
	g := newGateway(t)
	g.reply("POST /api/v1/auth/login", 401, client.ErrorBody{Error: "wrong username or password", Code: "unauthorized", Suggestion: "check the password"})
	env, _, errb := testEnv(t, "nope\n", nil)
	code := run(t, context.Background(), env, "login", "--url", g.srv.URL, "--username", "ann", "--password-stdin")
	if code != ExitAuth {
		t.Errorf("exit %d, want %d", code, ExitAuth)
	}
	if !strings.Contains(errb.String(), "wrong username or password") || !strings.Contains(errb.String(), "what to do: check the password") || strings.Contains(errb.String(), "unauthorized") {
		t.Errorf("stderr %q", errb)
	}
	if path, _ := env.ConfigPath(); fileExists(path) {
		t.Error("a failed login wrote the config")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestSendUploadsStdinAttachmentAndSends(t *testing.T) {
	g := newGateway(t)
	var gotName, gotContent string
	g.handle("POST /api/v1/me/attachments", func(w http.ResponseWriter, r *http.Request) {
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		part, err := multipart.NewReader(r.Body, params["boundary"]).NextPart()
		if err != nil {
			writeJSON(w, 400, client.ErrorBody{Error: "no file", Code: "bad_request", Field: "file"})
			return
		}
		b, _ := io.ReadAll(part)
		gotName, gotContent = part.FileName(), string(b)
		writeJSON(w, 201, client.Attachment{AttachmentID: "att1", Filename: part.FileName(), Size: int64(len(b))})
	})
	g.reply("POST /api/v1/me/mail/send", 200, client.SendMailResponse{Status: "sent", MailID: "m1", SessionID: "s1", SessionAlias: "review", NewSession: true, BudgetRemaining: 5, BudgetMax: 5})
	env, out, errb := testEnv(t, "diff --git a b\n", nil)
	loggedIn(t, env, g)
	code := run(t, context.Background(), env, "send", "--to", "claude@/srv/app.new", "--cc", "bob", "--cc", "pi@/srv", "--subject", "review", "--body", "see diff", "--attach", "-", "--stdin-name", "x.patch", "--budget", "5")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if gotName != "x.patch" || gotContent != "diff --git a b\n" {
		t.Errorf("uploaded %q: %q", gotName, gotContent)
	}
	sends := g.calls("POST /api/v1/me/mail/send")
	if len(sends) != 1 || sends[0].Header.Get("Authorization") != "Bearer am_user_key" {
		t.Fatalf("send calls %+v", sends)
	}
	var req client.SendMailRequest
	_ = json.Unmarshal(sends[0].Body, &req)
	if req.To != "claude@/srv/app.new" || req.Cc != "bob, pi@/srv" || req.Subject != "review" || req.Body != "see diff" ||
		len(req.AttachmentIDs) != 1 || req.AttachmentIDs[0] != "att1" || req.RoundBudget == nil || *req.RoundBudget != 5 {
		t.Errorf("send request %+v", req)
	}
	for _, want := range []string{"Sent m1 to claude@/srv/app.new", "Session review (new session, budget 5 of 5 rounds left)", "Attached x.patch"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
}

func TestSendReadsBodyFromStdinAndFileAttachments(t *testing.T) {
	g := newGateway(t)
	var names []string
	g.handle("POST /api/v1/me/attachments", func(w http.ResponseWriter, r *http.Request) {
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		part, _ := multipart.NewReader(r.Body, params["boundary"]).NextPart()
		names = append(names, part.FileName())
		writeJSON(w, 201, client.Attachment{AttachmentID: "a-" + part.FileName()})
	})
	g.reply("POST /api/v1/me/mail/send", 200, client.SendMailResponse{Status: "sent", MailID: "m2"})
	file := filepath.Join(t.TempDir(), "notes.md")
	_ = os.WriteFile(file, []byte("# notes"), 0o644)
	env, out, errb := testEnv(t, "line one\nline two\n", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "send", "--to", "bob", "--subject", "s", "--attach", file, "--json"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var req client.SendMailRequest
	_ = json.Unmarshal(g.calls("POST /api/v1/me/mail/send")[0].Body, &req)
	if req.Body != "line one\nline two\n" || req.RoundBudget != nil || len(req.AttachmentIDs) != 1 || req.AttachmentIDs[0] != "a-notes.md" {
		t.Errorf("send request %+v", req)
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res["mail_id"] != "m2" {
		t.Errorf("--json output %q (%v)", out, err)
	}
	// --body - reads stdin too, as --attach - does.
	env, _, errb = testEnv(t, "from the pipe\n", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "send", "--to", "bob", "--subject", "s", "--body", "-"); code != ExitOK {
		t.Fatalf("--body -: exit %d: %s", code, errb)
	}
	calls := g.calls("POST /api/v1/me/mail/send")
	req = client.SendMailRequest{}
	_ = json.Unmarshal(calls[len(calls)-1].Body, &req)
	if req.Body != "from the pipe\n" {
		t.Errorf("--body - sent the body %q, want stdin's text", req.Body)
	}
}

func TestSendUsageErrorsSendNothing(t *testing.T) {
	g := newGateway(t)
	for _, args := range [][]string{
		{"send", "--subject", "s", "--body", "b"},
		{"send", "--to", "bob", "--body", "b"},
		{"send", "--to", "bob", "--subject", "s", "--attach", "-"},
		{"send", "--to", "bob", "--subject", "s", "--body", "b", "--attach", "-", "--attach", "-"},
		{"send", "--to", "bob", "--subject", "s", "--body", "b", "--attach", "/does/not/exist"},
		{"send", "--to", "bob", "--subject", "s", "--body", "b", "--budget", "-1"},
		{"send", "--to", "bob", "--subject", "s", "--body", "b", "extra"},
		{"send", "--nope"},
	} {
		env, _, errb := testEnv(t, "", nil)
		loggedIn(t, env, g)
		if code := run(t, context.Background(), env, args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, ExitUsage, errb)
		}
	}
	if g.total() != 0 {
		t.Errorf("usage errors sent %d requests", g.total())
	}
}

func TestExitCodesFollowTheGatewayAnswer(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   int
	}{{404, ExitNotFound}, {409, ExitConflict}, {401, ExitAuth}, {403, ExitAuth}, {500, ExitError}, {400, ExitError}} {
		g := newGateway(t)
		g.reply("POST /api/v1/me/mail/send", tc.status, client.ErrorBody{Error: "no session with alias fix", Code: "alias_not_found", Field: "to", Suggestion: "write to claude@/srv.new for a new session"})
		env, _, errb := testEnv(t, "", nil)
		loggedIn(t, env, g)
		code := run(t, context.Background(), env, "send", "--to", "claude@/srv.fix", "--subject", "s", "--body", "b")
		if code != tc.code {
			t.Errorf("status %d: exit %d, want %d", tc.status, code, tc.code)
		}
		for _, want := range []string{"send: no session with alias fix\n", "what to do: write to claude@/srv.new"} {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("stderr %q lacks %q", errb, want)
			}
		}
		// The person reads what is wrong and what to do, not the API's
		// code or field names (issue 18 point 2).
		for _, not := range []string{"alias_not_found", "field:"} {
			if strings.Contains(errb.String(), not) {
				t.Errorf("stderr %q shows %q", errb, not)
			}
		}
	}
}

func TestNotLoggedInExitsAuth(t *testing.T) {
	env, _, errb := testEnv(t, "", nil)
	if code := run(t, context.Background(), env, "inbox"); code != ExitAuth {
		t.Errorf("exit %d, want %d", code, ExitAuth)
	}
	if !strings.Contains(errb.String(), "agentmail login") {
		t.Errorf("stderr %q does not say to log in", errb)
	}
}

func TestEnvironmentKeyReplacesLogin(t *testing.T) {
	g := newGateway(t)
	g.reply("GET /api/v1/me/mail/inbox", 200, client.MailList{Mails: []client.Mail{}})
	env, _, errb := testEnv(t, "", map[string]string{"AGENTMAIL_URL": g.srv.URL, "AGENTMAIL_USER_KEY": "am_env"})
	if code := run(t, context.Background(), env, "inbox"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if h := g.calls("GET /api/v1/me/mail/inbox")[0].Header.Get("Authorization"); h != "Bearer am_env" {
		t.Errorf("Authorization %q", h)
	}
}

func TestInboxListsUnreadByDefaultAndAllWithFlag(t *testing.T) {
	g := newGateway(t)
	t1 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	g.reply("GET /api/v1/me/mail/inbox", 200, client.MailList{Unread: 1, Mails: []client.Mail{
		{MailID: "m1", FromName: "claude", Subject: "build fixed", CreatedAt: t1},
		{MailID: "m2", FromName: "claude", Subject: "may I rm?", MailType: client.MailTypePermissionRequest, Read: true, CreatedAt: t1, Permission: &client.Permission{Status: "pending"}},
	}})
	env, out, errb := testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "inbox"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	env2, out2, _ := testEnv(t, "", nil)
	loggedIn(t, env2, g)
	if code := run(t, context.Background(), env2, "inbox", "--all", "--json"); code != ExitOK {
		t.Fatal("inbox --all --json failed")
	}
	calls := g.calls("GET /api/v1/me/mail/inbox")
	if calls[0].Query != "mark_read=false&status=unread" || calls[1].Query != "mark_read=false&status=all" {
		t.Errorf("queries %q, %q", calls[0].Query, calls[1].Query)
	}
	for _, want := range []string{"* ", "m1", "claude", "build fixed", "[permission pending] may I rm?", "1 unread"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	var list client.MailList
	if err := json.Unmarshal(out2.Bytes(), &list); err != nil || len(list.Mails) != 2 {
		t.Errorf("--json output %q (%v)", out2, err)
	}
}

func TestShowPrintsMailMarksReadAndSavesAttachments(t *testing.T) {
	g := newGateway(t)
	g.reply("GET /api/v1/me/mail/m1", 200, client.Mail{MailID: "m1", FromName: "claude", FromAddress: "claude@/srv.fix", Subject: "done", Body: "All tests pass.\n", Role: "to",
		Recipients:  []client.Recipient{{Name: "ann", Role: "to", Address: "ann"}},
		Attachments: []client.Attachment{{AttachmentID: "a1", Filename: "../../log.txt", Size: 3}}})
	g.reply("POST /api/v1/me/mail/read", 200, client.MarkReadResponse{Marked: 1})
	g.handle("GET /api/v1/me/attachments/a1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte("abc"))
	})
	dir := t.TempDir()
	env, out, errb := testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "show", "m1", "--save", dir); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"From:     claude <claude@/srv.fix>", "To:       ann", "Subject:  done", "a1  ../../log.txt (3 B)", "All tests pass."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	var mr client.MarkReadRequest
	_ = json.Unmarshal(g.calls("POST /api/v1/me/mail/read")[0].Body, &mr)
	if len(mr.MailIDs) != 1 || mr.MailIDs[0] != "m1" || mr.Unread {
		t.Errorf("mark read %+v", mr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "log.txt")); err != nil || string(b) != "abc" {
		t.Errorf("saved attachment %q (%v); the name must stay inside the directory", b, err)
	}

	g.reply("GET /api/v1/me/mail/gone", 404, client.ErrorBody{Error: "no mail gone", Code: "not_found"})
	env2, _, _ := testEnv(t, "", nil)
	loggedIn(t, env2, g)
	if code := run(t, context.Background(), env2, "show", "gone"); code != ExitNotFound {
		t.Errorf("unknown mail: exit %d, want %d", code, ExitNotFound)
	}
}

// A permission request leads with what will run, as the gateway computed it
// from the arguments, and shows the agent's question after it, every line
// marked as the agent's words: a harmless question (even one that fakes a
// "will run" line, or terminal escapes that would clear the screen) cannot
// stand in for the dangerous command.
func TestShowPermissionLeadsWithTheCallNotTheAgentsWords(t *testing.T) {
	g := newGateway(t)
	g.reply("GET /api/v1/me/mail/p1", 200, client.Mail{MailID: "p1", FromName: "claude", Subject: "Permission request: Bash: rm -rf /srv/data",
		MailType: client.MailTypePermissionRequest, Role: "to", Body: "body\x1b[2J\n",
		Permission: &client.Permission{MailID: "p1", AgentName: "claude", Tool: "Bash", ToolSummary: "Bash: rm -rf /srv/data", Status: "pending",
			Question: "May I list the logs?\n  will run: ls logs/", Context: "routine\x1b[1A\x1b[2K"}})
	g.reply("POST /api/v1/me/mail/read", 200, client.MarkReadResponse{Marked: 1})
	env, out, errb := testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "show", "p1"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	text := out.String()
	want := "Permission: pending\n" +
		"  will run: Bash: rm -rf /srv/data\n" +
		"  the agent's own words (not checked by AgentMail):\n" +
		"    | May I list the logs?\n" +
		"    |   will run: ls logs/\n" +
		"    | routine\uFFFD[1A\uFFFD[2K\n"
	if !strings.Contains(text, want) {
		t.Errorf("output:\n%s\nwant the block:\n%s", text, want)
	}
	if strings.ContainsRune(text, 0x1b) {
		t.Errorf("output passes terminal escapes through: %q", text)
	}
	if strings.Count(text, "\n  will run:") != 1 {
		t.Errorf("the agent's words made a second \"will run\" line:\n%s", text)
	}

	// A request that names no tool says so instead of a call.
	g.reply("GET /api/v1/me/mail/p2", 200, client.Mail{MailID: "p2", FromName: "claude", Subject: "Permission request: go on?",
		MailType: client.MailTypePermissionRequest, Role: "to",
		Permission: &client.Permission{MailID: "p2", AgentName: "claude", Status: "pending", Question: "go on?"}})
	env2, out2, _ := testEnv(t, "", nil)
	loggedIn(t, env2, g)
	if code := run(t, context.Background(), env2, "show", "p2"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out2.String(), "  will run: nothing named (the agent names no tool call") {
		t.Errorf("output:\n%s", out2)
	}
}

func TestTreeIndentsByDepthAndMarksTheMail(t *testing.T) {
	g := newGateway(t)
	g.reply("GET /api/v1/me/mail/m2/tree", 200, client.Tree{RootID: "m1", FocusID: "m2", Total: 3, Nodes: []client.TreeNode{
		{MailID: "m1", FromName: "ann", Subject: "start", Depth: 0},
		{MailID: "m2", FromName: "claude", Subject: "re: start", Depth: 1},
		{MailID: "m3", FromName: "ann", Subject: "thanks", Depth: 2},
	}})
	env, out, errb := testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "tree", "m2", "--before", "5"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.HasPrefix(lines[0], "  m1") || !strings.HasPrefix(lines[1], ">   m2") || !strings.HasPrefix(lines[2], "      m3") {
		t.Errorf("tree output:\n%s", out)
	}
	if q := g.calls("GET /api/v1/me/mail/m2/tree")[0].Query; q != "before=5" {
		t.Errorf("query %q", q)
	}
}

func TestApproveAlwaysAndDenyAfterDecisionIsConflict(t *testing.T) {
	g := newGateway(t)
	g.reply("POST /api/v1/me/permission/01a23576-1901-7d7f-9571-dd068307ecbb/decide", 200, client.Permission{MailID: "01a23576-1901-7d7f-9571-dd068307ecbb", AgentName: "claude", Tool: "Bash", ToolSummary: "Bash: rm -rf build/",
		Question: "tidy the build?", Status: "approved", Approved: true, Always: true, DecisionMailID: "d1"})
	env, out, errb := testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "approve", "01a23576-1901-7d7f-9571-dd068307ecbb", "--always", "--note", "ok once"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var req client.DecideRequest
	_ = json.Unmarshal(g.calls("POST /api/v1/me/permission/01a23576-1901-7d7f-9571-dd068307ecbb/decide")[0].Body, &req)
	if req.Decision != "always" || req.Note != "ok once" {
		t.Errorf("decide request %+v", req)
	}
	if !strings.HasPrefix(out.String(), "Always allowed 01a23576-1901-7d7f-9571-dd068307ecbb: Bash: rm -rf build/\n  the agent's own words: \"tidy the build?\"\n") {
		t.Errorf("output %q; want the call first, the agent's words after", out)
	}

	g.reply("POST /api/v1/me/permission/01a23576-1901-7d7f-9571-dd068307ecbb/decide", 409, client.ErrorBody{Error: "already approved by ann", Code: "already_decided"})
	env2, _, errb2 := testEnv(t, "", nil)
	loggedIn(t, env2, g)
	if code := run(t, context.Background(), env2, "deny", "01a23576-1901-7d7f-9571-dd068307ecbb", "--note", "no"); code != ExitConflict {
		t.Errorf("exit %d, want %d", code, ExitConflict)
	}
	_ = json.Unmarshal(g.calls("POST /api/v1/me/permission/01a23576-1901-7d7f-9571-dd068307ecbb/decide")[1].Body, &req)
	if req.Decision != "deny" || req.Note != "no" {
		t.Errorf("deny request %+v", req)
	}
	if !strings.Contains(errb2.String(), "already approved by ann") {
		t.Errorf("stderr %q", errb2)
	}
}

func TestKeysCreateListRevoke(t *testing.T) {
	g := newGateway(t)
	g.reply("POST /api/v1/me/keys", 201, client.CreatedKey{KeyID: "k5", KeyToken: "am_script_token"})
	g.reply("GET /api/v1/me/keys", 200, client.KeyList{Keys: []client.KeyInfo{
		{KeyID: "k1", Label: "cli@testhost", Lifecycle: "permanent", Prefix: "am_use", Active: true},
		{KeyID: "k5", Label: "ci", Lifecycle: "timed", Prefix: "am_scr", Active: true},
	}})
	g.handle("DELETE /api/v1/me/keys/k5", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	env, out, errb := testEnv(t, "", nil)
	loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "keys", "create", "--label", "ci", "--expires", "24h"); code != ExitOK {
		t.Fatalf("create: exit %d: %s", code, errb)
	}
	var req client.CreateUserKeyRequest
	_ = json.Unmarshal(g.calls("POST /api/v1/me/keys")[0].Body, &req)
	if req.Label != "ci" || req.Lifecycle != "timed" || req.ExpiresAt == nil || time.Until(*req.ExpiresAt) < 23*time.Hour {
		t.Errorf("create request %+v", req)
	}
	if !strings.Contains(out.String(), "am_script_token") {
		t.Errorf("the new token is not shown: %q", out)
	}
	if code := run(t, context.Background(), env, "keys", "list"); code != ExitOK {
		t.Fatal("list failed")
	}
	if !strings.Contains(out.String(), "*  k1") || !strings.Contains(out.String(), "cli@testhost") {
		t.Errorf("list output %q does not mark this client's key", out)
	}
	if code := run(t, context.Background(), env, "keys", "revoke", "k5"); code != ExitOK {
		t.Fatal("revoke failed")
	}
	if len(g.calls("DELETE /api/v1/me/keys/k5")) != 1 {
		t.Error("revoke sent no DELETE")
	}
	for _, args := range [][]string{{"keys"}, {"keys", "bogus"}, {"keys", "create"}, {"keys", "create", "--label", "x", "--lifecycle", "timed"}, {"keys", "create", "--label", "x", "--lifecycle", "weekly"}} {
		if code := run(t, context.Background(), env, args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

func TestLogoutRevokesKeyAndRemovesConfig(t *testing.T) {
	g := newGateway(t)
	g.handle("DELETE /api/v1/me/keys/k1", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	env, _, errb := testEnv(t, "", nil)
	path := loggedIn(t, env, g)
	if code := run(t, context.Background(), env, "logout"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if c := g.calls("DELETE /api/v1/me/keys/k1"); len(c) != 1 || c[0].Header.Get("Authorization") != "Bearer am_user_key" {
		t.Errorf("revoke calls %+v", c)
	}
	if fileExists(path) {
		t.Error("config still exists")
	}
	if code := run(t, context.Background(), env, "logout"); code != ExitAuth {
		t.Errorf("second logout: exit %d, want %d", code, ExitAuth)
	}
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWatchPrintsMailAndPermissionRequestsAndResumes(t *testing.T) {
	g := newGateway(t)
	conn := 0
	var lastIDs []string
	var mu sync.Mutex
	g.handle("GET /api/v1/me/events/stream", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conn++
		n := conn
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		if n == 1 {
			_, _ = io.WriteString(w, ": hi\n\nid: 11\nevent: new_mail\ndata: {\"mail_id\":\"m1\",\"from_name\":\"claude\",\"subject\":\"build fixed\",\"session_alias\":\"fix\"}\n\n")
			fl.Flush()
			return // drop: the client must reconnect with Last-Event-ID 11
		}
		_, _ = io.WriteString(w, "id: 12\nevent: permission_request\ndata: {\"mail_id\":\"p1\",\"agent_name\":\"claude\",\"question\":\"tidy the build?\",\"tool\":\"Bash\",\"tool_summary\":\"Bash: rm -rf build/\"}\n\n")
		_, _ = io.WriteString(w, "id: 13\nevent: new_mail\ndata: {\"mail_id\":\"p1\",\"mail_type\":\"permission_request\",\"from_name\":\"claude\",\"subject\":\"rm -rf build?\"}\n\n")
		_, _ = io.WriteString(w, "id: 14\nevent: session_updated\ndata: {\"session_id\":\"s1\"}\n\n")
		fl.Flush()
		<-r.Context().Done()
	})
	env, _, _ := testEnv(t, "", nil)
	out, errb := &testkit.Log{}, &testkit.Log{}
	env.Stdout, env.Stderr = out, errb
	loggedIn(t, env, g)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- run(t, ctx, env, "watch") }()
	waitFor(t, "the permission request line", func() bool { return strings.Contains(out.String(), "permission request p1") })
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d: %s", code, errb)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("watch did not stop after cancel")
	}
	text := out.String()
	if !strings.Contains(text, "new mail m1 from claude: build fixed  [fix]") || !strings.Contains(text, `p1 from claude: will run Bash: rm -rf build/ (the agent's own words: "tidy the build?")`) {
		t.Errorf("output %q", text)
	}
	if strings.Count(text, "p1 from") != 1 || strings.Contains(text, "session s1") {
		t.Errorf("the permission request must print once and session updates not at all:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lastIDs) < 2 || lastIDs[0] != "" || lastIDs[1] != "11" {
		t.Errorf("Last-Event-ID per connection %q, want none then 11", lastIDs)
	}
	if !strings.Contains(errb.String(), "resume with: agentmail watch --last-event-id 14") {
		t.Errorf("stderr %q", errb)
	}
}

// A hostile subject, file name or body reaches the terminal as one line of
// plain text: no escape sequence, no forged line of the CLI's own.
func TestPrintMailKeepsTerminalEscapesOut(t *testing.T) {
	m := &client.Mail{MailID: "m1", FromName: "mallory", Subject: "hi\x1b[2J\nPermission: approved\r report\u202Etxt.exe",
		Body: "body \x1b]0;title\x07 text", Attachments: []client.Attachment{{AttachmentID: "a1", Filename: "x\x1b[31m.txt", Size: 3}}}
	var b strings.Builder
	printMail(&b, langEN, m, nil)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\r\u202E") {
		t.Fatalf("control characters reached the output: %q", out)
	}
	if strings.Contains(out, "\nPermission: approved") {
		t.Fatalf("the subject forged a line: %q", out)
	}
}

// TestStoredKeyGoesOnlyToTheGatewayItWasIssuedFor: with a login stored for
// one gateway, AGENTMAIL_GATEWAY_URL naming another listener sends it no
// key (no request at all) and the message names both addresses and the
// login to run; the same gateway written differently still works, and an
// explicit AGENTMAIL_USER_KEY goes where AGENTMAIL_GATEWAY_URL says.
func TestStoredKeyGoesOnlyToTheGatewayItWasIssuedFor(t *testing.T) {
	home := newGateway(t)
	home.reply("GET /api/v1/me/mail/inbox", 200, client.MailList{Mails: []client.Mail{}})
	other := newGateway(t)
	other.reply("GET /api/v1/me/mail/inbox", 200, client.MailList{Mails: []client.Mail{}})
	vars := map[string]string{"AGENTMAIL_GATEWAY_URL": other.srv.URL}
	env, _, errb := testEnv(t, "", vars)
	loggedIn(t, env, home)

	if code := run(t, context.Background(), env, "inbox"); code != ExitAuth {
		t.Fatalf("exit %d, want %d: %s", code, ExitAuth, errb)
	}
	for _, c := range other.log {
		if h := c.Header.Get("Authorization"); h != "" {
			t.Fatalf("the other listener received Authorization %q on %s %s", h, c.Method, c.Path)
		}
	}
	if other.total() != 0 {
		t.Errorf("the other listener received %d requests, want none", other.total())
	}
	msg := errb.String()
	for _, want := range []string{home.srv.URL, other.srv.URL, "agentmail login --url " + other.srv.URL} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}

	// The same gateway, written with a trailing slash and the scheme in
	// capitals, is the gateway the key was issued for.
	vars["AGENTMAIL_GATEWAY_URL"] = "HTTP://" + strings.TrimPrefix(home.srv.URL, "http://") + "/"
	errb.Reset()
	if code := run(t, context.Background(), env, "inbox"); code != ExitOK {
		t.Fatalf("the issuing gateway as %s: exit %d: %s", vars["AGENTMAIL_GATEWAY_URL"], code, errb)
	}
	if h := home.calls("GET /api/v1/me/mail/inbox")[0].Header.Get("Authorization"); h != "Bearer am_user_key" {
		t.Errorf("the issuing gateway got Authorization %q", h)
	}

	// An explicit key is the person's own choice.
	vars["AGENTMAIL_GATEWAY_URL"] = other.srv.URL
	vars["AGENTMAIL_USER_KEY"] = "amu_explicit"
	errb.Reset()
	if code := run(t, context.Background(), env, "inbox"); code != ExitOK {
		t.Fatalf("explicit key: exit %d: %s", code, errb)
	}
	if h := other.calls("GET /api/v1/me/mail/inbox")[0].Header.Get("Authorization"); h != "Bearer amu_explicit" {
		t.Errorf("explicit key: Authorization %q", h)
	}
}
