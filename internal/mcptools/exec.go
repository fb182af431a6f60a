package mcptools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// MaxOutputChars is how many characters of stdout, and separately of
// stderr, run_command hands back (seed 003: output over 16,000 characters
// is cut, saying how much was cut).
const MaxOutputChars = 16000

// DefaultCommandTimeout bounds one run_command when the call gives none.
const DefaultCommandTimeout = 10 * time.Minute

// secretEnv names the variables a gated command never inherits: the
// agent's own credentials stay with the tool server.
var secretEnv = []string{"AGENTMAIL_AGENT_KEY", "AGENTMAIL_AGENT_SECRET", "AGENTMAIL_TURN_TOKEN", "AGENTMAIL_TURN_TOKEN_FILE"}

// CommandResult is what one run_command produced. ExitCode is -1 when the
// process did not exit by itself (killed after the timeout, or when the
// call was cancelled). StdoutCut and StderrCut count the characters left
// out after the first MaxOutputChars.
type CommandResult struct {
	ExitCode  int
	Stdout    string
	Stderr    string
	StdoutCut int
	StderrCut int
	TimedOut  bool
	Duration  time.Duration
}

// headWriter keeps the first limit characters written to it and counts
// the characters after them. Invalid UTF-8 bytes count as one character
// each. Multi-byte characters split across writes are reassembled.
type headWriter struct {
	limit int
	kept  int
	cut   int
	buf   bytes.Buffer
	carry []byte
}

func (w *headWriter) Write(p []byte) (int, error) {
	n := len(p)
	data := p
	if len(w.carry) > 0 {
		data = append(append([]byte(nil), w.carry...), p...)
		w.carry = nil
	}
	for len(data) > 0 {
		if !utf8.FullRune(data) {
			w.carry = append(w.carry[:0], data...)
			break
		}
		_, size := utf8.DecodeRune(data)
		if w.kept < w.limit {
			w.buf.Write(data[:size])
			w.kept++
		} else {
			w.cut++
		}
		data = data[size:]
	}
	return n, nil
}

// finish accounts for a trailing incomplete character: its bytes count
// as one invalid character each.
func (w *headWriter) finish() {
	for _, c := range w.carry {
		if w.kept < w.limit {
			w.buf.WriteByte(c)
			w.kept++
		} else {
			w.cut++
		}
	}
	w.carry = nil
}

// commandEnv is the tool server's environment without secretEnv.
func commandEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		secret := false
		for _, s := range secretEnv {
			if name == s {
				secret = true
			}
		}
		if !secret {
			env = append(env, kv)
		}
	}
	return env
}

// RunCommand runs `bash -c command` in dir and waits for it, at most
// timeout (0: DefaultCommandTimeout), inside sb when it is not nil (see
// Sandbox). The process gets its own process group, and the whole group is
// killed on timeout or when ctx ends (in a sandbox, the sandbox's PID
// namespace dies with it). stdin is empty. An error means the command could
// not be started at all (no bash, dir missing); a non-zero exit is a
// result, not an error.
func RunCommand(ctx context.Context, command, dir string, timeout time.Duration, sb *Sandbox) (CommandResult, error) {
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name, args := "bash", []string{"-c", command}
	if sb != nil {
		name, args = sb.Command(dir, "bash", "-c", command)
	}
	cmd := exec.CommandContext(cctx, name, args...)
	cmd.Dir = dir
	cmd.Env = commandEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the whole group: a shell's children must not outlive it.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	out := &headWriter{limit: MaxOutputChars}
	errw := &headWriter{limit: MaxOutputChars}
	cmd.Stdout = out
	cmd.Stderr = errw
	start := time.Now()
	err := cmd.Start()
	if err != nil {
		return CommandResult{}, fmt.Errorf("run_command: could not start bash in %s: %w", dir, err)
	}
	err = cmd.Wait()
	out.finish()
	errw.finish()
	res := CommandResult{
		Stdout:    out.buf.String(),
		Stderr:    errw.buf.String(),
		StdoutCut: out.cut,
		StderrCut: errw.cut,
		Duration:  time.Since(start),
		ExitCode:  cmd.ProcessState.ExitCode(),
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		res.TimedOut = true
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) && cctx.Err() == nil && !errors.Is(err, exec.ErrWaitDelay) {
			return res, fmt.Errorf("run_command: waiting for bash: %w", err)
		}
	}
	return res, nil
}

// Render formats the result for the model: exit code, stdout, stderr, and
// a note for every cut.
func (r CommandResult) Render(timeout time.Duration) string {
	var b strings.Builder
	switch {
	case r.TimedOut:
		fmt.Fprintf(&b, "exit code: %d (killed: still running after %s)\n", r.ExitCode, timeout)
	default:
		fmt.Fprintf(&b, "exit code: %d\n", r.ExitCode)
	}
	writeStream := func(name, text string, cut int) {
		if text == "" && cut == 0 {
			fmt.Fprintf(&b, "%s: (empty)\n", name)
			return
		}
		fmt.Fprintf(&b, "%s:\n%s", name, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
		if cut > 0 {
			fmt.Fprintf(&b, "[%s truncated: the first %d characters are shown, %d more characters were cut]\n", name, MaxOutputChars, cut)
		}
	}
	writeStream("stdout", r.Stdout, r.StdoutCut)
	writeStream("stderr", r.Stderr, r.StderrCut)
	return b.String()
}

// WriteFile writes content to the already resolved and checked path r,
// replacing the file, creating missing parent directories (mode 0755) and
// the file (mode 0644). The last component is opened without following a
// symbolic link, so a link planted after the check cannot redirect the
// write. It returns the number of bytes written.
func WriteFile(r string, content []byte) (int, error) {
	if err := os.MkdirAll(filepath.Dir(r), 0o755); err != nil {
		return 0, fmt.Errorf("write_file: create the parent directories of %s: %w", r, err)
	}
	f, err := os.OpenFile(r, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return 0, fmt.Errorf("write_file: open %s: %w", r, err)
	}
	n, err := f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("write_file: write %s: %w", r, err)
	}
	return n, nil
}
