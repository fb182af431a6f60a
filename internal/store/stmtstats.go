package store

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// StatementStats counts and times the statements a store runs, per query
// text: the per-statement profile of `agentmail bench --statement-times`.
// Off (nil) by default; when on, each statement costs a clock read and a
// map update under a mutex.
type StatementStats struct {
	mu    sync.Mutex
	m     map[string]*StatementStat
	trips int // round trips: one per statement, one per pipelined batch
}

// StatementStat is one query text's count and total time (the time of
// Exec, or of Query/QueryRow until the call returns, not the row reads;
// a statement that went in a pipelined batch (pipeline.go) gets an equal
// share of the batch's time).
type StatementStat struct {
	Query string
	Count int
	Total time.Duration
}

var stmtStats atomic.Pointer[StatementStats]

// TraceStatements starts counting statements of every store of this
// process and answers the collector; StopTracingStatements ends it.
func TraceStatements() *StatementStats {
	s := &StatementStats{m: map[string]*StatementStat{}}
	stmtStats.Store(s)
	return s
}

// StopTracingStatements ends the counting TraceStatements started.
func StopTracingStatements() { stmtStats.Store(nil) }

// add counts one statement run alone: one round trip of its own.
func (s *StatementStats) add(query string, d time.Duration) { s.addPipeline([]string{query}, d) }

// addPipeline counts the statements of one pipelined batch, one round
// trip for all.
func (s *StatementStats) addPipeline(queries []string, d time.Duration) {
	if len(queries) == 0 {
		return
	}
	share := d / time.Duration(len(queries))
	s.mu.Lock()
	for _, q := range queries {
		st := s.m[q]
		if st == nil {
			st = &StatementStat{Query: strings.Join(strings.Fields(q), " ")}
			s.m[q] = st
		}
		st.Count++
		st.Total += share
	}
	s.trips++
	s.mu.Unlock()
}

// RoundTrips answers how many round trips the statements counted took:
// one per statement run alone, one per pipelined batch.
func (s *StatementStats) RoundTrips() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trips
}

// Top answers the statements by total time, most first.
func (s *StatementStats) Top() []StatementStat {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StatementStat, 0, len(s.m))
	for _, st := range s.m {
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Total > out[j].Total })
	return out
}

// traceStart answers the collector and the start time when tracing is on.
func traceStart() (*StatementStats, time.Time) {
	s := stmtStats.Load()
	if s == nil {
		return nil, time.Time{}
	}
	return s, time.Now()
}
