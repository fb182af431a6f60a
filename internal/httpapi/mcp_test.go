package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpapi"
	"github.com/agentmail/agentmail/internal/mcptools"
)

// headerTransport adds fixed headers to every request.
type headerTransport struct{ h map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects an MCP client to /mcp with the bearer token.
func (e *env) mcpSession(token string) *mcp.ClientSession {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(e.ctx(), &mcp.StreamableClientTransport{Endpoint: e.url + httpapi.MCPPath,
		HTTPClient: &http.Client{Transport: headerTransport{map[string]string{"Authorization": "Bearer " + token}}}}, nil)
	if err != nil {
		e.t.Fatalf("connect to /mcp: %v", err)
	}
	e.t.Cleanup(func() { _ = s.Close() })
	return s
}

func callText(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// Issue 19 item 1: MCP over Streamable HTTP offers the mail tools with an
// agent key, not the local ones, and the tools act through the API as
// that agent.
func TestMCPOverHTTPServesTheMailTools(t *testing.T) {
	e := newEnv(t)
	e.agent("alpha")
	bob := e.person("bob")
	s := e.mcpSession("test-key-alpha-0123456789abcdef")

	if ins := s.InitializeResult().Instructions; !strings.Contains(ins, "run_command") || !strings.Contains(ins, "agentmail mcp") {
		t.Errorf("the instructions do not say why the local tools are missing: %q", ins)
	}
	tools, err := s.ListTools(e.ctx(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for local := range mcptools.LocalTools {
		if slices.Contains(names, local) {
			t.Errorf("%s is offered over HTTP", local)
		}
	}
	for _, want := range []string{"read_inbox", "send_mail", "read_mail", "read_thread", "suggest_address", "list_contacts"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is missing over HTTP: %v", want, names)
		}
	}
	if text, isErr := callText(t, s, "send_mail", map[string]any{"to": "bob", "subject": "over http", "body": "hello bob"}); isErr {
		t.Fatalf("send_mail: %s", text)
	}
	l, err := bob.MeInbox(e.ctx(), client.InboxQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Mails) != 1 || l.Mails[0].Subject != "over http" || l.Mails[0].FromName != "alpha" {
		t.Fatalf("bob's inbox: %+v", l.Mails)
	}
	if _, err := s.CallTool(e.ctx(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "true"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("run_command over HTTP answered %v", err)
	}
}

// Who may use /mcp: an agent key as Bearer; no credentials is a 401, a
// person's key a 403, a foreign Host or Origin a 403, and a session id
// with another agent's key a 403.
func TestMCPOverHTTPRefusals(t *testing.T) {
	e := newEnv(t)
	e.agent("alpha")
	e.agent("beta")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(token string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(e.ctx(), "POST", e.url+httpapi.MCPPath, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp, b.String()
	}
	alpha := "test-key-alpha-0123456789abcdef"
	if resp, _ := post("", nil); resp.StatusCode != 401 {
		t.Errorf("no key: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := post("not-a-key", nil); resp.StatusCode != 401 {
		t.Errorf("a wrong key: %d", resp.StatusCode)
	}
	key, err := e.admin.CreateUserKey(e.ctx(), client.CreateUserKeyRequest{Label: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := post(key.KeyToken, nil); resp.StatusCode != 403 || !strings.Contains(body, "agent_only") {
		t.Errorf("a person's key: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(alpha, map[string]string{"Host": "attacker.example"}); resp.StatusCode != 403 || !strings.Contains(body, "mcp_host_not_allowed") {
		t.Errorf("a foreign Host: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(alpha, map[string]string{"Origin": "http://attacker.example"}); resp.StatusCode != 403 || !strings.Contains(body, "mcp_origin_not_allowed") {
		t.Errorf("a foreign Origin: %d %s", resp.StatusCode, body)
	}
	resp, body := post(alpha, map[string]string{"Origin": e.url})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize with the same origin: %d %q %s", resp.StatusCode, sid, body)
	}
	if resp, _ := post("test-key-beta-0123456789abcdef", map[string]string{"Mcp-Session-Id": sid}); resp.StatusCode != 403 {
		t.Errorf("alpha's session with beta's key: %d", resp.StatusCode)
	}
}

// Issue 19 item 4: the inbox, a mail and a thread as read-only resources,
// declared in the capabilities; a mail that does not exist and another
// agent's mail answer the same "not found", and reading marks nothing read.
func TestMCPResources(t *testing.T) {
	e := newEnv(t)
	alpha := e.agent("alpha")
	beta := e.agent("beta")
	bob := e.person("bob")
	sent, err := bob.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@/tmp/w.new", Subject: "for alpha", Body: "the plan"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := bob.MeSend(e.ctx(), client.SendMailRequest{To: "beta@/tmp/w.new", Subject: "for beta only", Body: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	s := e.mcpSession("test-key-alpha-0123456789abcdef")
	if c := s.InitializeResult().Capabilities; c.Resources == nil || c.Resources.Subscribe || c.Resources.ListChanged {
		t.Errorf("resources capability: %+v", c.Resources)
	}
	read := func(uri string) (string, error) {
		res, err := s.ReadResource(e.ctx(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, c := range res.Contents {
			b.WriteString(c.Text)
		}
		return b.String(), nil
	}
	mailID := sent.MailID
	for _, uri := range []string{mcptools.ResourceInbox, "agentmail://mail/" + mailID, "agentmail://thread/" + mailID} {
		text, err := read(uri)
		if err != nil || !strings.Contains(text, "for alpha") {
			t.Errorf("%s: %v %q", uri, err, text)
		}
	}
	_, errMissing := read("agentmail://mail/m_does_not_exist")
	_, errOther := read("agentmail://mail/" + other.MailID)
	if errMissing == nil || errOther == nil || errMissing.Error() != strings.ReplaceAll(errOther.Error(), other.MailID, "m_does_not_exist") {
		t.Errorf("missing: %v; another agent's: %v", errMissing, errOther)
	}
	if _, err := read("agentmail://nothing"); err == nil {
		t.Error("an undeclared resource answered")
	}
	for name, c := range map[string]*client.Client{"alpha": alpha, "beta": beta} {
		l, err := c.Inbox(e.ctx(), client.InboxQuery{Status: "unread", MarkRead: new(bool)})
		if err != nil || len(l.Mails) != 1 {
			t.Errorf("%s's unread mail after the resource reads: %+v %v", name, l, err)
		}
	}
}

// A turn token may use /mcp, narrowed to its session: the tools see that
// session's mail and not another's, and session_participants defaults to it.
func TestMCPOverHTTPWithATurnToken(t *testing.T) {
	e := newEnv(t)
	alpha := e.agent("alpha")
	bob := e.person("bob")
	in, err := bob.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@/tmp/w.new", Subject: "this turn", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := bob.MeSend(e.ctx(), client.SendMailRequest{To: "alpha@/tmp/w.new", Subject: "another session", Body: "y"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := alpha.CreateTurnToken(e.ctx(), in.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	s := e.mcpSession(tok.Token)
	if text, isErr := callText(t, s, "read_thread", map[string]any{"mail_id": in.MailID}); isErr || !strings.Contains(text, "this turn") {
		t.Errorf("read_thread of the token's session: %v %q", isErr, text)
	}
	if text, isErr := callText(t, s, "read_mail", map[string]any{"mail_id": out.MailID}); !isErr || strings.Contains(text, "another session") {
		t.Errorf("read_mail of another session: %v %q", isErr, text)
	}
	if text, isErr := callText(t, s, "session_participants", nil); isErr || !strings.Contains(text, "bob") {
		t.Errorf("session_participants without session_id: %v %q", isErr, text)
	}
}
