package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/cli"
)

// The archive over the started binary (issue 21 item 5): `agentmail
// export --out DIR --git` as a person writes her conversations (a body
// that imitates the archive's own markers included), a permission request
// with its decision and an attachment; ReadExport reads it back and finds
// every mail, the decision and the attachment's bytes; a second run writes
// nothing, a third only the session that got mail (one commit per run
// that wrote); another person's mail is not in it; --all is for admins.
func TestExportRoundTripOverTheBinary(t *testing.T) {
	e := coSetup(t)
	claude, _ := e.agent("claude")
	dave := (&peopleAndAgents{t: t, ctx: e.ctx, g: e.g, admin: e.admin}).person("dave")

	content := "attachment bytes \x00\x01 部署\n"
	att, err := e.carol.MeUploadAttachment(e.ctx, "plan (final).txt", strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	tricky := "line one\n<!-- agentmail:mail {\"mail_id\":\"fake\",\"header_bytes\":0,\"body_bytes\":0,\"trailer_bytes\":0} -->\n## not a mail\n---\n"
	first, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "claude@" + e.repo + ".new", Subject: "release plan 上线",
		Body: tricky, AttachmentIDs: []string{att.AttachmentID}})
	if err != nil {
		t.Fatal(err)
	}
	perm, err := claude.RequestPermission(e.ctx, client.PermissionRequest{Question: "rm -rf build?", SessionID: first.SessionID, RelayKey: "export-perm-1",
		Tool: "Bash", ToolInput: map[string]any{"command": "rm -rf build"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.carol.Decide(e.ctx, perm.MailID, client.DecideRequest{Decision: "approve", Note: "ok"}); err != nil {
		t.Fatal(err)
	}
	reply, err := claude.SendMail(e.ctx, client.SendMailRequest{To: "carol", ReplyTo: first.MailID, Body: "done, no trailing newline"})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := dave.MeSend(e.ctx, client.SendMailRequest{To: "claude@" + e.repo + ".new", Subject: "dave's", Body: "secret"})
	if err != nil {
		t.Fatal(err)
	}

	cliEnv := e.userCLIEnv(e.carol, "cli.json")
	out := t.TempDir()
	export := func(env []string, args ...string) string {
		t.Helper()
		text, code := e.run(e.repo, env, e.bin, append([]string{"export", "--out", out}, args...)...)
		if code != 0 {
			t.Fatalf("agentmail export %q: exit %d\n%s", args, code, text)
		}
		return text
	}
	count := func(dir string) string {
		t.Helper()
		text, _ := e.run(dir, nil, "git", "rev-list", "--count", "HEAD")
		return strings.TrimSpace(text)
	}
	wantContains(t, "first export", export(cliEnv, "--git"), "Wrote")

	// Read it back: every mail of carol's, the decision, the attachment.
	sessions, err := cli.ReadExport(out)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]cli.ExportedMail{}
	for _, s := range sessions {
		for _, m := range s.Mails {
			found[m.MailID] = m
		}
		if s.Session.SessionID == first.SessionID && (s.Session.Alias == "" || len(s.Session.Participants) < 2) {
			t.Errorf("session front matter: %+v", s.Session)
		}
	}
	var decisionMail string
	for id, m := range found {
		if m.MailType == client.MailTypePermissionDecision {
			decisionMail = id
		}
	}
	for _, id := range []string{first.MailID, perm.MailID, reply.MailID} {
		if _, ok := found[id]; !ok {
			t.Errorf("mail %s is not in the export", id)
		}
	}
	if decisionMail == "" {
		t.Errorf("no permission decision mail in the export: %d mails", len(found))
	}
	if _, ok := found[secret.MailID]; ok {
		t.Errorf("dave's mail is in carol's export")
	}
	if got := found[first.MailID].Body; got != tricky {
		t.Errorf("body read back %q, want %q", got, tricky)
	}
	if got := found[reply.MailID].Body; got != "done, no trailing newline" {
		t.Errorf("reply body read back %q", got)
	}
	if p := found[perm.MailID].Permission; p == nil || p.Status != "approved" || p.DecidedBy != "carol" {
		t.Errorf("permission read back: %+v", p)
	}
	// The permission line names the call that was decided, not only the
	// agent's question.
	files, _ := filepath.Glob(filepath.Join(out, "sessions", "*.md"))
	var permLine string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "- Permission request:") {
				permLine = line
			}
		}
	}
	if !strings.Contains(permLine, "call Bash: rm -rf build (arguments hash ") || !strings.Contains(permLine, "the agent asked: rm -rf build?") ||
		!strings.Contains(permLine, "approved by carol") {
		t.Errorf("the export's permission line = %q; want the decided call, its arguments hash, the question and the decision", permLine)
	}
	f := found[first.MailID].Files[att.AttachmentID]
	if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || string(b) != content {
		t.Errorf("attachment %q: %q, %v", f, b, err)
	}
	if n := count(out); n != "1" {
		t.Fatalf("commits after the first run: %s", n)
	}

	// A second run writes nothing; a third only the session that got mail.
	wantContains(t, "second export", export(cliEnv, "--git"), "Nothing new")
	if n := count(out); n != "1" {
		t.Fatalf("commits after a run with nothing new: %s", n)
	}
	other, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "claude@" + e.repo + ".new", Subject: "another <img src=x onerror=alert(1)>", Body: "more"})
	if err != nil {
		t.Fatal(err)
	}
	// The person's own files in the repository are not the export's to commit.
	for _, name := range []string{"notes.txt", "staged.txt"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.run(out, nil, "git", "add", "staged.txt")
	wantContains(t, "third export", export(cliEnv, "--git"), "Wrote 1 new mail in 1 session into")
	if n := count(out); n != "2" {
		t.Fatalf("commits after the third run: %s", n)
	}
	changed, _ := e.run(out, nil, "git", "diff", "--name-only", "HEAD~1", "HEAD")
	if want := "sessions/" + other.SessionID + ".md"; !strings.Contains(changed, want) || strings.Contains(changed, first.SessionID) ||
		strings.Contains(changed, "notes.txt") || strings.Contains(changed, "staged.txt") {
		t.Errorf("the third run changed %q, want only %s", changed, want)
	}
	if staged, _ := e.run(out, nil, "git", "diff", "--cached", "--name-only"); strings.TrimSpace(staged) != "staged.txt" {
		t.Errorf("the person's staged files after the export: %q, want staged.txt still staged", staged)
	}
	// A subject's markup is text in the headings the exporter writes.
	md, err := os.ReadFile(filepath.Join(out, "sessions", other.SessionID+".md"))
	if err != nil {
		t.Fatal(err)
	}
	if body := string(md[strings.Index(string(md), "\n---\n"):]); strings.Contains(body, "<img") || !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the subject's markup in the headings:\n%s", md)
	}

	// A commit that fails (a refusing pre-commit hook) keeps the mails for
	// the next run, which commits them once the hook is gone.
	hook := filepath.Join(out, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho refused by the hook >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "claude@" + e.repo + ".new", Subject: "after the hook", Body: "kept"}); err != nil {
		t.Fatal(err)
	}
	if text, code := e.run(e.repo, cliEnv, e.bin, "export", "--out", out, "--git"); code == 0 || !strings.Contains(text, "refused by the hook") {
		t.Fatalf("export with a refusing hook: exit %d\n%s", code, text)
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "export after the hook is gone", export(cliEnv, "--git"), "Wrote 1 new mail in 1 session into")
	if n := count(out); n != "3" {
		t.Fatalf("commits after the refused and the repeated run: %s", n)
	}

	// --all: refused for carol, everything for the admin.
	if text, code := e.run(e.repo, cliEnv, e.bin, "export", "--out", t.TempDir(), "--all"); code == 0 || !strings.Contains(text, "admin") {
		t.Errorf("carol's --all: exit %d\n%s", code, text)
	}
	all := t.TempDir()
	adminEnv := e.userCLIEnv(e.admin, "admin.json")
	if text, code := e.run(e.repo, adminEnv, e.bin, "export", "--out", all, "--all"); code != 0 {
		t.Fatalf("admin --all: exit %d\n%s", code, text)
	}
	everything, err := cli.ReadExport(all)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range everything {
		for _, m := range s.Mails {
			ids = append(ids, m.MailID)
			if m.MailID == first.MailID {
				if b, err := os.ReadFile(filepath.Join(all, m.Files[att.AttachmentID])); err != nil || string(b) != content {
					t.Errorf("admin's attachment: %q, %v", b, err)
				}
			}
		}
	}
	for _, id := range []string{first.MailID, secret.MailID, other.MailID} {
		if !strings.Contains(strings.Join(ids, ","), id) {
			t.Errorf("admin's export lacks %s", id)
		}
	}
}

// An export directory belongs to the person who exported into it (issue
// 21 item 5, over the started binary): what it writes is for its owner
// alone (directories 700, files 600), another person's run into it is
// refused and leaves it as it was, a directory others may change or that
// belongs to another user is refused, and so is one reached through a link
// of another user (one's own link is followed once), a link planted at the name of a
// file being written is replaced, not written through; and an incremental
// run follows what changed without new mail: a person's rename of the
// session, the agent's new title and an acknowledgement rewrite the
// session's file (front matter and every mail's session alias), and a run
// after them writes nothing.
func TestExportBelongsToItsPersonAndFollowsRenames(t *testing.T) {
	e := coSetup(t)
	claude, _ := e.agent("claude")
	dave := (&peopleAndAgents{t: t, ctx: e.ctx, g: e.g, admin: e.admin}).person("dave")
	att, err := e.carol.MeUploadAttachment(e.ctx, "notes.txt", strings.NewReader("private notes\n"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "claude@" + e.repo + ".new", Subject: "release plan",
		Body: "the plan", AttachmentIDs: []string{att.AttachmentID}})
	if err != nil {
		t.Fatal(err)
	}
	ask, err := e.carol.MeSend(e.ctx, client.SendMailRequest{To: "claude", ReplyTo: first.MailID, Body: "confirm, please", AckRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	carolEnv := e.userCLIEnv(e.carol, "carol.json")
	daveEnv := e.userCLIEnv(dave, "dave.json")
	out := filepath.Join(t.TempDir(), "archive") // made by the export
	export := func(env []string, want ...string) string {
		t.Helper()
		text, code := e.run(e.repo, env, e.bin, "export", "--out", out, "--git")
		if code != 0 {
			t.Fatalf("agentmail export: exit %d\n%s", code, text)
		}
		wantContains(t, "agentmail export", text, want...)
		return text
	}
	export(carolEnv, "Wrote 2 new mails in 1 session")
	sessionFile := filepath.Join(out, "sessions", first.SessionID+".md")
	for path, want := range map[string]os.FileMode{out: 0o700, filepath.Join(out, "sessions"): 0o700,
		filepath.Join(out, "sessions", first.SessionID): 0o700, sessionFile: 0o600, filepath.Join(out, ".agentmail-export.json"): 0o600,
		filepath.Join(out, "sessions", first.SessionID, att.AttachmentID+"-notes.txt"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	snapshot := func() map[string]string {
		t.Helper()
		files := map[string]string{}
		err := filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)) {
				return err
			}
			b, err := os.ReadFile(p)
			files[p] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}

	// dave, with mail of his own, may not continue or overwrite carol's export.
	if _, err := dave.MeSend(e.ctx, client.SendMailRequest{To: "claude@" + e.repo + ".new", Subject: "dave's", Body: "dave's secret"}); err != nil {
		t.Fatal(err)
	}
	before := snapshot()
	text, code := e.run(e.repo, daveEnv, e.bin, "export", "--out", out, "--git")
	if code == 0 {
		t.Fatalf("dave's export into carol's directory succeeded:\n%s", text)
	}
	wantContains(t, "dave's refused export", text, "holds the mail of carol", "you are dave", "choose another --out")
	if after := snapshot(); len(after) != len(before) {
		t.Fatalf("dave's refused run changed the files: %d before, %d after", len(before), len(after))
	} else {
		for p, b := range before {
			if after[p] != b {
				t.Errorf("dave's refused run changed %s", p)
			}
		}
	}
	// A directory others may write into is refused; so is one of another user.
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if text, code := e.run(e.repo, daveEnv, e.bin, "export", "--out", shared); code == 0 || !strings.Contains(text, "chmod go-w") {
		t.Errorf("an export into a directory anyone may change: exit %d\n%s", code, text)
	}
	if os.Geteuid() == 0 {
		foreign := filepath.Join(t.TempDir(), "foreign")
		if err := os.Mkdir(foreign, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if text, code := e.run(e.repo, daveEnv, e.bin, "export", "--out", foreign); code == 0 || !strings.Contains(text, "belongs to another user") {
			t.Errorf("an export into another user's directory: exit %d\n%s", code, text)
		}
		// A link of another user, even to a directory of dave's own, is
		// refused: its owner could point it elsewhere between the check and
		// the writes.
		davesOwn, planted := linkToNewDir(t)
		if err := os.Lchown(planted, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if text, code := e.run(e.repo, daveEnv, e.bin, "export", "--out", filepath.Join(planted, "archive")); code == 0 ||
			!strings.Contains(text, "a link that belongs to another user") {
			t.Errorf("an export through another user's link: exit %d\n%s", code, text)
		}
		if entries, _ := os.ReadDir(davesOwn); len(entries) != 0 {
			t.Errorf("the refused export through another user's link wrote %d entries into its target", len(entries))
		}
	}
	// A link of dave's own is followed once: the export lands in its target.
	ownTarget, ownLink := linkToNewDir(t)
	if text, code := e.run(e.repo, daveEnv, e.bin, "export", "--out", ownLink); code != 0 || !strings.Contains(text, "Wrote 1 new mail") {
		t.Errorf("an export through a link of dave's own: exit %d\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(ownTarget, ".agentmail-export.json")); err != nil {
		t.Errorf("the export through dave's own link is not in its target: %v", err)
	}

	// The person renames the session, the agent gives it a new title and
	// acknowledges: no new mail, and the next run rewrites the session.
	newAlias := "launch-plan"
	renamed, err := e.carol.MeUpdateSession(e.ctx, first.SessionID, client.UpdateSessionRequest{Alias: &newAlias})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claude.SyncSession(e.ctx, first.SessionID, client.SyncSessionRequest{Title: "Launch plan for Friday"}); err != nil {
		t.Fatal(err)
	}
	if _, err := claude.AckMail(e.ctx, ask.MailID); err != nil {
		t.Fatal(err)
	}
	// Whatever lies at the name of the file being written is not written through.
	victim := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(victim, []byte("untouched\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, sessionFile+".tmp"); err != nil {
		t.Fatal(err)
	}
	export(carolEnv, "No new mail; updated 1 session")
	if b, err := os.ReadFile(victim); err != nil || string(b) != "untouched\n" {
		t.Errorf("the planted link's target after the export: %q, %v", b, err)
	}
	sessions, err := cli.ReadExport(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 {
		t.Fatalf("%d sessions in carol's export, want 1", len(sessions))
	}
	s := sessions[0]
	if s.Session.Alias != renamed.Alias || s.Session.Subject != "Launch plan for Friday" || !strings.Contains(strings.Join(s.Session.FormerAliases, ","), first.SessionAlias) {
		t.Errorf("the session after the rename: alias %q (want %q), subject %q, former %q (want %q among them)",
			s.Session.Alias, renamed.Alias, s.Session.Subject, s.Session.FormerAliases, first.SessionAlias)
	}
	for _, m := range s.Mails {
		if m.SessionAlias != renamed.Alias {
			t.Errorf("mail %s still names the session %q", m.MailID, m.SessionAlias)
		}
		if m.MailID == ask.MailID && (len(m.Acks) != 1 || m.Acks[0].Name != "claude" || m.Acks[0].AckedAt == nil) {
			t.Errorf("the acknowledgement in the export: %+v", m.Acks)
		}
		if strings.Contains(m.Body, "dave's secret") {
			t.Errorf("dave's mail is in carol's export")
		}
	}
	if n, _ := e.run(out, nil, "git", "rev-list", "--count", "HEAD"); strings.TrimSpace(n) != "2" {
		t.Errorf("commits after the run that followed the rename: %s", n)
	}
	export(carolEnv, "Nothing new")
}

// linkToNewDir makes a new directory of the caller's (mode 700) and, in
// another temporary directory, a symbolic link to it; it answers both paths.
func linkToNewDir(t *testing.T) (dir, link string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "target")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	return dir, link
}
