package gateway

import "testing"

func TestPatternsOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"/r/src/main.go", "/r/src/main.go", true},
		{"/r/src/main.go", "/r/src/other.go", false},
		{"/r/src/**", "/r/src/a/b/c.go", true},
		{"/r/src", "/r/src/a/b.go", true}, // a directory holds what is below it
		{"/r/src/*.go", "/r/src/main.go", true},
		{"/r/src/*.go", "/r/src/main.md", false},
		{"/r/src/*.go", "/r/src/*.md", false},
		{"/r/src/a*", "/r/src/*.go", true},
		{"/r/src/a*", "/r/src/b*", false},
		{"/r/docs/{a,b}.md", "/r/docs/a.md", true},
		{"/r/docs/{a,b}.md", "/r/docs/c.md", false},
		{"/r/**", "/r/anything/at/all", true},
		{"/r/x/**", "/r/y/z", false},
		{"/r/sub/a.go", "/r/**", true}, // a reservation of the parent workspace
	} {
		if got := patternsOverlap(c.a, c.b); got != c.want {
			t.Errorf("patternsOverlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := patternsOverlap(c.b, c.a); got != c.want {
			t.Errorf("patternsOverlap(%q, %q) = %v, want %v (reversed)", c.b, c.a, got, c.want)
		}
	}
}

func TestPatternCovers(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"/r/src/**", "/r/src/a/b.go", true},
		{"/r/src", "/r/src/a/b.go", true},
		{"/r/src/*.go", "/r/src/a.go", true},
		{"/r/src/*.go", "/r/src/sub/a.go", false},
		{"/r/src/*.go", "/r/lib/a.go", false},
		{"/r/README.md", "/r/README.md", true},
	} {
		if got := patternCovers(c.pattern, c.path); got != c.want {
			t.Errorf("patternCovers(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

func TestCleanReservationPath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"src/main.go", "src/main.go"},
		{"./src//a.go", "src/a.go"},
		{"/w/repo/src/a.go", "src/a.go"},
		{"/w/repo", "**"},
		{".", "**"},
		{"docs/", "docs"},
	} {
		got, err := cleanReservationPath("/w/repo", c.in, "paths[0]")
		if err != nil || got != c.want {
			t.Errorf("cleanReservationPath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "../x", "a/../../x", "/w/other/a", "/w/repository/a", "src/[a", "a\x00b"} {
		if got, err := cleanReservationPath("/w/repo", bad, "paths[0]"); err == nil {
			t.Errorf("cleanReservationPath(%q) = %q, want an error", bad, got)
		}
	}
}
