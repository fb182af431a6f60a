package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpapi"
	"github.com/agentmail/agentmail/internal/testkit"
)

// EnvPrism names the Prism CLI (@stoplight/prism-cli) the Prism test runs:
// scripts/openapi-tools.sh installs it as .cache/tools/bin/prism, and
// scripts/test.sh sets the variable, so that in CI its absence fails the
// test instead of skipping it.
const EnvPrism = "AGENTMAIL_PRISM"

// prismBinary answers the Prism command, or skips when it is not installed
// and EnvPrism is not set.
func prismBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(EnvPrism)
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "tools", "bin", "prism"))
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("Prism is not installed (scripts/openapi-tools.sh; %s names it)", EnvPrism)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v (run scripts/openapi-tools.sh)", EnvPrism, bin, err)
	}
	return bin
}

// startPrism starts Prism as a validating proxy for upstream on a free
// loopback port, with the document the gateway serves, and answers its URL
// and its log (stdout and stderr).
func startPrism(t *testing.T, bin, upstream string) (string, *testkit.Log) {
	t.Helper()
	doc, err := httpapi.OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	docPath := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(docPath, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	log := &testkit.Log{}
	cmd := exec.Command(bin, "proxy", docPath, upstream, "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Prism: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.After(2 * time.Minute)
	for log.Count("Prism is listening") == 0 {
		select {
		case <-exited:
			t.Fatalf("Prism exited:\n%s", log.Tail(4000))
		case <-deadline:
			t.Fatalf("Prism did not start within 2 minutes:\n%s", log.Tail(4000))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), log
}

// prismRun sends requests through Prism and records what it reported.
type prismRun struct {
	t       *testing.T
	base    string
	hc      *http.Client
	mu      sync.Mutex // the stream requests run beside others
	sent    int
	covered map[string]int // "METHOD /path/{template}" -> requests
}

// prismReq is one request: the operation it exercises (method and path
// template of the document), the caller's Bearer token, the concrete path
// with its query, a JSON body (a string, sent as is) and the status the
// gateway must answer.
type prismReq struct {
	op, token, path, body string
	header                map[string]string
	want                  int
	// contentType and raw replace the JSON body (an upload).
	contentType string
	raw         []byte
}

// do sends r through Prism and fails the test when the status is not
// r.want or Prism reports a violation of the document (its sl-violations
// header); it answers the decoded JSON body (nil when there is none).
func (p *prismRun) do(r prismReq) map[string]any {
	p.t.Helper()
	method, _, _ := strings.Cut(r.op, " ")
	var body io.Reader
	ct := ""
	switch {
	case r.raw != nil:
		body, ct = bytes.NewReader(r.raw), r.contentType
	case r.body != "":
		body, ct = strings.NewReader(r.body), "application/json"
	}
	req, err := http.NewRequest(method, p.base+r.path, body)
	if err != nil {
		p.t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, r.path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	p.mu.Lock()
	p.sent++
	p.covered[r.op]++
	p.mu.Unlock()
	if v := resp.Header.Get("sl-violations"); v != "" {
		p.t.Errorf("%s %s (%s): Prism reports %s", method, r.path, r.op, v)
	}
	if resp.StatusCode != r.want {
		p.t.Errorf("%s %s: %d %s; want %d", method, r.path, resp.StatusCode, truncate(raw, 300), r.want)
	}
	var out map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(raw, &out)
	}
	return out
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// str answers the string at a dotted path of a decoded JSON body.
func str(m map[string]any, path string) string {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = obj[k]
	}
	s, _ := v.(string)
	return s
}

// firstItem answers the first element of the list under key.
func firstItem(m map[string]any, key string) map[string]any {
	list, _ := m[key].([]any)
	if len(list) == 0 {
		return nil
	}
	item, _ := list[0].(map[string]any)
	return item
}

// multipartFile is an upload body with one field "file".
func multipartFile(t *testing.T, name, content string) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	fw, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte(content))
	_ = w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// TestPrismValidatesEveryOperation runs Prism (@stoplight/prism-cli) as a
// validating proxy in front of a started gateway and sends through it good
// and bad requests (bad as the gateway's rules go: unknown ids, conflicts,
// values out of their rule; each valid by the document) covering every
// operation of the OpenAPI document but the HEAD ones (issue 19, "Done
// when"): Prism must report no request or response violation, and every
// answer must have the expected status. Prism 5 cannot proxy HEAD of a JSON
// answer (it parses the empty body as JSON), so HEAD is checked by
// internal/httpapi's TestHeadIsAnsweredForEveryGetRoute instead.
func TestPrismValidatesEveryOperation(t *testing.T) {
	bin := prismBinary(t)
	g := startGatewayWithFlags(t, t.TempDir(), "")
	base, plog := startPrism(t, bin, g.URL)
	p := &prismRun{t: t, base: base, hc: &http.Client{Timeout: time.Minute}, covered: map[string]int{}}
	ctx := context.Background()
	direct := client.New(g.URL, client.WithCookieJar())
	if _, err := direct.Login(ctx, client.LoginRequest{Username: "admin", Password: adminPassword}); err != nil {
		t.Fatal(err)
	}
	k, err := direct.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "prism admin"})
	if err != nil {
		t.Fatal(err)
	}
	admin := k.KeyToken
	const v = "/api/v1"
	const ws = "/work/app"

	// Operations.
	p.do(prismReq{op: "GET /healthz", path: "/healthz", want: 200})
	p.do(prismReq{op: "GET /readyz", path: "/readyz", want: 200})
	p.do(prismReq{op: "GET /metrics", path: "/metrics", want: 200})
	p.do(prismReq{op: "GET " + v + "/openapi.json", path: v + "/openapi.json", want: 200})

	// Accounts.
	p.do(prismReq{op: "POST " + v + "/auth/login", path: v + "/auth/login", body: `{"username":"admin","password":"` + adminPassword + `"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/auth/login", path: v + "/auth/login", body: `{"username":"admin","password":"not-the-password"}`, want: 401})
	p.do(prismReq{op: "GET " + v + "/me", token: admin, path: v + "/me", want: 200})
	p.do(prismReq{op: "GET " + v + "/me", token: "not-a-key-0123456789", path: v + "/me", want: 401})
	spare := p.do(prismReq{op: "POST " + v + "/me/keys", token: admin, path: v + "/me/keys", body: `{"label":"spare"}`, want: 201})
	p.do(prismReq{op: "POST " + v + "/me/keys", token: admin, path: v + "/me/keys", body: `{"label":"bad","lifecycle":"timed"}`, want: 400})
	p.do(prismReq{op: "GET " + v + "/me/keys", token: admin, path: v + "/me/keys", want: 200})
	p.do(prismReq{op: "DELETE " + v + "/me/keys/{key_id}", token: admin, path: v + "/me/keys/" + str(spare, "key_id"), want: 204})
	p.do(prismReq{op: "DELETE " + v + "/me/keys/{key_id}", token: admin, path: v + "/me/keys/" + str(spare, "key_id"), want: 404})
	p.do(prismReq{op: "POST " + v + "/admin/users", token: admin, path: v + "/admin/users", body: `{"username":"alice","password":"alice-password"}`, want: 201})
	p.do(prismReq{op: "POST " + v + "/admin/users", token: admin, path: v + "/admin/users", body: `{"username":"alice","password":"alice-password"}`, want: 409})
	p.do(prismReq{op: "POST " + v + "/admin/users", token: admin, path: v + "/admin/users", body: `{"username":"bob","password":"bob-password","role":"user"}`, want: 201})
	p.do(prismReq{op: "GET " + v + "/admin/users", token: admin, path: v + "/admin/users", want: 200})
	p.do(prismReq{op: "PATCH " + v + "/admin/users/{username}", token: admin, path: v + "/admin/users/bob", body: `{"role":"user"}`, want: 200})
	p.do(prismReq{op: "PATCH " + v + "/admin/users/{username}", token: admin, path: v + "/admin/users/nobody", body: `{"disabled":true}`, want: 404})
	aliceDirect := client.New(g.URL, client.WithCookieJar())
	if _, err := aliceDirect.Login(ctx, client.LoginRequest{Username: "alice", Password: "alice-password"}); err != nil {
		t.Fatal(err)
	}
	ak, err := aliceDirect.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "prism alice"})
	if err != nil {
		t.Fatal(err)
	}
	alice := ak.KeyToken
	ak2, err := aliceDirect.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "to revoke"})
	if err != nil {
		t.Fatal(err)
	}
	streamPerson, err := aliceDirect.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "stream"})
	if err != nil {
		t.Fatal(err)
	}
	p.do(prismReq{op: "GET " + v + "/admin/user-keys", token: admin, path: v + "/admin/user-keys", want: 200})
	p.do(prismReq{op: "DELETE " + v + "/admin/user-keys/{key_id}", token: admin, path: v + "/admin/user-keys/" + ak2.KeyID, want: 204})
	p.do(prismReq{op: "DELETE " + v + "/admin/user-keys/{key_id}", token: admin, path: v + "/admin/user-keys/no-such-key", want: 404})
	botKey := p.do(prismReq{op: "POST " + v + "/admin/agent-keys", token: admin, path: v + "/admin/agent-keys", body: `{"agent_name":"bot","lifecycle":"permanent"}`, want: 201})
	bot := str(botKey, "key_token")
	p.do(prismReq{op: "POST " + v + "/admin/agent-keys", token: admin, path: v + "/admin/agent-keys", body: `{"agent_name":"Not A Name!"}`, want: 400})
	tempKey := p.do(prismReq{op: "POST " + v + "/admin/agent-keys", token: admin, path: v + "/admin/agent-keys", body: `{"agent_name":"temp"}`, want: 201})
	p.do(prismReq{op: "GET " + v + "/admin/agent-keys", token: admin, path: v + "/admin/agent-keys", want: 200})

	// Agents and their models.
	p.do(prismReq{op: "POST " + v + "/agent/register", token: bot, path: v + "/agent/register", body: `{"name":"bot","platform":"e2e","workspaces":[{"name":"app","path":"` + ws + `"}]}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/agent/register", token: bot, path: v + "/agent/register", body: `{"name":"someone-else"}`, want: 403})
	p.do(prismReq{op: "POST " + v + "/agent/heartbeat", token: bot, path: v + "/agent/heartbeat", body: `{"models":[{"provider":"anthropic","model":"opus"},{"provider":"anthropic","model":"sonnet"}]}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/agent/heartbeat", token: bot, path: v + "/agent/heartbeat", body: `{}`, want: 200})
	p.do(prismReq{op: "GET " + v + "/agent/models/allowed", token: bot, path: v + "/agent/models/allowed", want: 200})
	p.do(prismReq{op: "GET " + v + "/admin/agents", token: admin, path: v + "/admin/agents", want: 200})
	p.do(prismReq{op: "PATCH " + v + "/admin/agents/{name}", token: admin, path: v + "/admin/agents/bot", body: `{"default_rounds":20}`, want: 200})
	p.do(prismReq{op: "PATCH " + v + "/admin/agents/{name}", token: admin, path: v + "/admin/agents/ghost", body: `{"default_rounds":20}`, want: 404})
	p.do(prismReq{op: "GET " + v + "/admin/agents/{name}/models", token: admin, path: v + "/admin/agents/bot/models", want: 200})
	p.do(prismReq{op: "GET " + v + "/admin/agents/{name}/models", token: admin, path: v + "/admin/agents/ghost/models", want: 404})
	p.do(prismReq{op: "PUT " + v + "/admin/agents/{name}/models", token: admin, path: v + "/admin/agents/bot/models", body: `{"allowed_models":[{"provider":"anthropic","model":"opus"}]}`, want: 200})
	p.do(prismReq{op: "PUT " + v + "/admin/agents/{name}/models", token: admin, path: v + "/admin/agents/bot/models", body: `{"allowed_models":[{"model":"opus"},{"model":"opus"}]}`, want: 400})
	p.do(prismReq{op: "PUT " + v + "/admin/agents/{name}/models", token: admin, path: v + "/admin/agents/bot/models", body: `{"models_unrestricted":true}`, want: 200})
	p.do(prismReq{op: "PUT " + v + "/admin/agents/{name}/models", token: admin, path: v + "/admin/agents/ghost/models", body: `{"models_unrestricted":true}`, want: 404})
	p.do(prismReq{op: "GET " + v + "/agents", token: alice, path: v + "/agents", want: 200})
	p.do(prismReq{op: "GET " + v + "/agents/{name}", token: alice, path: v + "/agents/bot", want: 200})
	p.do(prismReq{op: "GET " + v + "/agents/{name}", token: alice, path: v + "/agents/ghost", want: 404})

	// Mail.
	sent := p.do(prismReq{op: "POST " + v + "/me/mail/send", token: alice, path: v + "/me/mail/send", body: `{"to":"bot@` + ws + `","subject":"hello","body":"the first mail"}`, want: 200})
	mailID, sid := str(sent, "mail_id"), str(sent, "session_id")
	p.do(prismReq{op: "POST " + v + "/me/mail/send", token: alice, path: v + "/me/mail/send", body: `{"to":"bot@` + ws + `","subject":"no body"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/me/mail/send", token: alice, path: v + "/me/mail/send", body: `{"to":"bot@` + ws + `.no-such-alias","subject":"s","body":"b"}`, want: 404})
	p.do(prismReq{op: "POST " + v + "/me/mail/send", token: alice, path: v + "/me/mail/send", body: `{"to":"bot@` + ws + `","body":"no subject"}`, want: 400})
	p.do(prismReq{op: "GET " + v + "/me/mail/inbox", token: alice, path: v + "/me/mail/inbox", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/mail/inbox", token: alice, path: v + "/me/mail/inbox?cursor=not-a-cursor", want: 400})
	p.do(prismReq{op: "GET " + v + "/me/mail/sent", token: alice, path: v + "/me/mail/sent?limit=10", want: 200})
	p.do(prismReq{op: "POST " + v + "/me/mail/read", token: alice, path: v + "/me/mail/read", body: `{"mail_ids":["` + mailID + `"]}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/me/mail/read", token: alice, path: v + "/me/mail/read", body: `{"mail_ids":[]}`, want: 400})
	p.do(prismReq{op: "GET " + v + "/me/mail/{id}", token: alice, path: v + "/me/mail/" + mailID, want: 200})
	p.do(prismReq{op: "GET " + v + "/me/mail/{id}", token: alice, path: v + "/me/mail/no-such-mail", want: 404})
	p.do(prismReq{op: "GET " + v + "/me/mail/{id}/tree", token: alice, path: v + "/me/mail/" + mailID + "/tree", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/mail/{id}/tree", token: alice, path: v + "/me/mail/no-such-mail/tree", want: 404})
	p.do(prismReq{op: "POST " + v + "/me/mail/{id}/forward", token: alice, path: v + "/me/mail/" + mailID + "/forward", body: `{"to":"bob"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/me/mail/{id}/forward", token: alice, path: v + "/me/mail/no-such-mail/forward", body: `{"to":"bob"}`, want: 404})
	p.do(prismReq{op: "GET " + v + "/me/counts", token: alice, path: v + "/me/counts", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/mail/search", token: alice, path: v + "/me/mail/search?q=hello", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/mail/search", token: alice, path: v + "/me/mail/search?q=hello&limit=0", want: 400})
	p.do(prismReq{op: "GET " + v + "/mail/search", token: bot, path: v + "/mail/search?q=hello&sort=newest", want: 200})
	p.do(prismReq{op: "GET " + v + "/mail/search", token: bot, path: v + "/mail/search?q=hello&limit=1000", want: 400})
	p.do(prismReq{op: "GET " + v + "/me/export", token: alice, path: v + "/me/export?limit=2", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/export", token: alice, path: v + "/me/export?limit=0", want: 400})
	p.do(prismReq{op: "GET " + v + "/me/export", token: alice, path: v + "/me/export?all=true", want: 403})
	p.do(prismReq{op: "GET " + v + "/me/export", token: admin, path: v + "/me/export?all=true", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/export/sessions", token: alice, path: v + "/me/export/sessions?changed_after=2026-01-01T00:00:00Z&limit=2", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/export/sessions", token: alice, path: v + "/me/export/sessions?changed_after=yesterday", want: 400})
	p.do(prismReq{op: "GET " + v + "/me/export/sessions", token: alice, path: v + "/me/export/sessions?changed_after=2026-01-01T00:00:00Z&all=true", want: 403})
	p.do(prismReq{op: "GET " + v + "/me/export/sessions", token: admin, path: v + "/me/export/sessions?changed_after=2026-01-01T00:00:00Z&all=true", want: 200})
	p.do(prismReq{op: "GET " + v + "/admin/mail/{id}", token: admin, path: v + "/admin/mail/" + mailID, want: 200})
	p.do(prismReq{op: "GET " + v + "/admin/mail/{id}", token: admin, path: v + "/admin/mail/no-such-mail", want: 404})
	p.do(prismReq{op: "GET " + v + "/mail/inbox", token: bot, path: v + "/mail/inbox", want: 200})
	p.do(prismReq{op: "GET " + v + "/mail/inbox", token: bot, path: v + "/mail/inbox?limit=0", want: 400})
	p.do(prismReq{op: "POST " + v + "/mail/read", token: bot, path: v + "/mail/read", body: `{"mail_ids":["` + mailID + `"],"unread":true}`, want: 200})
	p.do(prismReq{op: "GET " + v + "/mail/{id}", token: bot, path: v + "/mail/" + mailID, want: 200})
	p.do(prismReq{op: "GET " + v + "/mail/{id}", token: bot, path: v + "/mail/no-such-mail", want: 404})
	p.do(prismReq{op: "GET " + v + "/mail/{id}/thread", token: bot, path: v + "/mail/" + mailID + "/thread", want: 200})
	p.do(prismReq{op: "POST " + v + "/mail/send", token: bot, path: v + "/mail/send", body: `{"to":"alice","subject":"re: hello","body":"an answer","reply_to":"` + mailID + `"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/mail/send", token: bot, path: v + "/mail/send", body: `{"to":"nobody-here","subject":"s","body":"b"}`, want: 404})
	p.do(prismReq{op: "POST " + v + "/mail/{id}/forward", token: bot, path: v + "/mail/" + mailID + "/forward", body: `{"to":"alice"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/mail/{id}/forward", token: bot, path: v + "/mail/no-such-mail/forward", body: `{"to":"alice"}`, want: 404})

	// Acknowledgements.
	ackMail := p.do(prismReq{op: "POST " + v + "/me/mail/send", token: alice, path: v + "/me/mail/send", body: `{"to":"bot@` + ws + `","subject":"ack me","body":"b","ack_required":true,"ack_within_minutes":60}`, want: 200})
	p.do(prismReq{op: "GET " + v + "/mail/unacknowledged", token: bot, path: v + "/mail/unacknowledged", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/mail/unacknowledged", token: alice, path: v + "/me/mail/unacknowledged?role=sender", want: 200})
	p.do(prismReq{op: "POST " + v + "/mail/{id}/ack", token: bot, path: v + "/mail/" + str(ackMail, "mail_id") + "/ack", want: 200})
	p.do(prismReq{op: "POST " + v + "/mail/{id}/ack", token: bot, path: v + "/mail/" + mailID + "/ack", want: 409})
	p.do(prismReq{op: "POST " + v + "/me/mail/{id}/ack", token: alice, path: v + "/me/mail/" + mailID + "/ack", want: 409})
	p.do(prismReq{op: "POST " + v + "/me/mail/{id}/ack", token: alice, path: v + "/me/mail/no-such-mail/ack", want: 404})

	// Sessions and runs.
	p.do(prismReq{op: "GET " + v + "/me/sessions", token: alice, path: v + "/me/sessions", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/sessions/{id}", token: alice, path: v + "/me/sessions/" + sid, want: 200})
	p.do(prismReq{op: "GET " + v + "/me/sessions/{id}", token: alice, path: v + "/me/sessions/no-such-session", want: 404})
	p.do(prismReq{op: "PATCH " + v + "/me/sessions/{id}", token: alice, path: v + "/me/sessions/" + sid, body: `{"budget_max":30}`, want: 200})
	p.do(prismReq{op: "PATCH " + v + "/me/sessions/{id}", token: alice, path: v + "/me/sessions/no-such-session", body: `{"budget_max":30}`, want: 404})
	p.do(prismReq{op: "GET " + v + "/me/sessions/{id}/mails", token: alice, path: v + "/me/sessions/" + sid + "/mails", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/sessions/{id}/runs", token: alice, path: v + "/me/sessions/" + sid + "/runs", want: 200})
	p.do(prismReq{op: "GET " + v + "/sessions/{id}", token: bot, path: v + "/sessions/" + sid, want: 200})
	p.do(prismReq{op: "GET " + v + "/sessions/{id}", token: bot, path: v + "/sessions/no-such-session", want: 404})
	p.do(prismReq{op: "POST " + v + "/sessions/{id}/sync", token: bot, path: v + "/sessions/" + sid + "/sync", body: `{"alias":"prism-check","title":"Checking the document"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/sessions/{id}/sync", token: bot, path: v + "/sessions/no-such-session/sync", body: `{"title":"t"}`, want: 404})
	p.do(prismReq{op: "PUT " + v + "/sessions/{id}/platform-session", token: bot, path: v + "/sessions/" + sid + "/platform-session", body: `{"platform_session_id":"platform-1"}`, want: 200})
	p.do(prismReq{op: "PUT " + v + "/sessions/{id}/platform-session", token: bot, path: v + "/sessions/no-such-session/platform-session", body: `{"platform_session_id":"platform-1"}`, want: 404})
	p.do(prismReq{op: "PUT " + v + "/runs/{run_id}", token: bot, path: v + "/runs/run-1", body: `{"session_id":"` + sid + `","state":"running"}`, want: 200})
	p.do(prismReq{op: "PUT " + v + "/runs/{run_id}", token: bot, path: v + "/runs/run-2", body: `{"session_id":"no-such-session","state":"running"}`, want: 404})
	p.do(prismReq{op: "GET " + v + "/sessions/{id}/runs", token: bot, path: v + "/sessions/" + sid + "/runs", want: 200})
	p.do(prismReq{op: "GET " + v + "/runs", token: bot, path: v + "/runs", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/runs", token: alice, path: v + "/me/runs", want: 200})
	p.do(prismReq{op: "GET " + v + "/me/runs", token: alice, path: v + "/me/runs?all=true", want: 200})
	p.do(prismReq{op: "POST " + v + "/me/runs/{run_id}/stop", token: alice, path: v + "/me/runs/run-1/stop", want: 202})
	p.do(prismReq{op: "POST " + v + "/me/runs/{run_id}/stop", token: alice, path: v + "/me/runs/no-such-run/stop", want: 404})
	p.do(prismReq{op: "PUT " + v + "/runs/{run_id}", token: bot, path: v + "/runs/run-3", body: `{"session_id":"` + sid + `","state":"failed","error":"exit 1"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/me/runs/{run_id}/stop", token: alice, path: v + "/me/runs/run-3/stop", want: 409})
	p.do(prismReq{op: "GET " + v + "/sessions/{id}/participants", token: alice, path: v + "/sessions/" + sid + "/participants", want: 200})
	p.do(prismReq{op: "GET " + v + "/sessions/{id}/participants", token: bot, path: v + "/sessions/no-such-session/participants", want: 404})

	// Discovery.
	p.do(prismReq{op: "GET " + v + "/contacts", token: alice, path: v + "/contacts", want: 200})
	p.do(prismReq{op: "GET " + v + "/address/suggest", token: bot, path: v + "/address/suggest?q=al", want: 200})
	p.do(prismReq{op: "GET " + v + "/address/suggest", token: alice, path: v + "/address/suggest?q=bo&limit=1000", want: 400})
	p.do(prismReq{op: "GET " + v + "/address/resolve", token: alice, path: v + "/address/resolve?address=" + url.QueryEscape("bot@"+ws), want: 200})
	p.do(prismReq{op: "GET " + v + "/address/resolve", token: alice, path: v + "/address/resolve?address=" + url.QueryEscape("bot@"+ws+".no-such-alias"), want: 404})

	// Permissions.
	perm := p.do(prismReq{op: "POST " + v + "/permission/request", token: bot, path: v + "/permission/request", body: `{"question":"May I run ls?","session_id":"` + sid + `","relay_key":"perm-1","tool":"Bash","tool_input":{"command":"ls"}}`, want: 200})
	permID := str(perm, "mail_id")
	p.do(prismReq{op: "POST " + v + "/permission/request", token: bot, path: v + "/permission/request", body: `{"question":"q","session_id":"no-such-session","relay_key":"perm-2"}`, want: 404})
	p.do(prismReq{op: "GET " + v + "/permission/{mail_id}", token: bot, path: v + "/permission/" + permID, want: 200})
	p.do(prismReq{op: "GET " + v + "/permission/{mail_id}", token: bot, path: v + "/permission/no-such-mail", want: 404})
	p.do(prismReq{op: "GET " + v + "/me/permissions", token: alice, path: v + "/me/permissions", want: 200})
	p.do(prismReq{op: "POST " + v + "/me/permission/{mail_id}/decide", token: alice, path: v + "/me/permission/" + permID + "/decide", body: `{"decision":"always"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/me/permission/{mail_id}/decide", token: alice, path: v + "/me/permission/" + permID + "/decide", body: `{"decision":"deny"}`, want: 409})
	p.do(prismReq{op: "POST " + v + "/me/permission/{mail_id}/decide", token: alice, path: v + "/me/permission/no-such-mail/decide", body: `{"decision":"deny"}`, want: 404})
	p.do(prismReq{op: "GET " + v + "/grants", token: bot, path: v + "/grants?session_id=" + sid, want: 200})
	grants := p.do(prismReq{op: "GET " + v + "/me/grants", token: alice, path: v + "/me/grants", want: 200})
	grantID := str(firstItem(grants, "grants"), "grant_id")
	p.do(prismReq{op: "DELETE " + v + "/me/grants/{grant_id}", token: alice, path: v + "/me/grants/" + grantID, want: 204})
	p.do(prismReq{op: "DELETE " + v + "/me/grants/{grant_id}", token: alice, path: v + "/me/grants/" + grantID, want: 404})

	// Attachments.
	up, upType := multipartFile(t, "notes.txt", "notes of alice")
	att := p.do(prismReq{op: "POST " + v + "/me/attachments", token: alice, path: v + "/me/attachments", raw: up, contentType: upType, want: 201})
	attID := str(att, "attachment_id")
	p.do(prismReq{op: "POST " + v + "/me/mail/send", token: alice, path: v + "/me/mail/send", body: `{"to":"bot@` + ws + `","subject":"with a file","body":"see attached","attachment_ids":["` + attID + `"]}`, want: 200})
	p.do(prismReq{op: "GET " + v + "/me/attachments/{id}", token: alice, path: v + "/me/attachments/" + attID, want: 200})
	p.do(prismReq{op: "GET " + v + "/me/attachments/{id}", token: alice, path: v + "/me/attachments/no-such-attachment", want: 404})
	p.do(prismReq{op: "GET " + v + "/attachments/{id}", token: bot, path: v + "/attachments/" + attID, want: 200})
	p.do(prismReq{op: "GET " + v + "/attachments/{id}", token: bot, path: v + "/attachments/no-such-attachment", want: 404})
	p.do(prismReq{op: "GET " + v + "/admin/attachments/{id}", token: admin, path: v + "/admin/attachments/" + attID, want: 200})
	p.do(prismReq{op: "GET " + v + "/admin/attachments/{id}", token: admin, path: v + "/admin/attachments/no-such-attachment", want: 404})
	p.do(prismReq{op: "GET " + v + "/admin/attachments/{id}", token: alice, path: v + "/admin/attachments/" + attID, want: 403})
	up2, upType2 := multipartFile(t, "log.txt", "a log of bot")
	p.do(prismReq{op: "POST " + v + "/attachments", token: bot, path: v + "/attachments", raw: up2, contentType: upType2, want: 201})

	// Reminders.
	when := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct{ base, token string }{{v + "/schedules", bot}, {v + "/me/schedules", alice}} {
		s := p.do(prismReq{op: "POST " + c.base, token: c.token, path: c.base, body: `{"title":"look again","event_time":"` + when + `"}`, want: 201})
		p.do(prismReq{op: "POST " + c.base, token: c.token, path: c.base, body: `{"title":"too late","event_time":"` + past + `"}`, want: 400})
		p.do(prismReq{op: "GET " + c.base, token: c.token, path: c.base, want: 200})
		id := str(s, "schedule_id")
		p.do(prismReq{op: "PATCH " + c.base + "/{id}", token: c.token, path: c.base + "/" + id, body: `{"title":"look once more"}`, want: 200})
		p.do(prismReq{op: "PATCH " + c.base + "/{id}", token: c.token, path: c.base + "/no-such-reminder", body: `{"title":"x"}`, want: 404})
		p.do(prismReq{op: "DELETE " + c.base + "/{id}", token: c.token, path: c.base + "/" + id, want: 204})
		p.do(prismReq{op: "DELETE " + c.base + "/{id}", token: c.token, path: c.base + "/" + id, want: 404})
	}

	// Turn tokens.
	tt := p.do(prismReq{op: "POST " + v + "/agent/turn-tokens", token: bot, path: v + "/agent/turn-tokens", body: `{"session_id":"` + sid + `"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/agent/turn-tokens", token: bot, path: v + "/agent/turn-tokens", body: `{"session_id":"no-such-session"}`, want: 404})
	p.do(prismReq{op: "DELETE " + v + "/agent/turn-tokens/{token_id}", token: bot, path: v + "/agent/turn-tokens/" + str(tt, "token_id"), want: 204})
	p.do(prismReq{op: "DELETE " + v + "/agent/turn-tokens/{token_id}", token: bot, path: v + "/agent/turn-tokens/no-such-token", want: 404})

	// Reservations.
	p.do(prismReq{op: "POST " + v + "/reservations", token: bot, path: v + "/reservations", body: `{"workspace":"` + ws + `","paths":["src/a.go"],"reason":"editing"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/reservations", token: bot, path: v + "/reservations", body: `{"workspace":"` + ws + `","paths":["../outside"]}`, want: 400})
	p.do(prismReq{op: "GET " + v + "/reservations", token: bot, path: v + "/reservations?workspace=" + url.QueryEscape(ws), want: 200})
	p.do(prismReq{op: "POST " + v + "/reservations/check", token: bot, path: v + "/reservations/check", body: `{"workspace":"` + ws + `","paths":["src/a.go","src/b.go"]}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/reservations/renew", token: bot, path: v + "/reservations/renew", body: `{"workspace":"` + ws + `","ttl_minutes":30}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/reservations/renew", token: bot, path: v + "/reservations/renew", body: `{"paths":["src/a.go"]}`, want: 400})
	p.do(prismReq{op: "POST " + v + "/reservations/release", token: bot, path: v + "/reservations/release", body: `{"workspace":"` + ws + `"}`, want: 200})
	p.do(prismReq{op: "POST " + v + "/reservations/release", token: bot, path: v + "/reservations/release", body: `{"paths":["src/a.go"]}`, want: 400})
	held := p.do(prismReq{op: "POST " + v + "/reservations", token: bot, path: v + "/reservations", body: `{"workspace":"` + ws + `","paths":["docs/**"],"session_id":"` + sid + `"}`, want: 200})
	p.do(prismReq{op: "GET " + v + "/me/reservations", token: alice, path: v + "/me/reservations", want: 200})
	p.do(prismReq{op: "POST " + v + "/me/reservations/check", token: alice, path: v + "/me/reservations/check", body: `{"workspace":"` + ws + `","paths":["docs/a.md"]}`, want: 200})
	heldID := str(firstItem(held, "granted"), "reservation_id")
	p.do(prismReq{op: "DELETE " + v + "/me/reservations/{id}", token: alice, path: v + "/me/reservations/" + heldID, want: 204})
	p.do(prismReq{op: "DELETE " + v + "/me/reservations/{id}", token: alice, path: v + "/me/reservations/no-such-reservation", want: 404})

	// The person's settings.
	p.do(prismReq{op: "PATCH " + v + "/me", token: alice, path: v + "/me", body: `{"language":"zh"}`, want: 200})
	p.do(prismReq{op: "PATCH " + v + "/me", token: alice, path: v + "/me", body: `{"email":"alice@example.com"}`, want: 503})
	p.do(prismReq{op: "POST " + v + "/me/email/verify", token: alice, path: v + "/me/email/verify", body: `{"code":"123456"}`, want: 503})
	p.do(prismReq{op: "POST " + v + "/me/password", token: alice, path: v + "/me/password", body: `{"current_password":"alice-password","new_password":"alice-password-2"}`, want: 204})
	p.do(prismReq{op: "POST " + v + "/me/password", token: alice, path: v + "/me/password", body: `{"current_password":"wrong-password","new_password":"alice-password-3"}`, want: 400})
	p.do(prismReq{op: "POST " + v + "/auth/logout", token: alice, path: v + "/auth/logout", want: 204})

	// Event streams: a stream opened with a key ends when the key is
	// revoked, so Prism (which reads an answer whole) gets all of it.
	streamAgent := str(tempKey, "key_token")
	if _, err := client.New(g.URL, client.WithToken(streamAgent)).Register(ctx, client.RegisterRequest{Name: "temp"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.do(prismReq{op: "GET " + v + "/events/stream", token: streamAgent, path: v + "/events/stream", want: 200})
	}()
	waitStreams(t, g.URL, admin, 1)
	p.do(prismReq{op: "DELETE " + v + "/admin/agent-keys/{key_id}", token: admin, path: v + "/admin/agent-keys/" + str(tempKey, "key_id"), want: 204})
	<-done
	p.do(prismReq{op: "DELETE " + v + "/admin/agent-keys/{key_id}", token: admin, path: v + "/admin/agent-keys/" + str(tempKey, "key_id"), want: 404})
	done = make(chan struct{})
	go func() {
		defer close(done)
		p.do(prismReq{op: "GET " + v + "/me/events/stream", token: streamPerson.KeyToken, path: v + "/me/events/stream", want: 200})
	}()
	waitStreams(t, g.URL, admin, 1)
	p.do(prismReq{op: "DELETE " + v + "/admin/user-keys/{key_id}", token: admin, path: v + "/admin/user-keys/" + streamPerson.KeyID, want: 204})
	<-done
	p.do(prismReq{op: "GET " + v + "/events/stream", token: bot, path: v + "/events/stream", header: map[string]string{"Last-Event-ID": "not-an-id"}, want: 400})
	p.do(prismReq{op: "GET " + v + "/me/events/stream", token: alice, path: v + "/me/events/stream", header: map[string]string{"Last-Event-ID": "-1"}, want: 400})

	// MCP over Streamable HTTP.
	mcpHeaders := map[string]string{"Accept": "application/json, text/event-stream"}
	p.do(prismReq{op: "POST /mcp", token: bot, path: "/mcp", header: mcpHeaders, want: 200,
		body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"prism-check","version":"1"}}}`})
	p.do(prismReq{op: "POST /mcp", token: bot, path: "/mcp", header: map[string]string{"Accept": mcpHeaders["Accept"], "Mcp-Session-Id": "no-such-session"},
		want: 404, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`})
	p.do(prismReq{op: "GET /mcp", token: bot, path: "/mcp", header: mcpHeaders, want: 400})
	p.do(prismReq{op: "DELETE /mcp", token: bot, path: "/mcp", header: map[string]string{"Mcp-Session-Id": "no-such-session"}, want: 404})

	// Every operation of the document was sent at least once (HEAD aside).
	doc, _ := httpapi.OpenAPIDocument()
	var parsed struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		t.Fatal(err)
	}
	var missing []string
	ops := 0
	for path, item := range parsed.Paths {
		for method := range item {
			if method == "head" {
				continue
			}
			ops++
			if op := strings.ToUpper(method) + " " + path; p.covered[op] == 0 {
				missing = append(missing, op)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations no request exercised:\n  %s", strings.Join(missing, "\n  "))
	}
	if p.sent < 100 {
		t.Errorf("%d requests; the run needs at least 100", p.sent)
	}
	if n := plog.Count("Violation"); n > 0 {
		t.Errorf("Prism logged %d violations:\n%s", n, plog.Tail(8000))
	}
	t.Logf("%d requests through Prism covering %d operations, %d violations", p.sent, ops, plog.Count("Violation"))
}

// waitStreams waits until the gateway reports n open event streams in its
// metrics.
func waitStreams(t *testing.T, gatewayURL, token string, n int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	want := fmt.Sprintf("agentmail_sse_clients %d", n)
	for time.Now().Before(deadline) {
		resp, err := http.Get(gatewayURL + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), want) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the gateway never reported %q", want)
}
