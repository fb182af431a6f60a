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
mails sent per second by concurrent senders with p50/p99 latency, SSE delivery
latency to many connected agents, and inbox latency with a million stored mails.
Prints a Markdown table (the one in docs/PERFORMANCE.md).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		benchCfg.Progress = os.Stderr
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

func init() {
	f := benchCmd.Flags()
	f.IntVar(&benchCfg.Senders, "senders", 64, "concurrent senders of the send phase")
	f.DurationVar(&benchCfg.SendDuration, "duration", 10*time.Second, "length of the measured send phase")
	f.IntVar(&benchCfg.StreamAgents, "agents", 1000, "agents holding an SSE stream")
	f.IntVar(&benchCfg.StreamMails, "stream-mails", 0, "mails sent to the streaming agents (default 2 per agent)")
	f.IntVar(&benchCfg.StreamSenders, "stream-senders", 8, "concurrent senders of the SSE phase")
	f.IntVar(&benchCfg.StoredMails, "stored", 1_000_000, "mails seeded before the inbox phase")
	f.IntVar(&benchCfg.InboxRequests, "inbox-requests", 2000, "timed inbox requests per variant")
	f.StringVar(&benchCfg.DataDir, "data-dir", "", "data directory of the benchmark gateway (default: a temporary one, removed after)")
	f.StringVar(&benchCfg.DatabaseURL, "database-url", "", "run on PostgreSQL: a server URL (postgres://user@host:5432/postgres) where a scratch database is created and dropped after; empty: SQLite")
	f.StringSliceVar(&benchCfg.Phases, "phases", nil, "phases to run, comma separated: send,sse,inbox (default: all three)")
	f.StringVar(&benchProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	rootCmd.AddCommand(benchCmd)
}
