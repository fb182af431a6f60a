package mcptools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolvePath(t *testing.T) {
	root := realDir(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "other"), 0o755))
	must(os.Symlink(filepath.Join(root, "real", "sub"), filepath.Join(root, "abs-link")))
	must(os.Symlink("real/sub", filepath.Join(root, "rel-link")))
	must(os.Symlink("loop-b", filepath.Join(root, "loop-a")))
	must(os.Symlink("loop-a", filepath.Join(root, "loop-b")))
	cases := []struct{ in, want string }{
		{"real/sub", root + "/real/sub"},
		{"./real/./sub/", root + "/real/sub"},
		{"real/sub/../../other", root + "/other"},
		{"abs-link/f.txt", root + "/real/sub/f.txt"},
		{"rel-link/f.txt", root + "/real/sub/f.txt"},
		// ".." after a link goes to the parent of the link's target.
		{"abs-link/..", root + "/real"},
		{"rel-link/../../other", root + "/other"},
		// Components that do not exist are kept, and ".." after them still
		// reaches existing links.
		{"new/dir/file", root + "/new/dir/file"},
		{"new/../abs-link/x", root + "/real/sub/x"},
		{root + "/real/../../" + filepath.Base(root) + "/other", root + "/other"},
	}
	for _, c := range cases {
		got, err := ResolvePath(root, c.in)
		if err != nil || got != c.want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := ResolvePath(root, "loop-a/x"); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("a link loop must be an error, got %v", err)
	}
	if _, err := ResolvePath("relative", "x"); err == nil {
		t.Errorf("a relative base must be an error")
	}
}

func TestProtectedMatchesWholeComponentsOnly(t *testing.T) {
	pp, err := NewProtectedPaths("/", "/etc/systemd")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"/etc/systemd": true, "/etc/systemd/system/x.service": true, "/etc/systemdx": false, "/etc": false} {
		if got := pp.Match(p) != ""; got != want {
			t.Errorf("Match(%q) = %v, want %v", p, got, want)
		}
	}
}

// protectedTricks are paths, relative to the workspace, that all end in the
// protected directory. h.protected is the protected data directory; the
// workspace holds links planted to reach it.
func protectedTricks(t *testing.T, h *harness) map[string]string {
	t.Helper()
	if err := os.Symlink(h.protected, filepath.Join(h.ws, "data-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(h.home, ".ssh"), filepath.Join(h.ws, "ssh-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(h.ws, h.protected)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"absolute":                 filepath.Join(h.protected, "db.sqlite"),
		"dot-dot":                  rel + "/db.sqlite",
		"dot-dot through sub":      "sub/../" + rel + "/./db.sqlite",
		"symlink":                  "data-link/db.sqlite",
		"symlink then nested":      "data-link/new/dir/f",
		"missing dir then dot-dot": "nothing/../data-link/db.sqlite",
		"ssh via symlink":          "ssh-link/authorized_keys",
		"key file":                 filepath.Join(h.home, ".agentmail", "agent.key"),
	}
}

func TestWriteFileRefusesProtectedPathsBeforeAsking(t *testing.T) {
	h := newHarness(t, TierWorkspace)
	h.fg.decide = approveOn(1, "approve") // even an approval would not help
	dbFile := filepath.Join(h.protected, "db.sqlite")
	if err := os.WriteFile(dbFile, []byte("DB"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, p := range protectedTricks(t, h) {
		t.Run(name, func(t *testing.T) {
			h.t = t
			h.mustFail("write_file", map[string]any{"path": p, "content": "evil"}, "protected path")
		})
	}
	h.t = t
	assertContent(t, dbFile, "DB")
	assertContent(t, filepath.Join(h.home, ".agentmail", "agent.key"), "am_secret\n")
	assertAbsent(t, filepath.Join(h.protected, "new"))
	assertAbsent(t, filepath.Join(h.home, ".ssh", "authorized_keys"))
	if n := h.fg.count("POST /api/v1/permission/request"); n != 0 {
		t.Errorf("protected paths reached a person: %d permission requests", n)
	}
}

func TestFullTierStillRefusesProtectedPaths(t *testing.T) {
	h := newHarness(t, TierFull)
	for name, p := range protectedTricks(t, h) {
		t.Run(name, func(t *testing.T) {
			h.t = t
			h.mustFail("write_file", map[string]any{"path": p, "content": "evil"}, "protected path")
		})
	}
	h.t = t
	assertAbsent(t, filepath.Join(h.protected, "db.sqlite"))
	assertAbsent(t, filepath.Join(h.protected, "new"))
	assertContent(t, filepath.Join(h.home, ".agentmail", "agent.key"), "am_secret\n")
}

func TestRunCommandRefusesProtectedWorkingDirectory(t *testing.T) {
	h := newHarness(t, TierFull)
	if err := os.Symlink(h.protected, filepath.Join(h.ws, "data-link")); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{h.protected, "data-link", "data-link/..//" + filepath.Base(h.protected), filepath.Join(h.home, ".ssh")} {
		h.mustFail("run_command", map[string]any{"command": "touch marker", "cwd": cwd}, "protected path")
	}
	assertAbsent(t, filepath.Join(h.protected, "marker"))
	assertAbsent(t, filepath.Join(h.home, ".ssh", "marker"))
	entries, _ := os.ReadDir(h.protected)
	if len(entries) != 0 {
		t.Errorf("protected directory was changed: %v", entries)
	}
}

// A protected workspace default (the tool server started inside the
// gateway's data directory) is refused too.
func TestRunCommandRefusesWhenTheWorkspaceItselfIsProtected(t *testing.T) {
	h := newHarness(t, TierFull)
	h.srv.cfg.Workspace = h.protected
	h.mustFail("run_command", map[string]any{"command": "touch marker"}, "protected path")
	assertAbsent(t, filepath.Join(h.protected, "marker"))
}

func TestConfigProtectedPrefixes(t *testing.T) {
	cwd := realDir(t)
	env := map[string]string{"HOME": "/home/u", "AGENTMAIL_PROTECTED_PATHS": "/srv/secret: rel/dir"}
	cfg, err := ConfigFromEnv(func(k string) string { return env[k] }, cwd)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.ProtectedPrefixes("/opt/agentmail/bin/agentmail", "/home/u")
	want := []string{cwd + "/data", "/opt/agentmail/bin", "/etc/systemd", "/etc/agentmail", "/home/u/.agentmail/agent.key", "/home/u/.agentmail", "/home/u/.config/agentmail", "/home/u/.ssh", "/srv/secret", cwd + "/rel/dir"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ProtectedPrefixes =\n %v\nwant\n %v", got, want)
	}
	env["AGENTMAIL_DATA_DIR"] = "/var/lib/agentmail"
	cfg, _ = ConfigFromEnv(func(k string) string { return env[k] }, cwd)
	if cfg.DataDir != "/var/lib/agentmail" {
		t.Errorf("DataDir = %q", cfg.DataDir)
	}
}
