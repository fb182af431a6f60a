package cli

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

// The person's own sent mail arrives on their stream as new_mail with role
// "from"; watch does not print it as new mail, and shows it with --all.
func TestWatchSkipsOwnSentMailUnlessAll(t *testing.T) {
	ev := client.Event{ID: 5, Type: client.EventNewMail,
		Data: []byte(`{"mail_id":"m9","from_name":"ann","role":"from","subject":"deploy","session_alias":"ship"}`)}
	if got := watchText(langEN, ev, false, map[string]bool{}); got != "" {
		t.Errorf("without --all: %q", got)
	}
	if got := watchText(langEN, ev, true, map[string]bool{}); got != "sent mail m9: deploy  [ship]" {
		t.Errorf("with --all: %q", got)
	}
	in := client.Event{ID: 6, Type: client.EventNewMail,
		Data: []byte(`{"mail_id":"m10","from_name":"claude","role":"to","subject":"done","session_alias":"ship"}`)}
	if got := watchText(langEN, in, false, map[string]bool{}); got != "new mail m10 from claude: done  [ship]" {
		t.Errorf("received mail: %q", got)
	}
}

// A permission request a stop closed (issue 16) is printed as closed, not as
// a person's denial, and offers no decision.
func TestWatchSaysAStopClosedTheRequest(t *testing.T) {
	ev := client.Event{ID: 7, Type: client.EventPermissionDecision,
		Data: []byte(`{"mail_id":"p1","decision":"deny","approved":false,"decided_by":"bob","decided_via":"stop"}`)}
	want := "permission p1 closed: bob stopped the turn it belongs to; nothing of it runs"
	if got := watchText(langEN, ev, false, map[string]bool{}); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := watchText(langZH, ev, false, map[string]bool{}); got != "权限 p1 已关闭：bob 停止了它所在的一轮，它不会运行" {
		t.Errorf("in Chinese: %q", got)
	}
}
