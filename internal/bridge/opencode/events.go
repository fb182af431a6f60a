package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// event is one event of the server's event stream, unwrapped from GET /global/event's
// {directory, project, payload {id, type, properties}} envelope.
type event struct {
	Directory string
	Type      string
	Props     json.RawMessage
	// SessionID is properties.sessionID ("" for events without one).
	SessionID string
	// Child is true when the event belongs to a subagent session of the watched one.
	Child bool
	// Size is the byte length of the event's data.
	Size int
}

type envelope struct {
	Directory string `json:"directory"`
	Payload   struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
	} `json:"payload"`
}

// parseEvent decodes one SSE data field. ok is false for data that is not an event.
func parseEvent(data []byte) (event, bool) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil || env.Payload.Type == "" {
		return event{}, false
	}
	ev := event{Directory: env.Directory, Type: env.Payload.Type, Props: env.Payload.Properties, Size: len(data)}
	var p struct {
		SessionID string `json:"sessionID"`
	}
	if len(ev.Props) > 0 && json.Unmarshal(ev.Props, &p) == nil {
		ev.SessionID = p.SessionID
	}
	return ev, true
}

// readSSE reads server-sent events from r and calls fn with each event's data (the data
// lines joined by "\n"). It returns when r ends or fails.
func readSSE(r *bufio.Reader, fn func(data []byte)) error {
	var data []byte
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0:
				if data != nil {
					fn(data)
					data = nil
				}
			case bytes.HasPrefix(line, []byte("data:")):
				v := bytes.TrimPrefix(line[5:], []byte(" "))
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, v...)
			}
		}
		if err != nil {
			if data != nil {
				fn(data)
			}
			return err
		}
	}
}

// watcher receives the events of one running turn. push never blocks the stream.
type watcher struct {
	mu       sync.Mutex
	queue    []event
	unparsed int
	notify   chan struct{} // capacity 1
	resync   chan struct{} // capacity 1: the stream reconnected, events may be lost
}

func newWatcher() *watcher {
	return &watcher{notify: make(chan struct{}, 1), resync: make(chan struct{}, 1)}
}

func (w *watcher) push(ev event) {
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *watcher) countUnparsed() {
	w.mu.Lock()
	w.unparsed++
	w.mu.Unlock()
}

func (w *watcher) kickResync() {
	select {
	case w.resync <- struct{}{}:
	default:
	}
}

// take returns and clears the queued events.
func (w *watcher) take() []event {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

func (w *watcher) unparsedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unparsed
}

// stream holds GET /global/event open for the adapter's lifetime and routes each event
// to the watcher of its session (events of subagent sessions go to the watcher of their
// root session, marked Child). It reconnects with a growing wait after a loss and then
// asks every watcher to re-check its session's state, since events may have been lost.
type stream struct {
	api *api
	log func(msg string, args ...any)

	mu       sync.Mutex
	watchers map[string]*watcher // session id → watcher
	parentOf map[string]string   // child session id → parent session id
}

func newStream(c *api, log func(string, ...any)) *stream {
	return &stream{api: c, log: log, watchers: map[string]*watcher{}, parentOf: map[string]string{}}
}

// watch registers w for sessionID. It fails when a turn of that session is running.
func (s *stream) watch(sessionID string, w *watcher) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.watchers[sessionID]; busy {
		return fmt.Errorf("opencode: a turn of session %s is already running; the core runs one turn per session", sessionID)
	}
	s.watchers[sessionID] = w
	return nil
}

func (s *stream) unwatch(sessionID string, w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchers[sessionID] == w {
		delete(s.watchers, sessionID)
	}
}

// maxParents bounds the child → parent map; the oldest half is dropped past it.
const maxParents = 4096

func (s *stream) dispatch(ev event) {
	if ev.Type == "session.created" {
		var p struct {
			Info session `json:"info"`
		}
		if json.Unmarshal(ev.Props, &p) == nil && p.Info.ParentID != "" {
			s.mu.Lock()
			if len(s.parentOf) >= maxParents {
				s.parentOf = map[string]string{}
			}
			s.parentOf[p.Info.ID] = p.Info.ParentID
			s.mu.Unlock()
		}
	}
	if ev.SessionID == "" {
		return
	}
	s.mu.Lock()
	w := s.watchers[ev.SessionID]
	if w == nil {
		id := ev.SessionID
		for i := 0; i < 8 && w == nil; i++ {
			parent, ok := s.parentOf[id]
			if !ok {
				break
			}
			w, id = s.watchers[parent], parent
			ev.Child = true
		}
	}
	s.mu.Unlock()
	if w != nil {
		w.push(ev)
	}
}

func (s *stream) unparsed() {
	s.mu.Lock()
	ws := make([]*watcher, 0, len(s.watchers))
	for _, w := range s.watchers {
		ws = append(ws, w)
	}
	s.mu.Unlock()
	for _, w := range ws {
		w.countUnparsed()
	}
}

func (s *stream) resyncAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w.kickResync()
	}
}

// run connects and reads until ctx ends. ready receives the outcome of the first
// connection (nil once server.connected arrived) and is not used afterwards.
func (s *stream) run(ctx context.Context, ready chan<- error) {
	wait := 250 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		connected := false
		err := s.connect(ctx, func() {
			connected = true
			if first {
				first = false
				ready <- nil
			} else {
				s.log("opencode event stream reconnected; running turns re-check their sessions")
				s.resyncAll()
			}
		})
		if ctx.Err() != nil {
			return
		}
		if first {
			first = false
			ready <- fmt.Errorf("opencode: event stream GET /global/event: %w", err)
			// Keep trying: Start reports the failure, Close stops this loop.
		}
		if connected {
			wait = 250 * time.Millisecond
		}
		s.log("opencode event stream lost; reconnecting", "err", err, "wait", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if wait < 5*time.Second {
			wait *= 2
		}
	}
}

// connect reads one connection of the stream until it ends; onConnected is called at
// its server.connected event.
func (s *stream) connect(ctx context.Context, onConnected func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.api.base+"/global/event", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	s.api.auth(req)
	resp, err := s.api.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return readSSE(bufio.NewReaderSize(resp.Body, 64<<10), func(data []byte) {
		ev, ok := parseEvent(data)
		if !ok {
			s.unparsed()
			return
		}
		if ev.Type == "server.connected" {
			onConnected()
			return
		}
		s.dispatch(ev)
	})
}
