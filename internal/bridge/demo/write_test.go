package demo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseWritesFindsBoundedWriteLines(t *testing.T) {
	long := strings.Repeat("x", MaxContent+1)
	got := ParseWrites("Hi,\n  WRITE a.txt: one\r\nwrite b/c.md：二\nwrite nocolon\nwrite : empty path\nrewrite x: no\nwrite d.txt:" + long + "\nwrite e.txt: 4\nwrite f.txt: 5\n")
	want := []WriteRequest{
		{Path: "a.txt", Content: "one"},
		{Path: "b/c.md", Content: "二"},
		{Path: "d.txt", Content: long, Refused: refContent},
		{Path: "e.txt", Content: "4", Refused: refTooMany},
		{Path: "f.txt", Content: "5", Refused: refTooMany},
	}
	if len(got) != len(want) {
		t.Fatalf("ParseWrites = %+v, want %d lines", got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	var body strings.Builder
	for range scanLines {
		body.WriteString("\n")
	}
	body.WriteString("write late.txt: after the scanned lines\n")
	if got := ParseWrites(body.String()); len(got) != 0 {
		t.Errorf("a write line after line %d was read: %+v", scanLines, got)
	}
}

func TestConfineKeepsWritesInsideTheDirectory(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "work")
	outside := filepath.Join(base, "outside")
	kept := filepath.Join(dir, "kept")
	for _, d := range []string{dir, outside, filepath.Join(dir, "sub"), filepath.Join(dir, "sub", "deeper"), kept} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "there.txt"), []byte("kept as it is\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A gateway's data directory in the workspace (the README's ./data).
	if err := os.MkdirAll(filepath.Join(dir, "data", "attachments"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "agentmail.db"), []byte("SQLite format 3\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "inner")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "f"), filepath.Join(dir, "file-link")); err != nil {
		t.Fatal(err)
	}
	// The working directory reached through a link is fine.
	viaLink := filepath.Join(base, "work-link")
	if err := os.Symlink(dir, viaLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want string // the answer, or "" for a refusal
		why  Refusal
	}{
		{"a.txt", filepath.Join(dir, "a.txt"), ""},
		{"sub/deeper/b.txt", filepath.Join(dir, "sub", "deeper", "b.txt"), ""},
		{"./c.txt", filepath.Join(dir, "c.txt"), ""},
		{"", "", refEmpty},
		{strings.Repeat("a", MaxPath+1), "", refLong},
		{"/etc/passwd", "", refAbsolute},
		{"../outside/x", "", refDotDot},
		{"sub/../../x", "", refDotDot},
		{".bashrc", "", refHidden},
		{"sub/.git/config", "", refHidden},
		{"a\nb", "", refCharacters},
		{"a\u202eb", "", refCharacters},
		{`a\b`, "", refCharacters},
		{"out/x", "", refLink},
		{"inner/x", "", refLink},
		{"file-link", "", refLink},
		{"missing/x", "", refNoFolder},
		{"sub", "", refNotFile},
		{"there.txt", "", refExists},
		{"data/agentmail.db-journal", "", refKept},
		{"data/attachments/x", "", refKept},
		{"kept/x", "", refKept},
		{".", "", refNotInside},
	} {
		for _, cwd := range []string{dir, viaLink} {
			got, err := Confine(cwd, c.name, []string{kept})
			var why Refusal
			errors.As(err, &why)
			if got != c.want || why != c.why || (c.want == "" && err == nil) {
				t.Errorf("Confine(%q, %q) = %q, %v; want %q, refusal %q", cwd, c.name, got, err, c.want, c.why)
			}
		}
	}
}

func TestWriteInsideWritesTheFile(t *testing.T) {
	dir := t.TempDir()
	n, err := writeInside(dir, "a.txt", []byte("one\n"))
	if err != nil || n != 4 {
		t.Fatalf("first write = %d, %v", n, err)
	}
	// A file that appeared since the check is left alone.
	n, err = writeInside(dir, "a.txt", []byte("two\n"))
	var why Refusal
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); !errors.As(err, &why) || why != refExists || n != 0 || string(b) != "one\n" {
		t.Fatalf("second write = %d, %v, file %q; want refExists and the first content", n, err, b)
	}
	// A link planted after the check cannot carry the write out of the directory.
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, "late")); err != nil {
		t.Fatal(err)
	}
	if _, err := writeInside(dir, "late", []byte("x")); err == nil {
		t.Error("a write through a link to outside the directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write reached outside the directory (stat: %v)", err)
	}
}

func TestSessionsAreBoundedAndKeepTheirIDs(t *testing.T) {
	a := New(Options{})
	first, err := a.session("", "/w")
	if err != nil || !strings.HasPrefix(first, "demo-") {
		t.Fatalf("a new session = %q, %v", first, err)
	}
	if again, _ := a.session(first, "/w"); again != first {
		t.Errorf("the session's next turn = %q, want %q", again, first)
	}
	if kept, _ := a.session("demo-from-before-a-restart", "/w"); kept != "demo-from-before-a-restart" {
		t.Errorf("a session id from before a restart = %q, want it kept", kept)
	}
	for range maxSessions + 5 {
		if _, err := a.session("", "/w"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(a.sessions); n != maxSessions {
		t.Errorf("%d sessions kept, want at most %d", n, maxSessions)
	}
}
