package mcptools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// wantTools is the tool surface every platform sees (issue 4, seed 003,
// seed 001's schedule tools, the execution gate, issue 21's reservations
// acknowledgements and search_mail).
var wantTools = []string{
	"acknowledge_mail", "connect_to_server", "create_schedule", "delete_schedule", "download_attachment", "forward_mail",
	"list_contacts", "list_reservations", "list_schedules", "list_unacknowledged", "read_inbox", "read_mail", "read_thread",
	"release_reservations", "renew_reservations", "reserve_paths", "run_command", "search_mail",
	"send_mail", "session_participants", "suggest_address", "update_schedule", "upload_attachment", "write_file",
}

func TestToolsListMatchesRegistrationAndHasNoPermissionTool(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if strings.Contains(tool.Name, "permission") {
			t.Errorf("tool %q lets the model report permission needs (N-1, T-7)", tool.Name)
		}
		if tool.Description == "" {
			t.Errorf("tool %q has no description", tool.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, wantTools) {
		t.Errorf("tools/list =\n %v\nwant\n %v", names, wantTools)
	}
	if !slices.Equal(h.srv.ToolNames(), names) {
		t.Errorf("ToolNames() %v differs from tools/list %v", h.srv.ToolNames(), names)
	}
	for _, tool := range res.Tools {
		if tool.Name == "update_schedule" && !strings.Contains(tool.Description, "Only pass the fields you change") {
			t.Errorf("update_schedule description must say to pass only changed fields: %q", tool.Description)
		}
		if tool.Name == "send_mail" {
			schema, _ := tool.InputSchema.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			for k := range props {
				if strings.HasPrefix(k, "relay") {
					t.Errorf("send_mail offers %q: the model must never set a relay (N-5, W-5.3)", k)
				}
			}
		}
	}
}

func sampleMail(id string) client.Mail {
	return client.Mail{
		MailID: id, SessionID: "s_1", SessionAlias: "fix-leak", FromName: "alice", FromKind: "person", FromAddress: "alice",
		Recipients: []client.Recipient{
			{Name: "claude", Kind: "agent", Role: "to", Address: "claude@/srv/app.fix-leak"},
			{Name: "bob", Kind: "person", Role: "cc", Address: "bob"},
			{Name: "ops", Kind: "agent", Role: "cc", Address: "ops@/srv/ops"},
		},
		Subject: "Memory leak " + id,
		Body:    "Please look at the leak in " + id + ".",
		Attachments: []client.Attachment{
			{AttachmentID: "att_heap", Filename: "heap.pprof", Size: 12634},
		},
		MailType:  client.MailTypeNormal,
		CreatedAt: time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC),
	}
}

func TestRenderMailShowsCcAndAttachmentIDs(t *testing.T) {
	text := RenderMail(sampleMail("m_1"), 0)
	contains(t, text,
		"mail_id: m_1\n",
		"From: alice (person)\n",
		"To: claude@/srv/app.fix-leak\n",
		"Cc: bob, ops@/srv/ops\n", // T-1.2
		"Session: fix-leak (session_id s_1)\n",
		"Subject: Memory leak m_1\n",
		"Attachments (1):\n  - heap.pprof (12.3 KB) attachment_id: att_heap\n", // T-1.1
		"\nPlease look at the leak in m_1.\n",
		"Date: "+FormatTime(time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)),
	)
	m := sampleMail("m_2")
	m.Recipients = m.Recipients[:1]
	if strings.Contains(RenderMail(m, 0), "Cc:") {
		t.Errorf("a mail without cc shows a Cc line")
	}
}

func TestRenderMailCutsLongBodiesWithANote(t *testing.T) {
	m := sampleMail("m_1")
	m.Body = strings.Repeat("ü", 10)
	text := RenderMail(m, 4)
	contains(t, text, "\nüüüü\n", "[body cut: 6 more characters; read_mail with mail_id m_1 shows all]")
}

func TestRenderInboxHeaderTellsWhatWasMarked(t *testing.T) {
	list := &client.MailList{Mails: []client.Mail{sampleMail("m_2"), sampleMail("m_1")}, Unread: 3}
	unread := RenderInbox(list, "unread", 5)
	contains(t, unread, "2 mails (status=unread, limit=5). Marked read: exactly the 2 listed. Unread in the inbox: 3.", "[1/2]\nmail_id: m_2", "[2/2]\nmail_id: m_1", "reply_to")
	all := RenderInbox(list, "all", 5)
	contains(t, all, "Nothing was marked read (status=all never marks).")
	if strings.Contains(all, "Marked read") {
		t.Errorf("status=all claims to have marked mails")
	}
	contains(t, RenderInbox(&client.MailList{}, "unread", 5), "No unread mail.")
}

func TestReadInboxDefaultsToFiveUnreadAndMarksExactlyThose(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	for i := 1; i <= 7; i++ {
		h.fg.addMail(sampleMail("m_" + string(rune('0'+i))))
	}
	out := h.mustOK("read_inbox", nil)
	// Newest first: m_7 .. m_3 listed and marked; m_2 and m_1 stay unread.
	contains(t, out, "5 mails (status=unread, limit=5)", "mail_id: m_7", "mail_id: m_3", "Cc: bob, ops@/srv/ops", "attachment_id: att_heap")
	if strings.Contains(out, "mail_id: m_2") {
		t.Errorf("listed more than the limit:\n%s", out)
	}
	for i := 1; i <= 7; i++ {
		id := "m_" + string(rune('0'+i))
		if want := i <= 2; h.fg.isUnread(id) != want {
			t.Errorf("%s unread = %v, want %v (T-1.3: exactly the listed are marked)", id, !want, want)
		}
	}
	if h.fg.count("GET /api/v1/mail/inbox?limit=5&mark_read=true&status=unread") != 1 {
		t.Errorf("inbox query: %v", h.fg.requests)
	}

	// status=all lists read and unread alike and marks nothing.
	out = h.mustOK("read_inbox", map[string]any{"status": "all", "limit": "10"})
	contains(t, out, "7 mails (status=all, limit=10)", "Nothing was marked read")
	if !h.fg.isUnread("m_1") || !h.fg.isUnread("m_2") {
		t.Errorf("status=all marked mails read")
	}
	if h.fg.count("GET /api/v1/mail/inbox?limit=10&mark_read=false&status=all") != 1 {
		t.Errorf("status=all must ask with mark_read=false: %v", h.fg.requests)
	}
	h.mustFail("read_inbox", map[string]any{"status": "new"}, "status must be unread, read or all")
	h.mustFail("read_inbox", map[string]any{"limit": 0}, "limit must be from 1 to 50 (default 5), got 0")
}

func TestReadMailAndThread(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	m := sampleMail("m_1")
	m.Body = strings.Repeat("x", InboxBodyLimit+50)
	h.fg.addMail(m)
	h.fg.addMail(sampleMail("m_2"))
	out := h.mustOK("read_mail", map[string]any{"mail_id": "m_1"})
	if strings.Contains(out, "body cut") || strings.Count(out, "x") < InboxBodyLimit+50 {
		t.Errorf("read_mail must show the whole body")
	}
	if h.fg.isUnread("m_1") {
		t.Errorf("read_mail left the mail unread")
	}
	out = h.mustOK("read_thread", map[string]any{"mail_id": "m_2"})
	contains(t, out, "Thread fix-leak: 2 mails, oldest first.", "[1/2]\nmail_id: m_1", "[2/2]\nmail_id: m_2")
	h.mustFail("read_mail", map[string]any{"mail_id": "m_404"}, "404", "mail_not_found")
	h.mustFail("read_mail", map[string]any{}, "mail_id is required")
}

func TestSendMailNeverSetsARelay(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	out := h.mustOK("send_mail", map[string]any{
		"to": "ops@/srv/ops.new", "cc": "bob，carol", "subject": "hi", "body": "hello",
		"attachment_ids": []any{"att_1", "att_2"},
		// A model trying to use the free relay channel.
		"relay": "summary", "relay_key": "forged", "mail_type": "failure_report",
	})
	contains(t, out, "Sent: mail_id sent_", "fix-leak", "Round budget: 17 of 20 left.")
	if len(h.fg.sentRaw) != 1 {
		t.Fatalf("sent %d mails", len(h.fg.sentRaw))
	}
	raw := h.fg.sentRaw[0]
	for _, k := range []string{"relay", "relay_key", "mail_type"} {
		if _, ok := raw[k]; ok {
			t.Errorf("send_mail passed %q = %v to the gateway (N-5, W-5.3)", k, raw[k])
		}
	}
	if raw["to"] != "ops@/srv/ops.new" || raw["cc"] != "bob, carol" || raw["subject"] != "hi" || raw["body"] != "hello" {
		t.Errorf("sent %v", raw)
	}
	if ids, _ := raw["attachment_ids"].([]any); len(ids) != 2 || ids[0] != "att_1" {
		t.Errorf("attachment_ids %v", raw["attachment_ids"])
	}
	// attachment_ids as one comma-separated string works too.
	h.mustOK("send_mail", map[string]any{"to": "bob", "subject": "s", "body": "b", "attachment_ids": "att_3, att_4"})
	if ids, _ := h.fg.sentRaw[1]["attachment_ids"].([]any); len(ids) != 2 || ids[1] != "att_4" {
		t.Errorf("attachment_ids from a string: %v", h.fg.sentRaw[1]["attachment_ids"])
	}
}

func TestSendMailReplyDefaultsToSenderAndSubject(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.addMail(sampleMail("m_1"))
	h.mustOK("send_mail", map[string]any{"reply_to": "m_1", "body": "done"})
	raw := h.fg.sentRaw[0]
	if raw["to"] != "alice" || raw["subject"] != "Re: Memory leak m_1" || raw["reply_to"] != "m_1" {
		t.Errorf("reply defaults: %v", raw)
	}
	h.mustFail("send_mail", map[string]any{"subject": "x", "body": "y"}, "to is required")
	h.mustFail("send_mail", map[string]any{"to": "bob", "subject": "x"}, "body is required")
}

func TestGatewayErrorsReachTheModelAsToolErrorsWithSuggestion(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.fail["POST /api/v1/mail/send"] = fakeErr{403, client.ErrorBody{Error: "round budget spent (20 of 20)", Code: "budget_exhausted", Suggestion: "ask the person to raise the budget"}}
	h.mustFail("send_mail", map[string]any{"to": "bob", "subject": "s", "body": "b"},
		"send_mail failed.", "403 budget_exhausted", "round budget spent", "Suggestion: ask the person to raise the budget")
	h.fg.fail["POST /api/v1/mail/send"] = fakeErr{404, client.ErrorBody{Error: "no session fix-lek", Code: "alias_not_found", Field: "to", Suggestion: "check the alias with suggest_address"}}
	h.mustFail("send_mail", map[string]any{"to": "claude@/srv.fix-lek", "subject": "s", "body": "b"},
		"Field: to", "Do not retry with .new")
}

func TestForwardMail(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	out := h.mustOK("forward_mail", map[string]any{"mail_id": "m_1", "to": "ops@/srv/ops", "body": "FYI"})
	contains(t, out, "Forwarded: mail_id fwd_", "new session")
	if f := h.fg.forwards[0]; f["mail_id"] != "m_1" || f["to"] != "ops@/srv/ops" || f["body"] != "FYI" {
		t.Errorf("forward %v", f)
	}
	h.mustFail("forward_mail", map[string]any{"mail_id": "m_1"}, "to is required")
}

func TestUploadAndDownloadAttachment(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	if err := os.MkdirAll(filepath.Join(h.ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.ws, "src", "report.txt"), []byte("report body"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := h.mustOK("upload_attachment", map[string]any{"path": "src/report.txt"})
	contains(t, out, "Uploaded report.txt (11 B): attachment_id att_")
	id := strings.Fields(out[strings.Index(out, "attachment_id ")+len("attachment_id "):])[0]
	id = strings.TrimSuffix(id, ".")

	// Default target: the workspace, under the attachment's own name; a
	// second download does not overwrite the first.
	out = h.mustOK("download_attachment", map[string]any{"attachment_id": id})
	contains(t, out, filepath.Join(h.ws, "report.txt"))
	out = h.mustOK("download_attachment", map[string]any{"attachment_id": id})
	contains(t, out, filepath.Join(h.ws, "report (2).txt"))
	assertContent(t, filepath.Join(h.ws, "report (2).txt"), "report body")
	// A given file path (parents created) and a given directory.
	h.mustOK("download_attachment", map[string]any{"attachment_id": id, "path": "in/copy.txt"})
	assertContent(t, filepath.Join(h.ws, "in", "copy.txt"), "report body")
	h.mustOK("download_attachment", map[string]any{"attachment_id": id, "path": "in"})
	assertContent(t, filepath.Join(h.ws, "in", "report.txt"), "report body")
	h.mustFail("download_attachment", map[string]any{"attachment_id": "att_none"}, "404", "attachment_not_found")
}

func TestDownloadAttachmentRefusesProtectedPaths(t *testing.T) {
	h := newHarness(t, TierFull)
	h.fg.attach["att_x"] = []byte("payload")
	h.fg.attName["att_x"] = "authorized_keys"
	for name, p := range protectedTricks(t, h) {
		t.Run(name, func(t *testing.T) {
			h.t = t
			h.mustFail("download_attachment", map[string]any{"attachment_id": "att_x", "path": p}, "protected path")
		})
	}
	h.t = t
	h.mustFail("download_attachment", map[string]any{"attachment_id": "att_x", "path": filepath.Join(h.home, ".ssh")}, "protected path")
	assertAbsent(t, filepath.Join(h.home, ".ssh", "authorized_keys"))
	assertAbsent(t, filepath.Join(h.protected, "db.sqlite"))
	assertContent(t, filepath.Join(h.home, ".agentmail", "agent.key"), "am_secret\n")
	if n := h.fg.count("GET /api/v1/attachments/"); n != 0 {
		t.Errorf("a protected target was refused only after downloading (%d downloads)", n)
	}
}

func TestUploadAttachmentRefusesKeyFiles(t *testing.T) {
	h := newHarness(t, TierFull)
	h.mustFail("upload_attachment", map[string]any{"path": filepath.Join(h.home, ".agentmail", "agent.key")}, "protected path")
	if n := h.fg.count("POST /api/v1/attachments"); n != 0 {
		t.Errorf("the key file was uploaded")
	}
}

func TestScheduleTools(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	out := h.mustOK("create_schedule", map[string]any{
		"title": "standup", "event_time": "2026-05-02T09:30:00Z", "remind_before_minutes": "30", "recipients": "alice，bob, carol",
	})
	contains(t, out, "Created:", "\"standup\"", "reminder 30 min before", "to: alice, bob, carol")
	raw := h.fg.schedRaw[0]
	if raw["remind_before_minutes"] != float64(30) || raw["recipients"] != "alice, bob, carol" {
		t.Errorf("create sent %v", raw)
	}
	id := strings.TrimSuffix(strings.Fields(out[strings.Index(out, "schedule_id ")+len("schedule_id "):])[0], ":")

	h.mustOK("update_schedule", map[string]any{"schedule_id": id, "title": "daily standup"})
	upd := h.fg.schedRaw[1]
	if len(upd) != 1 || upd["title"] != "daily standup" {
		t.Errorf("update must send only the changed field, sent %v", upd)
	}
	h.mustOK("update_schedule", map[string]any{"schedule_id": id, "remind_before_minutes": 15.0})
	if upd := h.fg.schedRaw[2]; len(upd) != 1 || upd["remind_before_minutes"] != float64(15) {
		t.Errorf("update sent %v", upd)
	}
	h.mustFail("update_schedule", map[string]any{"schedule_id": id}, "nothing to change")
	h.mustFail("create_schedule", map[string]any{"title": "x", "event_time": "2026-05-02", "remind_before_minutes": "half an hour"}, "remind_before_minutes must be a whole number")
	// The gateway's time error reaches the model with its suggestion.
	h.mustFail("create_schedule", map[string]any{"title": "x", "event_time": "tomorrow 9am"}, "invalid_time", "now is", "Suggestion: use RFC 3339")

	h.mustOK("create_schedule", map[string]any{"title": "b", "event_time": "2026-05-03T09:00:00Z"})
	h.mustOK("create_schedule", map[string]any{"title": "c", "event_time": "2026-05-04T09:00:00Z"})
	out = h.mustOK("list_schedules", nil)
	contains(t, out, "3 schedules (limit 4)", "daily standup", "Note: 3 of 4 schedules used")
	h.mustOK("delete_schedule", map[string]any{"schedule_id": id})
	h.mustFail("delete_schedule", map[string]any{"schedule_id": id}, "404", "Suggestion: call list_schedules")
}

func TestDiscoveryTools(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	contains(t, h.mustOK("suggest_address", map[string]any{"query": "app"}), "- alice (person)", "claude@/srv/app (workspace)")
	contains(t, h.mustOK("list_contacts", nil), "2 contacts", "- claude (agent, claude, online)")
	contains(t, h.mustOK("session_participants", nil), "Session s_1 has 1 participant", "- alice (person) alice")
	contains(t, h.mustOK("session_participants", map[string]any{"session_id": "s_9"}), "Session s_9")
}

func TestConnectToServerRegistersAndSwitches(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	// The configured key is wrong: every tool answers 401 until connected.
	h.srv.setGateway(client.New(h.fg.URL(), client.WithToken("wrong")))
	h.mustFail("read_inbox", nil, "401")
	h.mustFail("connect_to_server", map[string]any{"agent_key": "also-wrong"}, "does not know this agent key", "key_token")
	out := h.mustOK("connect_to_server", map[string]any{"agent_key": h.fg.key, "agent_name": "claude", "platform": "claude"})
	contains(t, out, "Connected to "+h.fg.URL()+" as agent claude (platform claude")
	if strings.Contains(out, h.fg.key) {
		t.Errorf("the key was shown to the model")
	}
	h.mustOK("read_inbox", nil)
}

// connect_to_server registers the directory it is given as the agent's
// workspace, except "/" or one right under it, which the gateway refuses:
// then it registers none and says why.
func TestConnectToServerRegistersNoWorkspaceTooNearTheTop(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	registered := func() []client.Workspace {
		h.fg.mu.Lock()
		defer h.fg.mu.Unlock()
		return h.fg.registered
	}
	out := h.mustOK("connect_to_server", map[string]any{"agent_key": h.fg.key, "agent_name": "claude", "workspace": "/srv/app"})
	if got := registered(); len(got) != 1 || got[0].Path != "/srv/app" {
		t.Fatalf("registered %+v for /srv/app", got)
	}
	if strings.Contains(out, "too near the top") {
		t.Errorf("a two-level workspace got the note: %q", out)
	}
	for _, top := range []string{"/", "/workspace"} {
		out := h.mustOK("connect_to_server", map[string]any{"agent_key": h.fg.key, "agent_name": "claude", "workspace": top})
		if got := registered(); len(got) != 0 {
			t.Errorf("registered %+v for %s, want []", got, top)
		}
		contains(t, out, "Connected to", "The directory "+top+" is too near the top")
	}
}

func TestArgumentsAcceptNumbersAsStringsAndRejectJunk(t *testing.T) {
	a := args{"n": jsonNumber("5"), "s": "7", "f": jsonNumber("3.0"), "bad": "7 days", "b": true}
	if n, err := a.integer("n", 0); n != 5 || err != nil {
		t.Errorf("n = %d, %v", n, err)
	}
	if n, err := a.integer("s", 0); n != 7 || err != nil {
		t.Errorf("s = %d, %v", n, err)
	}
	if n, err := a.integer("f", 0); n != 3 || err != nil {
		t.Errorf("f = %d, %v", n, err)
	}
	if n, err := a.integer("missing", 9); n != 9 || err != nil {
		t.Errorf("missing = %d, %v", n, err)
	}
	if _, err := a.integer("bad", 0); err == nil || !strings.Contains(err.Error(), "bad must be a whole number") {
		t.Errorf("bad: %v", err)
	}
	if _, err := a.integer("b", 0); err == nil {
		t.Errorf("a boolean is not a number")
	}
	if got := normalizeRecipients(" a，b,, c、d "); got != "a, b, c, d" {
		t.Errorf("normalizeRecipients = %q", got)
	}
}

func jsonNumber(s string) any { return json.Number(s) }
