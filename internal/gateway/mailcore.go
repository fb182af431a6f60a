package gateway

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// Party is one end of a mail: a sender or a recipient, with that party's
// own path in the session (a person's is "").
type Party struct {
	Name      string
	Kind      string // store.KindPerson | store.KindAgent | store.KindSystem
	Workspace string
	Role      string // recipients: "to" | "cc"
	// Observer: a recipient who receives the mail without joining the
	// session (a person of a delegated session's origin, delegation.go).
	Observer bool
}

// NewMail is everything CreateMailTx needs. Session must exist (see
// CreateSessionTx). MailType "" means normal.
type NewMail struct {
	Session       store.SessionRow
	ParentMailID  string
	From          Party
	Subject       string
	Body          string
	MailType      string
	Relay         string
	RelayKey      string
	Recipients    []Party
	AttachmentIDs []string
	// Importance is the store rank (acks.go); AckRequired asks each
	// recipient to acknowledge within AckWithin (0: 24 h).
	Importance  int
	AckRequired bool
	AckWithin   time.Duration
	// Members are the session's members by name with their paths
	// (store.Q.ParticipantWorkspaces), when the caller read them under
	// the session's lock in this transaction; nil: CreateMailTx reads
	// them. They are changed as the mail's parties join.
	Members map[string]string
}

// CreatedMail is what CreateMailTx stored.
type CreatedMail struct {
	Mail       store.MailRow
	Session    store.SessionRow
	Recipients []store.RecipientRow
	// Events are the new_mail events by recipient name; on PostgreSQL
	// their rows may still be queued (EventID runs the queue).
	Events map[string]*store.Later
	// Forward is true for a forward (T-5): ParentMailID then names the
	// forwarded original, not a mail this one answers.
	Forward bool
}

// CreateMailTx stores one mail in the transaction: the mail row, its
// recipients (unread), the attachment links, the session's participants and
// last activity, the sender's count, and one new_mail event per recipient
// carrying the W-4 fields of that recipient's own address (to_workspace is
// the path written in this mail's address for that recipient), and its
// search index row (search.go). Permission
// requests, decisions, failure reports and reminders are mails too and are
// created through here. It does not check budgets, relays or rate limits;
// Send does.
func (s *Service) CreateMailTx(ctx context.Context, tx *Tx, nm NewMail) (*CreatedMail, error) {
	if nm.MailType == "" {
		nm.MailType = client.MailTypeNormal
	}
	if len(nm.Recipients) == 0 {
		return nil, Invalid("to", "a mail needs at least one recipient", "set to")
	}
	sess := nm.Session
	now := tx.Now
	m := store.MailRow{
		MailID: store.NewID(), SessionID: sess.SessionID, ParentMailID: nm.ParentMailID,
		FromName: nm.From.Name, FromKind: nm.From.Kind, Subject: nm.Subject, Body: nm.Body,
		MailType: nm.MailType, Relay: nm.Relay, RelayKey: nm.RelayKey, CreatedAt: now,
		Importance: nm.Importance, AckRequired: nm.AckRequired, AckDueAt: nm.ackDue(now),
	}
	// The members' stored paths, read once: a join keeps a stored path and
	// fills an empty one, so each party's path in the session after its
	// join follows from them (no RETURNING per join).
	members := nm.Members
	var err error
	if members == nil {
		if members, err = tx.ParticipantWorkspaces(ctx, sess.SessionID); err != nil {
			return nil, err
		}
	}
	// The joins are written together after the recipients (one statement,
	// AddParticipants): nothing in between reads them.
	var joins []store.ParticipantRow
	join := func(p store.ParticipantRow) (string, error) {
		ws := p.Workspace
		if stored := members[p.Name]; stored != "" {
			ws = stored
		}
		joins = append(joins, p)
		members[p.Name] = ws
		return ws, nil
	}
	if nm.From.Kind == store.KindSystem {
		m.FromAddress = nm.From.Name
	} else {
		// The sender's own path in the session is the one stored when it
		// joined earlier; From.Workspace only fills an empty one.
		ws, err := join(store.ParticipantRow{SessionID: sess.SessionID, Name: nm.From.Name,
			Kind: nm.From.Kind, Workspace: nm.From.Workspace, JoinedAt: now, LastActivity: now})
		if err != nil {
			return nil, err
		}
		m.FromAddress = address.Format(nm.From.Name, ws, sess.Alias)
	}
	if err := tx.InsertMail(ctx, m); err != nil {
		return nil, err
	}
	out := &CreatedMail{Mail: m, Session: sess, Events: map[string]*store.Later{}}
	seen := map[string]bool{}
	for i, r := range nm.Recipients {
		if seen[r.Name] {
			continue // the same name twice (to and cc): one copy, the first role
		}
		seen[r.Name] = true
		// The participant may have joined earlier at another path, which
		// stays its path in the session; this mail's recipient row and event
		// carry the path of the address written in this mail (W-4
		// to_workspace), or the stored one when the address had none.
		ws := members[r.Name]
		if !r.Observer {
			ws, err = join(store.ParticipantRow{SessionID: sess.SessionID, Name: r.Name, Kind: r.Kind,
				Workspace: r.Workspace, JoinedAt: now, LastActivity: now})
			if err != nil {
				return nil, err
			}
		}
		if r.Workspace != "" {
			ws = r.Workspace
		}
		rr := store.RecipientRow{MailID: m.MailID, Name: r.Name, Kind: r.Kind, Role: r.Role,
			Address: address.Format(r.Name, ws, sess.Alias), Workspace: ws, Position: i, Importance: m.Importance}
		if err := tx.InsertRecipient(ctx, rr); err != nil {
			return nil, err
		}
		out.Recipients = append(out.Recipients, rr)
	}
	if err := tx.AddParticipants(ctx, joins); err != nil {
		return nil, err
	}
	if len(nm.AttachmentIDs) > 0 {
		if err := checkAttachments(ctx, tx.Q, nm.From.Name, nm.AttachmentIDs); err != nil { // attachment.go
			return nil, err
		}
		if err := tx.LinkAttachments(ctx, m.MailID, nm.AttachmentIDs); err != nil {
			return nil, err
		}
	}
	if err := tx.IndexMail(ctx, m.MailID, now, searchDoc(m, out.Recipients, len(nm.AttachmentIDs) > 0)); err != nil { // search.go
		return nil, err
	}
	if err := storeAcks(ctx, tx, out); err != nil { // acks.go
		return nil, err
	}
	// The session's last activity moves to now, unless the caller's
	// UseRound already moved it in this transaction (the session row
	// then says now).
	if !sess.LastActivity.Equal(now) {
		if err := tx.TouchSession(ctx, sess.SessionID, now); err != nil {
			return nil, err
		}
	}
	out.Session.LastActivity = now
	if nm.From.Kind == store.KindAgent {
		if err := tx.IncAgentSent(ctx, nm.From.Name); err != nil {
			return nil, err
		}
	}
	replyAddr := m.FromAddress
	for _, r := range out.Recipients {
		ev := client.NewMailEvent{
			MailID: m.MailID, SessionID: sess.SessionID, FromName: m.FromName, FromKind: m.FromKind,
			Subject: m.Subject, MailType: m.MailType, Role: r.Role, ToWorkspace: r.Workspace,
			SessionAlias: sess.Alias, ReplyAddress: replyAddr, SelfAddress: r.Address,
			ParentMailID: m.ParentMailID, CreatedAt: now, AckRequired: m.AckRequired,
		}
		if m.Importance != store.ImportanceNormal {
			ev.Importance = ImportanceName(m.Importance)
		}
		if r.Kind == store.KindAgent && m.FromKind == store.KindPerson {
			ev.StopWord = IsStopWord(m.Body) // runs.go
		}
		l, err := tx.EmitLater(ctx, r.Name, client.EventNewMail, ev)
		if err != nil {
			return nil, err
		}
		out.Events[r.Name] = l
	}
	tx.mailTypes = append(tx.mailTypes, m.MailType)
	return out, nil
}

// SessionSpec describes a session to create. Alias "" derives one from the
// subject (alias source store.AliasSubject), or generates one when the
// subject gives none (store.AliasAuto); a taken alias, current or former,
// gets -2, -3, ... (W-7). BudgetMax 0 is unlimited.
type SessionSpec struct {
	Alias             string
	AliasSource       string // the source of a usable Alias; store.AliasAuto when ""
	Subject           string
	AgentName         string
	Workspace         string
	BudgetMax         int
	PlatformSessionID string
	CreatedBy         string
	CreatedByKind     string
	OriginSessionID   string // a delegated session's origin (delegation.go), or ""
}

// CreateSessionTx creates a session with a unique alias in the transaction.
// It does not apply the new-session rate limit; Send does.
func (s *Service) CreateSessionTx(ctx context.Context, tx *Tx, spec SessionSpec) (store.SessionRow, error) {
	src := spec.AliasSource
	base := address.SanitizeAlias(spec.Alias)
	if base == "" || address.IsPlaceholder(base) {
		base = address.SanitizeAlias(stripReplyPrefix(spec.Subject))
		src = store.AliasSubject
	}
	if base == "" || address.IsPlaceholder(base) {
		base = "session-" + randomWord(6)
		src = store.AliasAuto
	}
	base = truncateRunes(base, 48)
	alias, err := s.lockedUniqueAlias(ctx, tx, base)
	if err != nil {
		return store.SessionRow{}, err
	}
	if src == "" {
		src = store.AliasAuto
	}
	row := store.SessionRow{
		SessionID: store.NewID(), Alias: alias, AliasSource: src, Subject: spec.Subject,
		AgentName: spec.AgentName, Workspace: spec.Workspace, BudgetMax: spec.BudgetMax,
		PlatformSessionID: spec.PlatformSessionID, CreatedBy: spec.CreatedBy, CreatedByKind: spec.CreatedByKind,
		CreatedAt: tx.Now, LastActivity: tx.Now, OriginSessionID: spec.OriginSessionID,
	}
	if err := tx.InsertSession(ctx, row); err != nil {
		return row, err
	}
	return row, nil
}

// lockedUniqueAlias is uniqueAlias for a new session in a shared write
// (PostgreSQL, sends of several replicas at once): the alias answered is
// held by its narrow lock ("session-alias") until the transaction ends, so
// no other session can take it before this one is inserted. Sessions from
// one base take their suffixes one after the other (the base's lock). A
// candidate other than the base is locked too and checked again under its
// lock, since it may be another base's first choice: with "deploy" taken,
// a session from "deploy" picks "deploy-2", as does one from "deploy-2".
// Locks are taken from shorter to longer aliases (a candidate extends its
// base), so two such sends never wait for each other in a circle. Without
// a shared write (SQLite, exclusive writes) the locks are no-ops and the
// first check stands.
func (s *Service) lockedUniqueAlias(ctx context.Context, tx *Tx, base string) (string, error) {
	if err := tx.LockKeys(ctx, "session-alias", base); err != nil {
		return "", err
	}
	for {
		alias, err := s.uniqueAlias(ctx, tx.Q, base, "")
		if err != nil || alias == base {
			return alias, err
		}
		if err := tx.LockKeys(ctx, "session-alias", alias); err != nil {
			return "", err
		}
		taken, err := tx.AliasesTaken(ctx, []string{alias}, "")
		if err != nil {
			return "", err
		}
		if !taken[alias] {
			return alias, nil
		}
		// Another base's session took it while this one waited for its
		// lock: the next free one, which uniqueAlias now finds.
	}
}

// uniqueAlias answers base, or base-2, base-3, ... whichever no session has
// or had (store AliasTaken: current and former aliases; the session
// exceptID may keep or take back its own).
func (s *Service) uniqueAlias(ctx context.Context, q *store.Q, base, exceptID string) (string, error) {
	// Candidates are checked 32 at a time in one query (store
	// AliasesTaken): a base used by many sessions costs one round trip per
	// 32 of them, not one per session.
	const window = 32
	for first := 1; first < 10000; first += window {
		cands := make([]string, 0, window)
		for n := first; n < first+window; n++ {
			cand := base
			if n > 1 {
				cand = base + "-" + strconv.Itoa(n)
			}
			cands = append(cands, cand)
		}
		taken, err := q.AliasesTaken(ctx, cands, exceptID)
		if err != nil {
			return "", err
		}
		for _, cand := range cands {
			if !taken[cand] {
				return cand, nil
			}
		}
	}
	return base + "-" + randomWord(8), nil
}

// stripReplyPrefix removes leading "Re:", "Fwd:", "回复:", "转发:" markers.
func stripReplyPrefix(s string) string {
	for {
		t := strings.TrimSpace(s)
		low := strings.ToLower(t)
		cut := false
		for _, p := range []string{"re:", "fwd:", "fw:", "回复:", "回复：", "转发:", "转发：", "re：", "fwd："} {
			if strings.HasPrefix(low, p) {
				t = t[len(p):]
				cut = true
				break
			}
		}
		if !cut {
			return t
		}
		s = t
	}
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.Trim(string(r[:n]), "-")
}

const wordChars = "abcdefghijkmnpqrstuvwxyz23456789"

// randomWord answers n random lowercase letters and digits.
func randomWord(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	for i := range b {
		b[i] = wordChars[int(b[i])%len(wordChars)]
	}
	return string(b)
}
