package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// TestKilledGatewayLosesNoAcknowledgedMail is the durability guarantee of a
// send (docs/OPERATIONS.md, "Durability"): the real binary under
// concurrent load is killed with SIGKILL, started again over the same data,
// and every mail it had answered 200 for is there. It runs on SQLite (with
// the default synchronous=full) and, under AGENTMAIL_TEST_DATABASE=postgres,
// on PostgreSQL.
func TestKilledGatewayLosesNoAcknowledgedMail(t *testing.T) {
	dataDir := t.TempDir()
	g := startGatewayWithFlags(t, dataDir, "")
	e := newPeopleAndAgents(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k, err := e.admin.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: "durability", Lifecycle: client.LifecyclePermanent})
	if err != nil {
		t.Fatal(err)
	}
	sender := client.New(g.URL, client.WithToken(k.KeyToken))

	const senders, killAfter = 16, 400
	var mu sync.Mutex
	var acked []string
	enough := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for n := 0; ; n++ {
				r, err := sender.MeSend(ctx, client.SendMailRequest{To: fmt.Sprintf("bot@/durable/%d", i), Subject: fmt.Sprintf("load %d", n), Body: "x"})
				if err != nil {
					return // the gateway was killed (or the test ended)
				}
				mu.Lock()
				acked = append(acked, r.MailID)
				if len(acked) == killAfter {
					close(enough)
				}
				mu.Unlock()
			}
		}(i)
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatalf("fewer than %d mails answered: %v\n%s", killAfter, ctx.Err(), g.Log)
	}
	// Killed with the senders still sending: some writes are in flight.
	if err := g.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-g.Exited()
	wg.Wait()
	mu.Lock()
	ids := append([]string(nil), acked...)
	mu.Unlock()
	if len(ids) < killAfter {
		t.Fatalf("%d mails answered", len(ids))
	}

	g2 := startGatewayWithFlags(t, dataDir, "")
	reader := client.New(g2.URL, client.WithToken(k.KeyToken))
	lost := 0
	for _, id := range ids {
		if _, err := reader.MeGetMail(ctx, id); err != nil {
			if lost < 5 {
				t.Errorf("answered mail %s is gone after SIGKILL: %v", id, err)
			}
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d answered mails lost", lost, len(ids))
	}
	t.Logf("%d answered mails, all kept across SIGKILL", len(ids))
}
