package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// Background WAL checkpoints (SQLite). By default SQLite copies the WAL
// back into the database file from inside the commit that crosses 1,000
// pages, so one write batch in a few hundred pays for it: two fsyncs and a
// write per page, milliseconds during which the single writer stands
// still and every queued send waits. Here the writer connection only does
// that past writerAutoCheckpoint pages (a safety net), and a goroutine
// with its own connection runs PASSIVE checkpoints (which never block the
// writer or the readers) after commits, at most every checkpointEvery.

const (
	// checkpointEvery is the shortest time between two background
	// checkpoints.
	checkpointEvery = 250 * time.Millisecond
	// writerAutoCheckpoint is the WAL size (pages) past which the writer
	// connection checkpoints by itself, as if there were no background one.
	writerAutoCheckpoint = 4000
)

// checkpointer runs the background checkpoints of one SQLite store.
type checkpointer struct {
	db   *sql.DB
	kick chan struct{}
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	runs atomic.Int64 // checkpoints run (for tests)
}

// startCheckpointer opens the checkpoint connection with dsn and starts
// its goroutine.
func (s *Store) startCheckpointer(dsn string) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), quit: make(chan struct{})}
	c.wg.Add(1)
	go c.loop()
	s.ckpt = c
	return nil
}

func (c *checkpointer) loop() {
	defer c.wg.Done()
	wait := time.NewTimer(0)
	<-wait.C
	for {
		select {
		case <-c.kick:
		case <-c.quit:
			return
		}
		// PASSIVE copies what no reader still needs and returns; an error
		// (the database busy) only means the next one copies more.
		_, _ = c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		c.runs.Add(1)
		wait.Reset(checkpointEvery)
		select {
		case <-wait.C:
		case <-c.quit:
			return
		}
	}
}

// kickCheckpoint asks for a background checkpoint after a commit; it
// never blocks.
func (s *Store) kickCheckpoint() {
	if s.ckpt == nil {
		return
	}
	select {
	case s.ckpt.kick <- struct{}{}:
	default:
	}
}

// stop ends the goroutine and closes its connection.
func (c *checkpointer) stop() error {
	if c == nil {
		return nil
	}
	var err error
	c.once.Do(func() {
		close(c.quit)
		c.wg.Wait()
		err = c.db.Close()
	})
	return err
}
