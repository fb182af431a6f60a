package pathwalk

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Resolve follows links left to right, shows each to onLink before following
// it, keeps a missing rest as written, stops where onLink refuses, and gives up
// on a loop.
func TestResolveShowsEachLinkAndStopsOnALoop(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"a": "b", "b": real, "loop1": "loop2", "loop2": "loop1"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	got, err := Resolve(filepath.Join(dir, "a", "new", "file"), 8, func(link string, _ os.FileInfo) error {
		seen = append(seen, filepath.Base(link))
		return nil
	})
	if want := filepath.Join(real, "new", "file"); err != nil || got != want {
		t.Fatalf("Resolve = %q, %v; want %q", got, err, want)
	}
	if len(seen) != 2 || seen[0] != "a" || seen[1] != "b" {
		t.Errorf("links shown = %v; want [a b]", seen)
	}
	refused := errors.New("refused")
	if _, err := Resolve(filepath.Join(dir, "a"), 8, func(string, os.FileInfo) error { return refused }); !errors.Is(err, refused) {
		t.Errorf("a refused link answers %v; want the hook's error", err)
	}
	if _, err := Resolve(filepath.Join(dir, "loop1"), 8, nil); !errors.Is(err, ErrTooManyLinks) {
		t.Errorf("a loop answers %v; want ErrTooManyLinks", err)
	}
}
