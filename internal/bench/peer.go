package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// mailpit is a running peer: the mailpit binary (a Go mail server on
// SQLite) on loopback ports with its database in a directory of its own.
type mailpit struct {
	cmd    *exec.Cmd
	url    string
	dir    string
	exited chan error // receives the process's end once
}

// freePort answers a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startMailpit starts the binary at path with an empty database, no
// message limit (--max 0: it keeps every mail, as AgentMail does), HTTP
// and SMTP on loopback only, and waits until its API answers.
func startMailpit(ctx context.Context, path string) (*mailpit, error) {
	dir, err := os.MkdirTemp("", "agentmail-bench-mailpit-")
	if err != nil {
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	smtpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	m := &mailpit{dir: dir, url: "http://127.0.0.1:" + strconv.Itoa(httpPort)}
	m.cmd = exec.Command(path, "--database", filepath.Join(dir, "mailpit.db"), "--max", "0", "--quiet",
		"--disable-version-check", "--listen", "127.0.0.1:"+strconv.Itoa(httpPort), "--smtp", "127.0.0.1:"+strconv.Itoa(smtpPort))
	m.cmd.Stdout, m.cmd.Stderr = os.Stderr, os.Stderr
	if err := m.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("--peer-mailpit: start %s: %w", path, err)
	}
	m.exited = make(chan error, 1)
	go func() { m.exited <- m.cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(m.url + "/api/v1/info")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m, nil
			}
		}
		select {
		case err := <-m.exited:
			m.exited <- err // stop finds it ended
			m.stop()
			return nil, fmt.Errorf("--peer-mailpit: %s exited before answering: %v", path, err)
		case <-ctx.Done():
			m.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.stop()
			return nil, fmt.Errorf("--peer-mailpit: %s did not answer %s/api/v1/info within 30 s", path, m.url)
		}
	}
}

func (m *mailpit) stop() {
	if m.cmd.Process != nil {
		_ = m.cmd.Process.Signal(os.Interrupt)
		select {
		case <-m.exited:
		case <-time.After(10 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.exited
		}
	}
	os.RemoveAll(m.dir)
}

// mailpitSenders prepares n senders of mailpit's POST /api/v1/send with
// the same 200-byte body as AgentMail's sends, one recipient each.
func mailpitSenders(m *mailpit, n int, body string) ([]*rawSender, error) {
	out := make([]*rawSender, n)
	for i := range out {
		prefix := fmt.Appendf(nil, `{"From":{"Email":"admin@bench.test"},"To":[{"Email":"sink%d@bench.test"}],"Text":%s,"Subject":"load `, i, jsonString(body))
		rs, err := newRawSender(m.url, "/api/v1/send", "", prefix, []byte(`"}`))
		if err != nil {
			return nil, err
		}
		out[i] = rs
	}
	return out, nil
}

// clockTicks is the unit of the CPU times in /proc/PID/stat (USER_HZ,
// 100 on Linux for every architecture Go supports there).
const clockTicks = 100

// cpu answers the user and system CPU time the mailpit process has used so
// far (all its threads, from /proc/PID/stat, in 10 ms ticks), or 0 where
// that file cannot be read.
func (m *mailpit) cpu() time.Duration {
	if m.cmd.Process == nil {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(m.cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// utime and stime are fields 14 and 15, the 12th and 13th after it.
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 13 {
		return 0
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	sys, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(user+sys) * time.Second / clockTicks
}
