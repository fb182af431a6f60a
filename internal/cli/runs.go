package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/spf13/cobra"
)

// NewRunsCommand returns `agentmail runs [--all] [--json]`: the runs in the
// sessions the person takes part in (GET /api/v1/me/runs): the running,
// idle and queued ones, or with --all the latest of every state, newest
// first, one line each with what `agentmail stop` needs.
func NewRunsCommand(env *Env) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "runs [--all]",
		Short: "List the agents' runs in your conversations",
		Long: `List what the agents are doing in the conversations you take part in: the running, idle and queued turns, or with --all the recent ones of every state too. Each line shows the run id (for agentmail stop), the agent, the state, how long it ran, its tool calls and the last tool.

A queued run waits for a free turn: the line says how many are ahead and how many the agent's bridge runs at once.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			l, err := c.MeRuns(cmd.Context(), all)
			if err != nil {
				return apiErr("runs", err)
			}
			if asJSON {
				return env.printJSON(l)
			}
			if len(l.Runs) == 0 {
				if all {
					env.outln("No runs yet in your conversations.")
				} else {
					env.outln("No agent is working in your conversations right now (agentmail runs --all shows the earlier runs).")
				}
				return nil
			}
			now := time.Now()
			for _, r := range l.Runs {
				fmt.Fprintln(env.Stdout, runLine(env.lang(), r, now))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also the runs that ended")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's RunList JSON")
	return env.setup(cmd)
}

// runLine is one run as `agentmail runs` prints it: id, agent, state (with
// the queue place, the stop or the error), duration, tool calls, last tool.
func runLine(l lang, r client.Run, now time.Time) string {
	state := l.S(r.State)
	switch {
	case r.State == client.RunQueued:
		state = l.F("queued: waiting for a free turn, %d ahead (the bridge runs at most %d at once)", r.QueuePosition, r.MaxTurns)
	case r.StopReason == client.StopReasonStopped:
		state = l.F("stopped by %s", r.StoppedBy)
		if r.Quiescence == client.QuiescenceUnproven {
			state += l.S(" (its processes could not all be shown gone)")
		}
	case r.State == client.RunRunning && r.StopRequestedAt != nil:
		state = l.F("stopping (asked by %s)", r.StoppedBy)
	case r.State == client.RunFailed && r.Error != "":
		state = l.F("failed: %s", oneLine(printable(r.Error), 80))
	}
	d := time.Duration(r.DurationMS) * time.Millisecond
	if r.State == client.RunRunning && !r.StartedAt.IsZero() {
		d = now.Sub(r.StartedAt)
	}
	parts := []string{r.RunID, r.AgentName, state}
	if r.State != client.RunQueued {
		parts = append(parts, d.Round(time.Second).String())
		calls := l.F("%d tool calls", r.ToolCalls)
		if r.ToolCalls == 1 {
			calls = l.S("1 tool call")
		}
		parts = append(parts, calls)
		if r.LastTool != "" {
			parts = append(parts, l.F("last: %s", oneLine(printable(r.LastTool+" "+r.LastToolInput), 60)))
		}
	}
	return strings.Join(parts, "  ")
}

// NewStopCommand returns `agentmail stop RUN_ID`: asks the run's agent to
// stop it (POST /api/v1/me/runs/{run_id}/stop). A run that already ended
// exits with 4, an unknown one (or one of a conversation you are not in)
// with 3.
func NewStopCommand(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stop RUN_ID",
		Short: "Stop an agent's running turn",
		Long: `Stop the run RUN_ID (see agentmail runs): the agent's bridge cancels the turn, makes sure every process it started is gone, and mails the conversation a note with the transcript. A queued run leaves the queue. Writing a mail whose whole text is "stop" to the agent in the conversation does the same.

A run that already ended exits with 4.`,
		Args: exactArgs(1, "one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			resp, err := c.MeStopRun(cmd.Context(), args[0])
			if err != nil {
				return apiErr("stop "+args[0], err)
			}
			if asJSON {
				return env.printJSON(resp)
			}
			env.outf("Stopping run %s of %s; agentmail runs --all shows when it has stopped.\n", resp.Run.RunID, resp.Run.AgentName)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's RunStopResponse JSON")
	return env.setup(cmd)
}
