package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// envOf is a getenv over a fixed map.
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestReadServeEnvTakesEachSetting checks that every variable reaches its
// setting (spaces trimmed) and that an empty environment leaves the zero
// values, which the parts turn into their defaults.
func TestReadServeEnvTakesEachSetting(t *testing.T) {
	got, err := readServeEnv(envOf(nil))
	if err != nil || !reflect.DeepEqual(got, serveEnvSettings{}) {
		t.Fatalf("empty environment: %+v, %v; want zero settings", got, err)
	}
	got, err = readServeEnv(envOf(map[string]string{
		"AGENTMAIL_MAX_ATTACHMENT_BYTES":      " 1024 ",
		"AGENTMAIL_ATTACHMENT_DIR":            " /srv/att ",
		"AGENTMAIL_SWEEP_INTERVAL":            "100ms",
		"AGENTMAIL_ATTACHMENT_SWEEP_INTERVAL": "2m",
		"AGENTMAIL_SCHEDULE_LIMIT":            "7",
		"AGENTMAIL_MAX_SESSIONS_PER_OWNER":    "500",
		"AGENTMAIL_MCP_HOSTS":                 " Mail.Example.org, ,agentmail.internal.lan ",
	}))
	want := serveEnvSettings{maxAttachmentBytes: 1024, attachmentDir: "/srv/att", sweepInterval: 100 * time.Millisecond,
		attachmentSweepInterval: 2 * time.Minute, scheduleLimit: 7, maxSessionsPerOwner: 500, mcpHosts: []string{"mail.example.org", "agentmail.internal.lan"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
}

// TestReadServeEnvRefusesBadValues checks that a value out of range is an
// error naming the variable, its value and what is wanted.
func TestReadServeEnvRefusesBadValues(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"AGENTMAIL_MAX_ATTACHMENT_BYTES", "0", "want a positive number of bytes"},
		{"AGENTMAIL_MAX_SESSIONS_PER_OWNER", "-3", "want a positive number"},
		{"AGENTMAIL_MAX_ATTACHMENT_BYTES", "25MB", "want a positive number of bytes"},
		{"AGENTMAIL_SWEEP_INTERVAL", "5", "want a positive duration such as 5s"},
		{"AGENTMAIL_ATTACHMENT_SWEEP_INTERVAL", "-1m", "want a positive duration such as 5s"},
		{"AGENTMAIL_SCHEDULE_LIMIT", "none", "want a positive number"},
	} {
		_, err := readServeEnv(envOf(map[string]string{c.name: c.value}))
		if err == nil || !strings.Contains(err.Error(), c.name+`="`+c.value+`"`) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: got %v, want an error naming it and %q", c.name, c.value, err, c.want)
		}
	}
}
