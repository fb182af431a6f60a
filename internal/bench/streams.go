package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The SSE phase's streams are held by a stream holder: HoldStreams, run in
// a process of its own (`agentmail bench-streams`, Config.StreamHolder) so
// that the gateway's peak RSS is not the holder's, or in a goroutine of
// this process when no holder command is given (the package test). The
// protocol on the holder's standard input and output, one item a line:
//
//	in:  the gateway URL, then one agent key per stream, then an empty line
//	out: "ready N" once N streams have answered 200,
//	     then "SEQ UNIXNANO" for each new_mail event whose subject is "sse SEQ"
//
// The holder ends when its input ends.

// HoldStreams is the stream holder (see above): it opens one
// GET /api/v1/events/stream per key on a raw keep-alive connection and
// reports the arrival time of each benchmark event. It answers when in
// ends, or with the first connection error before "ready".
func HoldStreams(in io.Reader, out io.Writer) error {
	raiseFileLimit()
	sc := bufio.NewScanner(in)
	if !sc.Scan() {
		return errors.New("bench-streams: no gateway URL on standard input")
	}
	addr := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "http://")
	var tokens []string
	for sc.Scan() {
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			break
		}
		tokens = append(tokens, t)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(out)
	report := func(line []byte) {
		mu.Lock()
		w.Write(line)
		w.Flush()
		mu.Unlock()
	}
	conns := make([]net.Conn, 0, len(tokens))
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, tok := range tokens {
		c, br, err := openStream(addr, tok)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		go readStream(br, report)
	}
	report([]byte("ready " + strconv.Itoa(len(conns)) + "\n"))
	for sc.Scan() {
	}
	return nil
}

// openStream dials the gateway and opens one agent stream.
func openStream(addr, token string) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, fmt.Errorf("bench-streams: dial %s: %w", addr, err)
	}
	req := "GET /api/v1/events/stream HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + token +
		"\r\nAccept: text/event-stream\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReaderSize(c, 2048)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("bench-streams: stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		c.Close()
		return nil, nil, fmt.Errorf("bench-streams: stream: status %d: %s", resp.StatusCode, body)
	}
	// The event stream is chunked; resp.Body undoes the chunking.
	return c, bufio.NewReaderSize(resp.Body, 2048), nil
}

// readStream reports the arrival of each "sse N" event until the stream ends.
func readStream(br *bufio.Reader, report func([]byte)) {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue
		}
		at := time.Now().UnixNano()
		var seq int
		if _, err := fmt.Sscanf(subjectOf(line), "sse %d", &seq); err == nil {
			report(fmt.Appendf(nil, "%d %d\n", seq, at))
		}
	}
}

// holder is a running stream holder seen from the benchmark.
type holder struct {
	in       io.WriteCloser
	arrivals chan arrival
	done     chan error
}

// arrival is one event's arrival at its stream.
type arrival struct {
	seq int
	at  time.Time
}

// startHolder starts the stream holder for tokens (argv, or in process
// when argv is empty) and waits for its "ready".
func startHolder(ctx context.Context, argv []string, gatewayURL string, tokens []string) (*holder, error) {
	h := &holder{arrivals: make(chan arrival, 1<<16), done: make(chan error, 1)}
	var out io.Reader
	if len(argv) == 0 {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		h.in, out = inW, outR
		go func() {
			err := HoldStreams(inR, outW)
			outW.CloseWithError(err)
			inR.Close()
		}()
	} else {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stderr = os.Stderr
		w, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		r, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("stream holder %s: %w", argv[0], err)
		}
		h.in, out = w, r
		go func() { _ = cmd.Wait() }()
	}
	go func() {
		fmt.Fprintln(h.in, gatewayURL)
		for _, t := range tokens {
			fmt.Fprintln(h.in, t)
		}
		fmt.Fprintln(h.in)
	}()
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		h.in.Close()
		return nil, fmt.Errorf("stream holder ended before ready: %v", sc.Err())
	}
	if want := fmt.Sprintf("ready %d", len(tokens)); sc.Text() != want {
		h.in.Close()
		return nil, fmt.Errorf("stream holder: %q, want %q", sc.Text(), want)
	}
	go func() {
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 2 {
				continue
			}
			seq, err1 := strconv.Atoi(f[0])
			ns, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 == nil && err2 == nil {
				h.arrivals <- arrival{seq, time.Unix(0, ns)}
			}
		}
		close(h.arrivals)
	}()
	return h, nil
}

func (h *holder) close() { h.in.Close() }

// resetPeakRSS starts a new peak resident set of this process (Linux:
// "5" to /proc/self/clear_refs); false when the kernel does not allow it.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS answers this process's peak resident set size (VmHWM) in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
