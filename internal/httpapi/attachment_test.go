package httpapi

import (
	"mime"
	"testing"
)

func TestContentDispositionIsAlwaysAnAttachmentWithASafeName(t *testing.T) {
	cases := map[string]string{
		"report.pdf":               "report.pdf",
		`../../etc/"passwd"`:       "passwd",
		"报告.md":                    "报告.md",
		"a\r\nContent-Type: x.txt": "aContent-Type: x.txt",
		"":                         "attachment",
	}
	for in, want := range cases {
		h := ContentDisposition(in)
		disp, params, err := mime.ParseMediaType(h)
		if err != nil || disp != "attachment" || params["filename"] != want {
			t.Errorf("ContentDisposition(%q) = %q → %q %v %v, want filename %q", in, h, disp, params, err, want)
		}
	}
}
