package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Default reconnection delays of a Stream (D-7.2): the first retry waits
// DefaultMinBackoff, each failed attempt doubles it up to DefaultMaxBackoff.
const (
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// maxEventSize bounds one SSE line (4 MiB); a longer line ends the
// connection with bufio.ErrTooLong.
const maxEventSize = 4 << 20

// StreamOptions configures Stream.
type StreamOptions struct {
	// People selects the person's stream (GET /api/v1/me/events/stream:
	// new_mail, permission_request, permission_decision, session_updated,
	// run_updated) instead of the agent's (GET /api/v1/events/stream:
	// new_mail, permission_decision).
	People bool
	// LastEventID, when > 0, is sent as Last-Event-ID on the first
	// connection to replay what came after it. Leave it 0 on a first start:
	// a first connection carries no Last-Event-ID (B-1.4, N-11), otherwise
	// old mail would be delivered again.
	LastEventID int64
	// Reconnect makes the stream reconnect after a drop, with exponential
	// backoff and the last seen id as Last-Event-ID (D-7.2). Without it the
	// stream ends at the first drop.
	Reconnect bool
	// MinBackoff and MaxBackoff bound the reconnection delay; zero values
	// mean DefaultMinBackoff and DefaultMaxBackoff. A `retry:` field from
	// the gateway raises the minimum; a 429 or 503 waits its Retry-After.
	MinBackoff, MaxBackoff time.Duration
	// OnConnect, when set, is called after each successful (re)connection
	// with the Last-Event-ID that was sent (0 for none).
	OnConnect func(lastEventID int64)
	// OnDisconnect, when set, is called when a connection drops or a
	// reconnection attempt fails, with the reason.
	OnDisconnect func(err error)
	// Buffer is the capacity of the Events channel (default 64).
	Buffer int
}

// Stream is an open server-sent event stream. Read events from Events until
// it is closed, then Err tells why the stream ended.
type Stream struct {
	c      *Client
	opts   StreamOptions
	path   string
	events chan Event
	cancel context.CancelFunc
	done   chan struct{}

	lastID atomic.Int64
	retry  atomic.Int64 // server's retry: hint in ms, 0 = none
	closed atomic.Bool

	mu  sync.Mutex
	err error
}

// Stream opens the event stream of the caller and returns once the first
// connection is established, so a bad key (401) or a wrong kind of key
// (403) is returned here rather than retried. Events are delivered in order
// on s.Events(); each event's ID is its event-log id, and LastEventID tracks
// the last one received, which a reconnection sends as Last-Event-ID.
// Heartbeat comments are consumed silently. The stream ends when ctx is
// cancelled, Close is called, the connection drops without Reconnect, or a
// reconnection is refused with a 4xx other than 408/429.
func (c *Client) Stream(ctx context.Context, opts StreamOptions) (*Stream, error) {
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = opts.MinBackoff
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 64
	}
	s := &Stream{c: c, opts: opts, path: apiPath("/events/stream"), events: make(chan Event, opts.Buffer), done: make(chan struct{})}
	if opts.People {
		s.path = apiPath("/me/events/stream")
	}
	s.lastID.Store(opts.LastEventID)
	sctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	resp, err := s.connect(sctx)
	if err != nil {
		cancel()
		return nil, err
	}
	go s.run(sctx, resp)
	return s, nil
}

// Events returns the channel of received events; it is closed when the
// stream ends.
func (s *Stream) Events() <-chan Event { return s.events }

// LastEventID returns the id of the last event received (or the id the
// stream was opened with), to be given as StreamOptions.LastEventID when a
// later process resumes.
func (s *Stream) LastEventID() int64 { return s.lastID.Load() }

// Err returns why the stream ended once Events is closed: nil after Close,
// the context's error after cancellation, io.ErrUnexpectedEOF or the read
// error after a drop without Reconnect, the *APIError that refused a
// reconnection. While the stream runs it returns nil.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Done returns a channel closed when the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Close ends the stream and waits until its goroutine has stopped. It is
// safe to call more than once.
func (s *Stream) Close() {
	s.closed.Store(true)
	s.cancel()
	<-s.done
}

// connect opens one connection, with Last-Event-ID when an id is known.
func (s *Stream) connect(ctx context.Context) (*http.Response, error) {
	req, err := s.c.newRequest(ctx, http.MethodGet, s.path, nil, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	last := s.lastID.Load()
	if last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
	}
	resp, err := s.c.send(req)
	if err != nil {
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		resp.Body.Close()
		return nil, fmt.Errorf("agentmail client: GET %s: answer is %q, not an event stream", s.path, ct)
	}
	if s.opts.OnConnect != nil {
		s.opts.OnConnect(last)
	}
	return resp, nil
}

// run reads connections until the stream ends.
func (s *Stream) run(ctx context.Context, resp *http.Response) {
	backoff := s.opts.MinBackoff
	for {
		err := s.read(ctx, resp.Body)
		resp.Body.Close()
		if ctx.Err() != nil {
			s.finish(ctx.Err())
			return
		}
		if err == nil {
			err = io.ErrUnexpectedEOF // the gateway never ends a stream on purpose
		}
		if s.opts.OnDisconnect != nil {
			s.opts.OnDisconnect(err)
		}
		if !s.opts.Reconnect {
			s.finish(err)
			return
		}
		for {
			wait := backoff
			if r := time.Duration(s.retry.Load()) * time.Millisecond; r > wait {
				wait = r
			}
			if ra := RetryAfterOf(err); ra > wait {
				wait = ra
			}
			wait += time.Duration(rand.Int64N(int64(wait)/5 + 1)) // up to 20 % jitter
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				s.finish(ctx.Err())
				return
			case <-t.C:
			}
			resp, err = s.connect(ctx)
			if err == nil {
				backoff = s.opts.MinBackoff
				break
			}
			if ctx.Err() != nil {
				s.finish(ctx.Err())
				return
			}
			if st := StatusOf(err); st >= 400 && st < 500 && st != http.StatusRequestTimeout && st != http.StatusTooManyRequests {
				s.finish(err)
				return
			}
			if s.opts.OnDisconnect != nil {
				s.opts.OnDisconnect(err)
			}
			backoff = min(backoff*2, s.opts.MaxBackoff)
		}
	}
}

// finish records why the stream ended and closes its channels.
func (s *Stream) finish(err error) {
	if s.closed.Load() {
		err = nil
	}
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	close(s.events)
	close(s.done)
}

// read parses one connection's event stream (the WHATWG server-sent events
// format): lines ended by LF, CRLF or CR; "field: value" lines for event,
// data (several are joined with LF), id and retry; lines starting with ":"
// are comments; a blank line dispatches the event. It returns nil at a
// clean end of the body, else the read error.
func (s *Stream) read(ctx context.Context, body io.Reader) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), maxEventSize)
	sc.Split(scanSSELines)
	var (
		evType  string
		data    bytes.Buffer
		hasData bool
		id      string
		hasID   bool
		first   = true
	)
	for sc.Scan() {
		line := sc.Text()
		if first {
			line = strings.TrimPrefix(line, "\uFEFF")
			first = false
		}
		if line == "" {
			if hasID {
				if n, err := strconv.ParseInt(id, 10, 64); err == nil {
					s.lastID.Store(n)
				}
			}
			if hasData {
				ev := Event{Type: evType, Data: bytes.Clone(data.Bytes())}
				if ev.Type == "" {
					ev.Type = "message"
				}
				if hasID {
					ev.ID, _ = strconv.ParseInt(id, 10, 64)
				}
				select {
				case s.events <- ev:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			evType, id, hasID, hasData = "", "", false, false
			data.Reset()
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment, e.g. the 15 s heartbeat
		}
		field, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			evType = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				id, hasID = value, true
			}
		case "retry":
			if ms, err := strconv.ParseInt(value, 10, 64); err == nil && ms >= 0 {
				s.retry.Store(ms)
			}
		}
	}
	return sc.Err()
}

// scanSSELines is a bufio.SplitFunc for SSE lines: LF, CRLF and a lone CR
// all end a line.
func scanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // need one more byte to tell CR from CRLF
		}
	}
	if atEOF && len(data) > 0 {
		// An unterminated last line is discarded by the SSE rules: it never
		// completes an event.
		return len(data), nil, nil
	}
	return 0, nil, nil
}

// Decode unmarshals the event's JSON data into v, for example a
// *NewMailEvent for EventNewMail or a *PermissionDecisionEvent for
// EventPermissionDecision.
func (e Event) Decode(v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("agentmail client: decode %s event %d: %w", e.Type, e.ID, err)
	}
	return nil
}
