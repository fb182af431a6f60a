package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestBackgroundCheckpointCopiesCommittedWritesIntoTheDatabaseFile checks
// that committed writes reach the database file itself (not only the WAL)
// without the writer checkpointing: the main file, read with immutable=1
// (which ignores the WAL), soon holds every committed row.
func TestBackgroundCheckpointCopiesCommittedWritesIntoTheDatabaseFile(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 50
	for i := 0; i < n; i++ {
		err := st.Write(ctx, func(q *Q) error {
			_, err := q.Exec(ctx, `INSERT INTO names (name, kind, created_at) VALUES (?, ?, ?)`, fmt.Sprintf("ckpt-%d", i), KindPerson, 1)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A fresh immutable connection per look: it caches what it read.
	fileRows := func() (int, error) {
		file, err := sql.Open("sqlite", "file:"+st.Path()+"?mode=ro&immutable=1")
		if err != nil {
			return 0, err
		}
		defer file.Close()
		var got int
		err = file.QueryRowContext(ctx, `SELECT COUNT(*) FROM names WHERE name LIKE 'ckpt-%'`).Scan(&got)
		return got, err
	}
	// The checkpointer counts a run after its PRAGMA returns, so the rows can
	// be in the file a moment before the count says so: wait for both.
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := fileRows()
		if err == nil && got == n && st.ckpt.runs.Load() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database file holds %d of %d committed rows (%v) after %d background checkpoints; the WAL was not checkpointed",
				got, n, err, st.ckpt.runs.Load())
		}
		st.kickCheckpoint() // a kick during the pause after the last run is kept for the next one
		time.Sleep(20 * time.Millisecond)
	}
	var writerLimit int
	err = st.Write(ctx, func(q *Q) error { return q.QueryRow(ctx, `PRAGMA wal_autocheckpoint`).Scan(&writerLimit) })
	if err != nil || writerLimit != writerAutoCheckpoint {
		t.Fatalf("writer wal_autocheckpoint = %d (%v), want %d: the writer must leave checkpoints to the background", writerLimit, err, writerAutoCheckpoint)
	}
}
