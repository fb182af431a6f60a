package cli

import (
	"bytes"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// table lines up tab-separated cells in columns by their width on a
// terminal, as text/tabwriter does by character count: a Chinese or
// Japanese character takes two columns, a combining mark none, so the
// columns of a Chinese person's inbox stay aligned. Write the rows as
// lines (cells separated by '\t'; the text after a line's last tab is not
// padded), then Flush. Columns are two spaces apart.
type table struct {
	w   io.Writer
	buf bytes.Buffer
}

// tableGap is the spaces between two columns.
const tableGap = 2

func newTable(w io.Writer) *table { return &table{w: w} }

// Write buffers p until Flush.
func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the buffered rows, padded, and empties the buffer.
func (t *table) Flush() error {
	text := strings.TrimSuffix(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	rows := make([][]string, len(lines))
	var widths []int
	for i, line := range lines {
		rows[i] = strings.Split(line, "\t")
		for j, cell := range rows[i][:len(rows[i])-1] {
			if j == len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], runewidth.StringWidth(cell))
		}
	}
	var out strings.Builder
	for _, row := range rows {
		for j, cell := range row {
			out.WriteString(cell)
			if j < len(row)-1 {
				out.WriteString(strings.Repeat(" ", widths[j]-runewidth.StringWidth(cell)+tableGap))
			}
		}
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, out.String())
	return err
}
