package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmail/agentmail/client"
)

// NewSearchCommand returns `agentmail search QUERY...`: a full-text search
// of the mails you sent or received (GET /api/v1/me/mail/search), the
// matched words in «».
func NewSearchCommand(env *Env) *cobra.Command {
	var asJSON, newest bool
	var limit int
	var cursor string
	cmd := &cobra.Command{
		Use:   "search [--newest] QUERY...",
		Short: "Search the mail you sent or received",
		Long: `Search the mail you sent or received. Every word must appear (case and accents
are ignored; Chinese is matched character by character, so 部署 finds 部署 inside
longer text). Also: "exact phrases", prefix* (deploy* finds deployed), -word to
leave out mails holding a word (put -- before the query so that -word is not
read as an option), from:NAME, to:NAME, session:ALIAS, has:attachment,
is:unread, before:2026-12-01 and after:2026-11-01 (dates in UTC; a filter needs
its value right after the colon). The best matches come first: every word in
the subject or the sender's name, then some of them, then body only, newest
first within each; --newest lists every match newest first. Matched words are
shown in «». Queries are at most 200 characters.`,
		Example: `  agentmail search deploy from:claude
  agentmail search '"build cache"' after:2026-11-01
  agentmail search -- deploy -staging
  agentmail search 部署 is:unread`,
		Args: minArgs(1, "words to search for"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 || limit > 100 {
				return usageErr("search: --limit must be 1 to 100")
			}
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			q := client.SearchQuery{Q: strings.Join(args, " "), Limit: limit, Cursor: cursor}
			if newest {
				q.Sort = client.SearchNewest
			}
			r, err := c.MeSearch(cmd.Context(), q)
			if err != nil {
				return apiErr("search", err)
			}
			if asJSON {
				return env.printJSON(r)
			}
			if len(r.Hits) == 0 {
				env.outln("No mail matches.")
				return nil
			}
			for _, h := range r.Hits {
				m := h.Mail
				mark := " "
				if m.Role != "" && !m.Read {
					mark = "*"
				}
				env.outf("%s %s  %s  %s  %s\n    %s\n", mark, m.MailID, timeText(m.CreatedAt), m.FromName, m.SessionAlias,
					oneLine(spansText(h.Subject), 100))
				if s := strings.TrimSpace(printable(spansText(h.Snippet))); s != "" {
					env.outf("    %s\n", s)
				}
			}
			if r.NextCursor != "" {
				env.outf("More: agentmail search --cursor %s %s\n", r.NextCursor, shellQuoteArgs(args, newest))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&newest, "newest", false, "every match, newest first (default: best matches first)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many (default 20, at most 100)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue after a previous page (the value it printed)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's SearchResults JSON")
	return env.setup(cmd)
}

// spansText renders highlighted spans with the matches in «».
func spansText(spans []client.TextSpan) string { return client.MarkedText(spans, "«", "»") }

// shellQuoteArgs answers args (and --newest) as a shell would take them back.
func shellQuoteArgs(args []string, newest bool) string {
	var out []string
	if newest {
		out = append(out, "--newest")
	}
	for _, a := range args {
		out = append(out, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(out, " ")
}
