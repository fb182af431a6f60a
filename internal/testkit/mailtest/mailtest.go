// Package mailtest runs real mail software for the email channel's tests:
// mailpit (github.com/axllent/mailpit, installed by scripts/deps.sh) as
// the outbound relay, read back through its HTTP API, and swaks (Debian)
// and Python's smtplib as inbound clients.
package mailtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
)

// Need finds a program in PATH (or, for mailpit, in the Go binary
// directory); without it the test fails under CI and is skipped elsewhere,
// naming what installs it.
func Need(t testing.TB, name, install string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{os.Getenv("GOBIN"), filepath.Join(goPath(), "bin")} {
		if p := filepath.Join(dir, name); dir != "" && isExec(p) {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed (%s; scripts/deps.sh does it)", name, install)
	}
	t.Skipf("%s is not installed (%s; scripts/deps.sh does it)", name, install)
	return ""
}

func goPath() string {
	if p := os.Getenv("GOPATH"); p != "" {
		return strings.Split(p, string(os.PathListSeparator))[0]
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		home, _ := os.UserHomeDir()
		return filepath.Join(home, "go")
	}
	return strings.TrimSpace(string(out))
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// FreeAddr answers a loopback address with a port nobody listens on now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Mailpit is a running mailpit: SMTP at SMTP, its API at API.
type Mailpit struct {
	t    testing.TB
	SMTP string
	API  string
	db   string
	args []string
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

// StartMailpit starts mailpit on free loopback ports with its own
// database; args are further mailpit flags. It is stopped when the test
// ends.
func StartMailpit(t testing.TB, args ...string) *Mailpit {
	t.Helper()
	m := &Mailpit{t: t, SMTP: FreeAddr(t), API: FreeAddr(t), db: filepath.Join(t.TempDir(), "mailpit.db"), args: args}
	m.Start()
	t.Cleanup(m.Stop)
	return m
}

// Start starts mailpit (again) on the same ports and database.
func (m *Mailpit) Start() {
	m.t.Helper()
	bin := Need(m.t, "mailpit", "go install github.com/axllent/mailpit@v1.33.1")
	m.out = &bytes.Buffer{}
	m.cmd = exec.Command(bin, append([]string{"--smtp", m.SMTP, "--listen", m.API, "--database", m.db,
		"--disable-version-check", "--smtp-disable-rdns"}, m.args...)...)
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("start mailpit: %v", err)
	}
	m.done = make(chan struct{})
	go func() { _ = m.cmd.Wait(); close(m.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + m.API + "/api/v1/messages")
		if err == nil {
			resp.Body.Close()
			if c, err := net.DialTimeout("tcp", m.SMTP, time.Second); err == nil {
				c.Close()
				return
			}
		}
		select {
		case <-m.done:
			m.t.Fatalf("mailpit exited at start:\n%s", m.out)
		default:
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("mailpit did not answer within 30 s:\n%s", m.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops mailpit (the relay goes down); Start brings it back.
func (m *Mailpit) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(20 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// Message is a message as mailpit lists it.
type Message struct {
	ID        string `json:"ID"`
	MessageID string `json:"MessageID"`
	From      struct {
		Name    string `json:"Name"`
		Address string `json:"Address"`
	} `json:"From"`
	To []struct {
		Address string `json:"Address"`
	} `json:"To"`
	Subject string `json:"Subject"`
}

// Messages answers every message mailpit holds, newest first.
func (m *Mailpit) Messages() []Message {
	m.t.Helper()
	resp, err := http.Get("http://" + m.API + "/api/v1/messages?limit=500")
	if err != nil {
		m.t.Fatalf("mailpit messages: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Messages []Message `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		m.t.Fatalf("mailpit messages: %v", err)
	}
	return body.Messages
}

// Raw answers a message's source.
func (m *Mailpit) Raw(id string) string {
	m.t.Helper()
	resp, err := http.Get("http://" + m.API + "/api/v1/message/" + id + "/raw")
	if err != nil {
		m.t.Fatalf("mailpit raw: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		m.t.Fatal(err)
	}
	return string(b)
}

// Wait polls until pick finds a message (deadline 60 s) and answers it.
func (m *Mailpit) Wait(what string, pick func(Message) bool) Message {
	m.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, msg := range m.Messages() {
			if pick(msg) {
				return msg
			}
		}
		if time.Now().After(deadline) {
			var subjects []string
			for _, msg := range m.Messages() {
				subjects = append(subjects, fmt.Sprintf("%q to %v", msg.Subject, msg.To))
			}
			m.t.Fatalf("no %s reached mailpit within 60 s; it holds: %s", what, strings.Join(subjects, ", "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// To reports whether the message is addressed to addr.
func (msg Message) ToAddr(addr string) bool {
	for _, a := range msg.To {
		if strings.EqualFold(a.Address, addr) {
			return true
		}
	}
	return false
}

// Swaks sends one message with swaks to the SMTP server at addr and
// answers its transcript and whether the server took it (exit status 0).
// args are further swaks options (--header, --body, --attach ...).
func Swaks(t testing.TB, addr, from, to string, args ...string) (string, bool) {
	t.Helper()
	bin := Need(t, "swaks", "apt-get install swaks")
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--server", host, "--port", port, "--from", from, "--to", to,
		"--helo", "client.test", "--timeout", "30"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// smtplibScript sends stdin's message with Python's smtplib and prints the
// server's answer: "OK" or "REFUSED <code> <text>".
const smtplibScript = `
import smtplib, sys
host, port, sender, rcpt = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
msg = sys.stdin.buffer.read()
try:
    with smtplib.SMTP(host, port, timeout=30) as s:
        s.ehlo("client.test")
        s.sendmail(sender, [rcpt], msg)
    print("OK")
except smtplib.SMTPRecipientsRefused as e:
    code, text = list(e.recipients.values())[0]
    print("REFUSED", code, text.decode(errors="replace"))
except smtplib.SMTPResponseException as e:
    print("REFUSED", e.smtp_code, e.smtp_error.decode(errors="replace"))
`

// Smtplib sends raw (a whole message) with Python's smtplib and answers
// "OK" or "REFUSED <code> <text>".
func Smtplib(t testing.TB, addr, from, to string, raw string) string {
	t.Helper()
	py := Need(t, "python3", "apt-get install python3")
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", smtplibScript, host, port, from, to)
	cmd.Stdin = strings.NewReader(strings.ReplaceAll(strings.ReplaceAll(raw, "\r\n", "\n"), "\n", "\r\n"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 smtplib: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// PlainText answers the decoded text/plain part of a raw message.
func PlainText(raw string) (string, error) { return Part(raw, "text/plain") }

// Part answers the decoded first inline part of that content type.
func Part(raw, contentType string) (string, error) {
	mr, err := mail.CreateReader(strings.NewReader(raw))
	if err != nil {
		return "", err
	}
	for {
		p, err := mr.NextPart()
		if err != nil {
			return "", fmt.Errorf("no %s part: %w", contentType, err)
		}
		if h, ok := p.Header.(*mail.InlineHeader); ok {
			if ct, _, _ := h.ContentType(); ct == contentType {
				b, err := io.ReadAll(p.Body)
				return strings.ReplaceAll(string(b), "\r\n", "\n"), err
			}
		}
	}
}
