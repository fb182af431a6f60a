package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmail/agentmail/internal/bench"
)

// benchCfg holds the flags of `agentmail bench`.
var benchCfg bench.Config

// benchProfile is the file for a CPU profile of the whole run ("" = none).
var benchProfile string

// benchCmd is `agentmail bench`: the gateway benchmark (issue 2 item 13).
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Benchmark a gateway started on a temporary data directory",
	Long: `Start a gateway on a temporary data directory and measure over HTTP:
mails sent per second by concurrent agent and person senders with p50/p99
latency (with --peer-mailpit, mailpit's POST /api/v1/send driven by the same
loop, and the ratio), rate and p99 against 1/8/64/256 senders, SSE delivery
latency and the gateway's peak RSS against open streams, and inbox latency and
sending with a million stored mails. Prints Markdown tables (those in
docs/PERFORMANCE.md).

Exit codes: 0 measured and printed, 1 error (the gateway or a measurement
failed), 2 usage (bad flag or argument).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		benchCfg.Progress = os.Stderr
		if self, err := os.Executable(); err == nil {
			benchCfg.StreamHolder = []string{self, "bench-streams"}
		}
		if benchProfile != "" {
			f, err := os.Create(benchProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		rep, err := bench.Run(ctx, benchCfg)
		if err != nil {
			return err
		}
		fmt.Printf("\nmachine: %s; run took %s\n\n%s", rep.Machine, rep.Duration.Round(time.Second), rep.Table())
		return nil
	},
}

// benchStreamsCmd is the stream holder of `agentmail bench` (bench.HoldStreams),
// run by it in a process of its own; not for direct use.
var benchStreamsCmd = &cobra.Command{
	Use:    "bench-streams",
	Short:  "Hold the SSE streams of agentmail bench (started by it)",
	Hidden: true,
	Args:   cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		return bench.HoldStreams(os.Stdin, os.Stdout)
	},
}

func init() {
	rootCmd.AddCommand(benchStreamsCmd)
	f := benchCmd.Flags()
	f.IntVar(&benchCfg.Senders, "senders", 64, "concurrent senders of the send phase")
	f.DurationVar(&benchCfg.SendDuration, "duration", 10*time.Second, "length of the measured send phase")
	f.IntSliceVar(&benchCfg.SenderSweep, "sweep-senders", []int{1, 8, 64, 256}, "sender counts of the sweep phase (rate and p99 against senders)")
	f.IntVar(&benchCfg.Rounds, "rounds", 1, "rounds of the send phase, agent, person and peer sends alternating; the figures are medians")
	f.StringVar(&benchCfg.PeerMailpit, "peer-mailpit", "", "path of a mailpit binary to drive with the same loop (POST /api/v1/send) beside every send measurement")
	f.IntVar(&benchCfg.StreamAgents, "agents", 1000, "agents the seeded mails are spread over")
	f.IntSliceVar(&benchCfg.StreamCounts, "streams", []int{1000, 10000}, "open SSE streams of the SSE phase, one run each (delivery latency and peak RSS)")
	f.IntVar(&benchCfg.StreamMails, "stream-mails", 0, "mails sent to the streaming agents (default 2 per agent)")
	f.IntVar(&benchCfg.StreamSenders, "stream-senders", 8, "concurrent senders of the SSE phase")
	f.IntVar(&benchCfg.StoredMails, "stored", 1_000_000, "mails seeded before the inbox phase")
	f.IntVar(&benchCfg.InboxRequests, "inbox-requests", 2000, "timed inbox requests per variant")
	f.IntVar(&benchCfg.SearchRequests, "search-requests", 500, "timed searches per search variant (after the seeding)")
	f.StringVar(&benchCfg.DataDir, "data-dir", "", "data directory of the benchmark gateway (default: a temporary one, removed after)")
	f.StringVar(&benchCfg.DatabaseURL, "database-url", "", "run on PostgreSQL: a server URL (postgres://user@host:5432/postgres) where a scratch database is created and dropped after; empty: SQLite")
	f.IntVar(&benchCfg.Replicas, "replicas", 1, "gateways on the one PostgreSQL database (needs --database-url); the senders are spread over them")
	f.StringSliceVar(&benchCfg.Phases, "phases", nil, "phases to run, comma separated: send,sweep,sse,inbox (default: all four)")
	f.StringVar(&benchCfg.SQLiteSynchronous, "sqlite-synchronous", "full", "SQLite durability of the benchmark gateway: full or normal (as AGENTMAIL_SQLITE_SYNCHRONOUS)")
	f.BoolVar(&benchCfg.StatementTimes, "statement-times", false, "count and time the gateway's SQL statements during each send measurement and print them")
	f.StringVar(&benchCfg.HeapProfile, "memprofile", "", "write a heap profile at the peak of each SSE run to this file (.<streams> appended)")
	f.StringVar(&benchProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	rootCmd.AddCommand(benchCmd)
}
