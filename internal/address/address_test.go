package address

import (
	"errors"
	"testing"
)

func TestParseSeedExamples(t *testing.T) {
	cases := []struct {
		in      string
		name    string
		path    string
		session SessionKind
		alias   string
		bare    bool
	}{
		// seed 000 section 0
		{"dsh@/home/a.b/proj.refactor", "dsh", "/home/a.b/proj", SessionAlias, "refactor", false},
		{"dsh@/path", "dsh", "/path", SessionDefault, "", false},
		{"dsh@/path.new", "dsh", "/path", SessionNew, "", false},
		// seed 001 table
		{"pi@root", "pi", "root", SessionDefault, "", false},
		{"pi@root.new", "pi", "root", SessionNew, "", false},
		{"pi@root.fix-leak", "pi", "root", SessionAlias, "fix-leak", false},
		{"jianf@.new", "jianf", "", SessionNew, "", false},
		// W-4 examples
		{"admin@.refactor-imports", "admin", "", SessionAlias, "refactor-imports", false},
		{"pi@/home/program/agentmail.refactor-imports", "pi", "/home/program/agentmail", SessionAlias, "refactor-imports", false},
		// bare person name
		{"admin", "admin", "", SessionDefault, "", true},
		{"  admin  ", "admin", "", SessionDefault, "", true},
		// a dot inside the path with no session part: the last segment holds '/'
		{"dsh@/home/a.b/proj", "dsh", "/home/a.b/proj", SessionDefault, "", false},
		{"dsh@/tmp/x.new", "dsh", "/tmp/x", SessionNew, "", false},
		{"dsh@", "dsh", "", SessionDefault, "", false},
		// Chinese alias (W-7.3)
		{"pi@/srv.重构导入", "pi", "/srv", SessionAlias, "重构导入", false},
		// names are case-insensitive: the name comes back in lower case,
		// path and alias as written
		{"Claude@/Srv/App.Fix", "claude", "/Srv/App", SessionAlias, "Fix", false},
		{"ANN", "ann", "", SessionDefault, "", true},
	}
	for _, c := range cases {
		a, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if a.Name != c.name || a.Path != c.path || a.Session != c.session || a.Alias != c.alias || a.Bare != c.bare {
			t.Errorf("Parse(%q) = %+v, want name=%q path=%q session=%v alias=%q bare=%v",
				c.in, a, c.name, c.path, c.session, c.alias, c.bare)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		"", "   ", "@/tmp", "dsh@/tmp/x.", "a b@/tmp", "dsh@/tmp x", "d,sh@/x", "a@b@c",
		"dsh@/tmp/\x00x", string([]byte{0xff, 0xfe}),
	} {
		if a, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, a)
		} else if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) error %v does not wrap ErrInvalid", in, err)
		}
	}
}

func TestStringRoundTrips(t *testing.T) {
	for _, in := range []string{"admin", "dsh@/tmp/x.new", "pi@root.fix-leak", "pi@root", "a@.new", "a@/x.y/z"} {
		a, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if a.String() != in {
			t.Errorf("String() = %q, want %q", a.String(), in)
		}
	}
}

func TestSplitListAcceptsAllSeparators(t *testing.T) {
	got := SplitList("ops@root, sre@root;a@/x，b  c\td")
	want := []string{"ops@root", "sre@root", "a@/x", "b", "c", "d"}
	if len(got) != len(want) {
		t.Fatalf("SplitList = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("SplitList = %q, want %q", got, want)
		}
	}
}

func TestSanitizeAliasStripsSeparators(t *testing.T) {
	cases := map[string]string{
		"witty-planet":      "witty-planet",
		"fix.leak@home/x":   "fixleakhomex",
		"  Fix  the Leak  ": "fix-the-leak",
		"重构导入路径":            "重构导入路径",
		"Re: 重构 imports!":   "re-重构-imports",
		"...":               "",
		"new":               "",
	}
	for in, want := range cases {
		if got := SanitizeAlias(in); got != want {
			t.Errorf("SanitizeAlias(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsPlaceholder(t *testing.T) {
	for _, s := range []string{"New session", "new session - 2026-09-02T11:41:16", "新会话", "处理邮件", "", "  ", "Untitled"} {
		if !IsPlaceholder(s) {
			t.Errorf("IsPlaceholder(%q) = false", s)
		}
	}
	for _, s := range []string{"witty-planet", "重构导入路径", "fix session leak"} {
		if IsPlaceholder(s) {
			t.Errorf("IsPlaceholder(%q) = true", s)
		}
	}
}

// FuzzParse checks that Parse never panics, that whatever it accepts formats
// back to an address it parses to the same value, and that an accepted alias
// never holds '/' (W-7.1).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"dsh@/home/a.b/proj.refactor", "pi@root.new", "jianf@.new", "admin", "a@b.c/d", "x@.", "@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			return
		}
		if a.Session == SessionAlias && (a.Alias == "" || containsByte(a.Alias, '/')) {
			t.Fatalf("Parse(%q) gave alias %q", s, a.Alias)
		}
		b, err := Parse(a.String())
		if err != nil {
			t.Fatalf("Parse(String()) of %q (%q): %v", s, a.String(), err)
		}
		if a != b {
			t.Fatalf("round trip of %q: %+v != %+v", s, a, b)
		}
	})
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}
