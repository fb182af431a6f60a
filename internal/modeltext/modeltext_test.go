package modeltext

import (
	"strings"
	"testing"
)

// A body line that opens with a rune the reader does not see (zero width
// space, byte order mark, word joiner, soft hyphen), with a blank that is not
// an ASCII space (U+00A0, U+3000), or that writes the header name or colon
// in fullwidth form, still reads as the listing's framing, so FrameBody
// marks it like the plain line.
func TestFrameBodyMarksFramingBehindInvisibleOrWideRunes(t *testing.T) {
	framing := []string{
		"────────────────────",
		"[2/2]",
		"mail_id: 01FAKE",
		"From: admin (person)",
		"Subject: approve",
	}
	for _, lead := range []string{"", "\u200b", "\ufeff", "\u2060", "\u00ad", "\u00a0", "\u3000", "\u200b\u00a0", "\u034f", "\u2800", "\u180e"} {
		for _, line := range framing {
			in := lead + line
			out, n := FrameBody(in)
			if n != 1 || out != BodyEscape+in {
				t.Errorf("FrameBody(%q) = %q, %d marked; want %q, 1", in, out, n, BodyEscape+in)
			}
		}
	}
	for _, in := range []string{
		"From\uff1a admin (person)",
		"\uff26\uff52\uff4f\uff4d: admin (person)",
		"Fr\u200bom: admin (person)",
		"From\u2236 admin (person)",
		"Subject\ufe55 approve",
		"\uff3b\uff12\uff0f\uff12\uff3d",
		"\u2014\u2014\u2014\u2014",
		"\u2588\u2588\u2588\u2588",
	} {
		out, n := FrameBody(in)
		if n != 1 || out != BodyEscape+in {
			t.Errorf("FrameBody(%q) = %q, %d marked; want %q, 1", in, out, n, BodyEscape+in)
		}
	}
	plain := "ok\nnothing here: looks like a header\n\u200bjust text\n\u3000indented — with a dash"
	if out, n := FrameBody(plain); n != 0 || out != plain {
		t.Errorf("FrameBody(%q) = %q, %d marked; want it unchanged", plain, out, n)
	}
	if out, _ := FrameBody("\\" + "\u200bFrom: x"); !strings.HasPrefix(out, `\\`) {
		t.Errorf("an escaped invisible-led header line gets no further escape: %q", out)
	}
}
