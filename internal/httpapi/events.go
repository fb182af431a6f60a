package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/events"
	"github.com/agentmail/agentmail/internal/gateway"
)

// streamEvents lists the events the streams carry (client.Event*) with the
// type of each one's data, as the gateway emits them (W-4): the OpenAPI
// document describes them under "x-agentmail-events".
func streamEvents() []OpenAPIEvent {
	return []OpenAPIEvent{
		{Name: client.EventNewMail, Data: client.NewMailEvent{}},
		{Name: client.EventPermissionRequest, Data: client.Permission{}},
		{Name: client.EventPermissionDecision, Data: client.PermissionDecisionEvent{}},
		{Name: client.EventSessionUpdated, Data: client.Session{}},
		{Name: client.EventRunUpdated, Data: client.Run{}},
		{Name: client.EventRunStop, Data: client.RunStopEvent{}},
		{Name: client.EventReservationChanged, Data: client.ReservationEvent{}},
	}
}

// eventRoutes are the event streams of people and agents (SSE, W-4).
func eventRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: p + "/me/events/stream", Auth: AuthPerson, Summary: "The person's event stream (SSE)", Description: "Server-sent events for the person (new_mail, permission_request, session_updated, ...; x-agentmail-events lists them); id: is the event id, send it as Last-Event-ID on reconnect to get what was missed. The stream begins with retry: (the reconnect delay) and sends comment heartbeats. 400 a bad Last-Event-ID, 429 too many streams for this key.", Status: 200, Errors: []int{400, 401, 403, 429}, Produces: "text/event-stream", Handler: (*Server).handleStream},
		{Method: "GET", Path: p + "/events/stream", Auth: AuthAgent, Summary: "The agent's event stream (SSE, W-4)", Description: "Server-sent events for the agent (new_mail, permission_decision, ...; x-agentmail-events lists them); id: is the event id, send it as Last-Event-ID on reconnect to get what was missed. The stream begins with retry: (the reconnect delay) and sends comment heartbeats; it ends when the key is revoked or expires. 400 a bad Last-Event-ID, 429 too many streams for this key.", Status: 200, Errors: []int{400, 401, 403, 429}, Produces: "text/event-stream", Handler: (*Server).handleStream},
	}
}

// handleStream serves GET /events/stream (agents) and /me/events/stream
// (people), issue 2 item 9: `id:` is the event-log id; with Last-Event-ID
// the stream first replays the principal's events after that id from the
// log; without it nothing old is sent (N-11). Every open stream of the
// principal gets every event. Comment lines keep proxies from closing an
// idle stream; X-Accel-Buffering: no stops nginx from buffering it. A
// stream opened with a key ends when that key is revoked, and at the first
// heartbeat after it expired; the client's reconnect then gets the 401. A
// Last-Event-ID beyond the end of the log is clamped to its end. One key
// (or cookie session) holds at most Options.MaxStreamsPerKey streams; the
// next is a 429 too_many_streams, before anything is streamed.
//
// On HTTP/1.1 the connection is taken over from net/http once the stream
// is set up (hijackedStream): the open stream then costs one small
// goroutine and no request buffers, which is what lets one gateway hold
// ten thousand streams (docs/PERFORMANCE.md). HTTP/2, HTTP/1.0 and HEAD
// stay on the response writer.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalOf(r)
	var last int64 = -1
	if v := strings.TrimSpace(r.Header.Get("Last-Event-ID")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return gateway.Invalid("Last-Event-ID", fmt.Sprintf("Last-Event-ID %q is not an event id", v),
				"send the id of the last event received, or no header on a first connection")
		}
		last = n
	}
	// A key (or a cookie session) holds at most MaxStreamsPerKey streams
	// at once; a stream ends with what opened it: a key when it is revoked
	// (at once) or expires, a cookie session when it signs out, a password
	// change ends it or the account is disabled (at once on this gateway),
	// and at each heartbeat whatever ended it elsewhere or by time.
	st := &openStream{s: s, keyID: p.KeyID, cookieID: p.CookieID, last: last, done: func() {}}
	streamKey := p.KeyID
	if streamKey == "" && p.CookieID != "" {
		streamKey = cookieStreamKey(p.CookieID)
	}
	if streamKey != "" {
		ch, done, ok, ownerFull := s.keyed.add(streamKey, p.Name, s.opt.MaxStreamsPerKey, StreamsPerPrincipalFactor*s.opt.MaxStreamsPerKey)
		if ownerFull {
			return tooManyStreamsOfPrincipal(p, StreamsPerPrincipalFactor*s.opt.MaxStreamsPerKey)
		}
		if !ok {
			return tooManyStreams(s.opt.MaxStreamsPerKey)
		}
		st.revoked, st.done = ch, done
	}
	st.sub = s.hub.Subscribe(p.Name)
	detached := false
	defer func() {
		if !detached {
			st.close()
		}
	}()
	if last > st.sub.From {
		// Beyond what this hub dispatched: clamp to the log's current end,
		// so an id from a restored or reset database (beyond the end) does
		// not silence the stream until the log catches up.
		end, err := s.svc.Read().MaxEventID(r.Context())
		if err != nil {
			return err
		}
		if last > end {
			st.last = end
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-store")
	h.Set("X-Accel-Buffering", "no")

	var sink streamSink
	if hs := s.hijackStream(w, r); hs != nil {
		sink = hs
	} else {
		flusher, ok := w.(http.Flusher)
		if !ok {
			return fmt.Errorf("response writer cannot flush")
		}
		h.Set("Connection", "keep-alive")
		w.WriteHeader(http.StatusOK)
		sink = &writerStream{w: w, f: flusher}
	}
	st.sink = sink
	// retry: tells EventSource clients how long to wait before they
	// reconnect (WHATWG HTML 9.2); the first comment makes the headers
	// reach the client at once.
	sink.appendf("retry: %d\n\n: connected\n\n", StreamRetry.Milliseconds())
	if sink.flush() != nil {
		return nil
	}
	if st.last >= 0 && st.last < st.sub.From {
		err := s.hub.Replay(r.Context(), p.Name, st.last, st.sub.From, func(e events.Event) error {
			st.event(&e)
			if sink.pending() >= replayFlushBytes {
				return sink.flush()
			}
			return nil
		})
		if err != nil || sink.flush() != nil {
			return nil // the client went away or the log failed; it reconnects
		}
	}
	if hs, ok := sink.(*hijackedStream); ok {
		// The request's own context ends when this handler returns; the
		// stream lives on in its own goroutine until the client leaves.
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		hs.cancel = cancel
		detached = true
		go hs.watchClient()
		go st.pump(ctx)
		return nil
	}
	st.pump(r.Context())
	return nil
}

// replayFlushBytes is how much replayed text is written at once.
const replayFlushBytes = 32 << 10

// openStream is one open event stream: its subscription, where it writes,
// and what ends it.
type openStream struct {
	s        *Server
	keyID    string // the key that opened it, "" for a cookie session
	cookieID string // the cookie session that opened it, "" for a key
	last     int64  // events up to this id were sent (or are not wanted)
	sub      *events.Sub
	revoked  <-chan struct{}
	done     func() // unregisters it from keyed
	sink     streamSink
}

// event adds one event to the sink (not yet written).
func (st *openStream) event(e *events.Event) {
	st.sink.appendf("id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data)
	st.s.EventSent() // metrics.go
}

// pump writes events and heartbeats until the client leaves, the key is
// revoked or expires, the hub drops the stream, or the gateway drains;
// then it closes the stream.
func (st *openStream) pump(ctx context.Context) {
	defer st.close()
	s := st.s
	beat := time.NewTicker(s.opt.SSEHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.streams:
			return
		case <-st.revoked:
			st.sink.appendf(": key revoked\n\n")
			_ = st.sink.flush()
			return
		case e, ok := <-st.sub.C:
			if !ok {
				return // dropped as too slow, or shutdown: the client resumes with Last-Event-ID
			}
			select { // ended together with the event's arrival: nothing more is written
			case <-st.revoked:
				st.sink.appendf(": key revoked\n\n")
				_ = st.sink.flush()
				return
			default:
			}
			// Write this event and whatever else is already waiting, then
			// flush once.
			for pending := len(st.sub.C); ; pending-- {
				if e.ID > st.last {
					st.event(e)
				}
				if pending <= 0 {
					break
				}
				if e, ok = <-st.sub.C; !ok {
					_ = st.sink.flush()
					return
				}
			}
			if st.sink.flush() != nil {
				return
			}
		case <-beat.C:
			var err error
			switch {
			case st.keyID != "":
				err = s.svc.CheckKeyActive(ctx, st.keyID)
			case st.cookieID != "":
				err = s.svc.CheckCookieActive(ctx, st.cookieID)
			}
			if gateway.AsError(err) != nil {
				st.sink.appendf(": %s\n\n", gateway.AsError(err).Code)
				_ = st.sink.flush()
				return
			} else if err != nil {
				s.log.Warn("event stream: credential check failed; the stream stays open", "err", err)
			}
			st.sink.appendf(": heartbeat\n\n")
			if st.sink.flush() != nil {
				return
			}
		}
	}
}

// close ends the subscription, frees the key's stream slot and ends the
// response.
func (st *openStream) close() {
	st.sub.Close()
	st.done()
	if st.sink != nil {
		st.sink.end()
	}
}

// streamSink is where an event stream's text goes: appendf buffers, flush
// writes what was buffered and pushes it to the client, end finishes the
// response.
type streamSink interface {
	appendf(format string, args ...any)
	pending() int
	flush() error
	end()
}

// writerStream is a stream on the response writer (HTTP/2, HTTP/1.0).
type writerStream struct {
	w   http.ResponseWriter
	f   http.Flusher
	buf []byte
}

func (ws *writerStream) appendf(f string, a ...any) { ws.buf = fmt.Appendf(ws.buf, f, a...) }
func (ws *writerStream) pending() int               { return len(ws.buf) }
func (ws *writerStream) flush() error {
	_, err := ws.w.Write(ws.buf)
	ws.buf = ws.buf[:0]
	if err == nil {
		ws.f.Flush()
	}
	return err
}
func (ws *writerStream) end() {}

// streamWriteTimeout bounds one write to a hijacked stream: a client that
// stops reading for that long is dropped (it resumes with Last-Event-ID).
const streamWriteTimeout = 30 * time.Second

// hijackedStream is a stream on a connection taken over from net/http: it
// writes the HTTP/1.1 response itself, in chunked transfer coding (RFC
// 9112 7.1), one chunk per flush. Between flushes it holds no buffer.
type hijackedStream struct {
	conn   net.Conn
	buf    []byte
	cancel context.CancelFunc // ends the stream's context (client gone)
	once   sync.Once
}

// hijackStream takes the connection of an HTTP/1.1 GET over from net/http
// and writes the response head (status 200 and the headers set on w), or
// answers nil when the request stays on the response writer: HTTP/2 and
// HTTP/1.0, HEAD, a writer that cannot be hijacked, or
// Options.StreamsOnResponseWriter.
func (s *Server) hijackStream(w http.ResponseWriter, r *http.Request) *hijackedStream {
	if s.opt.StreamsOnResponseWriter || r.Method != http.MethodGet || r.ProtoMajor != 1 || r.ProtoMinor < 1 {
		return nil
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil
	}
	_ = conn.SetDeadline(time.Time{})
	h := w.Header().Clone()
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Transfer-Encoding", "chunked")
	// The connection ends with the stream: a client must not return it to
	// its pool of idle connections after the last chunk.
	h.Set("Connection", "close")
	h.Del("Content-Length")
	head := []byte("HTTP/1.1 200 OK\r\n")
	var hb strings.Builder
	_ = h.Write(&hb)
	head = append(append(head, hb.String()...), "\r\n"...)
	hs := &hijackedStream{conn: conn, cancel: func() {}}
	// A failed write of the head fails the first flush too, which ends
	// the stream.
	_ = hs.write(head)
	return hs
}

func (hs *hijackedStream) appendf(f string, a ...any) { hs.buf = fmt.Appendf(hs.buf, f, a...) }
func (hs *hijackedStream) pending() int               { return len(hs.buf) }

// flush writes what was added as one chunk.
func (hs *hijackedStream) flush() error {
	if len(hs.buf) == 0 {
		return nil
	}
	size := strconv.AppendInt(make([]byte, 0, 10), int64(len(hs.buf)), 16)
	chunk := net.Buffers{append(size, "\r\n"...), hs.buf, []byte("\r\n")}
	hs.buf = nil // an idle stream keeps no buffer
	_ = hs.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	_, err := chunk.WriteTo(hs.conn) // one writev, the text not copied
	return err
}

func (hs *hijackedStream) write(b []byte) error {
	_ = hs.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	_, err := hs.conn.Write(b)
	return err
}

// end writes the last chunk and closes the connection.
func (hs *hijackedStream) end() {
	hs.once.Do(func() {
		_ = hs.flush()
		_ = hs.write([]byte("0\r\n\r\n"))
		hs.conn.Close()
		hs.cancel()
	})
}

// watchClient reads the connection until the client closes it (anything
// it sends is ignored: an event stream's client has nothing to say) and
// then ends the stream's context.
func (hs *hijackedStream) watchClient() {
	var b [64]byte
	for {
		if _, err := hs.conn.Read(b[:]); err != nil {
			hs.cancel()
			return
		}
	}
}

// StreamRetry is the reconnect delay an event stream announces at connect
// (its retry: field): long enough that a restarting gateway is not hammered,
// short enough that a person sees new mail soon after a cut.
const StreamRetry = 2 * time.Second

// tooManyStreams is the 429 of the cap of event streams per key (or
// cookie session): Options.MaxStreamsPerKey.
// tooManyStreamsOfPrincipal is the 429 of the cap of event streams of one
// person or agent over all its keys and cookie sessions
// (StreamsPerPrincipalFactor times Options.MaxStreamsPerKey).
func tooManyStreamsOfPrincipal(p *gateway.Principal, limit int) error {
	whose := "your keys and sign-ins"
	if p.IsAgent() {
		whose = "the keys of agent " + p.Name
	}
	return &gateway.Error{Kind: gateway.KindRateLimited, Code: "too_many_streams", RetryAfter: 5 * time.Second,
		Message: fmt.Sprintf("%s already hold %d event streams open; the limit is %d in all", whose, limit, limit),
		Suggestion: "close streams you no longer read (one stream per process is enough: every stream gets every event), " +
			"or ask the admin to raise " + EnvMaxStreamsPerKey}
}

func tooManyStreams(limit int) error {
	return &gateway.Error{Kind: gateway.KindRateLimited, Code: "too_many_streams", RetryAfter: 5 * time.Second,
		Message: fmt.Sprintf("this key already has %d event streams open; the limit is %d per key", limit, limit),
		Suggestion: "close a stream you no longer read (one stream per process is enough: every stream gets every event), " +
			"or ask the admin to raise " + EnvMaxStreamsPerKey}
}
