package bench

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// loopResult is what one run of the load loop measured.
type loopResult struct {
	Senders int
	Mails   int             // answered sends in the measured window
	Window  time.Duration   // the measured window
	Lat     []time.Duration // latency of each measured send, sorted
	// CPU is the process CPU time during the measured window: this
	// process's (the gateway and the load generator), and for the peer
	// this process's and the peer server's together.
	CPU time.Duration
}

// Rate answers mails per second.
func (r loopResult) Rate() float64 { return float64(r.Mails) / r.Window.Seconds() }

// P answers the p-th percentile latency.
func (r loopResult) P(p float64) time.Duration { return pct(r.Lat, p) }

// CPUPerMail answers the process CPU time per measured mail.
func (r loopResult) CPUPerMail() time.Duration {
	return r.CPU / time.Duration(max(1, r.Mails))
}

// runLoop is the one load loop of every send measurement (AgentMail's
// agent and person sends and the peer's): each sender goroutine sends on
// its own keep-alive connection, the next request as soon as the answer
// is read, for warmup and then window; only sends started inside the
// window are counted and timed. Every answer must have status 200. cpu
// answers the CPU time used so far by the processes measured (this one,
// and for the peer its server process too).
func runLoop(senders []*rawSender, warmup, window time.Duration, cpu func() time.Duration) (loopResult, error) {
	warm := time.Now().Add(warmup)
	stop := warm.Add(window)
	cpuAtWarm := make(chan time.Duration, 1)
	go func() {
		time.Sleep(time.Until(warm))
		cpuAtWarm <- cpu()
	}()
	lat := make([][]time.Duration, len(senders))
	errs := make(chan error, len(senders))
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for n := 0; ; n++ {
				start := time.Now()
				if start.After(stop) {
					return
				}
				status, answer, err := senders[i].send(n)
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("POST %s: status %d: %.300s", senders[i].path, status, answer)
				}
				if err != nil {
					errs <- err
					return
				}
				if start.After(warm) {
					lat[i] = append(lat[i], time.Since(start))
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	used := cpu() - <-cpuAtWarm
	if err := <-errs; err != nil {
		return loopResult{}, err
	}
	all := merge(lat)
	return loopResult{Senders: len(senders), Mails: len(all), Window: window, Lat: all, CPU: used}, nil
}

// closeAll closes the senders' connections.
func closeAll(senders []*rawSender) {
	for _, s := range senders {
		s.close()
	}
}
