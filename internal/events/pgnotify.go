package events

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmail/agentmail/internal/store"
)

// Cross-replica wake-ups on PostgreSQL. A write transaction that appended
// events queues NOTIFY on store.EventChannel (store.Dialect.NotifyEvents),
// which PostgreSQL delivers to every listener when it commits. Each
// replica's hub keeps one connection LISTENing there and, on every
// notification, reads the event log after the last id it dispatched, so
// an event written through replica A reaches the streams open on replica B.
// The notification carries nothing: the log stays the truth, and the hub's
// safety poll covers a lost connection until it is back.

// listenBackoff bounds the wait between reconnection attempts of the
// listener: it doubles from the first value up to the second.
var listenBackoff = [2]time.Duration{250 * time.Millisecond, 15 * time.Second}

// listenPostgres keeps a LISTEN connection open on url until ctx ends,
// waking the hub on every notification and after every (re)connection (an
// event may have been committed while nobody listened).
func (h *Hub) listenPostgres(ctx context.Context, url string) {
	wait := listenBackoff[0]
	for ctx.Err() == nil {
		err := h.listenOnce(ctx, url, func() { wait = listenBackoff[0] })
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("event hub: PostgreSQL LISTEN connection lost; polling the event log until it is back",
			"err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, listenBackoff[1])
	}
}

// listenOnce connects, listens and forwards notifications until the
// connection fails or ctx ends. connected is called once LISTEN holds.
func (h *Hub) listenOnce(ctx context.Context, url string, connected func()) error {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	conn, err := pgx.Connect(cctx, url)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+store.EventChannel); err != nil {
		return err
	}
	h.listening.Store(true)
	defer h.listening.Store(false)
	connected()
	h.Notify()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		h.Notify()
	}
}

// Listening reports whether the hub holds a LISTEN connection to
// PostgreSQL (always false on SQLite, where no other process writes).
func (h *Hub) Listening() bool { return h.listening.Load() }
