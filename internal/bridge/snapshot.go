package bridge

import (
	"context"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
)

// MaxSnapshotSessions is the S-4 cap on the heartbeat's session snapshot.
const MaxSnapshotSessions = 200

// ListedSession is a platform session as an adapter lists it, with the facts
// S-2 needs. ParentID is the parent session's id for a subagent (child)
// session, "" otherwise; Subagent may be set instead when the platform marks
// children without naming the parent.
type ListedSession struct {
	client.PlatformSession
	ParentID string
	Subagent bool
}

// DetailedSessionLister is an optional extension of Adapter for platforms
// whose sessions can be subagent children (S-2). When the adapter implements
// it, the core lists sessions through it instead of Adapter.ListSessions.
// Errors as ListSessions (ErrUnsupported without C-10).
type DetailedSessionLister interface {
	ListSessionsDetailed(ctx context.Context) ([]ListedSession, error)
}

// ApplySnapshotRules turns a platform's session list into the heartbeat
// snapshot (W-3):
//   - S-1: a session without a slug is dropped; a missing slug is first
//     derived from a usable title (D-5 level 2), and slugs are made
//     addressable (W-7.1);
//   - S-2: subagent sessions are dropped;
//   - S-3: of sessions sharing a slug only the most recent is kept;
//   - S-4: sorted most recent first, at most MaxSnapshotSessions;
//   - a title is kept only when usable (IsUnusableName: at most 80
//     characters, within client.MaxPlatformTitleRunes), and a session whose
//     platform id, slug or workspace is longer than the gateway keeps
//     (client.MaxPlatformIDRunes, MaxSlugRunes, MaxPlatformWorkspaceRunes)
//     is dropped, since the gateway would refuse the whole snapshot for it.
//
// mailDriven marks the platform ids the bridge bound to mail sessions
// (MailDriven is also kept when the adapter set it). The result is never nil:
// an empty platform gives an empty snapshot, which clears the gateway's
// mirror as it should (W-3); a failed listing is not a snapshot at all (N-7).
func ApplySnapshotRules(in []ListedSession, mailDriven func(platformID string) bool) []client.PlatformSession {
	best := map[string]client.PlatformSession{}
	for _, s := range in {
		if s.ParentID != "" || s.Subagent {
			continue // S-2
		}
		ps := s.PlatformSession
		slug := ""
		if !IsUnusableName(ps.Slug) {
			slug = SanitizeAlias(ps.Slug)
		}
		if slug == "" {
			slug = SlugFromTitle(ps.Title)
		}
		if slug == "" {
			continue // S-1
		}
		ps.Slug = slug
		if IsUnusableName(ps.Title) {
			ps.Title = ""
		}
		if runes(ps.PlatformID) > client.MaxPlatformIDRunes || runes(ps.Slug) > client.MaxSlugRunes ||
			runes(ps.Workspace) > client.MaxPlatformWorkspaceRunes {
			continue // the gateway would refuse the whole snapshot for it
		}
		if mailDriven != nil && mailDriven(ps.PlatformID) {
			ps.MailDriven = true
		}
		if prev, ok := best[slug]; ok && !moreRecent(ps.UpdatedAt, prev.UpdatedAt) {
			continue // S-3
		}
		best[slug] = ps
	}
	out := make([]client.PlatformSession, 0, len(best))
	for _, ps := range best {
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool {
		if !timeEqual(out[i].UpdatedAt, out[j].UpdatedAt) {
			return moreRecent(out[i].UpdatedAt, out[j].UpdatedAt)
		}
		return out[i].Slug < out[j].Slug
	})
	if len(out) > MaxSnapshotSessions {
		out = out[:MaxSnapshotSessions] // S-4
	}
	return out
}

// runes counts s's characters.
func runes(s string) int { return utf8.RuneCountInString(s) }

// moreRecent reports whether a is strictly later than b; a missing time is
// older than any time.
func moreRecent(a, b *time.Time) bool {
	switch {
	case a == nil:
		return false
	case b == nil:
		return true
	}
	return a.After(*b)
}

func timeEqual(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// CleanModels prepares the heartbeat's model catalogue (B-2.3): entries
// without a model name, or with a provider or model name longer than
// client.MaxModelRunes, are dropped (the gateway would refuse the whole
// catalogue for one of them), a display name is cut to that length,
// duplicates (same provider and model) kept once, order kept, at most
// client.MaxHeartbeatModels. The result is never nil, so a platform that really
// has no model reports [] (W-3), while a failed listing is omitted (N-7).
func CleanModels(in []client.Model) []client.Model {
	out := make([]client.Model, 0, len(in))
	seen := map[string]bool{}
	for _, m := range in {
		if m.Model == "" || runes(m.Model) > client.MaxModelRunes || runes(m.Provider) > client.MaxModelRunes {
			continue // the gateway would refuse the whole catalogue for it
		}
		m.DisplayName = cutRunes(m.DisplayName, client.MaxModelRunes)
		k := m.Provider + "\x00" + m.Model
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, m)
	}
	if len(out) > client.MaxHeartbeatModels {
		out = out[:client.MaxHeartbeatModels]
	}
	return out
}
