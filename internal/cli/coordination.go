package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/spf13/cobra"
)

// Acknowledgements, importance and reservations for people (issue 21).

// NewAckCommand returns `agentmail ack ID...`: acknowledge mails sent to
// you with ack_required (POST /api/v1/me/mail/{id}/ack). Reading a mail
// (`agentmail show`) does not acknowledge it.
func NewAckCommand(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ack ID...",
		Short: "Acknowledge mails that ask for it",
		Long: `Acknowledge mails sent to you with an acknowledgement request: the sender then
sees that you have read them and will act on them. Showing a mail does not
acknowledge it.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("ack: give the id of at least one mail (see agentmail acks)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			var out []*client.AckResponse
			for _, id := range args {
				r, err := c.MeAckMail(cmd.Context(), id)
				if err != nil {
					return apiErr("ack "+id, err)
				}
				out = append(out, r)
				if !asJSON {
					if r.Already {
						env.outf("Mail %s was already acknowledged at %s.\n", r.MailID, timeText(r.AckedAt))
					} else {
						env.outf("Acknowledged %s.\n", r.MailID)
					}
				}
			}
			if asJSON {
				return env.printJSON(out)
			}
			return nil
		},
		ValidArgsFunction: env.completeMailIDs,
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's AckResponse JSON list")
	return env.setup(cmd)
}

// NewAcksCommand returns `agentmail acks`: the waiting-for-acknowledgement
// view (GET /api/v1/me/mail/unacknowledged).
func NewAcksCommand(env *Env) *cobra.Command {
	var asJSON, overdue bool
	var role string
	var limit int
	cmd := &cobra.Command{
		Use:   "acks [--overdue] [--role sender|recipient]",
		Short: "List mails waiting for acknowledgement",
		Long: `List the mails waiting for acknowledgement, oldest due first: those you sent with
an acknowledgement request that not everyone has acknowledged (with who has not),
and those you have not acknowledged yet. A mail is overdue once its due time has
passed (24 hours after sending unless the sender chose otherwise).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if role != "" && role != "sender" && role != "recipient" {
				return usageErr("acks: --role must be sender or recipient, got %q", role)
			}
			if limit < 0 || limit > 200 {
				return usageErr("acks: --limit must be 1 to 200")
			}
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			l, err := c.MeUnacknowledged(cmd.Context(), client.AckWaitingQuery{Role: role, Overdue: overdue, Limit: limit})
			if err != nil {
				return apiErr("acks", err)
			}
			if asJSON {
				return env.printJSON(l)
			}
			if len(l.Mails) == 0 {
				env.outln("Nothing is waiting for acknowledgement.")
				return nil
			}
			tw := newTable(env.Stdout)
			fmt.Fprintln(tw, env.lang().S("ID\tDUE\tSUBJECT\tWAITING FOR"))
			for _, w := range l.Mails {
				due := timeText(w.DueAt)
				if w.Overdue {
					due += " OVERDUE"
				}
				waiting := "you (agentmail ack " + w.MailID + ")"
				if w.Role == "sender" {
					waiting = strings.Join(w.Pending, ", ")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", w.MailID, due, oneLine(w.Subject, 50), waiting)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&overdue, "overdue", false, "only the overdue ones")
	cmd.Flags().StringVar(&role, "role", "", "sender (mails you sent) or recipient (mails you owe); default both")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many (default 50, at most 200)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's AckWaitingList JSON")
	return env.setup(cmd)
}

// NewReservationsCommand returns `agentmail reservations [WORKSPACE]` and
// `agentmail reservations release ID`: the file reservations of the
// workspaces you work in (GET /api/v1/me/reservations), and ending one
// (DELETE /api/v1/me/reservations/{id}).
func NewReservationsCommand(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reservations [WORKSPACE]",
		Short: "List the file reservations agents hold where you work",
		Long: `List the files and globs agents have reserved in the workspaces of the
conversations you take part in (or in one WORKSPACE, an absolute directory).
"agentmail reservations release ID" ends one of them.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("reservations: at most one workspace, got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ws := ""
			if len(args) == 1 {
				ws = args[0]
			}
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			l, err := c.MeReservations(cmd.Context(), ws)
			if err != nil {
				return apiErr("reservations", err)
			}
			if asJSON {
				return env.printJSON(l)
			}
			printReservations(env.Stdout, env.lang(), l.Reservations)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's ReservationList JSON")
	release := &cobra.Command{
		Use:   "release ID...",
		Short: "End file reservations (any you can see)",
		Long:  `End the reservations with these ids (from "agentmail reservations"); their holders are told.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("reservations release: give at least one reservation id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			for _, id := range args {
				if err := c.MeReleaseReservation(cmd.Context(), id); err != nil {
					return apiErr("reservations release "+id, err)
				}
				env.outf("Released %s.\n", id)
			}
			return nil
		},
	}
	cmd.AddCommand(env.setup(release))
	return env.setup(cmd)
}

func printReservations(w io.Writer, l lang, list []client.Reservation) {
	if len(list) == 0 {
		fmt.Fprintln(w, l.S("No file reservations."))
		return
	}
	tw := newTable(w)
	fmt.Fprintln(tw, l.S("ID\tWORKSPACE\tPATH\tHOLDER\tKIND\tUNTIL\tREASON"))
	for _, r := range list {
		kind := l.S("shared")
		if r.Exclusive {
			kind = l.S("exclusive")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", shownText(r.ReservationID), shownText(r.Workspace), shownText(r.Path), shownText(r.Holder),
			kind, timeText(r.ExpiresAt), oneLine(shownText(r.Reason), 40))
	}
	tw.Flush()
}

// importanceMark is the inbox column of a mail's importance: "!!" urgent,
// "!" high, "↓" low, "" normal.
func importanceMark(level string) string {
	switch level {
	case client.ImportanceUrgent:
		return "!!"
	case client.ImportanceHigh:
		return "!"
	case client.ImportanceLow:
		return "↓"
	}
	return ""
}

// printMailOptions writes the importance and acknowledgement lines of
// `agentmail show`.
func printMailOptions(w io.Writer, l lang, m *client.Mail) {
	if m.Importance != "" && m.Importance != client.ImportanceNormal {
		fmt.Fprint(w, l.F("Importance: %s\n", word(strings.ToUpper(m.Importance))))
	}
	if !m.AckRequired {
		return
	}
	due := ""
	if m.AckDueAt != nil {
		due = l.F(" by %s", timeText(*m.AckDueAt))
	}
	switch {
	case m.Role != "" && m.AckedAt == nil:
		fmt.Fprint(w, l.F("Acknowledgement requested%s: run agentmail ack %s once you have read it and will act on it\n", due, m.MailID))
	case m.Role != "":
		fmt.Fprint(w, l.F("Acknowledged by you at %s\n", timeText(*m.AckedAt)))
	default:
		var done, open []string
		for _, a := range m.Acks {
			if a.AckedAt != nil {
				done = append(done, a.Name)
			} else {
				open = append(open, a.Name)
			}
		}
		fmt.Fprint(w, l.F("Acknowledgement requested%s: acknowledged by %s; waiting for %s\n", due, orNobody(l, done), orNobody(l, open)))
	}
}

func orNobody(l lang, names []string) string {
	if len(names) == 0 {
		return l.S("nobody")
	}
	return strings.Join(names, ", ")
}
