package bridge

import (
	"context"
	"sync"
)

// DefaultMaxTurns is the default number of turns a bridge runs at once
// (issue 4 item 2, seed 004 A6).
const DefaultMaxTurns = 4

// slots is the turn scheduler: at most max turns at once, one per working
// directory, one per mail session. Waiters are served in arrival order; a
// waiter never overtakes an earlier one of the same session or directory,
// so mails of one session run in the order they arrived (B-7.4). Nothing is
// ever dropped: a waiter waits until a slot frees or its context ends.
type slots struct {
	mu       sync.Mutex
	max      int
	running  int
	dirs     map[string]bool
	sessions map[string]bool
	queue    []*ticket
	seq      uint64
}

// ticket is one place in the queue. ready is closed when the slot is granted.
type ticket struct {
	session, dir string
	seq          uint64 // arrival order
	ready        chan struct{}
	granted      bool
	gone         bool
}

// queueState says why an enqueued ticket waits, for the "queued" log line.
type queueState struct {
	Waiting     bool // false: granted at once
	Full        bool // all max slots are busy
	DirBusy     bool // another turn runs in the same directory
	SessionBusy bool // a turn of the same mail session runs
	Ahead       int  // tickets queued before this one
	Running     int
	Max         int
}

func newSlots(max int) *slots {
	if max <= 0 {
		max = DefaultMaxTurns
	}
	return &slots{max: max, dirs: map[string]bool{}, sessions: map[string]bool{}}
}

// enqueue places a ticket in the queue at once (so arrival order is kept
// even before the caller waits) and grants it when possible.
func (s *slots) enqueue(session, dir string) (*ticket, queueState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	t := &ticket{session: session, dir: dir, seq: s.seq, ready: make(chan struct{})}
	ahead := len(s.queue)
	s.queue = append(s.queue, t)
	s.grantLocked()
	st := queueState{Waiting: !t.granted, Running: s.running, Max: s.max, Ahead: ahead}
	if !t.granted {
		st.Full = s.running >= s.max
		st.DirBusy = s.dirs[dir]
		st.SessionBusy = s.sessions[session]
	}
	return t, st
}

// wait blocks until t is granted (true) or ctx ends (false; the ticket
// leaves the queue).
func (s *slots) wait(ctx context.Context, t *ticket) bool {
	select {
	case <-t.ready:
		return true
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.granted {
		// Granted while ctx ended: give the slot back.
		s.releaseLocked(t)
		return false
	}
	t.gone = true
	s.removeLocked(t)
	s.grantLocked()
	return false
}

// release frees a granted ticket's slot.
func (s *slots) release(t *ticket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(t)
}

func (s *slots) releaseLocked(t *ticket) {
	if !t.granted || t.gone {
		return
	}
	t.gone = true
	s.running--
	delete(s.dirs, t.dir)
	delete(s.sessions, t.session)
	s.grantLocked()
}

func (s *slots) removeLocked(t *ticket) {
	for i, q := range s.queue {
		if q == t {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return
		}
	}
}

// grantLocked grants queued tickets in order while slots are free. A ticket
// that cannot run blocks later tickets of its session and directory.
func (s *slots) grantLocked() {
	blockedDir := map[string]bool{}
	blockedSes := map[string]bool{}
	kept := s.queue[:0]
	for _, t := range s.queue {
		if s.running < s.max && !s.dirs[t.dir] && !s.sessions[t.session] && !blockedDir[t.dir] && !blockedSes[t.session] {
			t.granted = true
			s.running++
			s.dirs[t.dir] = true
			s.sessions[t.session] = true
			close(t.ready)
			continue
		}
		blockedDir[t.dir] = true
		blockedSes[t.session] = true
		kept = append(kept, t)
	}
	for i := len(kept); i < len(s.queue); i++ {
		s.queue[i] = nil
	}
	s.queue = kept
}

// ahead answers how many tickets wait before t (false once t left the
// queue).
func (s *slots) ahead(t *ticket) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.queue {
		if q == t {
			return i, true
		}
	}
	return 0, false
}

// stats returns the running count and queue length (for tests and logs).
func (s *slots) stats() (running, queued int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, len(s.queue)
}
