package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/spf13/cobra"
)

// watchData is the union of the event payload fields watch prints.
type watchData struct {
	MailID       string `json:"mail_id"`
	MailType     string `json:"mail_type"`
	FromName     string `json:"from_name"`
	Role         string `json:"role"`
	AgentName    string `json:"agent_name"`
	Subject      string `json:"subject"`
	Question     string `json:"question"`
	Tool         string `json:"tool"`
	ToolSummary  string `json:"tool_summary"`
	SessionAlias string `json:"session_alias"`
	Alias        string `json:"alias"`
	SessionID    string `json:"session_id"`
	Decision     string `json:"decision"`
	Approved     bool   `json:"approved"`
	DecidedBy    string `json:"decided_by"`
	DecidedVia   string `json:"decided_via"`
	State        string `json:"state"`
	RunID        string `json:"run_id"`
}

// watchLine is one event in --json output.
type watchLine struct {
	ID    int64           `json:"id"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// NewWatchCommand returns `agentmail watch`: follows the person's event
// stream (GET /api/v1/me/events/stream) and prints each new mail and
// permission request as it arrives; decisions too, and with --all session
// and run updates and the person's own sent mail. The first connection sends no Last-Event-ID unless
// --last-event-id is given (N-11); after a drop it reconnects with backoff
// and the last id seen (D-7.2), so nothing is missed. Ctrl-C ends it with
// exit 0 and prints the id to resume from.
func NewWatchCommand(env *Env) *cobra.Command {
	var asJSON, all bool
	var lastID int64
	cmd := &cobra.Command{
		Use:   "watch [--json] [--last-event-id N]",
		Short: "Print new mail and permission requests as they arrive",
		Long: `Follow your event stream and print each new mail and permission request as
it arrives (one line each; --json prints {"id","event","data"} lines). A lost
connection is re-established by itself and resumes after the last event seen.
To resume a later run where this one stopped, pass the id it printed at exit
with --last-event-id.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if lastID < 0 {
				return usageErr("watch: --last-event-id must not be negative")
			}
			c, cfg, err := env.newClient()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			connected := false
			st, err := c.Stream(ctx, client.StreamOptions{
				People: true, LastEventID: lastID, Reconnect: true,
				OnConnect: func(id int64) {
					if !connected {
						connected = true
						env.errf("Watching %s for new mail and permission requests (Ctrl-C to stop)\n", cfg.URL)
					} else {
						env.errf("Reconnected, resuming after event %d\n", id)
					}
				},
				OnDisconnect: func(err error) {
					if ctx.Err() == nil {
						env.errf("Connection lost (%v); reconnecting…\n", err)
					}
				},
			})
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return apiErr("watch", err)
			}
			defer st.Close()
			seenPermission := map[string]bool{}
			for ev := range st.Events() {
				if asJSON {
					data := json.RawMessage(ev.Data)
					if !json.Valid(data) {
						data, _ = json.Marshal(string(ev.Data))
					}
					line, _ := json.Marshal(watchLine{ID: ev.ID, Event: ev.Type, Data: data})
					fmt.Fprintln(env.Stdout, string(line))
					continue
				}
				if text := watchText(env.lang(), ev, all, seenPermission); text != "" {
					env.outf("%s  %s\n", time.Now().Format("15:04:05"), text)
				}
			}
			if err := st.Err(); err != nil && !errors.Is(err, context.Canceled) {
				return apiErr("watch", err)
			}
			env.errf("Stopped; resume with: agentmail watch --last-event-id %d\n", st.LastEventID())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every event as a JSON line")
	cmd.Flags().BoolVar(&all, "all", false, "also print session and run updates and your own sent mail")
	cmd.Flags().Int64Var(&lastID, "last-event-id", 0, "resume after this event id (printed when a watch stops)")
	return env.setup(cmd)
}

// watchText renders one event as a line, or "" to skip it. A permission
// request arriving both as new_mail and as permission_request is printed
// once. The person's own sent mail (new_mail with role "from") is not new
// mail: it prints only with --all, as "sent mail".
func watchText(l lang, ev client.Event, all bool, seenPermission map[string]bool) string {
	var d watchData
	_ = json.Unmarshal(ev.Data, &d)
	from := d.FromName
	if from == "" {
		from = d.AgentName
	}
	session := d.SessionAlias
	if session == "" {
		session = d.Alias
	}
	permission := func() string {
		if seenPermission[d.MailID] {
			return ""
		}
		seenPermission[d.MailID] = true
		// Lead with what will run (the gateway's summary of the call), then
		// the agent's own words; a new_mail event carries neither, and its
		// subject, written by the gateway, names the call.
		what := permissionCall(&client.Permission{ToolSummary: d.ToolSummary, Tool: d.Tool})
		switch {
		case what != "":
			what = l.F("will run %s", what)
		case d.Question == "":
			what = oneLine(printable(d.Subject), 100)
		default:
			what = l.S("no tool call named")
		}
		if q := oneLine(printable(d.Question), 60); q != "" {
			what += l.F(" (the agent's own words: %q)", q)
		}
		return l.F("permission request %s from %s: %s  (agentmail approve %s | agentmail deny %s)", d.MailID, from, what, d.MailID, d.MailID)
	}
	switch ev.Type {
	case client.EventNewMail:
		if d.Role == "from" {
			if !all {
				return ""
			}
			s := l.F("sent mail %s: %s", d.MailID, oneLine(d.Subject, 100))
			if session != "" {
				s += "  [" + session + "]"
			}
			return s
		}
		if d.MailType == client.MailTypePermissionRequest {
			return permission()
		}
		s := l.F("new mail %s from %s: %s", d.MailID, from, oneLine(d.Subject, 100))
		if session != "" {
			s += "  [" + session + "]"
		}
		return s
	case client.EventPermissionRequest:
		return permission()
	case client.EventPermissionDecision:
		if d.DecidedVia == "stop" {
			return l.F("permission %s closed: %s stopped the turn it belongs to; nothing of it runs", d.MailID, d.DecidedBy)
		}
		if d.Approved {
			return l.F("permission %s approved by %s (%s)", d.MailID, d.DecidedBy, d.Decision)
		}
		return l.F("permission %s denied by %s (%s)", d.MailID, d.DecidedBy, d.Decision)
	}
	if !all {
		return ""
	}
	switch ev.Type {
	case client.EventSessionUpdated:
		return l.F("session %s updated (%s)", d.SessionID, session)
	case client.EventRunUpdated:
		return l.F("run %s in session %s: %s", d.RunID, d.SessionID, word(d.State))
	}
	return fmt.Sprintf("%s %s", ev.Type, oneLine(string(ev.Data), 120))
}
