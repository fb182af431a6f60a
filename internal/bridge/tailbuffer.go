package bridge

import (
	"bytes"
	"strings"
	"sync"
)

// TailBuffer keeps the last Max bytes written to it: a platform process's
// stderr or a platform server's output, quoted in failure reasons (I-5).
// It is safe for concurrent use; the zero value keeps nothing.
type TailBuffer struct {
	Max int // bytes kept

	mu  sync.Mutex
	buf []byte
}

// NewTailBuffer answers a TailBuffer keeping the last max bytes.
func NewTailBuffer(max int) *TailBuffer { return &TailBuffer{Max: max} }

// Write appends p, dropping the oldest bytes beyond Max; it never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.Max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

// String answers what is kept, trimmed, with invalid UTF-8 (a cut in the
// middle of a character) removed.
func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
}
