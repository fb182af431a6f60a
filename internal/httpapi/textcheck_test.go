package httpapi

import (
	"testing"

	"github.com/agentmail/agentmail/client"
)

func TestNulFieldNamesTheJSONPathOfTheFirstNUL(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{&client.SendMailRequest{To: "dsh", Subject: "ok", Body: "fine"}, ""},
		{&client.SendMailRequest{To: "dsh", Subject: "ok", Body: "bin\x00ary"}, "body"},
		{&client.PermissionRequest{Question: "q", ToolInput: map[string]any{"command": "ls", "args": []any{"a", "b\x00"}}}, "tool_input.args[1]"},
		{&client.HeartbeatRequest{PlatformSessions: &[]client.PlatformSession{{PlatformID: "p1", Title: "t\x00"}}}, "platform_sessions[0].title"},
		{&map[string]any{"k\x00": "v"}, "k\x00"},
		{"plain\x00", "body"},
	} {
		if got := nulField(c.v); got != c.want {
			t.Errorf("nulField(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}
