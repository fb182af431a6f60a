package emailchannel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/internal/gateway"
)

// The reply corpus (testdata/replies): replies written for the project in
// the shapes Gmail (web, Android), Outlook (desktop, web, Android, iOS),
// Apple Mail (macOS, iPhone, iPad), Thunderbird, Samsung Email and Foxmail
// produce, plain and HTML, English and Chinese (UTF-8, GBK, GB18030), with
// format=flowed, quoted-printable and base64 bodies. Each NN-*.eml has its
// expected new text in NN-*.txt.
func TestReplyCorpusKeepsOnlyTheNewText(t *testing.T) {
	files, err := filepath.Glob("testdata/replies/*.eml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("the corpus has %d replies, want at least 20", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".eml")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".eml") + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			got, err := extractReply(raw, 1<<20)
			if err != nil {
				t.Fatalf("extract: %v", err)
			}
			if got.text != strings.TrimSpace(string(want)) {
				t.Errorf("new text\n got: %q\nwant: %q", got.text, strings.TrimSpace(string(want)))
			}
		})
	}
}

// What the corpus's permission replies decide, read by the gateway's own
// rule from the extracted text (the inbound side sends that text through
// the person's send path, where the same rule decides).
func TestReplyCorpusDecisions(t *testing.T) {
	cases := map[string]struct{ approved, always bool }{
		"01-gmail-web-en":           {true, false},
		"02-gmail-web-zh":           {true, false},
		"03-gmail-html-only":        {false, false},
		"04-outlook-desktop-en":     {true, true},
		"05-outlook-desktop-zh-gbk": {true, true},
		"06-outlook-web-html":       {true, false},
		"07-apple-mail-en":          {true, false},
		"08-apple-mail-zh-html":     {false, false},
		"09-thunderbird-en-flowed":  {true, false},
		"10-thunderbird-html":       {false, false},
		"11-thunderbird-zh":         {true, false},
		"12-iphone-mail-en":         {true, false},
		"13-iphone-mail-zh":         {true, false},
		"14-gmail-android-en":       {true, false},
		"15-samsung-email-en":       {false, false},
		"16-outlook-android":        {true, false},
		"17-foxmail-zh":             {false, false},
		"19-outlook-ios-zh":         {false, false},
		"22-ipad-html":              {true, true},
	}
	for name, want := range cases {
		raw, err := os.ReadFile("testdata/replies/" + name + ".eml")
		if err != nil {
			t.Fatal(err)
		}
		got, err := extractReply(raw, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		approved, always := gateway.JudgeDecision(firstLine(got.text))
		if approved != want.approved || always != want.always {
			t.Errorf("%s: %q decides approved %v always %v, want %v %v", name, firstLine(got.text), approved, always, want.approved, want.always)
		}
	}
}

func TestReplyAttachmentsAreKeptAndBounded(t *testing.T) {
	raw, err := os.ReadFile("testdata/replies/20-gmail-attachment.eml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := extractReply(raw, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.attachments) != 1 || got.attachments[0].name != "settings.json" || string(got.attachments[0].body) != "{\"replicas\": 3}\n" {
		t.Fatalf("attachments %+v", got.attachments)
	}
	if _, err := extractReply(raw, 4); err == nil || !strings.Contains(err.Error(), "settings.json") {
		t.Errorf("an attachment over the limit: %v", err)
	}
}

// Text that only looks like an attribution stays.
func TestNewTextKeepsLinesThatOnlyLookQuoted(t *testing.T) {
	for in, want := range map[string]string{
		"Here is what I wrote:\nfine":                      "Here is what I wrote:\nfine",
		"approve\nFrom: me\nand nothing else":              "approve\nFrom: me\nand nothing else",
		"deny\n\nOn Monday we release.\n":                  "deny\n\nOn Monday we release.",
		"approve\r\n--\r\nBob":                             "approve",
		"我写道：\n好":                                          "我写道：\n好",
		"yes\n\nOn 2 Sep 2026 claude wrote:\n> asks\nmore": "yes",
	} {
		if got := newText(in); got != want {
			t.Errorf("newText(%q) = %q, want %q", in, got, want)
		}
	}
}
