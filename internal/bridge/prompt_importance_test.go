package bridge

import (
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// The prompt of a turn says when a mail is urgent and when it asks for an
// acknowledgement (issue 21), and says nothing of a normal one.
func TestBuildPromptTellsImportanceAndAcknowledgement(t *testing.T) {
	base := PromptInput{MailID: "m1", From: "alice", Subject: "deploy", ReplyAddress: "alice@.deploy"}
	plain := BuildPrompt(base)
	if strings.Contains(plain, "URGENT") || strings.Contains(plain, "acknowledge_mail") {
		t.Fatalf("a normal mail's prompt mentions urgency or acknowledgement:\n%s", plain)
	}
	urgent := base
	urgent.Importance, urgent.AckRequired = "urgent", true
	p := BuildPrompt(urgent)
	for _, want := range []string{"URGENT", "acknowledge_mail with mail_id m1"} {
		if !strings.Contains(p, want) {
			t.Fatalf("prompt lacks %q:\n%s", want, p)
		}
	}
	if m := incomingFromEvent(client.NewMailEvent{MailID: "m1", Importance: "urgent", AckRequired: true}); m.Importance != "urgent" || !m.AckRequired {
		t.Fatalf("the event's importance is lost: %+v", m)
	}
}
