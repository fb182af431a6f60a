package bridge_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/testkit/mailrig"
	"github.com/agentmail/agentmail/internal/testkit/scriptedmodel"
)

// The alias ladder (D-5, W-7; issue 14's "Done when") with each real platform, one subtest
// per case of platformCases, over the same processes as TestPlatformMailContract: a
// session's alias does not follow later subjects; every alias it had keeps reaching it,
// after the ladder's one rename (the platform's own name replacing the first alias, for a
// platform that names its sessions), after a person's rename and the bridge writing it back
// into the platform, and after the platform renamed its session itself (where the case
// can); a platform's own name stays across turns; and the thread never splits.

// aliasTags are the mails of the test; the script answers each by its tag.
var aliasTags = []string{"[one]", "[two]", "[three]", "[four]", "[five]"}

func aliasAnswer(tag string) string { return "Answer to " + tag + "." }

func TestPlatformAliasContract(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with real processes")
	}
	for _, c := range platformCases {
		t.Run(c.caseName(), func(t *testing.T) {
			t.Parallel()
			aliasStaysPut(t, c)
		})
	}
}

func aliasStaysPut(t *testing.T, c platformCase) {
	var rules []scriptedmodel.Rule
	for _, tag := range aliasTags {
		rules = append(rules, scriptedmodel.Rule{Name: tag, UserContains: tag, Reply: scriptedmodel.Text(aliasAnswer(tag))})
	}
	r := mailrig.New(t, c.platform, c.agent, rules...)
	c.configure(t, r)
	br := r.StartBridge()
	dir := mailrig.Workspace(t, "proj")
	addr := func(alias string) string { return c.agent + "@" + dir + "." + alias }
	// turn sends a mail and waits for the relayed answer, which the bridge sends after its
	// alias sync: the sync is over when the answer is in.
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

	// The first mail: the subject-derived alias stays, or the platform's own name replaces
	// it once.
	one := turn(addr("new"), "[one] parser work", "[one]")
	first := one.SessionAlias
	s := r.Session(one.SessionID)
	current := s.Alias
	if bad := c.aliasOrigin(current); bad != "" {
		t.Fatalf("after the first turn: alias %q: %s (D-5)", current, bad)
	}
	switch {
	case c.namesSessions && (current == first || strings.Join(s.FormerAliases, ",") != first):
		t.Fatalf("after the first turn: alias %q former %v; want the platform's name replacing %q", current, s.FormerAliases, first)
	case !c.namesSessions && (current != first || len(s.FormerAliases) != 0):
		t.Fatalf("after the first turn: alias %q former %v; want %q unchanged", current, s.FormerAliases, first)
	}
	platformSession := s.PlatformSessionID

	// A second mail with another subject, to the first alias: same session, same platform
	// session, the alias unchanged.
	two := turn(addr(first), "[two] a different matter", "[two]")
	lands(two, one.SessionID, current, "mail to the first alias "+first)
	if s := r.Session(one.SessionID); s.Alias != current || s.PlatformSessionID != platformSession {
		t.Fatalf("after a second subject: alias %q (platform session %q); want %q (%q)", s.Alias, s.PlatformSessionID, current, platformSession)
	}

	// A person's rename wins; every alias the session had still reaches it, also after the
	// bridge wrote the new alias back into the platform.
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

	// The platform renames its session itself: the alias stays, the first alias still
	// reaches the session, and so does the platform's new name (the mirrored platform
	// session is bound to this mail session: the thread does not split).
	if c.renameInPlatform != nil {
		br = c.renameInPlatform(t, r, br, platformSession, "renamed-in-platform")
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

// appendPiSessionName renames a pi session the way pi's SessionManager does
// (appendSessionInfo): a session_info entry after the last entry of its file.
func appendPiSessionName(t *testing.T, r *mailrig.Rig, sessionID, name string) {
	t.Helper()
	files := piSessionFiles(r, sessionID)
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
