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
