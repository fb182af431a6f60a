// Package events fans the event log out to open SSE streams.
//
// The event log (table events) is the truth: every event is written there
// in the same transaction as the mail it announces. The Hub keeps the id of
// the last event it has seen; when woken (Notify, called after a commit, or
// later by a PostgreSQL LISTEN/NOTIFY bridge) and on a slow safety poll, it
// reads the log after that id and hands each event to every open stream of
// its recipient. A stream that falls behind is closed; its client reconnects
// with Last-Event-ID and replays from the log, so nothing is lost.
package events

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmail/agentmail/internal/store"
)

// Event is one log entry handed to a stream.
type Event = store.EventRow

// Options tunes a Hub. Zero fields take defaults.
type Options struct {
	// PollInterval is the safety poll of the log when no Notify comes
	// (writes by another process); default 1 s.
	PollInterval time.Duration
	// Buffer is how many events a stream may have waiting before the hub
	// drops it; default 256.
	Buffer int
	// Batch is how many log rows one read takes; default 500.
	Batch int
}

// Hub delivers events from the log to subscribers by recipient name.
type Hub struct {
	st   *store.Store
	opt  Options
	log  *slog.Logger
	wake chan struct{}
	// listening is true while a PostgreSQL LISTEN connection is up
	// (pgnotify.go).
	listening atomic.Bool

	mu   sync.Mutex
	last int64 // highest event id dispatched (cursor.Last once running)
	// cursor is the dispatch loop's position in the log (store.EventCursor);
	// only the loop uses it.
	cursor store.EventCursor
	subs   map[string]map[*Sub]struct{}
	count  int
	closed bool
}

// Sub is one open stream's subscription. Events arrive on C in id order;
// C is closed when the hub drops the stream (too slow) or shuts down. The
// events are shared by every stream of the recipient and must not be
// changed; C carries pointers so that a waiting stream costs 8 bytes per
// buffered slot, not a whole row (10,000 streams × Buffer slots).
type Sub struct {
	Name string
	// From is the highest event id NOT delivered on C: replay (from the log)
	// covers (Last-Event-ID, From], C carries everything after From.
	From int64
	C    chan *Event
	hub  *Hub
	once sync.Once
}

// NewHub builds a hub over the store; call Start before subscribing.
func NewHub(st *store.Store, opt Options, log *slog.Logger) *Hub {
	if opt.PollInterval <= 0 {
		opt.PollInterval = time.Second
	}
	if opt.Buffer <= 0 {
		opt.Buffer = 256
	}
	if opt.Batch <= 0 {
		opt.Batch = 500
	}
	if log == nil {
		log = slog.Default()
	}
	return &Hub{st: st, opt: opt, log: log, wake: make(chan struct{}, 1), subs: map[string]map[*Sub]struct{}{}}
}

// Start reads the current end of the log (a first connection gets nothing
// older, N-11) and runs the dispatch loop until ctx ends; then every stream
// is closed.
func (h *Hub) Start(ctx context.Context) error {
	last, err := h.st.SafeEventStart(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.last = last
	h.cursor = store.EventCursor{Last: last}
	h.mu.Unlock()
	if url := h.st.PostgresURL(); url != "" {
		go h.listenPostgres(ctx, url) // wake-ups from other replicas
	}
	go h.loop(ctx)
	return nil
}

// Notify wakes the hub to read the log; it never blocks.
func (h *Hub) Notify() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Last answers the highest event id dispatched so far.
func (h *Hub) Last() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Subscribers answers the number of open streams.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// gapRetry is how soon the hub reads the log again while its cursor waits
// at a missing id (store.EventCursor): a rolled-back event id wakes no one.
const gapRetry = 5 * time.Millisecond

func (h *Hub) loop(ctx context.Context) {
	t := time.NewTicker(h.opt.PollInterval)
	defer t.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		select {
		case <-ctx.Done():
			h.shutdown()
			return
		case <-h.wake:
		case <-t.C:
		case <-retry.C:
		}
		if err := h.drain(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("event hub: read log", "err", err)
		}
		if h.cursor.Waiting() {
			retry.Reset(gapRetry)
		}
	}
}

// drain reads and dispatches everything the cursor may hand out.
func (h *Hub) drain(ctx context.Context) error {
	for {
		evs, err := h.st.NextEvents(ctx, &h.cursor, h.opt.Batch)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		h.mu.Lock()
		for i := range evs {
			e := &evs[i]
			if e.ID <= h.last {
				continue
			}
			h.last = e.ID
			for s := range h.subs[e.Recipient] {
				select {
				case s.C <- e:
				default:
					h.log.Info("event hub: stream too slow, closing it", "recipient", s.Name)
					h.removeLocked(s)
				}
			}
		}
		h.mu.Unlock()
		if len(evs) < h.opt.Batch {
			return nil
		}
	}
}

// Subscribe opens a subscription for name. Events with id > sub.From arrive
// on sub.C; the caller replays older ones it needs from the log.
func (h *Hub) Subscribe(name string) *Sub {
	s := &Sub{Name: name, C: make(chan *Event, h.opt.Buffer), hub: h}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.From = h.last
	if h.closed {
		close(s.C)
		return s
	}
	m := h.subs[name]
	if m == nil {
		m = map[*Sub]struct{}{}
		h.subs[name] = m
	}
	m[s] = struct{}{}
	h.count++
	return s
}

// Close ends the subscription; safe to call more than once.
func (s *Sub) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.removeLocked(s)
}

func (h *Hub) removeLocked(s *Sub) {
	m := h.subs[s.Name]
	if _, ok := m[s]; !ok {
		return
	}
	delete(m, s)
	if len(m) == 0 {
		delete(h.subs, s.Name)
	}
	h.count--
	s.once.Do(func() { close(s.C) })
}

func (h *Hub) shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, m := range h.subs {
		for s := range m {
			h.removeLocked(s)
		}
	}
}

// Replay answers name's events with after < id <= upTo from the log, oldest
// first (Last-Event-ID replay), in pages of the hub's batch size.
func (h *Hub) Replay(ctx context.Context, name string, after, upTo int64, fn func(Event) error) error {
	for after < upTo {
		evs, err := h.st.Read().RecipientEvents(ctx, name, after, upTo, h.opt.Batch)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
			after = e.ID
		}
		if len(evs) < h.opt.Batch {
			return nil
		}
	}
	return nil
}
