package cli

import (
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

// Columns line up by terminal width: two columns for a Chinese character.
func TestTableAlignsWideCharacters(t *testing.T) {
	var b strings.Builder
	tw := newTable(&b)
	tw.Write([]byte("日期\t发件人\t主题\n"))
	tw.Write([]byte("2026-12-02\tclaude\t部署完成\n"))
	tw.Write([]byte("x\t张三李四王五\tok\n"))
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines:\n%s", len(lines), b.String())
	}
	// The third column starts at the same terminal column on every line.
	var starts []int
	for _, l := range lines {
		third := strings.LastIndex(l, "  ") + 2
		starts = append(starts, runewidth.StringWidth(l[:third]))
	}
	if starts[0] != starts[1] || starts[1] != starts[2] {
		t.Fatalf("third column starts at %v:\n%s", starts, b.String())
	}
	if want := 10 + 2 + 12 + 2; starts[0] != want {
		t.Fatalf("third column at %d, want %d:\n%s", starts[0], want, b.String())
	}
	if strings.HasSuffix(lines[0], " ") {
		t.Fatalf("the last cell is padded: %q", lines[0])
	}
}
