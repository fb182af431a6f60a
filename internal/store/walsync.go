package store

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
)

// Durable answers without a stalled writer (SQLite, synchronous=full).
//
// With PRAGMA synchronous=FULL every COMMIT waits for the fsync of the
// WAL, and the single writer connection waits with it: no batch runs
// while the disk flushes the previous one. Instead the writer connection
// runs with synchronous=NORMAL (a COMMIT writes the WAL frames into the
// operating system's page cache and returns) and walSyncer flushes the WAL
// itself, in a goroutine of its own: a batch's answers wait for an fsync
// of the WAL that began after the batch committed, while the writer goes
// on with the next batch. One fsync then serves every batch committed
// before it began. An answered write is on disk exactly as with FULL: the
// fsync covers every frame written to the file before it, the commit frame
// of the batch among them (a WAL checkpoint fsyncs the WAL before it
// copies anything into the database file, and the database file after).
//
// What the writer committed is visible to readers before its fsync ends
// (with FULL, once the commit's fsync ended). Nothing answered depends on
// that: a write that read it commits in a later batch, whose answer waits
// for a later fsync, which covers the earlier batch too. Events, whose ids
// streams resume from, are handed out only up to the durable watermark
// (NextEvents): a power loss can take back an event id no stream saw.
//
// A failed fsync is final, as in PostgreSQL: after an fdatasync error the
// kernel may have dropped the dirty pages it could not write, so a later
// fsync that succeeds proves nothing about the frames before it. The
// syncer then keeps the error (failure): the watermark never rises again,
// every pending and later answer is an error wrapping ErrStorageFailed,
// and the store refuses every later write (Store.StorageFailure) until the
// process is restarted and SQLite's recovery reads what is on disk.
type walSyncer struct {
	wal     string // the WAL file's path
	db      string // the database file's path (when there is no WAL file)
	mu      sync.Mutex
	pending []syncAnswer
	events  int64         // the highest event id committed by pending answers
	busy    bool          // an fsync runs
	idle    chan struct{} // closed when the running fsync has answered
	wake    chan struct{}
	quit    chan struct{}
	wg      sync.WaitGroup
	// durable is the highest event id known to be on disk.
	durable atomic.Int64
	syncs   atomic.Int64 // fsyncs made (for tests)
	// failed holds the error of the first fsync that failed (nil while
	// none did); once set it stays.
	failed atomic.Pointer[error]
	log    *slog.Logger // where a failed fsync is logged (never nil)
	// beforeSync, when set (tests), runs before each fsync.
	beforeSync func()
	// syncHook, when set (tests: Store.FailWALFlushesForTest), replaces
	// datasync.
	syncHook atomic.Pointer[func(*os.File) error]
}

// ErrStorageFailed is wrapped by the answer of every write once an fsync
// of the SQLite write-ahead log failed (synchronous=full): the write that
// was waiting for it may or may not be on disk, and no write is taken any
// more until the gateway is restarted.
var ErrStorageFailed = errors.New("store: the database could not be flushed to disk; writes are refused until the gateway is restarted")

// syncAnswer is the answer of one write request, given once the WAL is
// flushed.
type syncAnswer struct {
	r   *writeReq
	err error
}

// startWALSyncer starts the syncer of the SQLite database at path.
func startWALSyncer(path string, log *slog.Logger) *walSyncer {
	if log == nil {
		log = slog.Default()
	}
	w := &walSyncer{wal: path + "-wal", db: path, log: log, wake: make(chan struct{}, 1), quit: make(chan struct{})}
	w.wg.Add(1)
	go w.loop()
	return w
}

// answerAfterSync queues the answers of a committed batch (maxEvent: the
// highest event id it appended, 0 for none) for the next fsync.
func (w *walSyncer) answerAfterSync(answers []syncAnswer, maxEvent int64) {
	w.mu.Lock()
	w.pending = append(w.pending, answers...)
	w.events = max(w.events, maxEvent)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// idleChan answers whether an fsync runs and a channel closed once it
// has answered its batches.
func (w *walSyncer) idleChan() (<-chan struct{}, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.idle, w.busy
}

func (w *walSyncer) loop() {
	defer w.wg.Done()
	for {
		select {
		case <-w.wake:
		case <-w.quit:
			w.flush() // what the write loop handed over before it ended
			return
		}
		w.flush()
	}
}

// flush fsyncs the WAL and answers what was pending when it began.
func (w *walSyncer) flush() {
	w.mu.Lock()
	answers, events := w.pending, w.events
	w.pending = nil
	if len(answers) > 0 {
		w.busy, w.idle = true, make(chan struct{})
	}
	w.mu.Unlock()
	if len(answers) == 0 {
		return
	}
	defer func() {
		w.mu.Lock()
		w.busy = false
		close(w.idle)
		w.mu.Unlock()
	}()
	if w.beforeSync != nil {
		w.beforeSync()
	}
	err := w.failure()
	if err == nil {
		// The watermark rises only while no fsync has failed: after a
		// failure nothing committed since the last good fsync is known to
		// be on disk, whatever a later fsync answers.
		if err = w.fsync(); err == nil {
			w.assumeDurable(events)
		} else {
			err = w.fail(err)
		}
		w.syncs.Add(1)
	}
	for _, a := range answers {
		if a.err == nil && err != nil {
			a.err = err
		}
		a.r.done <- a.err
	}
}

// failure answers the error every write answers since an fsync failed
// (wrapping ErrStorageFailed and the fsync's own error), nil while none
// did. Safe on a nil syncer.
func (w *walSyncer) failure() error {
	if w == nil {
		return nil
	}
	if p := w.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// fail records the first failed fsync (logged at error level) and answers
// the error writes answer from now on.
func (w *walSyncer) fail(cause error) error {
	err := fmt.Errorf("%w: %w", ErrStorageFailed, cause)
	if w.failed.CompareAndSwap(nil, &err) {
		w.log.Error("store: the write-ahead log could not be flushed to disk; the gateway refuses writes and is not ready until it is restarted (check the disk first)",
			"wal", w.wal, "err", cause)
	}
	return w.failure()
}

// fsync flushes the WAL file to disk (the file is opened for the call:
// SQLite may delete and create it again when every connection closed). A
// missing WAL file means everything is in the database file, which is
// flushed then.
func (w *walSyncer) fsync() error {
	f, err := os.Open(w.wal)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.Open(w.db)
	}
	if err != nil {
		return fmt.Errorf("store: flush the write-ahead log: %w", err)
	}
	defer f.Close()
	sync := datasync
	if h := w.syncHook.Load(); h != nil {
		sync = *h
	}
	if err := sync(f); err != nil {
		return fmt.Errorf("store: flush the write-ahead log: %w", err)
	}
	return nil
}

// durableEvent answers the highest event id known to be on disk.
func (w *walSyncer) durableEvent() int64 { return w.durable.Load() }

// assumeDurable raises the durable watermark to id: the events stored
// when the gateway started.
func (w *walSyncer) assumeDurable(id int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id > w.durable.Load() {
		w.durable.Store(id)
	}
}

// stop answers what is pending and ends the goroutine; call it after the
// write loop ended.
func (w *walSyncer) stop() {
	if w == nil {
		return
	}
	select {
	case <-w.quit:
		return
	default:
	}
	close(w.quit)
	w.wg.Wait()
}
