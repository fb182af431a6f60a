package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/pathwalk"
)

// The archive written by `agentmail export` (issue 21 item 5):
//
//	DIR/.agentmail-export.json      the cursor of the last run (the last mail id written)
//	DIR/sessions/<session_id>.md    one file per session: front matter, then the mails oldest first
//	DIR/sessions/<session_id>/<attachment_id>-<name>   the attachments, beside it
//
// Each mail is one block: a marker line "<!-- agentmail:mail {json} -->"
// whose JSON is the mail as the API gives it (permission requests with
// their decision) without its body, plus the byte lengths of the three
// parts that follow: a heading line, the body exactly as written, and a
// list of the attachments and the decision. ReadExport reads a file back
// by those lengths, so nothing a mail body holds (even a line that looks
// like a marker) can break the archive apart.

// exportState is DIR/.agentmail-export.json. Gateway and User tie the
// directory to the gateway and the person whose mail it holds: a run by
// anyone else, or against another gateway, is refused, so that one
// person's export never continues, merges into or overwrites another's.
// ChangesAsOf is the time to ask the sessions changed since
// (GET /me/export/sessions) on the next run.
type exportState struct {
	Gateway     string     `json:"gateway"`
	User        string     `json:"user"`
	All         bool       `json:"all"`
	Cursor      string     `json:"cursor"`
	ChangesAsOf *time.Time `json:"changes_as_of,omitempty"`
}

// exportMeta is the JSON of a mail's marker line.
type exportMeta struct {
	client.Mail
	// Files maps attachment ids to their file, relative to the session file.
	Files        map[string]string `json:"files,omitempty"`
	HeaderBytes  int               `json:"header_bytes"`
	BodyBytes    int               `json:"body_bytes"`
	TrailerBytes int               `json:"trailer_bytes"`
	// AddedNewline says the body part ends with a newline the body has not.
	AddedNewline bool `json:"added_newline,omitempty"`
}

const exportMarker = "<!-- agentmail:mail "

// ExportedSession is one session file read back by ReadExport.
type ExportedSession struct {
	Session client.Session
	Mails   []ExportedMail
}

// ExportedMail is one mail of a session file, Body included; Files maps
// attachment ids to their paths relative to the export directory.
type ExportedMail struct {
	client.Mail
	Files map[string]string
}

// NewExportCommand returns `agentmail export --out DIR [--git] [--all]`.
func NewExportCommand(env *Env) *cobra.Command {
	var out string
	var useGit, all bool
	cmd := &cobra.Command{
		Use:   "export --out DIR [--git] [--all]",
		Short: "Write your conversations into a directory as Markdown",
		Long: `Write every conversation you may read into DIR as Markdown: one file per session
(sessions/<session_id>.md) with its participants, aliases and dates at the top, each
mail with its sender, recipients, date and body, permission requests with their
decisions, and the attachments as files beside it. A second run writes only what is
new since the first (the sessions that got mail). With --git, DIR is a git
repository and each run that wrote something is one commit of the export's own files
(sessions/ and .agentmail-export.json; other files are left alone); when the commit
fails, the next run writes and commits the same mails again. An admin may add --all
to export every conversation on the gateway.

DIR belongs to the person who exported into it first, on that gateway: a run by
anyone else (or against another gateway) is refused, so one person's export never
takes in or overwrites another's. A new DIR and what the export writes into it can
be read by you alone (mode 700 and 600); a DIR that other users of this machine may
change, that belongs to another user, or that is reached through a link of another
user, is refused. A session renamed since the
last run, or one whose mail was acknowledged, is written again with its new name.`,
		Example: `  agentmail export --out ~/mail-archive --git`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr("export: --out DIR is required")
			}
			c, cfg, err := env.newClient()
			if err != nil {
				return err
			}
			// Resolved once: every write below goes to the real directory,
			// whatever a link on the way to it points at later.
			root, err := resolveExportRoot(out)
			if err != nil {
				return err
			}
			n, sessions, restore, err := runExport(cmd.Context(), env, c, cfg.URL, root, all)
			if err != nil {
				return err
			}
			if useGit {
				if err := commitExport(cmd.Context(), root, n, sessions); err != nil {
					// The next run exports the same mails again (they are
					// merged, not doubled) and commits them.
					if rerr := restore(); rerr != nil {
						return fmt.Errorf("%w; the export position could not be put back either: %v", err, rerr)
					}
					return err
				}
			}
			if n == 0 && sessions == 0 {
				env.outf("Nothing new since the last export into %s.\n", out)
			} else if n == 0 {
				env.outf("No new mail; updated %s (a new name or subject, or an acknowledgement) in %s.\n", countWords(env.lang(), sessions, "1 session", "%d sessions"), out)
			} else {
				l := env.lang()
				env.outf("Wrote %s in %s into %s.\n", countWords(l, n, "1 new mail", "%d new mails"), countWords(l, sessions, "1 session", "%d sessions"), out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the directory to write (created when missing)")
	cmd.Flags().BoolVar(&useGit, "git", false, "keep DIR as a git repository, one commit per run")
	cmd.Flags().BoolVar(&all, "all", false, "every conversation on the gateway (admins only)")
	return env.setup(cmd)
}

// runExport fetches the mails after the stored cursor and rewrites the
// files of the sessions they belong to and of the sessions changed since
// the last run; it answers how many mails it wrote and how many sessions
// (those with new mail, and those whose file changed), and restore, which puts the previous export position
// back (for a run whose commit failed).
func runExport(ctx context.Context, env *Env, c *client.Client, gateway, dir string, all bool) (int, int, func() error, error) {
	n, sessions, prev, err := exportInto(ctx, env, c, gateway, dir, all)
	statePath := filepath.Join(dir, exportStateFile)
	restore := func() error {
		if prev == nil {
			return os.Remove(statePath)
		}
		return writeOwnFile(statePath, prev)
	}
	return n, sessions, restore, err
}

// exportStateFile is the export position's file in DIR.
const exportStateFile = ".agentmail-export.json"

// exportInto is runExport's work; prev is the state file as it was (nil
// when there was none).
func exportInto(ctx context.Context, env *Env, c *client.Client, gateway, dir string, all bool) (n, written int, prev []byte, err error) {
	othersRead, err := ensureOwnDir(dir)
	if err != nil {
		return 0, 0, nil, err
	}
	if _, err := ensureOwnDir(filepath.Join(dir, "sessions")); err != nil {
		return 0, 0, nil, err
	}
	me, err := c.Me(ctx)
	if err != nil {
		return 0, 0, nil, apiErr("export", err)
	}
	gateway = strings.TrimRight(gateway, "/")
	statePath := filepath.Join(dir, exportStateFile)
	var st exportState
	if b, err := os.ReadFile(statePath); err == nil {
		prev = b
		if err := json.Unmarshal(b, &st); err != nil {
			return 0, 0, prev, fmt.Errorf("export: %s is not an export state file: %w", statePath, err)
		}
		if st.User == "" {
			return 0, 0, prev, usageErr("export: %s holds an export that does not say whose mail it is; export into a new directory", dir)
		}
		if st.User != me.Username || st.Gateway != gateway {
			return 0, 0, prev, usageErr("export: %s holds the mail of %s from the gateway at %s; you are %s at %s: choose another --out", dir, st.User, st.Gateway, me.Username, gateway)
		}
		if st.All != all {
			return 0, 0, prev, usageErr("export: %s was exported %s; run with the same --all, or choose another --out", dir, map[bool]word{true: "with --all", false: "without --all"}[st.All])
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, 0, prev, err
	} else if old, _ := filepath.Glob(filepath.Join(dir, "sessions", "*.md")); len(old) > 0 {
		return 0, 0, prev, usageErr("export: %s holds session files but no export state, so whose they are is unknown; export into a new directory", dir)
	}
	if othersRead {
		env.errf("Note: other users of this machine can read %s; run chmod 700 on it to keep your mail to yourself.\n", dir)
	}
	st.Gateway, st.User, st.All = gateway, me.Username, all
	newMails := map[string][]client.Mail{}
	sessions := map[string]client.Session{}
	var asOf time.Time
	for {
		page, err := c.MeExport(ctx, client.ExportQuery{After: st.Cursor, Limit: 500, All: all})
		if err != nil {
			return 0, 0, prev, apiErr("export", err)
		}
		if asOf.IsZero() {
			asOf = page.ChangesAsOf
		}
		for _, s := range page.Sessions {
			sessions[s.SessionID] = s
		}
		for _, m := range page.Mails {
			newMails[m.SessionID] = append(newMails[m.SessionID], m)
			st.Cursor = m.MailID
			n++
		}
		if page.NextCursor == "" {
			break
		}
	}
	// The sessions renamed (or whose mail was acknowledged) since the last
	// run: their files are written again even without new mail.
	if st.ChangesAsOf != nil {
		cursor := ""
		for {
			page, err := c.MeExportSessions(ctx, client.ExportSessionsQuery{ChangedAfter: *st.ChangesAsOf, Cursor: cursor, Limit: 500, All: all})
			if err != nil {
				return 0, 0, prev, apiErr("export", err)
			}
			for _, s := range page.Sessions {
				if _, ok := newMails[s.SessionID]; ok {
					continue // the mail page's view is as new
				}
				if _, err := os.Lstat(sessionFilePath(dir, s.SessionID)); err == nil {
					sessions[s.SessionID] = s
					newMails[s.SessionID] = nil
				}
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
	}
	ids := make([]string, 0, len(newMails))
	for id := range newMails {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		changed, err := writeSession(ctx, c, dir, all, sessions[id], newMails[id])
		if err != nil {
			return 0, 0, prev, err
		}
		if changed || len(newMails[id]) > 0 {
			written++ // (the same mails again after a failed commit count too)
		}
	}
	if n == 0 && written == 0 && prev != nil {
		// Nothing written: the state stays as it was (and a --git run
		// has nothing to commit); the sessions listed as changed are
		// asked again next time, which finds them as they are.
		return 0, 0, prev, nil
	}
	if !asOf.IsZero() {
		st.ChangesAsOf = &asOf
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := writeOwnFile(statePath, append(b, '\n')); err != nil {
		return 0, 0, prev, err
	}
	return n, written, prev, nil
}

// sessionFilePath is where the session's file lies in the export DIR.
func sessionFilePath(dir, sessionID string) string {
	return filepath.Join(dir, "sessions", safeName(sessionID)+".md")
}

// resolveExportRoot answers the export directory --out names as an absolute
// path without symbolic links, resolved once so that every later write goes
// to that directory and not through a link someone re-points after the
// checks. A link on the way that belongs to another user of this machine
// (root's are trusted) is refused: that user could point it anywhere, at any
// time. The part of the path that does not exist yet is kept as named (the
// export creates it; ensureOwnDir refuses a link planted there meanwhile).
// Errors: a usage error naming the link, or the file system's.
func resolveExportRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	resolved, err := pathwalk.Resolve(abs, maxExportLinks, func(link string, fi os.FileInfo) error {
		if linkOfAnotherUser(fi) {
			return usageErr("export: %s is reached through %s, a link that belongs to another user of this machine, who could point it elsewhere; export into a directory of your own", dir, link)
		}
		return nil
	})
	if errors.Is(err, pathwalk.ErrTooManyLinks) {
		return "", usageErr("export: too many links on the way to %s", dir)
	}
	return resolved, err
}

// maxExportLinks bounds the links resolveExportRoot follows.
const maxExportLinks = 40

// ensureOwnDir makes dir for the caller alone (mode 700, missing parents
// too) or, when it is there, checks that it is a directory of the caller's
// that nobody else may change: one of another user, or one that other
// users may write into (who could swap a session file or plant a link the
// export would write through), is refused, and so is a link (the export
// directory is resolved first, resolveExportRoot; the directories inside it
// must be real ones). It answers whether other users may read dir.
func ensureOwnDir(dir string) (othersRead bool, err error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, err
		}
		if fi, err = os.Lstat(dir); err != nil {
			return false, err
		}
	} else if err != nil {
		return false, err
	}
	switch {
	case !fi.IsDir():
		return false, usageErr("export: %s is not a directory; choose a directory for --out", dir)
	case ownedByAnotherUser(fi):
		return false, usageErr("export: %s belongs to another user of this machine; export into a directory of your own", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return false, usageErr("export: other users of this machine may change %s (mode %s); run chmod go-w on it, or export into a directory of your own", dir, fi.Mode().Perm().String())
	}
	return fi.Mode().Perm()&0o044 != 0, nil
}

// createOwnTemp creates path+".tmp" for its owner alone (mode 600), as a
// new file: whatever lay at that name before (a link someone planted
// included) is removed, never written through. The caller renames it over
// path once it is complete.
func createOwnTemp(path string) (*os.File, string, error) {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	return f, tmp, err
}

// writeOwnFile replaces path with data, readable by its owner alone.
func writeOwnFile(path string, data []byte) error {
	return writeOwnFrom(path, bytes.NewReader(data))
}

// writeOwnFrom replaces path with what r holds, readable by its owner
// alone (createOwnTemp, then a rename; nothing is left behind on failure).
func writeOwnFrom(path string, r io.Reader) error {
	f, tmp, err := createOwnTemp(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// writeSession merges the new mails into the session's file (mails already
// there are kept; a permission request still pending and a mail whose
// acknowledgements are not all in are read again, so the decision and the
// acknowledgements appear; every mail takes the session's current alias)
// and downloads the attachments not yet beside it. It answers whether the
// file changed (a file with the same content is left alone).
func writeSession(ctx context.Context, c *client.Client, dir string, all bool, s client.Session, mails []client.Mail) (bool, error) {
	path := sessionFilePath(dir, s.SessionID)
	byID := map[string]client.Mail{}
	old, err := os.ReadFile(path)
	if err == nil {
		prev, err := parseSessionFile(old)
		if err != nil {
			return false, fmt.Errorf("export: reading %s: %w", path, err)
		}
		for _, m := range prev.Mails {
			if (m.Permission != nil && m.Permission.Status == "pending") || waitingForAcks(m.Mail) {
				var fresh *client.Mail
				if all {
					fresh, err = c.AdminGetMail(ctx, m.MailID)
				} else {
					fresh, err = c.MeGetMail(ctx, m.MailID)
				}
				if err == nil {
					m.Mail = *fresh
				}
			}
			byID[m.MailID] = m.Mail
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("export: reading %s: %w", path, err)
	}
	for _, m := range mails {
		byID[m.MailID] = m
	}
	list := make([]client.Mail, 0, len(byID))
	for _, m := range byID {
		if s.Alias != "" {
			m.SessionAlias = s.Alias
		}
		list = append(list, m)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].MailID < list[j].MailID })

	attDir := safeName(s.SessionID)
	attDirChecked := false
	var b bytes.Buffer
	fm := func(k string, v any) {
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, "%s: %s\n", k, j)
	}
	b.WriteString("---\n")
	fm("session_id", s.SessionID)
	fm("alias", s.Alias)
	fm("former_aliases", nonNil(s.FormerAliases))
	fm("subject", s.Subject)
	fm("participants", nonNil(s.Participants))
	fm("agent", s.AgentName)
	fm("workspace", s.Workspace)
	fm("origin_session_id", s.OriginSessionID)
	fm("created_at", s.CreatedAt)
	fm("last_activity", s.LastActivity)
	fm("mails", len(list))
	b.WriteString("---\n\n")
	fmt.Fprintf(&b, "# %s (%s)\n\n", markdownText(oneLine(s.Subject, 200)), markdownText(s.Alias))
	for _, m := range list {
		files := map[string]string{}
		var trailer strings.Builder
		for _, a := range m.Attachments {
			name := safeName(a.AttachmentID) + "-" + safeName(a.Filename)
			fileRel := filepath.ToSlash(filepath.Join(attDir, name))
			files[a.AttachmentID] = fileRel
			if !attDirChecked {
				if _, err := ensureOwnDir(filepath.Join(dir, "sessions", attDir)); err != nil {
					return false, err
				}
				attDirChecked = true
			}
			if err := downloadOnce(ctx, c, all, a.AttachmentID, filepath.Join(dir, "sessions", attDir, name)); err != nil {
				return false, err
			}
			fmt.Fprintf(&trailer, "- Attachment: [%s](<%s>) (%d bytes)\n", markdownText(oneLine(a.Filename, 200)), fileRel, a.Size)
		}
		if p := m.Permission; p != nil {
			// The call that was decided comes first: the question is the
			// agent's own words and may say anything about it.
			call := "the agent named no tool call"
			if p.ToolSummary != "" {
				call = "call " + markdownText(oneLine(p.ToolSummary, 300))
			} else if p.Tool != "" {
				call = "call " + markdownText(oneLine(p.Tool, 100))
			}
			if p.ArgsHash != "" {
				call += " (arguments hash " + markdownText(oneLine(p.ArgsHash, 100)) + ")"
			}
			fmt.Fprintf(&trailer, "- Permission request: %s; the agent asked: %s — %s", call, markdownText(oneLine(p.Question, 200)), p.Status)
			if p.DecidedBy != "" {
				fmt.Fprintf(&trailer, " by %s", p.DecidedBy)
			}
			if p.Decision != "" {
				fmt.Fprintf(&trailer, " (%s)", oneLine(p.Decision, 100))
			}
			trailer.WriteString("\n")
		}
		var to []string
		for _, r := range m.Recipients {
			to = append(to, r.Name)
		}
		header := fmt.Sprintf("## %s — %s → %s: %s\n\n", m.CreatedAt.UTC().Format(time.RFC3339), m.FromName, strings.Join(to, ", "), markdownText(oneLine(m.Subject, 200)))
		body, added := m.Body, false
		if !strings.HasSuffix(body, "\n") {
			body, added = body+"\n", true
		}
		tr := trailer.String()
		if tr != "" {
			tr = "\n" + tr
		}
		tr += "\n"
		meta := exportMeta{Mail: m, Files: files, HeaderBytes: len(header), BodyBytes: len(body), TrailerBytes: len(tr), AddedNewline: added}
		meta.Body = ""
		j, err := json.Marshal(meta) // escapes < and >, so "-->" cannot occur in it
		if err != nil {
			return false, err
		}
		b.WriteString(exportMarker)
		b.Write(j)
		b.WriteString(" -->\n")
		b.WriteString(header)
		b.WriteString(body)
		b.WriteString(tr)
	}
	if bytes.Equal(b.Bytes(), old) {
		return false, nil
	}
	return true, writeOwnFile(path, b.Bytes())
}

// waitingForAcks reports whether m asked for acknowledgements that are not
// all in yet, as far as the viewer sees them.
func waitingForAcks(m client.Mail) bool {
	if !m.AckRequired {
		return false
	}
	if m.Role != "" && m.AckedAt == nil {
		return true // the viewer's own acknowledgement is owed
	}
	for _, a := range m.Acks {
		if a.AckedAt == nil {
			return true
		}
	}
	return false
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// downloadOnce writes an attachment to path unless it is there already
// (attachments never change).
func downloadOnce(ctx context.Context, c *client.Client, all bool, id, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	var rc io.ReadCloser
	var err error
	if all {
		rc, _, err = c.AdminDownloadAttachment(ctx, id)
	} else {
		rc, _, err = c.MeDownloadAttachment(ctx, id)
	}
	if err != nil {
		return apiErr("export: attachment "+id, err)
	}
	defer rc.Close()
	return writeOwnFrom(path, rc)
}

// safeName keeps letters, digits, '.', '-' and '_' of s (others become
// '_'), never "." or "..", at most 100 runes: a file name that stays in
// its directory whatever a mail names its attachment.
func safeName(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == 100 {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		n++
	}
	out := strings.TrimLeft(b.String(), ".")
	if out == "" {
		out = "_"
	}
	return out
}

// commitExport makes DIR a git repository when it is not one and commits
// what the run wrote: the export's own files only (sessions/ and the state
// file), so that other files of a repository the export lives in, staged or
// not, stay as they were. Nothing is committed when nothing changed.
func commitExport(ctx context.Context, dir string, n, sessions int) error {
	own := []string{"--", "sessions", exportStateFile}
	git := func(what string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("export: git could not %s in %s (%v): %s", what, dir, err, strings.TrimSpace(string(out)))
		}
		return string(out), nil
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); errors.Is(err, os.ErrNotExist) {
		if _, err := git("create a repository", "init", "-q"); err != nil {
			return err
		}
	}
	if _, err := git("add the export's files", append([]string{"add"}, own...)...); err != nil {
		return err
	}
	status, err := git("read the status", append([]string{"status", "--porcelain"}, own...)...)
	if err != nil || strings.TrimSpace(status) == "" {
		return err
	}
	var ident []string
	if name, _ := git("read user.email", "config", "user.email"); strings.TrimSpace(name) == "" {
		ident = []string{"-c", "user.name=agentmail export", "-c", "user.email=export@agentmail.invalid"}
	}
	msg := fmt.Sprintf("agentmail export %s: %s in %s", time.Now().UTC().Format(time.RFC3339), countText(n, "new mail", "new mails"), countText(sessions, "session", "sessions"))
	_, err = git("commit", append(append(ident, "commit", "-q", "-m", msg), own...)...)
	return err
}

// countWords is the text one for n = 1, else the format many with n, in l.
func countWords(l lang, n int, one, many string) string {
	if n == 1 {
		return l.S(one)
	}
	return l.F(many, n)
}

// countText is "1 new mail", "2 new mails".
func countText(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// markdownText escapes the text the exporter writes into headings and list
// items (subjects, file names, questions) so that a hostile subject such as
// "<img onerror=…>" is shown as text by a Markdown renderer, never as HTML.
// Mail bodies stay exactly as written.
func markdownText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// ReadExport reads every session file of an export directory back.
func ReadExport(dir string) ([]ExportedSession, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "sessions", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []ExportedSession
	for _, p := range paths {
		s, err := readSessionFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for i := range s.Mails {
			for id, f := range s.Mails[i].Files {
				s.Mails[i].Files[id] = filepath.ToSlash(filepath.Join("sessions", f))
			}
		}
		out = append(out, *s)
	}
	return out, nil
}

// readSessionFile parses one session file (see the package comment above
// exportState); Files stay relative to the file.
func readSessionFile(path string) (*ExportedSession, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSessionFile(data)
}

// parseSessionFile parses the content of one session file.
func parseSessionFile(data []byte) (*ExportedSession, error) {
	r := bufio.NewReader(bytes.NewReader(data))
	line := func() (string, error) {
		l, err := r.ReadString('\n')
		if err != nil && l == "" {
			return "", err
		}
		return strings.TrimSuffix(l, "\n"), nil
	}
	if l, err := line(); err != nil || l != "---" {
		return nil, errors.New("no front matter")
	}
	var s ExportedSession
	fm := map[string]json.RawMessage{}
	for {
		l, err := line()
		if err != nil {
			return nil, errors.New("front matter not closed")
		}
		if l == "---" {
			break
		}
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			return nil, fmt.Errorf("front matter line %q", l)
		}
		fm[k] = json.RawMessage(v)
	}
	for k, dst := range map[string]any{"session_id": &s.Session.SessionID, "alias": &s.Session.Alias, "former_aliases": &s.Session.FormerAliases,
		"subject": &s.Session.Subject, "participants": &s.Session.Participants, "agent": &s.Session.AgentName, "workspace": &s.Session.Workspace,
		"origin_session_id": &s.Session.OriginSessionID, "created_at": &s.Session.CreatedAt, "last_activity": &s.Session.LastActivity} {
		if raw, ok := fm[k]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return nil, fmt.Errorf("front matter %s: %w", k, err)
			}
		}
	}
	for {
		l, err := line()
		if errors.Is(err, io.EOF) {
			break
		}
		if !strings.HasPrefix(l, exportMarker) {
			continue // the title and blank lines between blocks
		}
		var meta exportMeta
		if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(l, exportMarker), " -->")), &meta); err != nil {
			return nil, fmt.Errorf("mail marker: %w", err)
		}
		parts := make([][]byte, 3)
		for i, n := range []int{meta.HeaderBytes, meta.BodyBytes, meta.TrailerBytes} {
			parts[i] = make([]byte, n)
			if _, err := io.ReadFull(r, parts[i]); err != nil {
				return nil, fmt.Errorf("mail %s: cut short", meta.MailID)
			}
		}
		m := ExportedMail{Mail: meta.Mail, Files: meta.Files}
		m.Body = string(parts[1])
		if meta.AddedNewline {
			m.Body = strings.TrimSuffix(m.Body, "\n")
		}
		s.Mails = append(s.Mails, m)
	}
	if want, ok := fm["mails"]; ok {
		if n, _ := strconv.Atoi(string(want)); n != len(s.Mails) {
			return nil, fmt.Errorf("front matter says %d mails, the file holds %d", n, len(s.Mails))
		}
	}
	return &s, nil
}
