package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// The caps of the free channels (issue 12, docs/API.md "Limits") over the
// real `agentmail serve`: one summary relay per received mail, pending
// permission requests per session, unsent uploads per uploader and event
// streams per key. The quota and the stream cap are set small through the
// environment; the pending cap keeps its default of 10.

const (
	capsQuota   = 4096
	capsStreams = 3
)

func TestFreeChannelCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	g := startGatewayWithFlags(t, t.TempDir(), storetest.DatabaseURL(t),
		fmt.Sprintf("AGENTMAIL_ATTACHMENT_QUOTA_BYTES=%d", capsQuota), fmt.Sprintf("AGENTMAIL_MAX_STREAMS_PER_KEY=%d", capsStreams))
	e := newPeopleAndAgents(t, g)
	t.Run("OneSummaryPerReceivedMail", func(t *testing.T) { testCapsRelays(t, e) })
	t.Run("PendingPermissionsPerSession", func(t *testing.T) { testCapsPending(t, e) })
	t.Run("UnsentUploadQuota", func(t *testing.T) { testCapsUploads(t, e) })
	t.Run("StreamsPerKey", func(t *testing.T) { testCapsStreams(t, e) })
}

// testCapsRelays: with the session budget spent, 300 summary relays with
// made-up relay keys bound to one received mail store one mail; the others
// are 409 relay_already_answered. The same key stays idempotent, the
// failure report has its own single slot, and the next received mail has
// its own summary.
func testCapsRelays(t *testing.T, e *peopleAndAgents) {
	ctx := e.ctx
	one := 1
	start, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/relays.new", Subject: "tidy up", Body: "please", RoundBudget: &one})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.bot.SendMail(ctx, client.SendMailRequest{To: "alice", ReplyTo: start.MailID, Body: "on it"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.bot.SendMail(ctx, client.SendMailRequest{To: "alice", ReplyTo: start.MailID, Body: "one more"})
	wantStatus(t, err, http.StatusForbidden, "budget_exhausted")

	summary := func(replyTo, key string) (*client.SendMailResponse, error) {
		return e.bot.SendMail(ctx, client.SendMailRequest{To: "alice", ReplyTo: replyTo, Body: "summary " + key,
			Relay: client.RelaySummary, RelayKey: key})
	}
	first, err := summary(start.MailID, "made-up-0")
	if err != nil || first.Status != "sent" {
		t.Fatalf("first summary: %+v, %v", first, err)
	}
	sent := 1
	for i := 1; i < 300; i++ {
		r, err := summary(start.MailID, fmt.Sprintf("made-up-%d", i))
		if err == nil {
			sent++
			t.Errorf("summary relay %d answered %+v; want 409", i, r)
			continue
		}
		ae := wantStatus(t, err, http.StatusConflict, "relay_already_answered")
		if i == 1 && (!strings.Contains(ae.Body.Error, first.MailID) || ae.Body.Suggestion == "") {
			t.Errorf("the 409 should name the mail that answered and say what to do: %+v", ae.Body)
		}
	}
	if sent != 1 {
		t.Fatalf("%d of 300 summary relays bound to one received mail were sent, want 1", sent)
	}
	dup, err := summary(start.MailID, "made-up-0")
	if err != nil || dup.Status != "duplicate_relay" || dup.MailID != first.MailID {
		t.Fatalf("the first relay_key again: %+v, %v", dup, err)
	}
	failure := func(key string) (*client.SendMailResponse, error) {
		return e.bot.SendMail(ctx, client.SendMailRequest{To: "alice", ReplyTo: start.MailID, Subject: "处理失败: tidy up", Body: "failed",
			Relay: client.RelaySummary, RelayKey: key, MailType: client.MailTypeFailureReport})
	}
	if r, err := failure("model-failure:" + start.MailID); err != nil || r.Status != "sent" {
		t.Fatalf("failure report besides the summary: %+v, %v", r, err)
	}
	_, err = failure("model-failure:other")
	wantStatus(t, err, http.StatusConflict, "relay_already_answered")

	no := false
	inbox, err := e.alice.MeInbox(ctx, client.InboxQuery{Status: "all", Limit: 100, MarkRead: &no})
	if err != nil {
		t.Fatal(err)
	}
	relays := 0
	for _, m := range inbox.Mails {
		if m.SessionID == start.SessionID && m.Relay == client.RelaySummary {
			relays++
		}
	}
	if relays != 2 {
		t.Fatalf("alice received %d relay mails in the session, want 2 (one summary, one failure report)", relays)
	}

	// alice's next mail is answered on its own.
	next, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/relays", ReplyTo: first.MailID, Body: "thanks, and the docs?"})
	if err != nil || next.SessionID != start.SessionID {
		t.Fatalf("follow-up: %+v, %v", next, err)
	}
	if r, err := summary(next.MailID, "made-up-1"); err != nil || r.Status != "sent" {
		t.Fatalf("summary of the next received mail: %+v, %v", r, err)
	}
}

// testCapsPending: ten permission requests wait in one session; the 11th
// is a 429 that says so (and stores no mail); a decision frees a place.
func testCapsPending(t *testing.T, e *peopleAndAgents) {
	ctx := e.ctx
	sess, err := e.alice.MeSend(ctx, client.SendMailRequest{To: "bot@/work/pending.new", Subject: "deploy", Body: "go"})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(i int) (*client.Permission, error) {
		return e.bot.RequestPermission(ctx, client.PermissionRequest{Question: fmt.Sprintf("Run step %d?", i), SessionID: sess.SessionID,
			RelayKey: fmt.Sprintf("pending-%d", i), Tool: "Bash", ToolInput: map[string]any{"command": fmt.Sprintf("step %d", i)}})
	}
	var firstReq *client.Permission
	for i := 1; i <= 10; i++ {
		p, err := ask(i)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if i == 1 {
			firstReq = p
		}
	}
	_, err = ask(11)
	ae := wantStatus(t, err, http.StatusTooManyRequests, "too_many_pending_permissions")
	if !strings.Contains(ae.Body.Error, "10") || ae.Body.Suggestion == "" || ae.Body.RetryAfterSeconds <= 0 {
		t.Fatalf("the 429 should name the limit, say what to do and when to retry: %+v", ae.Body)
	}
	list, err := e.alice.MePermissions(ctx, "pending")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.Permissions); n != 10 {
		t.Fatalf("alice has %d pending requests, want 10", n)
	}
	// A replay of a waiting request is still its duplicate, not a 429.
	if p, err := ask(1); err != nil || !p.Duplicate {
		t.Fatalf("replay at the cap: %+v, %v", p, err)
	}
	if _, err := e.alice.Decide(ctx, firstReq.MailID, client.DecideRequest{Decision: "deny"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(11); err != nil {
		t.Fatalf("request after a decision freed a place: %v", err)
	}
}

// testCapsUploads: a person's unsent uploads stop at the quota (413
// attachment_quota_exceeded); sending them frees it; an agent has its own.
func testCapsUploads(t *testing.T, e *peopleAndAgents) {
	ctx := e.ctx
	a1, err := e.carol.MeUploadAttachment(ctx, "a.bin", bytes.NewReader(make([]byte, 3000)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.carol.MeUploadAttachment(ctx, "b.bin", bytes.NewReader(make([]byte, 2000)))
	ae := wantStatus(t, err, http.StatusRequestEntityTooLarge, "attachment_quota_exceeded")
	if quota := fmt.Sprintf("the quota is %d KiB", capsQuota/1024); !strings.Contains(ae.Body.Error, quota) || ae.Body.Suggestion == "" {
		t.Fatalf("the 413 should name the quota (%q, in the unit of the sizes beside it) and say what to do: %+v", quota, ae.Body)
	}
	a2, err := e.carol.MeUploadAttachment(ctx, "c.bin", bytes.NewReader(make([]byte, capsQuota-3000)))
	if err != nil {
		t.Fatalf("an upload up to exactly the quota: %v", err)
	}
	_, err = e.carol.MeUploadAttachment(ctx, "d.bin", bytes.NewReader([]byte("x")))
	wantStatus(t, err, http.StatusRequestEntityTooLarge, "attachment_quota_exceeded")
	// The agent's quota is its own.
	if _, err := e.helper.UploadAttachment(ctx, "h.bin", bytes.NewReader(make([]byte, 3000))); err != nil {
		t.Fatalf("another uploader's upload: %v", err)
	}
	// Sent attachments no longer count.
	if _, err := e.carol.MeSend(ctx, client.SendMailRequest{To: "alice", Subject: "files", Body: "attached",
		AttachmentIDs: []string{a1.AttachmentID, a2.AttachmentID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.carol.MeUploadAttachment(ctx, "b.bin", bytes.NewReader(make([]byte, 2000))); err != nil {
		t.Fatalf("an upload after the unsent ones were sent: %v", err)
	}
}

// testCapsStreams: a key holds capsStreams event streams; the next is a
// 429 too_many_streams until one closes. A cookie session is capped the
// same way.
func testCapsStreams(t *testing.T, e *peopleAndAgents) {
	ctx := e.ctx
	for _, c := range []struct {
		name   string
		cl     *client.Client
		people bool
	}{{"agent key", e.bot, false}, {"cookie session", e.bob, true}} {
		var open []*client.Stream
		for i := 0; i < capsStreams; i++ {
			s, err := c.cl.Stream(ctx, client.StreamOptions{People: c.people})
			if err != nil {
				t.Fatalf("%s: stream %d: %v", c.name, i+1, err)
			}
			open = append(open, s)
		}
		_, err := c.cl.Stream(ctx, client.StreamOptions{People: c.people})
		ae := wantStatus(t, err, http.StatusTooManyRequests, "too_many_streams")
		if !strings.Contains(ae.Body.Error, fmt.Sprint(capsStreams)) || ae.Body.Suggestion == "" {
			t.Fatalf("%s: the 429 should name the limit and say what to do: %+v", c.name, ae.Body)
		}
		// A closed stream frees its place once the gateway sees it gone.
		open[0].Close()
		deadline := time.Now().Add(waitLimit)
		for {
			s, err := c.cl.Stream(ctx, client.StreamOptions{People: c.people})
			if err == nil {
				open[0] = s
				break
			}
			wantStatus(t, err, http.StatusTooManyRequests, "too_many_streams")
			if time.Now().After(deadline) {
				t.Fatalf("%s: no stream within %s of closing one", c.name, waitLimit)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, s := range open {
			s.Close()
		}
	}
}
