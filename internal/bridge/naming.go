package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
)

// maxAliasRunes bounds a derived alias; longer derivations are cut at a
// word boundary where one exists.
const maxAliasRunes = 40

// maxTitleRunes is the longest title still taken as a title: longer texts
// are sentences (usually leaked reasoning), not names.
const maxTitleRunes = 80

// placeholderNames are names a platform or a bridge gives before anything
// is known (N-4, W-7.2); they never become an alias or a title.
var placeholderNames = []string{
	"new session", "new chat", "new conversation", "untitled", "untitled session",
	"session", "mail", "new mail", "handle mail", "processing mail", "conversation",
	"新会话", "新对话", "新建会话", "处理邮件", "邮件", "未命名", "无标题",
}

// placeholderPrefixes are generated placeholder titles followed by a time,
// e.g. opencode's "New session - 2026-09-02T11:41:16.744Z".
var placeholderPrefixes = []string{"new session -", "new session –", "child session -"}

// reasoningPrefixes start titles that leaked a model's chain of thought
// instead of naming the session (seed 000 D-5: "The user is asking me to
// generate a title ...", "我们只需要生成标题 ..."); reasoningMarkers betray
// it anywhere in the text. Both are matched case-insensitively.
var (
	reasoningPrefixes = []string{
		"the user ", "i need to", "i'll ", "i will ", "let me ", "okay", "ok,", "ok so", "sure,",
		"here is", "here's", "title:", "title：",
		"用户", "我们", "我需要", "我来", "好的", "首先", "标题:", "标题：",
	}
	reasoningMarkers = []string{
		"generate a title", "a title for", "title for this", "生成标题", "标题应", "生成一个标题",
	}
)

// IsUnusableName reports whether a platform name or title must not be used
// as an alias or title (seed 000 D-5 isUnusableName, W-7.2): empty after
// trimming, a placeholder, a leaked chain of thought, a multi-line text, or
// too long to be a name. An unusable name moves the alias ladder to the next
// level; it is never rewritten into something else.
func IsUnusableName(name string) bool {
	s := strings.TrimSpace(name)
	if s == "" {
		return true
	}
	if strings.ContainsAny(s, "\r\n") {
		return true
	}
	if utf8.RuneCountInString(s) > maxTitleRunes {
		return true
	}
	low := strings.ToLower(s)
	for _, p := range placeholderNames {
		if low == p {
			return true
		}
	}
	for _, p := range placeholderPrefixes {
		if strings.HasPrefix(low, p) {
			return true
		}
	}
	for _, p := range reasoningPrefixes {
		if strings.HasPrefix(low, p) {
			return true
		}
	}
	for _, m := range reasoningMarkers {
		if strings.Contains(low, m) {
			return true
		}
	}
	// Nothing that can name anything: only punctuation or digits.
	hasLetter := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			hasLetter = true
			break
		}
	}
	return !hasLetter
}

// SanitizeAlias makes a proposed alias addressable (W-7.1): lower case,
// the addressing separators . @ / and every other character that is not a
// letter or digit become '-', runs of '-' collapse, the ends are trimmed, and
// the result is cut to 40 characters. Chinese and other letters are kept
// (W-7.3). The result may be "".
func SanitizeAlias(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if utf8.RuneCountInString(out) > maxAliasRunes {
		runes := []rune(out)[:maxAliasRunes]
		cut := string(runes)
		if i := strings.LastIndexByte(cut, '-'); i >= maxAliasRunes/2 {
			cut = cut[:i]
		}
		out = strings.Trim(cut, "-")
	}
	return out
}

// SlugFromTitle derives an alias from a usable title (D-5 level 2, and
// level 3 for a mail subject); "" when the title is unusable.
func SlugFromTitle(title string) string {
	if IsUnusableName(title) {
		return ""
	}
	return SanitizeAlias(title)
}

// StripReplyPrefixes removes reply and forward markers ("Re:", "Fwd:",
// "回复:", "转发:" and the failure report's "处理失败:") from a subject, so the
// alias derived from it names the matter, not the mail.
func StripReplyPrefixes(subject string) string {
	s := strings.TrimSpace(subject)
	for {
		low := strings.ToLower(s)
		cut := false
		for _, p := range []string{"re:", "re：", "fw:", "fwd:", "fw：", "fwd：", "回复:", "回复：", "转发:", "转发：", failurePrefix + ":", failurePrefix + "："} {
			if strings.HasPrefix(low, p) {
				s = strings.TrimSpace(s[len(p):])
				cut = true
				break
			}
		}
		if !cut {
			return s
		}
	}
}

// AliasLevel is the rung of the D-5 ladder a proposal came from.
type AliasLevel int

// The D-5 ladder.
const (
	AliasNone     AliasLevel = 4 // nothing usable: the gateway keeps its own alias
	AliasSlug     AliasLevel = 1 // the platform's own slug
	AliasTitle    AliasLevel = 2 // derived from the platform's title
	AliasFromMail AliasLevel = 3 // derived from the mail subject
)

// AliasProposal is what the bridge proposes to the gateway for a session
// (W-7): Alias for session_alias and Title for subject; either may be "".
type AliasProposal struct {
	Alias string
	Title string
	Level AliasLevel
}

// ProposeAlias walks the D-5 ladder: 1 the platform slug, 2 a slug derived
// from the platform title, 3 one derived from the mail subject, 4 nothing.
// Unusable names fall to the next rung (they are never rewritten). The title
// is proposed only when the platform's title is usable (W-7.2).
func ProposeAlias(slug, title, mailSubject string) AliasProposal {
	p := AliasProposal{Level: AliasNone}
	if !IsUnusableName(title) {
		p.Title = strings.TrimSpace(title)
	}
	if !IsUnusableName(slug) {
		if a := SanitizeAlias(slug); a != "" {
			p.Alias, p.Level = a, AliasSlug
			return p
		}
	}
	if a := SlugFromTitle(title); a != "" {
		p.Alias, p.Level = a, AliasTitle
		return p
	}
	if a := SlugFromTitle(StripReplyPrefixes(mailSubject)); a != "" {
		p.Alias, p.Level = a, AliasFromMail
		return p
	}
	return p
}

// Empty reports whether there is nothing to submit (level 4, no title).
func (p AliasProposal) Empty() bool { return p.Alias == "" && p.Title == "" }

// Fingerprint identifies the content of a submission, so an unchanged
// proposal is not submitted twice (D-5 loop guard). It is a hash of the
// proposal, never the platform's name itself, so "never submitted" and
// "submitted, unchanged" stay distinct even when the platform has no name.
func (p AliasProposal) Fingerprint() string {
	h := sha256.Sum256([]byte(p.Alias + "\x00" + p.Title))
	return hex.EncodeToString(h[:8])
}

// syncAlias is D-5 and W-7: propose the ladder's alias and the platform
// title, read the final alias from the gateway's answer, and write it back
// into the platform when it differs from the platform's own name. An
// unchanged proposal is not submitted again (fingerprint); an empty name is
// never written.
func (b *Bridge) syncAlias(ctx context.Context, sessionID string, res TurnResult, subject string) {
	p := ProposeAlias(res.Slug, res.Title, subject)
	b.mu.Lock()
	foreign := b.foreign[sessionID]
	b.mu.Unlock()
	if p.Empty() || foreign {
		return // level 4, or another agent's session: the gateway keeps its alias
	}
	fp := p.Fingerprint()
	b.mu.Lock()
	same := b.fingerprints[sessionID] == fp
	b.mu.Unlock()
	if same {
		return
	}
	req := client.SyncSessionRequest{Alias: p.Alias, Title: p.Title}
	if p.Alias != "" {
		req.AliasLevel = int(p.Level) // the gateway takes only a better level, in the first turn
	}
	s, err := b.gw.SyncSession(ctx, sessionID, req)
	if err != nil {
		b.log.Warn("alias sync failed; retried after the next turn", "session_id", sessionID, "err", err)
		return
	}
	b.mu.Lock()
	b.fingerprints[sessionID] = fp
	b.mu.Unlock()
	final := strings.TrimSpace(s.Alias)
	psid := res.PlatformSessionID
	// The platform's own name: its slug; for a session named by its title
	// (level 2) the alias derived from that title, so a title is only
	// overwritten when the gateway changed the alias (collision, manual).
	current := res.Slug
	if p.Level == AliasTitle {
		current = p.Alias
	}
	if final == "" || psid == "" || final == current {
		return
	}
	b.mu.Lock()
	skip := b.noRename || b.renamed[psid] == final
	b.mu.Unlock()
	if skip {
		return
	}
	err = b.adapter.RenameSession(ctx, psid, final)
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case err == nil:
		b.renamed[psid] = final
		b.log.Info("alias written back to the platform", "session_id", sessionID, "platform_session", psid, "alias", final, "level", int(p.Level))
	case errors.Is(err, ErrUnsupported):
		if !b.noRename {
			b.noRename = true
			b.log.Info("the platform cannot rename sessions: aliases are kept on the gateway only")
		}
	default:
		b.log.Warn("writing the alias back failed", "platform_session", psid, "alias", final, "err", err)
	}
}
