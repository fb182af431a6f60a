package main

import (
	"runtime/debug"
	"testing"
)

// A development build names its revision, commit time and a modified tree
// (the text --version prints and the bridge's heartbeat carries as
// bridge_version); one without a VCS stamp says that none was recorded.
func TestVersionOfSettings(t *testing.T) {
	cases := []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "304a166e0f9b2c7d8e1a"}, {Key: "vcs.time", Value: "2026-12-02T13:00:42Z"},
			{Key: "vcs.modified", Value: "true"}}, "devel 304a166 2026-12-02T13:00Z (modified)"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "304a166e0f9b"}, {Key: "vcs.time", Value: "2026-12-02T14:00:00+01:00"},
			{Key: "vcs.modified", Value: "false"}}, "devel 304a166 2026-12-02T13:00Z"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}, "devel abc"},
		{nil, "devel (no revision recorded in this build)"},
	}
	for _, c := range cases {
		if got := versionOfSettings(c.settings); got != c.want {
			t.Errorf("versionOfSettings(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}
