package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// The issue-3 end-to-end tests: the real `agentmail serve` binary, built
// from this repository, driven over HTTP through the public client, with
// every answer of a documented route checked against the OpenAPI document.
// Timers are real here (the binary uses the system clock), so the tests
// shorten the sweep interval with AGENTMAIL_SWEEP_INTERVAL and wait on
// conditions with generous deadlines, never on fixed sleeps.

// TestPermissionsAttachmentsReminders drives the issue-3 features through
// the real binary: permission requests and decisions, attachments,
// reminders (across a restart and with two replicas), model scope and
// address discovery.
func TestPermissionsAttachmentsReminders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	t.Run("Permissions", func(t *testing.T) { testPermissions(t) })
	t.Run("Attachments", func(t *testing.T) { testAttachments(t) })
	t.Run("ReminderOnceAcrossRestart", func(t *testing.T) { testReminderAcrossRestart(t) })
	t.Run("ModelScopeAndDiscovery", func(t *testing.T) { testModelScopeAndDiscovery(t) })
	t.Run("RemindersOnceWithReplicas", func(t *testing.T) { testRemindersWithReplicas(t) })
}

// --------------------------------------------------------------- permissions

func testPermissions(t *testing.T) {
	e := newPeopleAndAgents(t, startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t)))
	ctx := e.ctx
	sent, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/proj.new", Cc: "bob", Subject: "clean the build", Body: "please"})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := e.bot.Stream(ctx, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	peopleStream, err := e.bob.Stream(ctx, client.StreamOptions{People: true})
	if err != nil {
		t.Fatal(err)
	}
	defer peopleStream.Close()
	ask := func(key, tool string, expires *time.Time) *client.Permission {
		t.Helper()
		p, err := e.bot.RequestPermission(ctx, client.PermissionRequest{Question: "Run " + tool + "?", Context: "in " + key,
			SessionID: sent.SessionID, RelayKey: key, Tool: tool, ToolInput: map[string]any{"command": "rm -rf build/", "key": key},
			ExpiresAt: expires})
		if err != nil {
			t.Fatalf("permission request %s: %v\n%s", key, err, e.g.Log)
		}
		return p
	}
	decisionFor := func(key string) client.PermissionDecisionEvent {
		t.Helper()
		var ev client.PermissionDecisionEvent
		data := waitEvent(t, stream, client.EventPermissionDecision, func(b []byte) bool {
			json.Unmarshal(b, &ev)
			return ev.RelayKey == key
		})
		json.Unmarshal(data, &ev)
		return ev
	}

	// A request, and its replay: one mail, the same request.
	p1 := ask("perm-1", "Bash", nil)
	if p1.Status != "pending" || p1.Duplicate || p1.ArgsHash == "" {
		t.Fatalf("request = %+v", p1)
	}
	waitEvent(t, peopleStream, client.EventPermissionRequest, func(b []byte) bool { return bytes.Contains(b, []byte(p1.MailID)) })
	again := ask("perm-1", "Bash", nil)
	if !again.Duplicate || again.MailID != p1.MailID {
		t.Fatalf("replay = %+v", again)
	}
	no := false
	inbox, err := e.alice.MeInbox(ctx, client.InboxQuery{Status: "all", Limit: 50, MarkRead: &no})
	if err != nil {
		t.Fatal(err)
	}
	requests := 0
	for _, m := range inbox.Mails {
		if m.MailType == client.MailTypePermissionRequest {
			requests++
		}
	}
	if requests != 1 {
		t.Fatalf("alice has %d permission_request mails after a replay, want 1", requests)
	}
	sess, _ := e.alice.MeSession(ctx, sent.SessionID)
	if sess.UsedRounds != 0 {
		t.Errorf("used_rounds = %d after permission requests (B-8.5)", sess.UsedRounds)
	}
	if c, _ := e.alice.MeCounts(ctx); c.PendingPermissions != 1 {
		t.Errorf("pending permissions = %d, want 1", c.PendingPermissions)
	}

	// Decided by the API; the event carries the W-4 fields; a conflicting
	// second decision is a 409 and changes nothing.
	d1, err := e.alice.Decide(ctx, p1.MailID, client.DecideRequest{Decision: "approve", Note: "fine"})
	if err != nil {
		t.Fatal(err)
	}
	if !d1.Approved || d1.DecidedVia != "api" || d1.DecisionMailID == "" {
		t.Fatalf("decided = %+v", d1)
	}
	ev := decisionFor("perm-1")
	want := client.PermissionDecisionEvent{MailID: p1.MailID, DecisionMailID: d1.DecisionMailID, Decision: "approve", Approved: true,
		Note: "fine", DecidedBy: "alice", DecidedVia: "api", SessionID: sent.SessionID, RelayKey: "perm-1", RelayKind: "permission", ArgsHash: p1.ArgsHash}
	if ev != want {
		t.Errorf("event = %+v\nwant    %+v", ev, want)
	}
	_, err = e.bob.Decide(ctx, p1.MailID, client.DecideRequest{Decision: "deny"})
	ae := wantStatus(t, err, http.StatusConflict, "already_decided")
	if ae.Body.Suggestion == "" {
		t.Error("409 without a suggestion")
	}
	if st, _ := e.bot.GetPermission(ctx, p1.MailID); !st.Approved || st.DecidedBy != "alice" {
		t.Errorf("after the conflicting decision: %+v", st)
	}
	dm, err := e.bot.GetMail(ctx, d1.DecisionMailID)
	if err != nil || dm.MailType != client.MailTypePermissionDecision || dm.ParentMailID != p1.MailID {
		t.Errorf("decision mail = %+v, %v", dm, err)
	}

	// Decided by replying with approval text.
	p2 := ask("perm-2", "Bash", nil)
	r, err := e.bob.MeSend(ctx, client.SendMailRequest{To: "bot", ReplyTo: p2.MailID, Body: "同意，只删 build/"})
	if err != nil {
		t.Fatal(err)
	}
	ev = decisionFor("perm-2")
	if !ev.Approved || ev.DecidedBy != "bob" || ev.DecisionMailID != r.MailID || ev.Decision != "同意，只删 build/" {
		t.Errorf("reply decision event = %+v", ev)
	}
	if m, _ := e.bot.GetMail(ctx, r.MailID); m == nil || m.MailType != client.MailTypePermissionDecision {
		t.Errorf("the reply is not the decision mail: %+v", m)
	}

	// An unknown word denies.
	p3 := ask("perm-3", "Bash", nil)
	d3, err := e.bob.Decide(ctx, p3.MailID, client.DecideRequest{Decision: "looks fine to me"})
	if err != nil || d3.Approved || d3.Status != "denied" {
		t.Errorf("unknown word = %+v, %v", d3, err)
	}
	if ev := decisionFor("perm-3"); ev.Approved {
		t.Errorf("unknown word event approved: %+v", ev)
	}

	// Expired: denied by timeout, the event is sent.
	exp := time.Now().Add(1500 * time.Millisecond)
	p4 := ask("perm-4", "Bash", &exp)
	ev = decisionFor("perm-4")
	if ev.Approved || ev.DecidedBy != "timeout" {
		t.Errorf("timeout event = %+v", ev)
	}
	if st, _ := e.bot.GetPermission(ctx, p4.MailID); st.Status != "denied" || st.DecidedVia != "timeout" {
		t.Errorf("expired request = %+v", st)
	}
	_, err = e.alice.Decide(ctx, p4.MailID, client.DecideRequest{Decision: "yes"})
	wantStatus(t, err, http.StatusConflict, "already_decided")

	// "Always" becomes alice's grant (agent + tool + workspace). In this
	// session, which bob shares, it does not apply; in alice's own session
	// with bot in the same directory it does; in carol's it does not. Only
	// alice lists and revokes it.
	p5 := ask("perm-5", "Write", nil)
	if _, err := e.alice.Decide(ctx, p5.MailID, client.DecideRequest{Decision: "一直同意"}); err != nil {
		t.Fatal(err)
	}
	if ev := decisionFor("perm-5"); !ev.Approved || !ev.Always {
		t.Errorf("always event = %+v", ev)
	}
	if gl, err := e.bot.Grants(ctx, sent.SessionID, "Write"); err != nil || len(gl.Grants) != 0 {
		t.Errorf("grants in a session with two people = %+v, %v", gl, err)
	}
	solo := func(who *client.Client) string {
		t.Helper()
		r, err := who.MeSend(ctx, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "alone", Body: "x"})
		if err != nil {
			t.Fatal(err)
		}
		return r.SessionID
	}
	aliceAlone := solo(e.alice)
	gl, err := e.bot.Grants(ctx, aliceAlone, "Write")
	if err != nil || len(gl.Grants) != 1 || gl.Grants[0].GrantedBy != "alice" || gl.Grants[0].Scope != "/work/proj" {
		t.Fatalf("grants in alice's own session = %+v, %v", gl, err)
	}
	if theirs, err := e.bot.Grants(ctx, solo(e.carol), "Write"); err != nil || len(theirs.Grants) != 0 {
		t.Errorf("alice's grant reaches carol's session: %+v, %v", theirs, err)
	}
	_, err = e.bot.Grants(ctx, "", "Write")
	wantStatus(t, err, http.StatusBadRequest, "")
	for _, other := range []*client.Client{e.bob, e.carol} {
		if mine, _ := other.MeGrants(ctx); len(mine.Grants) != 0 {
			t.Errorf("a person who did not give it lists %d grants", len(mine.Grants))
		}
		wantStatus(t, other.MeDeleteGrant(ctx, gl.Grants[0].GrantID), http.StatusNotFound, "grant_not_found")
	}
	if mine, _ := e.alice.MeGrants(ctx); len(mine.Grants) != 1 {
		t.Errorf("alice lists %d grants", len(mine.Grants))
	}
	if err := e.alice.MeDeleteGrant(ctx, gl.Grants[0].GrantID); err != nil {
		t.Fatal(err)
	}
	if gl, _ := e.bot.Grants(ctx, aliceAlone, ""); len(gl.Grants) != 0 {
		t.Errorf("grant still there after revoking: %+v", gl)
	}

	// Nobody to decide: 409 with error and suggestion; nothing stored.
	hs, err := e.bot.SendMail(ctx, client.SendMailRequest{To: "helper@/work/lib.new", Subject: "help", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.bot.RequestPermission(ctx, client.PermissionRequest{Question: "q", SessionID: hs.SessionID, RelayKey: "perm-none"})
	ae = wantStatus(t, err, http.StatusConflict, "no_person_to_decide")
	if ae.Body.Error == "" || ae.Body.Suggestion == "" {
		t.Errorf("409 body = %+v", ae.Body)
	}
	// Bad input names its field; a stranger's view is a 404.
	_, err = e.bot.RequestPermission(ctx, client.PermissionRequest{SessionID: sent.SessionID, RelayKey: "perm-bad"})
	if ae := wantStatus(t, err, http.StatusBadRequest, ""); ae.Body.Field != "question" {
		t.Errorf("field = %q", ae.Body.Field)
	}
	_, err = e.helper.GetPermission(ctx, p1.MailID)
	wantStatus(t, err, http.StatusNotFound, "permission_not_found")
	_, err = e.carol.Decide(ctx, p3.MailID, client.DecideRequest{Decision: "yes"})
	wantStatus(t, err, http.StatusNotFound, "permission_not_found")
	if l, _ := e.alice.MePermissions(ctx, "all"); len(l.Permissions) != 5 {
		t.Errorf("alice lists %d permission requests, want 5", len(l.Permissions))
	}
}

// --------------------------------------------------------------- attachments

// countFiles counts regular files under dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// rawUpload posts a multipart body built by fill with the person's cookie
// and CSRF token and answers the status.
func rawUpload(t *testing.T, c *client.Client, contentType string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest("POST", c.BaseURL()+"/api/v1/me/attachments", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-CSRF-Token", c.CSRFToken())
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func testAttachments(t *testing.T) {
	const limit = 64 << 10
	dataDir := t.TempDir()
	e := newPeopleAndAgents(t, startGatewayWithFlags(t, dataDir, storetest.DatabaseURL(t), fmt.Sprintf("AGENTMAIL_MAX_ATTACHMENT_BYTES=%d", limit)))
	ctx := e.ctx
	store := filepath.Join(dataDir, "attachments")
	content := bytes.Repeat([]byte("attachment line\n"), 100)

	a1, err := e.alice.MeUploadAttachment(ctx, "notes.txt", bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := e.alice.MeUploadAttachment(ctx, "copy.txt", bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if a1.AttachmentID == a2.AttachmentID || a1.SHA256 != a2.SHA256 || a1.Size != int64(len(content)) {
		t.Fatalf("uploads = %+v / %+v", a1, a2)
	}
	if n := countFiles(t, store); n != 1 {
		t.Fatalf("%d files in the attachment store after two uploads of one content, want 1", n)
	}

	// Over the limit: 413 and nothing more on disk (temporary files included).
	_, err = e.alice.MeUploadAttachment(ctx, "big.bin", bytes.NewReader(make([]byte, limit+1)))
	wantStatus(t, err, http.StatusRequestEntityTooLarge, "attachment_too_large")
	_, err = e.bot.UploadAttachment(ctx, "huge.bin", io.LimitReader(zeroReader{}, 10*limit))
	wantStatus(t, err, http.StatusRequestEntityTooLarge, "")
	if n := countFiles(t, store); n != 1 {
		t.Fatalf("%d files in the attachment store after refused uploads, want 1", n)
	}
	// Exactly the limit is accepted.
	if _, err := e.bot.UploadAttachment(ctx, "edge.bin", bytes.NewReader(make([]byte, limit))); err != nil {
		t.Fatalf("an upload of exactly the limit: %v", err)
	}

	// Bad bodies: not multipart, no field "file".
	if st := rawUpload(t, e.alice, "application/json", []byte(`{}`)); st != http.StatusBadRequest {
		t.Errorf("non-multipart upload: %d", st)
	}
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("other", "x")
	mw.Close()
	if st := rawUpload(t, e.alice, mw.FormDataContentType(), mp.Bytes()); st != http.StatusBadRequest {
		t.Errorf("upload without field file: %d", st)
	}

	// Only the uploader's own attachments can be sent.
	_, err = e.bob.MeSend(ctx, client.SendMailRequest{To: "alice", Subject: "s", Body: "b", AttachmentIDs: []string{a1.AttachmentID}})
	if ae := wantStatus(t, err, http.StatusBadRequest, ""); ae.Body.Field != "attachment_ids" {
		t.Errorf("field = %q", ae.Body.Field)
	}
	// Before it is sent only the uploader can fetch it.
	_, _, err = e.bob.MeDownloadAttachment(ctx, a1.AttachmentID)
	wantStatus(t, err, http.StatusNotFound, "attachment_not_found")

	evil, err := e.alice.MeUploadAttachment(ctx, `..\..\evil"name.html`, strings.NewReader("<script>alert(1)</script>"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/proj.new", Cc: "bob", Subject: "files", Body: "see attached",
		AttachmentIDs: []string{a1.AttachmentID, evil.AttachmentID}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.bot.GetMail(ctx, m.MailID)
	if err != nil || len(got.Attachments) != 2 || got.Attachments[0].Filename != "notes.txt" {
		t.Fatalf("mail attachments = %+v, %v", got, err)
	}

	// Download by a participant: the bytes, octet-stream, attachment, nosniff.
	rc, meta, err := e.bob.MeDownloadAttachment(ctx, a1.AttachmentID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(body, content) || meta.Filename != "notes.txt" || meta.ContentType != "application/octet-stream" {
		t.Errorf("download: %d bytes, meta %+v", len(body), meta)
	}
	for _, id := range []string{evil.AttachmentID} {
		req, _ := http.NewRequest("GET", e.g.URL+"/api/v1/attachments/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+e.botKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != 200 || h.Get("Content-Type") != "application/octet-stream" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("download headers: %d %v", resp.StatusCode, h)
		}
		disp, params, err := mime.ParseMediaType(h.Get("Content-Disposition"))
		if err != nil || disp != "attachment" || params["filename"] != "evilname.html" {
			t.Errorf("Content-Disposition %q → %q %v %v", h.Get("Content-Disposition"), disp, params, err)
		}
	}
	// Strangers: a person and an agent outside the mail.
	_, _, err = e.carol.MeDownloadAttachment(ctx, a1.AttachmentID)
	wantStatus(t, err, http.StatusNotFound, "attachment_not_found")
	_, _, err = e.helper.DownloadAttachment(ctx, a1.AttachmentID)
	wantStatus(t, err, http.StatusNotFound, "attachment_not_found")
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// --------------------------------------------------------------- reminders

func testReminderAcrossRestart(t *testing.T) {
	dataDir, dbURL := t.TempDir(), storetest.DatabaseURL(t)
	g1 := startGatewayWithFlags(t, dataDir, dbURL)
	e := newPeopleAndAgents(t, g1)
	ctx := e.ctx
	now := time.Now()
	first := now.Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	secondAt := now.Add(6 * time.Second)
	s1, err := e.alice.MeCreateSchedule(ctx, client.CreateScheduleRequest{Title: "first", EventTime: first, RemindBeforeMinutes: "0"})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := e.alice.MeCreateSchedule(ctx, client.CreateScheduleRequest{Title: "second", Body: "while down",
		EventTime: secondAt.UTC().Format(time.RFC3339Nano), Recipients: "alice，bob"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s1.Recipients, ",") != "alice" || strings.Join(s2.Recipients, ",") != "alice,bob" {
		t.Errorf("recipients = %v / %v", s1.Recipients, s2.Recipients)
	}
	// Bad input: natural language is refused with the server's time.
	_, err = e.alice.MeCreateSchedule(ctx, client.CreateScheduleRequest{Title: "x", EventTime: "tomorrow at nine"})
	if ae := wantStatus(t, err, http.StatusBadRequest, ""); ae.Body.Field != "event_time" || !strings.Contains(ae.Body.Error, "current time") {
		t.Errorf("natural language: %+v", ae.Body)
	}

	reminders := func(c *client.Client, subject string) int {
		t.Helper()
		no := false
		l, err := c.MeInbox(ctx, client.InboxQuery{Status: "all", Limit: 100, MarkRead: &no})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range l.Mails {
			if m.MailType == client.MailTypeReminder && m.Subject == subject {
				n++
			}
		}
		return n
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(waitLimit)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("the first reminder", func() bool { return reminders(e.alice, "Reminder: first") >= 1 })
	g1.Shutdown(t)
	// The second falls due while no gateway runs.
	waitFor("the second reminder's time to pass", func() bool { return time.Now().After(secondAt) })

	g2 := startGatewayWithFlags(t, dataDir, dbURL)
	for _, c := range []*client.Client{e.alice, e.bob} {
		c2 := client.New(g2.URL, client.WithHTTPClient(CheckedHTTPClient(t)), client.WithCookieJar())
		name := "alice"
		if c == e.bob {
			name = "bob"
		}
		if _, err := c2.Login(ctx, client.LoginRequest{Username: name, Password: name + "-password"}); err != nil {
			t.Fatal(err)
		}
		if name == "alice" {
			e.alice = c2
		} else {
			e.bob = c2
		}
	}
	waitFor("the second reminder after the restart", func() bool { return reminders(e.bob, "Reminder: second") >= 1 })
	// The second reminder went out after the first was due, so a second
	// copy of the first would be there by now.
	if n := reminders(e.alice, "Reminder: first"); n != 1 {
		t.Errorf("%d copies of the first reminder, want 1", n)
	}
	if n := reminders(e.alice, "Reminder: second"); n != 1 {
		t.Errorf("%d copies of the second reminder for alice, want 1", n)
	}
	l, err := e.alice.MeListSchedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Schedules {
		if s.SentAt == nil {
			t.Errorf("schedule %q not marked sent", s.Title)
		}
	}
	// Another restart sends nothing again.
	g2.Shutdown(t)
	g3 := startGatewayWithFlags(t, dataDir, dbURL)
	c3 := client.New(g3.URL, client.WithHTTPClient(CheckedHTTPClient(t)), client.WithCookieJar())
	if _, err := c3.Login(ctx, client.LoginRequest{Username: "alice", Password: "alice-password"}); err != nil {
		t.Fatal(err)
	}
	// A third schedule due soon proves g3's sweeps have run.
	if _, err := c3.MeCreateSchedule(ctx, client.CreateScheduleRequest{Title: "third",
		EventTime: time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)}); err != nil {
		t.Fatal(err)
	}
	waitFor("the third reminder", func() bool { return reminders(c3, "Reminder: third") == 1 })
	if a, b := reminders(c3, "Reminder: first"), reminders(c3, "Reminder: second"); a != 1 || b != 1 {
		t.Errorf("after another restart: first %d, second %d; want 1 and 1", a, b)
	}
}

// ------------------------------------------------------ model scope, discovery

func testModelScopeAndDiscovery(t *testing.T) {
	e := newPeopleAndAgents(t, startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t)))
	ctx := e.ctx
	hb, err := e.bot.Heartbeat(ctx, client.HeartbeatRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !hb.ModelsUnrestricted || len(hb.AllowedModels) != 0 {
		t.Errorf("unset scope: heartbeat %+v, want unrestricted", hb)
	}
	list := []client.ModelRef{{Provider: "zeta", Model: "m-3"}, {Provider: "alpha", Model: "m-1"}, {Provider: "mid", Model: "m-2"}}
	set, err := e.admin.AdminSetAgentModels(ctx, "bot", client.AllowedModels{AllowedModels: list})
	if err != nil || set.ModelsUnrestricted || !reflect.DeepEqual(set.AllowedModels, list) {
		t.Fatalf("PUT models = %+v, %v", set, err)
	}
	hb, _ = e.bot.Heartbeat(ctx, client.HeartbeatRequest{})
	if hb.ModelsUnrestricted || !reflect.DeepEqual(hb.AllowedModels, list) {
		t.Errorf("heartbeat after PUT = %+v", hb)
	}
	am, _ := e.bot.AllowedModels(ctx)
	if am.ModelsUnrestricted || !reflect.DeepEqual(am.AllowedModels, list) {
		t.Errorf("GET /agent/models/allowed = %+v", am)
	}
	d, err := e.admin.AdminGetAgentModels(ctx, "bot")
	if err != nil || !reflect.DeepEqual(d.AllowedModels, list) {
		t.Errorf("GET /admin/agents/bot/models = %+v, %v", d, err)
	}
	// Bad input changes nothing.
	_, err = e.admin.AdminSetAgentModels(ctx, "bot", client.AllowedModels{ModelsUnrestricted: true, AllowedModels: list})
	wantStatus(t, err, http.StatusBadRequest, "")
	// No list and no models_unrestricted would silently allow nothing: 400.
	_, err = e.admin.AdminSetAgentModels(ctx, "bot", client.AllowedModels{})
	if ae := wantStatus(t, err, http.StatusBadRequest, ""); ae.Body.Field != "allowed_models" {
		t.Errorf("field = %q", ae.Body.Field)
	}
	_, err = e.admin.AdminSetAgentModels(ctx, "ghost", client.AllowedModels{ModelsUnrestricted: true})
	wantStatus(t, err, http.StatusNotFound, "agent_not_found")
	_, err = e.alice.AdminSetAgentModels(ctx, "bot", client.AllowedModels{ModelsUnrestricted: true})
	wantStatus(t, err, http.StatusForbidden, "")
	if am, _ := e.bot.AllowedModels(ctx); !reflect.DeepEqual(am.AllowedModels, list) {
		t.Errorf("refused changes changed the scope: %+v", am)
	}
	if set, err := e.admin.AdminSetAgentModels(ctx, "bot", client.AllowedModels{ModelsUnrestricted: true}); err != nil || !set.ModelsUnrestricted {
		t.Errorf("back to unrestricted = %+v, %v", set, err)
	}

	// Mirror: no slug and duplicate slugs are dropped.
	mirror := []client.PlatformSession{
		{PlatformID: "s1", Workspace: "/work/other", Slug: "witty-planet", Title: "重构导入路径"},
		{PlatformID: "s2", Workspace: "/work/other", Slug: ""},
	}
	hb, err = e.bot.Heartbeat(ctx, client.HeartbeatRequest{PlatformSessions: &mirror})
	if err != nil || hb.PlatformSessionsSynced != 1 {
		t.Errorf("mirror heartbeat = %+v, %v", hb, err)
	}
	sent, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/proj.new", Subject: "discovery", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := e.alice.Suggest(ctx, "bot", 10)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, s := range sl.Suggestions {
		found[s.Address] = true
	}
	// A mirrored platform session bound to no mail session is offered to
	// admins only (issue 12).
	if !found["bot@/work/proj."+sent.SessionAlias] || found["bot@/work/other.witty-planet"] {
		t.Errorf("suggestions = %+v", sl.Suggestions)
	}
	if sl, err := e.admin.Suggest(ctx, "witty", 10); err != nil || len(sl.Suggestions) != 1 || sl.Suggestions[0].Address != "bot@/work/other.witty-planet" {
		t.Errorf("the admin's suggestions = %+v, %v", sl, err)
	}
	res, err := e.alice.Resolve(ctx, "bot@/work/proj")
	if err != nil || !res.Exists || res.SessionID != sent.SessionID {
		t.Errorf("resolve = %+v, %v", res, err)
	}
	_, err = e.alice.Resolve(ctx, "bot@/work/proj.no-such-alias")
	wantStatus(t, err, http.StatusNotFound, "alias_not_found")
	pl, err := e.bot.Participants(ctx, sent.SessionID)
	if err != nil || len(pl.Participants) != 2 {
		t.Errorf("participants = %+v, %v", pl, err)
	}
	_, err = e.helper.Participants(ctx, sent.SessionID)
	wantStatus(t, err, http.StatusNotFound, "")
	cl, err := e.bot.Contacts(ctx)
	if err != nil || len(cl.Contacts) != 6 { // admin, alice, bob, carol, bot, helper
		t.Errorf("contacts = %+v, %v", cl, err)
	}
}

// testRemindersWithReplicas runs three gateways on one PostgreSQL database
// at once: every reminder goes out exactly once (SQLite allows only one
// gateway per database, so there it is skipped).
func testRemindersWithReplicas(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("replicas need PostgreSQL (AGENTMAIL_TEST_DATABASE=postgres)")
	}
	dbURL := storetest.DatabaseURL(t)
	g1 := startGatewayWithFlags(t, t.TempDir(), dbURL)
	e := newPeopleAndAgents(t, g1)
	startGatewayWithFlags(t, t.TempDir(), dbURL)
	startGatewayWithFlags(t, t.TempDir(), dbURL)
	ctx := e.ctx
	const n = 10
	due := time.Now().Add(2 * time.Second)
	for i := 0; i < n; i++ {
		if _, err := e.alice.MeCreateSchedule(ctx, client.CreateScheduleRequest{Title: fmt.Sprintf("r%d", i),
			EventTime: due.Add(time.Duration(i) * 100 * time.Millisecond).UTC().Format(time.RFC3339Nano), Recipients: "bob"}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() map[string]int {
		no := false
		l, err := e.bob.MeInbox(ctx, client.InboxQuery{Status: "all", Limit: 100, MarkRead: &no})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, m := range l.Mails {
			if m.MailType == client.MailTypeReminder {
				out[m.Subject]++
			}
		}
		return out
	}
	deadline := time.Now().Add(waitLimit)
	for len(count()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("reminders after %s: %v", waitLimit, count())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Every schedule is marked sent, so no later sweep can add a copy.
	l, err := e.alice.MeListSchedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Schedules {
		if s.SentAt == nil {
			t.Errorf("schedule %s not marked sent", s.Title)
		}
	}
	for subject, k := range count() {
		if k != 1 {
			t.Errorf("%s delivered %d times, want once", subject, k)
		}
	}
}
