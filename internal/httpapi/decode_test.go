package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

const dshToken = "test-key-dsh-0123456789abcdef"

// errorBody decodes an error answer.
func errorBody(t *testing.T, body string) client.ErrorBody {
	t.Helper()
	var b client.ErrorBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return b
}

// TestUnknownFieldIsRefusedNamingIt checks that a field the request type
// does not have is a 400 unknown_field naming it, and the request does
// nothing: {"read": false} on /mail/read used to mark the mails read.
func TestUnknownFieldIsRefusedNamingIt(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	status, body, _ := e.raw("POST", "/api/v1/mail/read", dshToken, fmt.Sprintf(`{"mail_ids":[%q],"read":false}`, r.MailID))
	eb := errorBody(t, body)
	if status != 400 || eb.Code != "unknown_field" || eb.Field != "read" || !strings.Contains(eb.Suggestion, "docs/API.md") {
		t.Fatalf("unknown field: %d %s", status, body)
	}
	no := false
	l, err := a.Inbox(e.ctx(), client.InboxQuery{Status: "unread", MarkRead: &no})
	if err != nil || len(l.Mails) != 1 {
		t.Fatalf("the refused request marked the mail read: %+v, %v", l, err)
	}
	// Nested objects are strict too.
	status, body, _ = e.raw("POST", "/api/v1/agent/register", dshToken, `{"name":"dsh","platform":"x","workspaces":[{"name":"w","path":"/w","kind":"git"}]}`)
	if eb := errorBody(t, body); status != 400 || eb.Code != "unknown_field" || eb.Field != "kind" {
		t.Fatalf("nested unknown field: %d %s", status, body)
	}
}

// TestDecodeErrorsNameTheField checks the field of decoding errors: a time
// that is not RFC 3339 (or not a string) is 400 wrong_type naming it, and a
// body over the limit is 413 with field body (the JSON body and a mail's
// body alike).
func TestDecodeErrorsNameTheField(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	r, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, exp := range []string{`"tomorrow"`, `5`, `"2026-13-45T00:00:00Z"`} {
		status, body, _ := e.raw("POST", "/api/v1/permission/request", dshToken,
			fmt.Sprintf(`{"question":"q","session_id":%q,"relay_key":"k","expires_at":%s}`, r.SessionID, exp))
		if eb := errorBody(t, body); status != 400 || eb.Code != "wrong_type" || eb.Field != "expires_at" {
			t.Errorf("expires_at %s: %d %s", exp, status, body)
		}
	}
	big := strings.Repeat("x", 5<<20)
	status, body, _ := e.raw("POST", "/api/v1/mail/send", dshToken, `{"to":"admin","subject":"s","body":"`+big+`"}`)
	if eb := errorBody(t, body); status != 413 || eb.Field != "body" {
		t.Errorf("JSON body over the limit: %d %s", status, body)
	}
	mailBody := strings.Repeat("x", 2<<20)
	status, body, _ = e.raw("POST", "/api/v1/mail/send", dshToken, `{"to":"admin","subject":"s","body":"`+mailBody+`","reply_to":"`+r.MailID+`"}`)
	if eb := errorBody(t, body); status != 413 || eb.Field != "body" || eb.Code != "body_too_large" {
		t.Errorf("mail body over the limit: %d %.300s", status, body)
	}
}

// TestScheduleTypoAliasNamesRecipients checks that an unknown alias in a
// schedule's recipients is 404 alias_not_found with field recipients.
func TestScheduleTypoAliasNamesRecipients(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	when := e.clock.Now().Add(48 * 60 * 60 * 1e9).Format("2006-01-02T15:04:05Z07:00")
	status, body, _ := e.raw("POST", "/api/v1/schedules", dshToken,
		fmt.Sprintf(`{"title":"standup","event_time":%q,"recipients":"dsh@/w.no-such-alias"}`, when))
	if eb := errorBody(t, body); status != 404 || eb.Code != "alias_not_found" || eb.Field != "recipients" {
		t.Fatalf("typo alias in recipients: %d %s", status, body)
	}
	if n := e.count("schedules"); n != 0 {
		t.Fatalf("%d schedules stored", n)
	}
}
