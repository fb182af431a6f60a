package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
)

// DefaultTranscriptMaxBytes bounds a run's transcript file (issue 16,
// seed 004 A5): 2 MiB unless AGENTMAIL_TRANSCRIPT_MAX_BYTES says otherwise.
const DefaultTranscriptMaxBytes = 2 << 20

// maxToolResultInTranscript bounds one tool result in a transcript.
const maxToolResultInTranscript = 4000

// AttachmentUploader is the part of the API that uploads a run's
// transcript (POST /api/v1/attachments); *client.Client has it. A Gateway
// without it keeps transcripts on disk only.
type AttachmentUploader interface {
	UploadAttachment(ctx context.Context, filename string, r io.Reader) (*client.Attachment, error)
}

// transcript is one run's transcript, Markdown under the bridge's runs
// directory (<dir>/<run_id>.md): the prompt, the assistant's text, each
// tool call with its input and a bounded result, the final text; never
// thinking. At most max bytes are written; the cut is said in the file.
type transcript struct {
	mu   sync.Mutex
	path string
	f    *os.File
	max  int64
	n    int64
	cut  bool
}

// openTranscript creates <dir>/<runID>.md (0600, the directory 0700); nil
// when dir is "" or the file cannot be made (the run goes on without one).
func (b *Bridge) openTranscript(runID, header, prompt string) *transcript {
	dir := b.cfg.Settings.RunsDir
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.log.Warn("the runs directory cannot be made; no transcript", "dir", dir, "err", err)
		return nil
	}
	path := filepath.Join(dir, runID+".md")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.log.Warn("the transcript cannot be written", "path", path, "err", err)
		return nil
	}
	max := b.cfg.Settings.TranscriptMaxBytes
	if max <= 0 {
		max = DefaultTranscriptMaxBytes
	}
	t := &transcript{path: path, f: f, max: max}
	t.write("# " + header + "\n\n## Prompt\n\n" + prompt + "\n")
	return t
}

// cutNote is the line that ends a transcript cut at its bound.
func cutNote(max int64) string {
	return fmt.Sprintf("\n\n---\n*Transcript cut here: it reached its bound of %d bytes (AGENTMAIL_TRANSCRIPT_MAX_BYTES).*\n", max)
}

func (t *transcript) write(s string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut || t.f == nil {
		return
	}
	note := cutNote(t.max)
	room := t.max - t.n - int64(len(note))
	if int64(len(s)) > room {
		if room > 0 {
			s = strings.ToValidUTF8(s[:room], "")
			_, _ = t.f.WriteString(s)
		}
		_, _ = t.f.WriteString(note)
		t.cut = true
		return
	}
	n, _ := t.f.WriteString(s)
	t.n += int64(n)
}

// activity writes one activity.
func (t *transcript) activity(a TurnActivity) {
	if t == nil {
		return
	}
	switch a.Kind {
	case ActivityText:
		if strings.TrimSpace(a.Text) != "" {
			t.write("\n## Assistant\n\n" + a.Text + "\n")
		}
	case ActivityToolCall:
		in, _ := json.MarshalIndent(a.Input, "", "  ")
		t.write("\n## Tool call: " + foldSpace(a.Tool) + "\n\n```json\n" + string(in) + "\n```\n")
	case ActivityToolResult:
		title := "Tool result"
		if a.IsError {
			title = "Tool error"
		}
		if a.Tool != "" {
			title += ": " + foldSpace(a.Tool)
		}
		text := a.Text
		if len(text) > maxToolResultInTranscript {
			text = strings.ToValidUTF8(text[:maxToolResultInTranscript], "") + fmt.Sprintf("\n… (%d bytes more)", len(a.Text)-maxToolResultInTranscript)
		}
		t.write("\n## " + title + "\n\n" + fence(text) + "\n")
	}
}

// fence wraps text in a code fence longer than any backtick run in it.
func fence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimRight(text, "\n") + "\n" + f
}

// finish writes the end (the final text, or why there is none) and closes
// the file.
func (t *transcript) finish(final string, end string) {
	if t == nil {
		return
	}
	if strings.TrimSpace(final) != "" {
		t.write("\n## Final text\n\n" + final + "\n")
	}
	t.write("\n---\n" + end + "\n")
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f != nil {
		_ = t.f.Close()
		t.f = nil
	}
}

// uploadTranscript uploads the finished transcript as an attachment and
// binds it to the run, which the run's final report then carries; it
// answers the attachment id ("" when there is none).
func (b *Bridge) uploadTranscript(ctx context.Context, t *transcript, rep *runReporter) string {
	if t == nil {
		return ""
	}
	up, ok := b.gw.(AttachmentUploader)
	if !ok {
		return ""
	}
	data, err := os.ReadFile(t.path)
	if err != nil {
		b.log.Warn("reading the transcript for upload failed", "path", t.path, "err", err)
		return ""
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	a, err := up.UploadAttachment(uctx, "run-"+rep.id()+".md", bytes.NewReader(data))
	if err != nil {
		b.log.Warn("uploading the transcript failed; it stays on disk", "path", t.path, "err", err)
		return ""
	}
	rep.mu.Lock()
	rep.run.TranscriptAttachmentID = a.AttachmentID
	rep.mu.Unlock()
	return a.AttachmentID
}
