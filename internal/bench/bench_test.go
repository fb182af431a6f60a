package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRunProducesEveryFigure runs the benchmark at toy size: it checks that
// every phase completes over real HTTP and reports its row, not any timing.
func TestRunProducesEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Senders: 4, SendDuration: 300 * time.Millisecond, StreamAgents: 5, StreamMails: 10,
		StreamSenders: 2, StoredMails: 2000, InboxRequests: 20, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	table := rep.Table()
	for _, want := range []string{"mails sent per second", "send latency", "SSE delivery latency", "inbox latency", "2000 stored mails"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
