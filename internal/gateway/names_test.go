package gateway

import (
	"strings"
	"testing"
)

func TestNameKey(t *testing.T) {
	cases := []struct{ in, want string }{
		{"bob", "bob"},
		{"BOB", "bob"},
		{"  Bob ", "bob"},
		{"ｂｏｂ", "bob"},         // full width
		{"Ｂob", "bob"},         // full-width capital
		{"Straße", "strasse"},  // full case folding, not lower-casing
		{"ﬁdo", "fido"},        // ligature
		{"jose\u0301", "josé"}, // composed
		{"张san", "张san"},
	}
	for _, c := range cases {
		if got := NameKey(c.in); got != c.want {
			t.Errorf("NameKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNameSkeletonLookAlikes(t *testing.T) {
	alike := []struct{ a, b string }{
		{"bob", "bоb"},     // Cyrillic о
		{"bob", "ｂob"},     // full-width b
		{"bob", "BOB"},     // case
		{"bob", "b0b"},     // digit zero
		{"alpha", "аlpha"}, // Cyrillic а
		{"alpha", "ａlpha"}, // full-width a
		{"alpha", "αlpha"}, // Greek alpha
		{"mary", "rnary"},  // rn looks like m
		{"carol", "caro1"}, // digit one looks like l
		{"paypal", "pаypаl"},
		{"admin", "аdmin"},
		// Not in Unicode's confusables table (foldLookalikes):
		{"bob", "ʙob"},         // LATIN LETTER SMALL CAPITAL B
		{"alice", "ᴀʟɪᴄᴇ"},     // small capitals throughout
		{"ivan", "ᶦvan"},       // modifier small capital I (NFKC → ɪ)
		{"œuvre", "ɶuvre"},     // small capital OE → œ
		{"admin", "admín"},     // an accent
		{"jose", "josé"},       // composed
		{"jose", "jose\u0301"}, // decomposed
		{"zoe", "zoë"},
		{"bob", "ḃȯḅ"}, // dots above and below
	}
	for _, c := range alike {
		if NameSkeleton(c.a) != NameSkeleton(c.b) {
			t.Errorf("NameSkeleton(%q) = %q, NameSkeleton(%q) = %q: want equal", c.a, NameSkeleton(c.a), c.b, NameSkeleton(c.b))
		}
	}
	different := []struct{ a, b string }{
		{"bob", "rob"},
		{"alpha", "beta"},
		{"张san", "李san"},
		{"ann", "anna"},
		{"agent-1", "agent-2"},
		{"张san", "张sam"},
	}
	for _, c := range different {
		if NameSkeleton(c.a) == NameSkeleton(c.b) {
			t.Errorf("NameSkeleton(%q) = NameSkeleton(%q) = %q: want different", c.a, c.b, NameSkeleton(c.a))
		}
	}
}

func TestNameScripts(t *testing.T) {
	cases := []struct {
		name    string
		ok      bool
		scripts string
	}{
		{"bob", true, "Latin"},
		{"agent-01_x", true, "Latin"},
		{"张san", true, "Han,Latin"},
		{"张三", true, "Han"},
		{"たなかtaro", true, "Hiragana,Latin"},
		{"田中タロウ", true, "Han,Katakana"},
		{"김min", true, "Hangul,Latin"},
		{"ㄅ张a", true, "Bopomofo,Han,Latin"},
		{"борис", true, "Cyrillic"},
		{"ｂob", true, "Latin"},
		{"123", true, ""},
		{"bоb", false, "Cyrillic,Latin"},
		{"аlpha", false, "Cyrillic,Latin"},
		{"αlpha", false, "Greek,Latin"},
		{"김たなか", false, "Hangul,Hiragana"},
		{"ㄅ김", false, "Bopomofo,Hangul"},
	}
	for _, c := range cases {
		scripts, ok := NameScripts(c.name)
		if ok != c.ok || strings.Join(scripts, ",") != c.scripts {
			t.Errorf("NameScripts(%q) = %v, %v; want %s, %v", c.name, scripts, ok, c.scripts, c.ok)
		}
	}
}

func TestCheckReservedNameLookAlikes(t *testing.T) {
	for _, n := range []string{"ѕystem", "agentrnail", "tirneout"} {
		if err := checkReservedName("username", n, false); !HasCode(err, "reserved_name") {
			t.Errorf("checkReservedName(%q) = %v, want reserved_name", n, err)
		}
	}
	if err := checkReservedName("username", "adrnin", false); !HasCode(err, "reserved_name") {
		t.Errorf("checkReservedName(adrnin) = %v, want reserved_name", err)
	}
	if err := checkReservedName("username", "admin", true); err != nil {
		t.Errorf("bootstrap admin refused: %v", err)
	}
	if err := checkReservedName("username", "bob", false); err != nil {
		t.Errorf("bob refused: %v", err)
	}
}
