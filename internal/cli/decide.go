package cli

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/spf13/cobra"
)

// NewApproveCommand returns `agentmail approve ID [--always] [--note ...]`:
// decides the permission request ID with "approve", or "always" which also
// stores a grant for that agent, tool and scope
// (POST /api/v1/me/permission/{mail_id}/decide). A request already decided
// is exit 4 (409, first decision wins).
func NewApproveCommand(env *Env) *cobra.Command {
	var always, asJSON bool
	var note string
	cmd := &cobra.Command{
		Use:   "approve ID [--always] [--note TEXT]",
		Short: "Approve a permission request",
		Long:  `Approve the permission request ID (the id of the request mail). --always also allows this agent the same tool in the same scope from now on (a grant, listed and revoked on the web page). The first decision wins: a request decided before exits with 4.`,
		Args:  exactArgs(1, "one permission request id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			decision := "approve"
			if always {
				decision = "always"
			}
			return env.decide(cmd, args[0], client.DecideRequest{Decision: decision, Note: note}, asJSON)
		},
		ValidArgsFunction: env.completePending,
	}
	cmd.Flags().BoolVar(&always, "always", false, "always allow this tool in this scope (stores a grant)")
	cmd.Flags().StringVar(&note, "note", "", "note for the agent")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's Permission JSON")
	return env.setup(cmd)
}

// NewDenyCommand returns `agentmail deny ID [--note ...]`: decides the
// permission request ID with "deny".
func NewDenyCommand(env *Env) *cobra.Command {
	var asJSON bool
	var note string
	cmd := &cobra.Command{
		Use:   "deny ID [--note TEXT]",
		Short: "Deny a permission request",
		Long:  `Deny the permission request ID (the id of the request mail); the note tells the agent why or what to do instead. The first decision wins: a request decided before exits with 4.`,
		Args:  exactArgs(1, "one permission request id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return env.decide(cmd, args[0], client.DecideRequest{Decision: "deny", Note: note}, asJSON)
		},
		ValidArgsFunction: env.completePending,
	}
	cmd.Flags().StringVar(&note, "note", "", "note for the agent")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's Permission JSON")
	return env.setup(cmd)
}

// mailIDShape is the form of a mail id (a UUID, 36 characters).
var mailIDShape = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// decide sends one decision and prints the resulting state. An ID that is
// not a mail id at all is a usage error (exit 2, issue 18 point 13), not a
// request that is not found.
func (env *Env) decide(cmd *cobra.Command, id string, req client.DecideRequest, asJSON bool) error {
	if !mailIDShape.MatchString(id) {
		return usageErr("%s %s: %q is not a permission request id; the id is the request mail's, like 01a23576-1901-7d7f-9571-dd068307ecbb (agentmail watch and agentmail inbox show it)",
			cmd.Name(), id, id)
	}
	c, _, err := env.newClient()
	if err != nil {
		return err
	}
	l := env.lang()
	p, err := c.Decide(cmd.Context(), id, req)
	if client.StatusOf(err) == http.StatusConflict && client.AsAPIError(err).Code() == "already_decided" {
		// Decided before, differently or by someone else: say by whom and
		// what stands (issue 18), not only that it conflicts.
		if earlier := decidedPermission(cmd, c, id); earlier != nil {
			return errorf(ExitConflict, nil, "%s %s: %s; the first decision stands and nothing was changed",
				cmd.Name(), id, decidedText(l, earlier))
		}
	}
	if err != nil {
		return apiErr(cmd.Name()+" "+id, err)
	}
	if asJSON {
		return env.printJSON(p)
	}
	what := permissionCall(p)
	if what == "" {
		what = l.S("no tool call named")
	}
	if p.Duplicate {
		// The same decision by the same person again: nothing new happened.
		env.outf("Already decided, nothing changed: %s (%s)\n", decidedText(l, p), what)
		return nil
	}
	verdict := "Denied"
	if p.Approved {
		verdict = "Approved"
		if p.Always {
			verdict = "Always allowed"
		}
	}
	env.outf("%s %s: %s\n", word(verdict), id, what)
	if q := oneLine(printable(p.Question), 100); q != "" {
		env.outf("  the agent's own words: %q\n", q)
	}
	if p.AgentName != "" {
		if p.DecisionMailID != "" {
			env.outf("Agent %s is told by mail %s\n", p.AgentName, p.DecisionMailID)
		} else {
			env.outf("Agent %s is told\n", p.AgentName)
		}
	}
	return nil
}

// decidedPermission answers the decided request id as the person sees it,
// nil when it cannot be read.
func decidedPermission(cmd *cobra.Command, c *client.Client, id string) *client.Permission {
	list, err := c.MePermissions(cmd.Context(), "decided")
	if err != nil {
		return nil
	}
	for i := range list.Permissions {
		if list.Permissions[i].MailID == id {
			return &list.Permissions[i]
		}
	}
	return nil
}

// decidedText says how a request was decided: "approved by ann at
// 2026-01-02 10:04 ("yes")", or denied, or denied because it expired.
func decidedText(l lang, p *client.Permission) string {
	at := ""
	if p.DecidedAt != nil {
		at = timeText(*p.DecidedAt)
	}
	switch {
	case p.DecidedVia == "timeout":
		return l.F("denied at %s because nobody decided before it expired", at)
	case p.DecidedVia == "stop":
		return l.F("closed at %s because %s stopped the turn it belongs to; nothing of it runs, and a new mail to the agent starts a new turn", at, p.DecidedBy)
	case p.Always:
		return l.F("always allowed by %s at %s (%q)", p.DecidedBy, at, p.Decision)
	case p.Approved:
		return l.F("approved by %s at %s (%q)", p.DecidedBy, at, p.Decision)
	}
	return l.F("denied by %s at %s (%q)", p.DecidedBy, at, p.Decision)
}

// completePending offers the ids of pending permission requests.
func (env *Env) completePending(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, _, err := env.newClient()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := c.MePermissions(cmd.Context(), "pending")
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	l := env.lang()
	var out []string
	for _, p := range list.Permissions {
		if strings.HasPrefix(p.MailID, toComplete) {
			what := permissionCall(&p)
			if what == "" {
				what = l.S("(no tool call) ") + oneLine(printable(p.Question), 40)
			}
			out = append(out, p.MailID+"\t"+p.AgentName+": "+oneLine(what, 60))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
