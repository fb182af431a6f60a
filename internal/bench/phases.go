// Package bench is the load generator of `agentmail bench` (issue 2 item
// 13): it starts a gateway on a temporary data directory and measures, over
// real HTTP, the mails sent per second by concurrent senders with their
// latency, the SSE delivery latency to many connected agents, and the inbox
// latency with a large number of stored mails.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
)

// The bench phases that hold open streams and read inboxes; Run in bench.go
// calls them in order.

// streamPhase: for each of StreamCounts, that many agents hold an SSE
// stream each (in the stream holder); 2 mails per stream, one recipient
// each, are sent by StreamSenders concurrent senders. The latency of a
// delivery is from just before its send request to the event's arrival
// on the agent's stream; the peak RSS is this process's during the run.
func (b *runner) streamPhase(ctx context.Context, rep *Report) error {
	where := "gateway process (the streams are held by another process)"
	if len(b.cfg.StreamHolder) == 0 {
		where = "gateway and stream holder together (one process)"
	}
	t := Table{Title: "Delivery p99 and peak RSS against open streams; RSS of the " + where,
		Header: []string{"open streams", "mails", "delivery p50", "delivery p99", "peak RSS"}}
	for _, n := range b.cfg.StreamCounts {
		row, err := b.streams(ctx, n)
		if err != nil {
			return err
		}
		t.Rows = append(t.Rows, row)
		if n == b.cfg.StreamCounts[0] {
			rep.Rows = append(rep.Rows, Row{fmt.Sprintf("SSE delivery latency p50 / p99, %d connected agents", n),
				row[2] + " / " + row[3], "p99 ≤ 50 ms"})
		}
	}
	rep.Tables = append(rep.Tables, t)
	return nil
}

func (b *runner) streams(ctx context.Context, n int) ([]string, error) {
	b.logf("sse: registering %d agents", n)
	for ; b.agents < n; b.agents++ {
		if _, err := b.agentClient(ctx, fmt.Sprintf("a%d", b.agents)); err != nil {
			return nil, err
		}
	}
	runtime.GC()
	reset := resetPeakRSS()
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = agentToken(fmt.Sprintf("a%d", i))
	}
	h, err := startHolder(ctx, b.cfg.StreamHolder, b.url, tokens)
	if err != nil {
		return nil, fmt.Errorf("sse: %w", err)
	}
	defer h.close()
	if got := b.app.Hub.Subscribers(); got < n {
		return nil, fmt.Errorf("sse: %d streams open, want %d", got, n)
	}
	mails := b.cfg.StreamMails
	if mails <= 0 {
		mails = 2 * n
	}
	b.logf("sse: %d streams open; sending %d mails with %d senders", n, mails, b.cfg.StreamSenders)
	starts := make([]time.Time, mails)
	next := make(chan int)
	errs := make(chan error, b.cfg.StreamSenders)
	var wg sync.WaitGroup
	for w := 0; w < b.cfg.StreamSenders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range next {
				starts[seq] = time.Now()
				_, err := b.person.MeSend(ctx, client.SendMailRequest{To: fmt.Sprintf("a%d@/bench", seq%n), Subject: fmt.Sprintf("sse %d", seq), Body: "x"})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for seq := 0; seq < mails; seq++ {
		next <- seq
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, fmt.Errorf("sse phase: %w", err)
	}
	lat := make([]time.Duration, 0, mails)
	timeout := time.After(60 * time.Second)
	for len(lat) < mails {
		select {
		case a, ok := <-h.arrivals:
			if !ok {
				return nil, fmt.Errorf("sse: the stream holder ended after %d of %d events", len(lat), mails)
			}
			lat = append(lat, a.at.Sub(starts[a.seq]))
		case <-timeout:
			return nil, fmt.Errorf("sse: %d of %d events arrived within 60 s", len(lat), mails)
		}
	}
	rss := peakRSS()
	if b.cfg.HeapProfile != "" {
		if err := writeHeapProfile(fmt.Sprintf("%s.%d", b.cfg.HeapProfile, n)); err != nil {
			return nil, err
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	b.logf("sse: %d streams, %d deliveries, p50 %s p99 %s, peak RSS %d MB (now: heap in use %d MB, goroutine stacks %d MB, %d goroutines, from the OS %d MB)",
		n, len(lat), ms(pct(lat, 50)), ms(pct(lat, 99)), rss>>20, mem.HeapInuse>>20, mem.StackInuse>>20, runtime.NumGoroutine(), mem.Sys>>20)
	rssText := fmt.Sprintf("%d MB", rss>>20)
	if !reset {
		rssText += " (peak since start)"
	}
	return []string{strconv.Itoa(n), strconv.Itoa(mails), ms(pct(lat, 50)), ms(pct(lat, 99)), rssText}, nil
}

// writeHeapProfile writes this process's heap profile to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.WriteHeapProfile(f)
}

// inboxVariants are the timed inbox requests.
var inboxVariants = []struct {
	name string
	q    client.InboxQuery
}{
	{"unread, limit 5", client.InboxQuery{Status: "unread", Limit: 5, MarkRead: client.Bool(false)}},
	{"all, limit 5", client.InboxQuery{Status: "all", Limit: 5}},
	{"all, limit 50", client.InboxQuery{Status: "all", Limit: 50}},
}

// inboxPhase times the measured agent's inbox with no seeded mails (60
// real ones), seeds StoredMails mails with batched inserts, times the
// inbox again, and measures sending again with the stored mails.
func (b *runner) inboxPhase(ctx context.Context, rep *Report) error {
	agent, err := b.agentClient(ctx, "inbox")
	if err != nil {
		return err
	}
	var sessionID string
	for i := 0; i < 60; i++ {
		r, err := b.person.MeSend(ctx, client.SendMailRequest{To: "inbox@/bench", Subject: fmt.Sprintf("real %d", i), Body: "x"})
		if err != nil {
			return err
		}
		sessionID = r.SessionID
	}
	raw, err := newRawSender(b.url, "", agentToken("inbox"), nil, nil)
	if err != nil {
		return err
	}
	defer raw.close()
	t := Table{Title: "Inbox p50 / p99 and sending against stored mails",
		Header: []string{"stored mails", "in this inbox", "unread, limit 5", "all, limit 5", "all, limit 50", "agent sends/s, p99", "person sends/s, p99"}}
	row := []string{"0", "60"}
	for _, v := range inboxVariants {
		p50, p99, err := b.timeInbox(ctx, agent, raw, v.name, v.q)
		if err != nil {
			return err
		}
		row = append(row, ms(p50)+" / "+ms(p99))
	}
	sendCell := func(r loopResult, ok bool) string {
		if !ok {
			return "–"
		}
		return fmt.Sprintf("%.0f, %s", r.Rate(), ms(r.P(99)))
	}
	a0, okA := b.sendAt0[kindAgent]
	p0, okP := b.sendAt0[kindPerson]
	row = append(row, sendCell(a0, okA), sendCell(p0, okP))
	t.Rows = append(t.Rows, row)

	b.logf("inbox: seeding %d mails (%.0f%% to the measured agent)", b.cfg.StoredMails, b.cfg.InboxShare*100)
	t0 := time.Now()
	mine, err := seed(ctx, b.app.Store, sessionID, b.cfg.StoredMails, b.cfg.InboxShare, b.cfg.StreamAgents)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	mine += 60
	b.logf("inbox: seeded in %s; the measured agent holds %d mails", time.Since(t0).Round(time.Millisecond), mine)
	row = []string{strconv.Itoa(b.cfg.StoredMails), strconv.Itoa(mine)}
	for _, v := range inboxVariants {
		p50, p99, err := b.timeInbox(ctx, agent, raw, v.name, v.q)
		if err != nil {
			return err
		}
		row = append(row, ms(p50)+" / "+ms(p99))
		rep.Rows = append(rep.Rows, Row{fmt.Sprintf("inbox latency p50 / p99 (%s), %d stored mails, %d in this inbox", v.name, b.cfg.StoredMails, mine),
			fmt.Sprintf("%s / %s", ms(p50), ms(p99)), "p99 ≤ 5 ms"})
	}
	srows, err := b.timeSearches(ctx, agent, raw) // search.go
	if err != nil {
		return err
	}
	st := Table{Title: fmt.Sprintf("Search p50 / p99 as the measured agent (GET /api/v1/mail/search, limit 20), %d stored mails, %d in its scope", b.cfg.StoredMails, mine),
		Header: []string{"query", "q", "hits on page 1", "p50 / p99"}, Rows: srows}
	for _, r := range srows {
		rep.Rows = append(rep.Rows, Row{fmt.Sprintf("search latency p50 / p99 (%s), %d stored mails, %d in scope", r[0], b.cfg.StoredMails, mine), r[3], "p99 ≤ 20 ms"})
	}
	for _, kind := range []string{kindAgent, kindPerson} {
		r, err := b.measure(ctx, kind, b.cfg.Senders)
		if err != nil {
			return err
		}
		row = append(row, sendCell(r, true))
	}
	t.Rows = append(t.Rows, row)
	t.Title += fmt.Sprintf(" (sends: %d senders; the 0 row's are the send phase's, on a database holding only what that phase wrote)", b.cfg.Senders)
	rep.Tables = append(rep.Tables, t, st)
	return nil
}

// timeInbox checks once with the typed client that the answer is a full
// page, then times InboxRequests raw GETs on one keep-alive connection
// (after 100 untimed): the answer is read whole and checked, not decoded.
func (b *runner) timeInbox(ctx context.Context, agent *client.Client, raw *rawSender, name string, q client.InboxQuery) (time.Duration, time.Duration, error) {
	l, err := agent.Inbox(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	if len(l.Mails) != q.Limit {
		return 0, 0, fmt.Errorf("inbox %s: %d mails, want %d", name, len(l.Mails), q.Limit)
	}
	query := url.Values{"status": {q.Status}, "limit": {strconv.Itoa(q.Limit)}}
	if q.MarkRead != nil {
		query.Set("mark_read", strconv.FormatBool(*q.MarkRead))
	}
	path := "/api/v1/mail/inbox?" + query.Encode()
	lat := make([]time.Duration, 0, b.cfg.InboxRequests)
	var cpu0 time.Duration
	for i := 0; i < b.cfg.InboxRequests+100; i++ {
		if i == 100 {
			cpu0 = processCPU()
		}
		start := time.Now()
		status, body, err := raw.get(path)
		if err != nil {
			return 0, 0, err
		}
		if status != http.StatusOK || !bytes.Contains(body, []byte(`"mail_id"`)) {
			return 0, 0, fmt.Errorf("inbox %s: status %d: %.200s", name, status, body)
		}
		if i >= 100 { // the first 100 warm caches
			lat = append(lat, time.Since(start))
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	cpu := processCPU() - cpu0
	b.logf("inbox %s: p50 %s p99 %s, process CPU %.0f µs per request", name, ms(pct(lat, 50)), ms(pct(lat, 99)),
		float64(cpu.Microseconds())/float64(max(1, len(lat))))
	return pct(lat, 50), pct(lat, 99), nil
}
