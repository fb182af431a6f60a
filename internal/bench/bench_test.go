package bench

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRunProducesEveryFigure runs the benchmark at toy size: it checks that
// every phase completes over real HTTP and reports its rows and tables,
// not any timing.
func TestRunProducesEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Senders: 4, SenderSweep: []int{1, 3}, SendDuration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond,
		StreamAgents: 5, StreamCounts: []int{3, 5}, StreamSenders: 2, StoredMails: 2000, InboxRequests: 20, SearchRequests: 10, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	table := rep.Table()
	for _, want := range []string{"mails sent per second, 4 concurrent senders, agent sends", "person sends", "send latency",
		"SSE delivery latency", "inbox latency", "2000 stored mails", "against concurrent senders", "| 3 |",
		"against open streams", " MB", "against stored mails", "| 2000 |", "search latency", "two Chinese characters"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestPeerMailpit drives a mailpit binary (the one on PATH) with the same
// loop and checks that the report gives its rate and the ratio.
func TestPeerMailpit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway and mailpit")
	}
	path, err := exec.LookPath("mailpit")
	if err != nil {
		t.Skip("mailpit is not on PATH (scripts/deps.sh installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Senders: 2, SendDuration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond,
		PeerMailpit: path, Phases: []string{"send"}, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	table := rep.Table()
	for _, want := range []string{"mailpit POST /api/v1/send per second", "ratio to mailpit"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestReplicasShareOneDatabase runs the send phase with two gateways on
// one PostgreSQL database (the senders spread over both) and checks that
// both measured kinds report; SQLite refuses replicas.
func TestReplicasShareOneDatabase(t *testing.T) {
	if _, err := Run(context.Background(), Config{Replicas: 2, Phases: []string{"send"}, DataDir: t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), "--database-url") {
		t.Fatalf("two replicas on SQLite: %v, want an error naming --database-url", err)
	}
	server := os.Getenv("AGENTMAIL_TEST_POSTGRES_URL")
	if !strings.EqualFold(os.Getenv("AGENTMAIL_TEST_DATABASE"), "postgres") || server == "" {
		t.Skip("PostgreSQL only: AGENTMAIL_TEST_DATABASE=postgres AGENTMAIL_TEST_POSTGRES_URL=...")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Replicas: 2, Senders: 4, SendDuration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond,
		Phases: []string{"send"}, DatabaseURL: server, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Machine, "2 replicas") {
		t.Errorf("machine line %q does not name the replicas", rep.Machine)
	}
	table := rep.Table()
	for _, want := range []string{"agent sends", "person sends"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
