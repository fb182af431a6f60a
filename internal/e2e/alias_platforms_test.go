package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge/opencode/mailrig"
	"github.com/agentmail/agentmail/internal/fakemodel"
	"github.com/agentmail/agentmail/internal/platformtest"
	"github.com/agentmail/agentmail/internal/store"
)

// Issue 14's "Done when", with each real platform: `agentmail serve`,
// `agentmail bridge --platform NAME` and the platform it drives are
// separate processes; only the model is scripted. A session's alias does
// not follow later subjects; every alias it had keeps reaching it, after
// the ladder's one rename (opencode's slug replacing the first alias),
// after a person's rename and the bridge writing it back into the
// platform, and after the platform renamed its session itself (pi); and
// opencode's slug stays across turns. Self-contained, so that it can
// become one row of a table of platform contract tests.

// aliasPlatform is one platform of the test: how to point it at the
// scripted model, and how a person renames a session in the platform's own
// interface (nil when the platform cannot rename its sessions).
type aliasPlatform struct {
	platform platformtest.Platform
	useModel func(t *testing.T, r *mailrig.Rig)
	// slug: the platform names sessions itself (D-5 level 1), so the
	// subject-derived first alias is replaced in the first turn.
	slug bool
	// renameInPlatform renames the platform session to name while the
	// bridge br is stopped, and answers the bridge started afterwards.
	renameInPlatform func(t *testing.T, r *mailrig.Rig, br *mailrig.Bridge, platformSessionID, name string) *mailrig.Bridge
}

// ocSlugShape is opencode's generated slug (adjective-noun).
var ocSlugShape = regexp.MustCompile(`^[a-z]+-[a-z]+$`)

// Claude Code names no session and cannot rename one (C-11, RenameSession
// unsupported): the platform never renames here.
func TestE2EAliasClaudeCode(t *testing.T) {
	runAliasStaysPut(t, aliasPlatform{platform: platformtest.Claude,
		useModel: func(t *testing.T, r *mailrig.Rig) { r.Env.UseClaude(r.Model.URL) }})
}

// pi names no session itself; the bridge writes the gateway's alias into
// it (setSessionName), and a person may rename it in pi's own interface,
// which the test does as pi does: a session_info entry in the session file.
func TestE2EAliasPi(t *testing.T) {
	var agentDir string
	runAliasStaysPut(t, aliasPlatform{platform: platformtest.Pi,
		useModel: func(t *testing.T, r *mailrig.Rig) {
			var err error
			if agentDir, err = r.Env.UsePi(r.Model.OpenAIBaseURL(), "fake-model"); err != nil {
				t.Fatal(err)
			}
		},
		renameInPlatform: func(t *testing.T, r *mailrig.Rig, br *mailrig.Bridge, psid, name string) *mailrig.Bridge {
			br.Stop() // no pi process holds the session file now
			appendPiSessionName(t, agentDir, psid, name)
			return r.StartBridge() // its first heartbeat mirrors pi's sessions
		}})
}

func TestE2EAliasOpenCode(t *testing.T) {
	runAliasStaysPut(t, aliasPlatform{platform: platformtest.OpenCode, slug: true,
		useModel: func(t *testing.T, r *mailrig.Rig) { r.Env.UseOpenCode(r.Model.OpenAIBaseURL(), "fake-model") }})
}

// appendPiSessionName renames a pi session the way pi's SessionManager
// does (appendSessionInfo): a session_info entry after the last entry.
func appendPiSessionName(t *testing.T, agentDir, sessionID, name string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*_"+sessionID+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("pi session files of %s: %v", sessionID, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var last struct {
		ID string `json:"id"`
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.ID == "" {
		t.Fatalf("last entry of %s: %q (%v)", files[0], lines[len(lines)-1], err)
	}
	entry, _ := json.Marshal(map[string]any{"type": "session_info", "id": strings.ReplaceAll(store.NewID(), "-", "")[24:],
		"parentId": last.ID, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "name": name})
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(entry, '\n')); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// aliasTags are the mails of the test; the script answers each by its tag.
var aliasTags = []string{"[one]", "[two]", "[three]", "[four]", "[five]"}

func aliasAnswer(tag string) string { return "Answer to " + tag + "." }

func runAliasStaysPut(t *testing.T, p aliasPlatform) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	var rules []fakemodel.Rule
	for _, tag := range aliasTags {
		rules = append(rules, fakemodel.Rule{Name: tag, UserContains: tag, Reply: fakemodel.Text(aliasAnswer(tag))})
	}
	if os.Getenv(mailrig.BinaryEnv) == "" {
		t.Setenv(mailrig.BinaryEnv, agentmailBinary(t)) // this package's build of cmd/agentmail
	}
	const agent = "aliasbot"
	r := mailrig.New(t, p.platform, agent, rules...)
	p.useModel(t, r)
	br := r.StartBridge()
	dir := mailrig.Workspace(t, "proj")
	addr := func(alias string) string { return agent + "@" + dir + "." + alias }
	// turn sends a mail and waits for the relayed answer, which the bridge
	// sends after its alias sync: the sync is over when the answer is in.
	turn := func(to, subject, tag string) *client.SendMailResponse {
		t.Helper()
		sent := r.Send(to, subject, "Please have a look.")
		reply := r.WaitMail("the answer to "+tag, r.ReplyFrom(sent.MailID, client.MailTypeNormal))
		if reply.Body != aliasAnswer(tag) || reply.SessionID != sent.SessionID {
			t.Fatalf("answer to %s = %q in session %s, want %q in %s\n%s", tag, reply.Body, reply.SessionID, aliasAnswer(tag), sent.SessionID, r.Dump())
		}
		return sent
	}
	// lands checks that a mail went into the session, answering its alias.
	lands := func(m *client.SendMailResponse, sessionID, alias, what string) {
		t.Helper()
		if m.SessionID != sessionID || m.SessionAlias != alias || m.NewSession {
			t.Fatalf("%s: %+v; want session %s answering alias %q", what, m, sessionID, alias)
		}
	}

	// The first mail: the subject-derived alias stays, or the platform's
	// slug replaces it once.
	one := turn(agent+"@"+dir+".new", "[one] parser work", "[one]")
	first := one.SessionAlias
	s := r.Session(one.SessionID)
	current := s.Alias
	switch {
	case p.slug && (!ocSlugShape.MatchString(current) || current == first || strings.Join(s.FormerAliases, ",") != first):
		t.Fatalf("after the first turn: alias %q former %v; want the platform's slug replacing %q", current, s.FormerAliases, first)
	case !p.slug && (current != first || len(s.FormerAliases) != 0):
		t.Fatalf("after the first turn: alias %q former %v; want %q unchanged", current, s.FormerAliases, first)
	}
	platformSession := s.PlatformSessionID

	// A second mail with another subject, to the first alias: same
	// session, same platform session, the alias unchanged.
	two := turn(addr(first), "[two] a different matter", "[two]")
	lands(two, one.SessionID, current, "mail to the first alias "+first)
	if s := r.Session(one.SessionID); s.Alias != current || s.PlatformSessionID != platformSession {
		t.Fatalf("after a second subject: alias %q (platform session %q); want %q (%q)", s.Alias, s.PlatformSessionID, current, platformSession)
	}

	// A person's rename wins; every alias the session had still reaches it,
	// also after the bridge wrote the new alias back into the platform.
	byHand := "by-hand"
	if _, err := r.Admin.MeUpdateSession(t.Context(), one.SessionID, client.UpdateSessionRequest{Alias: &byHand}); err != nil {
		t.Fatal(err)
	}
	three := turn(addr(first), "[three] after the rename", "[three]")
	lands(three, one.SessionID, byHand, "mail to the first alias after a manual rename")
	four := turn(addr(current), "[four] once more", "[four]")
	lands(four, one.SessionID, byHand, "mail to the alias before the manual rename")
	s = r.Session(one.SessionID)
	if s.Alias != byHand || !slices.Contains(s.FormerAliases, first) || !slices.Contains(s.FormerAliases, current) && current != first {
		t.Fatalf("after turns following the rename: alias %q former %v; want %q, with %q and %q kept", s.Alias, s.FormerAliases, byHand, first, current)
	}
	mails := []*client.SendMailResponse{one, two, three, four}

	// The platform renames its session itself: the alias stays, the first
	// alias still reaches the session, and so does the platform's new name
	// (the mirrored platform session is bound to this mail session: the
	// thread does not split).
	if p.renameInPlatform != nil {
		br = p.renameInPlatform(t, r, br, platformSession, "renamed-in-platform")
		r.WaitFor("the renamed platform session in the mirror", func() bool {
			res, err := r.Admin.Resolve(t.Context(), addr("renamed-in-platform"))
			return err == nil && res.Exists && res.SessionID == one.SessionID
		})
		five := turn(addr("renamed-in-platform"), "[five] by the platform's name", "[five]")
		lands(five, one.SessionID, byHand, "mail to the platform's own new name")
		if s := r.Session(one.SessionID); s.Alias != byHand || s.PlatformSessionID != platformSession {
			t.Fatalf("after the platform's rename: alias %q platform session %q; want %q, %q", s.Alias, s.PlatformSessionID, byHand, platformSession)
		}
		mails = append(mails, five)
	}

	// No thread split: one session, one turn per mail.
	l, err := r.Admin.MeSessions(t.Context())
	if err != nil || len(l.Sessions) != 1 {
		t.Fatalf("the admin has %d sessions (%v), want 1", len(l.Sessions), err)
	}
	for _, m := range mails {
		if n := len(r.TurnsFor(m.MailID)); n != 1 {
			t.Errorf("mail %s ran %d turns, want 1", m.MailID, n)
		}
	}
}
