package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/address"
	"github.com/spf13/cobra"
)

// NewSendCommand returns `agentmail send`: uploads each --attach file as a
// stream (POST /api/v1/me/attachments; "-" reads the attachment from stdin),
// then sends the mail (POST /api/v1/me/mail/send). The body is --body, else
// all of stdin.
func NewSendCommand(env *Env) *cobra.Command {
	var (
		to, subject, body, replyTo, alias, stdinName string
		cc, attach                                   []string
		budget                                       int
		asJSON                                       bool
		importance                                   string // coordination.go
		ack                                          bool
		ackWithin                                    int
	)
	cmd := &cobra.Command{
		Use:   "send --to ADDRESS --subject TEXT [--body TEXT | < body] [--attach FILE]...",
		Short: "Send a mail",
		Long: `Send a mail as yourself.

The address is name@path.session: "claude@/srv/app" writes to the default
session of agent claude in /srv/app, "claude@/srv/app.new" opens a new session,
"claude@/srv/app.fix-imports" continues the session with that alias; a bare
name writes to a person. Without --body the body is read from stdin.
"--attach -" reads one attachment from stdin (name it with --stdin-name); the
body must then be given with --body. An empty stdin is refused: nothing is sent.
--alias names the session the mail opens (letters, digits and '-'); it has
no effect on a mail that lands in an existing session, and the command says
so.

  agentmail send --to claude@/srv/app.new --subject "Fix the build" --body "make test fails"
  git diff | agentmail send --to claude@/srv/app --subject review --body "see diff" --attach - --stdin-name diff.patch`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if strings.TrimSpace(to) == "" {
				return usageErr("send: --to is required (name@path.session, or a person's name)")
			}
			if strings.TrimSpace(subject) == "" {
				return usageErr("send: --subject is required")
			}
			stdinAttach := 0
			for _, a := range attach {
				if a == "-" {
					stdinAttach++
				}
			}
			if stdinAttach > 1 {
				return usageErr("send: only one --attach may read stdin")
			}
			// --body - reads the body from stdin, as --attach - reads the
			// attachment (a literal "-" body is never what was meant).
			bodySet := cmd.Flags().Changed("body") && body != "-"
			if stdinAttach == 1 && !bodySet {
				return usageErr("send: stdin carries the attachment (--attach -); give the body with --body")
			}
			// A relative path is a usage error here (issue 18 point 13: it
			// exited 1 from the gateway's answer); nothing is sent.
			for _, rcpt := range append([]string{to}, strings.Split(strings.Join(cc, ","), ",")...) {
				if a, err := address.Parse(rcpt); err == nil && a.Path != "" && !strings.HasPrefix(a.Path, "/") {
					return usageErr("send: %s: the path %q is not absolute; write the agent's directory from / on "+
						"(in a shell, %s@$PWD.new is the directory you are in)", strings.TrimSpace(rcpt), a.Path, a.Name)
				}
			}
			for _, a := range attach {
				if a == "-" {
					continue
				}
				if st, err := os.Stat(a); err != nil {
					return usageErr("send: --attach %s: %v", a, err)
				} else if st.IsDir() {
					return usageErr("send: --attach %s is a directory; attach files", a)
				}
			}
			var stdinAttachment io.Reader
			if stdinAttach == 1 {
				// An empty pipe (issue 18: `git diff` that printed nothing)
				// is refused before anything is sent, not attached as 0 B.
				in := bufio.NewReader(env.in())
				if _, err := in.Peek(1); err == io.EOF {
					return &Error{Code: ExitError, Msg: "send: --attach - read nothing: stdin is empty, so nothing was sent " +
						"(did the command before the pipe print nothing?); send again without --attach -, or with something to attach"}
				} else if err != nil {
					return &Error{Code: ExitError, Msg: "send: read the attachment from stdin", Err: err}
				}
				stdinAttachment = in
			}
			if err := checkSendOptions(cmd, to, alias, importance, ackWithin); err != nil {
				return err
			}
			var budgetPtr *int
			if cmd.Flags().Changed("budget") {
				if budget < 0 {
					return usageErr("send: --budget must be 0 (unlimited) or more, got %d", budget)
				}
				budgetPtr = client.Int(budget)
			}
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			if !bodySet {
				if env.isTerminal() {
					env.errf("Type the body, end with Ctrl-D:\n")
				}
				raw, err := io.ReadAll(env.in())
				if err != nil {
					return &Error{Code: ExitError, Msg: "send: read the body from stdin", Err: err}
				}
				body = string(raw)
				if strings.TrimSpace(body) == "" {
					return usageErr("send: the body read from stdin is empty, so nothing was sent; " +
						"write the body with --body, or pipe something into the command")
				}
			}

			req := client.SendMailRequest{
				To: to, Cc: strings.Join(cc, ", "), Subject: subject, Body: body,
				ReplyTo: replyTo, SessionAlias: alias, RoundBudget: budgetPtr,
				Importance: importance, AckRequired: ack, AckWithinMinutes: ackWithin,
			}
			var uploaded []client.Attachment
			for _, a := range attach {
				var att *client.Attachment
				if a == "-" {
					att, err = c.MeUploadAttachment(ctx, stdinName, stdinAttachment)
				} else {
					f, ferr := os.Open(a)
					if ferr != nil {
						return errorf(ExitError, ferr, "send: open %s", a)
					}
					att, err = c.MeUploadAttachment(ctx, filepath.Base(a), f)
					f.Close()
				}
				if err != nil {
					return apiErr("send: upload "+a, err)
				}
				uploaded = append(uploaded, *att)
				req.AttachmentIDs = append(req.AttachmentIDs, att.AttachmentID)
			}
			res, err := c.MeSend(ctx, req)
			if err != nil {
				return apiErr("send", err)
			}
			if asJSON {
				aliasNote(env, alias, res)
				return env.printJSON(struct {
					*client.SendMailResponse
					Attachments []client.Attachment `json:"attachments"`
				}{res, append([]client.Attachment{}, uploaded...)})
			}
			session := res.SessionAlias
			if session == "" {
				session = res.SessionID
			}
			env.outf("Sent %s to %s\n", res.MailID, to)
			state := word("existing session")
			if res.NewSession {
				state = word("new session")
			}
			env.outf("Session %s (%s, budget %s)\n", session, state, budgetText(env.lang(), res.BudgetRemaining, res.BudgetMax))
			aliasNote(env, alias, res)
			for _, a := range uploaded {
				env.outf("Attached %s (%s) as %s\n", oneLine(a.Filename, maxSubjectRunes), sizeText(a.Size), a.AttachmentID)
			}
			if res.Status != "" && res.Status != "sent" {
				env.outf("Status: %s\n", res.Status)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "recipient address (name@path.session or a person's name)")
	f.StringArrayVar(&cc, "cc", nil, "copy to this address (repeatable, or comma-separated)")
	f.StringVar(&subject, "subject", "", "subject line")
	f.StringVar(&body, "body", "", "body text in Markdown; - or no --body: read stdin")
	f.StringArrayVar(&attach, "attach", nil, "attach this file; - reads it from stdin (repeatable)")
	f.StringVar(&stdinName, "stdin-name", "stdin.txt", "file name of the attachment read from stdin")
	f.IntVar(&budget, "budget", 0, "round budget of a new session (0 = unlimited; default: the agent's)")
	f.StringVar(&replyTo, "reply-to", "", "id of the mail this answers")
	f.StringVar(&alias, "alias", "", "alias of the session this mail opens (letters, digits and -)")
	f.StringVar(&importance, "importance", "", "low, normal (default), high or urgent")
	f.BoolVar(&ack, "ack", false, "ask every recipient to acknowledge the mail (see agentmail acks)")
	f.IntVar(&ackWithin, "ack-within", 0, "with --ack: minutes until an acknowledgement is overdue, 1 to 43200 (default 1440)")
	f.BoolVar(&asJSON, "json", false, "print the answer as JSON")
	return env.setup(cmd)
}

// NewInboxCommand returns `agentmail inbox`: unread mails by default, all
// with --all (GET /api/v1/me/mail/inbox), newest first. Nothing is marked
// read.
func NewInboxCommand(env *Env) *cobra.Command {
	var all, asJSON bool
	var limit int
	var cursor, importance, sortBy string
	cmd := &cobra.Command{
		Use:   "inbox [--all] [--json]",
		Short: "List received mail (unread unless --all)",
		Long:  `List your received mail, newest first: unread mail only, or all of it with --all. Listing marks nothing read; "agentmail show ID" does.`,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usageErr("inbox: --limit must be positive")
			}
			for _, level := range strings.Split(importance, ",") {
				switch strings.TrimSpace(level) {
				case "", client.ImportanceLow, client.ImportanceNormal, client.ImportanceHigh, client.ImportanceUrgent:
				default:
					return usageErr("inbox: --importance %q: use low, normal, high or urgent, comma-separated", level)
				}
			}
			if sortBy != "" && sortBy != "date" && sortBy != "importance" {
				return usageErr("inbox: --sort %q: use date or importance", sortBy)
			}
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			q := client.InboxQuery{Status: "unread", Limit: limit, MarkRead: client.Bool(false), Cursor: cursor,
				Importance: importance, Sort: sortBy}
			if all {
				q.Status = "all"
			}
			list, err := c.MeInbox(cmd.Context(), q)
			if err != nil {
				return apiErr("inbox", err)
			}
			if asJSON {
				if list.Mails == nil {
					list.Mails = []client.Mail{}
				}
				return env.printJSON(list)
			}
			if len(list.Mails) == 0 {
				if all {
					env.outln("No mail.")
				} else {
					env.outln("No unread mail.")
				}
				return nil
			}
			tw := newTable(env.Stdout)
			fmt.Fprintln(tw, env.lang().S(" \t \tID\tDATE\tFROM\tSUBJECT"))
			for _, m := range list.Mails {
				mark := " "
				if !m.Read {
					mark = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", mark, importanceMark(m.Importance), m.MailID, timeText(m.CreatedAt), m.FromName, mailSubject(env.lang(), m))
			}
			tw.Flush()
			env.outf("%d unread\n", list.Unread)
			if list.NextCursor != "" {
				more := "agentmail inbox --cursor " + list.NextCursor
				if all {
					more = "agentmail inbox --all --cursor " + list.NextCursor
				}
				env.outf("More: %s\n", more)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list read mail too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's MailList JSON")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many mails (default: the gateway's, 50)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue after a previous page")
	cmd.Flags().StringVar(&importance, "importance", "", "only mails of these levels, comma-separated (low, normal, high, urgent)")
	cmd.Flags().StringVar(&sortBy, "sort", "", "date (default) or importance (most important first)")
	return env.setup(cmd)
}

// NewShowCommand returns `agentmail show ID`: the whole mail
// (GET /api/v1/me/mail/{id}), marked read afterwards unless --keep-unread;
// --save DIR downloads its attachments.
func NewShowCommand(env *Env) *cobra.Command {
	var asJSON, keepUnread bool
	var saveDir string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one mail and mark it read",
		Long:  `Show one mail of your mailbox with its headers, attachments and, for a permission request, its state. The mail is marked read unless --keep-unread. --save DIR downloads the attachments into DIR.`,
		Args:  exactArgs(1, "one mail id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			m, err := c.MeGetMail(ctx, args[0])
			if err != nil {
				return apiErr("show "+args[0], err)
			}
			if !keepUnread && !m.Read && m.Role != "" {
				if _, err := c.MeMarkRead(ctx, client.MarkReadRequest{MailIDs: []string{m.MailID}}); err != nil {
					return apiErr("show: mark "+m.MailID+" read", err)
				}
			}
			var saved []string
			if saveDir != "" {
				for _, a := range m.Attachments {
					p, err := env.saveAttachment(cmd, c, a, saveDir)
					if err != nil {
						return err
					}
					saved = append(saved, p)
				}
			}
			if asJSON {
				return env.printJSON(m)
			}
			printMail(env.Stdout, env.lang(), m, readSessionChain(ctx, c, m.SessionID))
			for _, p := range saved {
				env.outf("Saved %s\n", p)
			}
			return nil
		},
		ValidArgsFunction: env.completeMailIDs,
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's Mail JSON")
	cmd.Flags().BoolVar(&keepUnread, "keep-unread", false, "do not mark the mail read")
	cmd.Flags().StringVar(&saveDir, "save", "", "download the attachments into this directory")
	return env.setup(cmd)
}

// saveAttachment streams one attachment into dir under its own base name,
// refusing to overwrite an existing file.
func (env *Env) saveAttachment(cmd *cobra.Command, c *client.Client, a client.Attachment, dir string) (string, error) {
	rc, _, err := c.MeDownloadAttachment(cmd.Context(), a.AttachmentID)
	if err != nil {
		return "", apiErr("download "+a.AttachmentID, err)
	}
	defer rc.Close()
	name := filepath.Base(filepath.Clean("/" + a.Filename))
	if name == "/" || name == "." {
		name = a.AttachmentID
	}
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", errorf(ExitError, err, "save %s (remove the existing file or choose another --save directory)", a.Filename)
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return "", errorf(ExitError, err, "save %s", p)
	}
	if err := f.Close(); err != nil {
		return "", errorf(ExitError, err, "save %s", p)
	}
	return p, nil
}

// NewTreeCommand returns `agentmail tree ID`: the conversation tree around
// the mail (GET /api/v1/me/mail/{id}/tree), indented by depth, the mail
// itself marked with ">".
func NewTreeCommand(env *Env) *cobra.Command {
	var asJSON bool
	var before, after int
	cmd := &cobra.Command{
		Use:   "tree ID",
		Short: "Show the conversation tree around a mail",
		Long:  `Show the conversation tree a mail belongs to (replies and forwards across sessions), indented by depth; the mail itself is marked with ">".`,
		Args:  exactArgs(1, "one mail id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if before < 0 || after < 0 {
				return usageErr("tree: --before and --after must not be negative")
			}
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			tree, err := c.MeTree(cmd.Context(), args[0], client.TreeQuery{Before: before, After: after})
			if err != nil {
				return apiErr("tree "+args[0], err)
			}
			if asJSON {
				return env.printJSON(tree)
			}
			if tree.HasBefore {
				env.outln("  … earlier mails (--before to see more)")
			}
			for _, n := range tree.Nodes {
				mark := " "
				if n.MailID == tree.FocusID {
					mark = ">"
				}
				env.outf("%s %s%s  %s  %s: %s\n", mark, strings.Repeat("  ", n.Depth), n.MailID, timeText(n.CreatedAt), n.FromName, oneLine(n.Subject, 70))
			}
			if tree.HasAfter {
				env.outln("  … later mails (--after to see more)")
			}
			env.outf("%d mails in the conversation\n", tree.Total)
			return nil
		},
		ValidArgsFunction: env.completeMailIDs,
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's Tree JSON")
	cmd.Flags().IntVar(&before, "before", 0, "mails before this one to show (default: the gateway's, 20)")
	cmd.Flags().IntVar(&after, "after", 0, "mails after this one to show (default: the gateway's, 20)")
	return env.setup(cmd)
}

// completeMailIDs offers the ids of the newest mails for shell completion.
func (env *Env) completeMailIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, _, err := env.newClient()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := c.MeInbox(cmd.Context(), client.InboxQuery{Status: "all", Limit: 30, MarkRead: client.Bool(false)})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, m := range list.Mails {
		if strings.HasPrefix(m.MailID, toComplete) {
			out = append(out, m.MailID+"\t"+m.FromName+": "+oneLine(m.Subject, 40))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// checkSendOptions refuses, as usage errors (exit 2, nothing sent), the send
// option values the gateway could not use as given: --importance other than
// low, normal, high or urgent; --ack-within outside 1..43200 minutes
// (client.MaxAckWithinMinutes; 0 would silently mean the 24 h default);
// an --alias that W-7.1 would rewrite (address separators '.', '@', '/',
// '\\') or reduce to nothing ("new", placeholders such as "untitled"); and
// --alias with an address naming an existing session (name@path.alias),
// where no session is opened.
func checkSendOptions(cmd *cobra.Command, to, alias, importance string, ackWithin int) error {
	switch importance {
	case "", client.ImportanceLow, client.ImportanceNormal, client.ImportanceHigh, client.ImportanceUrgent:
	default:
		return usageErr("send: --importance %q: use low, normal, high or urgent", importance)
	}
	if cmd.Flags().Changed("ack-within") && (ackWithin < 1 || ackWithin > client.MaxAckWithinMinutes) {
		return usageErr("send: --ack-within %d: give the minutes as 1 to %d (leave it out for 24 hours)",
			ackWithin, client.MaxAckWithinMinutes)
	}
	if !cmd.Flags().Changed("alias") {
		return nil
	}
	want := strings.TrimSpace(alias)
	clean := address.SanitizeAlias(want)
	switch {
	case strings.ContainsAny(want, ".@/\\"):
		return usageErr("send: --alias %q: an alias cannot hold '.', '@', '/' or '\\'; use letters, digits and '-'", alias)
	case clean == "" || address.IsPlaceholder(clean):
		return usageErr("send: --alias %q cannot name a session; choose a word that says what the session is about", alias)
	}
	if a, err := address.Parse(to); err == nil && a.Session == address.SessionAlias {
		return usageErr("send: --alias only names a session the mail opens, but %s writes to the existing session %q; "+
			"leave --alias out, or write to %s@%s.new", strings.TrimSpace(to), a.Alias, a.Name, a.Path)
	}
	return nil
}

// aliasNote tells on stderr when the session of a sent mail is not called
// what --alias asked for: the mail landed in an existing session, or the
// alias was taken and the gateway made it unique.
func aliasNote(env *Env, alias string, res *client.SendMailResponse) {
	want := address.SanitizeAlias(alias)
	if want == "" || res.SessionAlias == want {
		return
	}
	if !res.NewSession {
		env.errf("Note: --alias %s was not used: the mail went to the existing session %s "+
			"(write to name@path.new to open a new session)\n", oneLine(alias, maxSubjectRunes), res.SessionAlias)
		return
	}
	env.errf("Note: the alias %s was taken; the new session is called %s\n", want, res.SessionAlias)
}
