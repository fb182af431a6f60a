package gateway

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// Limits of a mail.
const (
	MaxSubjectRunes = 500
	MaxBodyBytes    = 1 << 20
	MaxRecipients   = 50
	MaxRelayKey     = 256
)

// Send statuses (W-5.2).
const (
	SendStatusSent      = "sent"
	SendStatusDuplicate = "duplicate_relay"
)

// errDuplicateRelay aborts a send whose relay_key lost a race; Send then
// answers the original mail.
var errDuplicateRelay = errors.New("duplicate relay")

// sendSpec is a parsed send or forward.
type sendSpec struct {
	to            address.Address
	toKind        string // resolved before the transaction
	toRaw         string
	cc            []address.Address
	ccKinds       []string
	subject       string
	body          string
	replyTo       string // reply: the session follows the replied mail unless the address names one
	forwardOf     string // forward: parent link only, the session comes from the address (T-5)
	sessionAlias  string
	attachmentIDs []string
	trustedAtts   []string // forwarded attachments: already visible to the sender
	relay         string
	relayKey      string
	mailType      string
	roundBudget   *int
	importance    int           // store rank (acks.go)
	ackRequired   bool          // acks.go
	ackWithin     time.Duration // acks.go
	// Set by the session rule: the sender's path in a session this send
	// opens by delegation (delegation.go), and whether a relay is a
	// delegation relay (relayrules.go).
	fromWorkspace string
	delegation    bool
	translations  []client.MailTranslation // per-language subject and body for people (language.go)
}

// Send stores a mail from the principal (POST /mail/send for agents, W-5;
// POST /me/mail/send for people). The sender is always the principal.
//
// Rules: `to` is one address, cc a list (W-5 separators); the session is
// chosen by the address's session part (default / .new / .alias: an unknown
// alias is a 404 and nothing is created, N-8) or, for a reply to an address
// without a session part, is the replied mail's session. An agent's own mail
// uses one round of the session budget (403 budget_exhausted at the limit);
// a relay mail ("summary", W-5) uses none (but a summary answering an
// agent's mail does, relayrules.go), needs relay_key,
// and a relay_key seen before answers status duplicate_relay storing
// nothing; a second distinct relay of the same kind for the same received
// mail is a 409 (relayrules.go); a summary relay must answer (reply_to) a mail the agent received,
// stays in that mail's session and reaches only that mail's sender and the
// session's participants (never opening a session or adding anyone); relay
// "permission" is refused here (POST /permission/request stores those). An
// agent may open at most
// NewSessionLimit sessions per NewSessionWindow (429 with the wait).
// Addresses follow checkRecipientPath (a person has no path, an agent's
// path is absolute: 400 person_path, relative_path, missing_path). A
// person's round_budget applies to the session the mail opens; with a mail
// that lands in an existing session it is a 400
// round_budget_existing_session naming round_budget (change that budget
// with PATCH /me/sessions/{id}).
func (s *Service) Send(ctx context.Context, p *Principal, req client.SendMailRequest) (*client.SendMailResponse, error) {
	spec, err := s.parseSend(p, req)
	if err != nil {
		return nil, err
	}
	return s.send(ctx, p, spec)
}

func (s *Service) parseSend(p *Principal, req client.SendMailRequest) (*sendSpec, error) {
	spec := &sendSpec{toRaw: strings.TrimSpace(req.To), subject: strings.TrimSpace(req.Subject), body: req.Body,
		replyTo: strings.TrimSpace(req.ReplyTo), sessionAlias: req.SessionAlias, attachmentIDs: req.AttachmentIDs,
		relay: req.Relay, relayKey: strings.TrimSpace(req.RelayKey), mailType: req.MailType, roundBudget: req.RoundBudget,
		translations: req.Translations}
	if err := s.parseAddresses(spec, req.Cc); err != nil {
		return nil, err
	}
	if err := checkContent(spec); err != nil {
		return nil, err
	}
	if err := parseMailOptions(req, spec); err != nil { // acks.go
		return nil, err
	}
	if err := checkTranslations(spec.translations); err != nil {
		return nil, err
	}
	switch spec.relay {
	case "":
		if spec.relayKey != "" {
			return nil, Invalid("relay_key", "relay_key is only for relay mails", `drop relay_key, or set relay to "summary" or "permission" (bridges only, W-5.3)`)
		}
	case client.RelayPermission:
		// The gateway's own permission path (RequestPermission) stores these;
		// a send with it would be a mail outside any request, without a round.
		return nil, Invalid("relay", `relay "permission" cannot be sent as a mail`,
			"use POST /api/v1/permission/request for a permission question")
	case client.RelaySummary:
		if !p.IsAgent() {
			return nil, Invalid("relay", "relay mails are sent by bridges with an agent key", "drop relay")
		}
		if spec.relayKey == "" {
			return nil, Invalid("relay_key", "relay_key is required when relay is set (W-5.1)", "use the platform's stable message or permission id")
		}
		if len(spec.relayKey) > MaxRelayKey {
			return nil, Invalid("relay_key", fmt.Sprintf("relay_key is longer than %d bytes", MaxRelayKey), "")
		}
		if spec.relay == client.RelaySummary && spec.replyTo == "" {
			return nil, Invalid("reply_to", "a summary relay must answer a mail: set reply_to to the mail the turn answered", "")
		}
	default:
		return nil, Invalid("relay", fmt.Sprintf("relay %q is not one of \"\", \"summary\", \"permission\"", spec.relay),
			"a mail the model writes itself carries no relay (W-5.3)")
	}
	switch spec.mailType {
	case "", client.MailTypeNormal:
		spec.mailType = client.MailTypeNormal
	case client.MailTypeFailureReport:
		if !p.IsAgent() {
			return nil, Invalid("mail_type", "failure reports are sent by bridges", `use "normal" or leave it out`)
		}
	default:
		return nil, Invalid("mail_type", fmt.Sprintf("mail_type %q cannot be sent here", spec.mailType),
			`use "normal" (agents may also send "failure_report"); permission requests go to POST /api/v1/permission/request`)
	}
	if spec.roundBudget != nil {
		if !p.IsPerson() {
			return nil, Invalid("round_budget", "only a person sets a session's round budget", "drop round_budget")
		}
		if *spec.roundBudget < 0 {
			return nil, Invalid("round_budget", "round_budget must be 0 (unlimited) or more", "")
		}
	}
	return spec, nil
}

func (s *Service) parseAddresses(spec *sendSpec, cc string) error {
	if spec.toRaw == "" {
		return Invalid("to", "to is required", "write name@path.session, name@path.new, or a bare person name")
	}
	if len(address.SplitList(spec.toRaw)) > 1 {
		return Invalid("to", "to holds more than one address", "put further recipients in cc")
	}
	to, err := address.Parse(spec.toRaw)
	if err != nil {
		return Invalid("to", err.Error(), "write name@path.session, name@path.new, or a bare person name")
	}
	spec.to = normalize(to)
	for _, item := range address.SplitList(cc) {
		a, err := address.Parse(item)
		if err != nil {
			return Invalid("cc", err.Error(), "separate cc addresses with commas")
		}
		if a.Session == address.SessionNew {
			return Invalid("cc", fmt.Sprintf("%q: a cc address cannot open a session (.new); a mail has one session", item),
				"drop .new from the cc address, or send a separate mail to "+item)
		}
		spec.cc = append(spec.cc, normalize(a))
	}
	if len(spec.cc)+1 > MaxRecipients {
		return Invalid("cc", fmt.Sprintf("at most %d recipients", MaxRecipients), "")
	}
	return nil
}

// normalize cleans an absolute path ("/tmp/x/" and "/tmp/x" are one
// workspace).
func normalize(a address.Address) address.Address {
	if strings.HasPrefix(a.Path, "/") {
		a.Path = path.Clean(a.Path)
	}
	return a
}

func checkContent(spec *sendSpec) error {
	if err := tooLong("session_alias", spec.sessionAlias, MaxAliasInputRunes); err != nil { // textbounds.go
		return err
	}
	if utf8.RuneCountInString(spec.subject) > MaxSubjectRunes {
		return Invalid("subject", fmt.Sprintf("subject is longer than %d characters", MaxSubjectRunes), "shorten it; the body has room")
	}
	if len(spec.body) > MaxBodyBytes {
		e := TooLarge("body_too_large", "the body is larger than the limit of "+SizeText(MaxBodyBytes), "send the rest as an attachment")
		e.Field = "body"
		return e
	}
	if !utf8.ValidString(spec.subject) || !utf8.ValidString(spec.body) {
		return Invalid("body", "subject and body must be UTF-8", "")
	}
	return nil
}

// SuggestAgentNotSetUp is the suggestion of a recipient_not_found whose
// address has a path (an agent's form): a name becomes an agent once its key
// is registered. People read it in their words (httpapi personwords.go).
const SuggestAgentNotSetUp = "check the name (GET /api/v1/contacts lists people and agents); an agent exists once an admin registered its key (POST /api/v1/admin/agent-keys) and its bridge connected"

// target is a resolved recipient.
type target struct {
	addr address.Address
	kind string
	role string
}

func (s *Service) resolveName(ctx context.Context, q *store.Q, a address.Address, field string) (string, error) {
	kind, err := s.nameKind(ctx, q, a.Name) // keycache.go
	if errors.Is(err, store.ErrNotFound) {
		e := &Error{Kind: KindNotFound, Code: "recipient_not_found", Field: field,
			Message:    fmt.Sprintf("no person or agent named %q", a.Name),
			Suggestion: "check the name; GET /api/v1/contacts lists people and agents"}
		if a.Path != "" {
			// Written like an agent's address (issue 18): the agent may
			// just not be set up yet.
			e.Suggestion = SuggestAgentNotSetUp
		}
		return "", e
	}
	return kind, err
}

func (s *Service) send(ctx context.Context, p *Principal, spec *sendSpec) (*client.SendMailResponse, error) {
	if err := s.resolveRecipients(ctx, spec); err != nil {
		return nil, err
	}
	var resp *client.SendMailResponse
	// A send holds its rules through narrow locks (sendTx), so sends of
	// different sessions run in parallel on PostgreSQL.
	err := s.WriteShared(ctx, func(tx *Tx) error {
		var err error
		resp, err = s.sendTx(ctx, tx, p, spec)
		return err
	})
	if errors.Is(err, errDuplicateRelay) {
		return s.duplicateRelay(ctx, s.Read(), p.Name, spec.relayKey)
	}
	return resp, err
}

// resolveRecipients sets the kinds of spec's to and cc names (404
// recipient_not_found naming the field) and applies checkRecipientPath to
// each address. Names are claimed for good, so their kinds are read before
// the write transaction, off the single writer.
func (s *Service) resolveRecipients(ctx context.Context, spec *sendSpec) error {
	var err error
	if spec.toKind, err = s.resolveName(ctx, s.Read(), spec.to, "to"); err != nil {
		return err
	}
	reply := spec.replyTo != ""
	if err := checkRecipientPath(spec.to, spec.toKind, "to", reply); err != nil { // addressrules.go
		return err
	}
	spec.ccKinds = make([]string, len(spec.cc))
	for i, a := range spec.cc {
		if spec.ccKinds[i], err = s.resolveName(ctx, s.Read(), a, "cc"); err != nil {
			return err
		}
		if err := checkRecipientPath(a, spec.ccKinds[i], "cc", reply); err != nil {
			return err
		}
	}
	return nil
}

// relayReplay answers a send whose relay_key p already used for mail id:
// errDuplicateRelay (the stored mail is answered) when that mail's session
// is within p's turn scope (visibility.go inTurnScope), else 409
// relay_key_used, as for a permission request's key, so that a turn token
// learns nothing of another session from a key used there.
func relayReplay(ctx context.Context, q *store.Q, p *Principal, id string) error {
	m, err := q.GetMail(ctx, id)
	if err != nil {
		return err
	}
	if in, err := inTurnScope(ctx, q, p.Name, m.SessionID); err != nil {
		return err
	} else if !in {
		return Conflict("relay_key_used", "this relay_key was already used by another relay mail of this agent",
			"use a relay_key of this turn: the platform's message id, or turn:<platform session>:<mail_id>")
	}
	return errDuplicateRelay
}

// duplicateRelay answers a replayed relay_key with the original mail.
func (s *Service) duplicateRelay(ctx context.Context, q *store.Q, agent, key string) (*client.SendMailResponse, error) {
	id, err := q.RelayedMail(ctx, agent, key)
	if err != nil {
		return nil, err
	}
	resp := &client.SendMailResponse{Status: SendStatusDuplicate, MailID: id}
	if m, err := q.GetMail(ctx, id); err == nil {
		if sess, err := q.GetSession(ctx, m.SessionID); err == nil {
			resp.SessionID, resp.SessionAlias = sess.SessionID, sess.Alias
			resp.BudgetMax, resp.BudgetRemaining = sess.BudgetMax, remaining(sess)
		}
	}
	return resp, nil
}

func remaining(sess store.SessionRow) int {
	if sess.BudgetMax == 0 {
		return 0
	}
	if r := sess.BudgetMax - sess.UsedRounds; r > 0 {
		return r
	}
	return 0
}

// sendTx stores one send in tx. It runs in a shared write (WriteShared),
// so each read-then-write rule takes its narrow lock first: a relay key
// (one mail per agent and key) locks the key, opening a session (the
// default session found once, the agents' new-session rate limit) locks
// the sender and the addressee (chooseSession), a new session's alias its
// base (CreateSessionTx), and everything after the session is chosen
// (participants, rounds, a reply's permission decision) the session's row
// (UseRound or TouchSession, the first write to it).
func (s *Service) sendTx(ctx context.Context, tx *Tx, p *Principal, spec *sendSpec) (*client.SendMailResponse, error) {
	if spec.relay != "" {
		if err := tx.LockKeys(ctx, "relay-key", p.Name+"\x00"+spec.relayKey); err != nil {
			return nil, err
		}
		if id, err := tx.RelayedMail(ctx, p.Name, spec.relayKey); err == nil {
			return nil, relayReplay(ctx, tx.Q, p, id)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	senderKind := store.KindPerson
	if p.IsAgent() {
		senderKind = store.KindAgent
	}
	parent, err := replyParent(ctx, tx.Q, p, spec)
	if err != nil {
		return nil, err
	}
	targets := sendTargets(spec)
	sess, newSession, err := s.chooseSession(ctx, tx, p, senderKind, spec, parent, targets) // sessionchoice.go
	if err != nil {
		return nil, err
	}
	usesRound := p.IsAgent() && (spec.relay == "" || relayUsesRound(spec, parent))
	// members: the session's members and their paths, read right after
	// its row is locked (on PostgreSQL in the lock's round trip), for
	// CreateMailTx; nil for a session this send opened (read there).
	var members map[string]string
	if !newSession && !usesRound {
		// The session's own rules (its participants and their paths, a
		// pending permission a reply decides) hold with the session's row
		// locked: moving its last activity now locks it (an agent's round
		// below does the same), and costs no statement more, since the
		// mail moves it anyway (CreateMailTx). No other transaction knows
		// a new session yet.
		if err := tx.TouchSession(ctx, sess.SessionID, tx.Now); err != nil {
			return nil, err
		}
		sess.LastActivity = tx.Now
		if members, err = tx.ParticipantWorkspaces(ctx, sess.SessionID); err != nil {
			return nil, err
		}
	}
	if turnRestricted(ctx, p.Name) && !newSession {
		// A turn token writes into its own session and the sessions
		// delegated from it only (turntokens.go, delegation.go); a mail that
		// would reach another one by a default address is refused and
		// rolled back. A session it opens is delegated from the turn's.
		if in, err := inTurnScope(ctx, tx.Q, p.Name, sess.SessionID); err != nil {
			return nil, err
		} else if !in {
			return nil, errTurnTokenNotAllowed
		}
	}
	if spec.roundBudget != nil && !newSession {
		// round_budget sets the budget of the session a mail opens; a mail
		// into an existing session would silently drop it.
		return nil, InvalidCode("round_budget_existing_session", "round_budget",
			fmt.Sprintf("round_budget only applies to a new session; this mail goes to the existing session %q (%s)", sess.Alias, sess.SessionID),
			"change an existing session's budget with PATCH /api/v1/me/sessions/{id}, or drop round_budget")
	}

	// A cc address's session part can only name this mail's session (by
	// its alias or a former one).
	for _, a := range spec.cc {
		if a.Session != address.SessionAlias {
			continue
		}
		if ok, err := sessionHasAlias(ctx, tx.Q, sess, a.Alias); err != nil {
			return nil, err
		} else if !ok {
			e := aliasNotFound(a).(*Error)
			e.Field = "cc"
			e.Message = fmt.Sprintf("cc %s: the mail goes to session %q, and %q is not an alias of it; nothing was sent", a.String(), sess.Alias, a.Alias)
			e.Suggestion = "write the cc address without a session part, or send a separate mail to that session"
			return nil, e
		}
	}
	if spec.relay != "" {
		if err := checkRelayRecipients(ctx, tx, sess, parent, targets); err != nil {
			return nil, err
		}
		if spec.delegation {
			if err := checkDelegationRecipients(ctx, tx.Q, sess, targets); err != nil { // relayrules.go
				return nil, err
			}
		}
	}

	// Budget: an agent's own mail uses one round; relays use none (I-2),
	// except a summary answering another agent's mail (relayrules.go).
	if usesRound {
		round := tx.UseRoundLater(ctx, sess.SessionID, tx.Now)
		if !newSession {
			if members, err = tx.ParticipantWorkspaces(ctx, sess.SessionID); err != nil {
				return nil, err
			}
		}
		n, err := round.RowsAffected(ctx)
		if err != nil {
			return nil, err
		}
		if n != 1 {
			msg := fmt.Sprintf("the round budget of session %q is spent (%d of %d rounds used)", sess.Alias, sess.UsedRounds, sess.BudgetMax)
			if spec.relay != "" {
				msg += "; a summary relay answering another agent's mail uses a round like a normal mail"
			}
			return nil, Forbidden("budget_exhausted", msg,
				"tell the person; they can raise the budget or reset the used rounds of this session")
		}
		sess.UsedRounds++
		sess.LastActivity = tx.Now // UseRound moved it
	}

	// Parties and their paths in the session.
	// Its path: the one it has in the session; in a session this send
	// opened by delegation, the origin session's workspace (openSessionTx).
	from := Party{Name: p.Name, Kind: senderKind, Workspace: spec.fromWorkspace}
	var recips []Party
	for _, t := range targets {
		recips = append(recips, Party{Name: t.addr.Name, Kind: t.kind, Workspace: t.addr.Path, Role: t.role})
	}
	subject := spec.subject
	if subject == "" && parent != nil {
		subject = replySubject(parent.Subject)
	}
	if subject == "" {
		return nil, Invalid("subject", "subject is required", "say in a few words what the mail is about")
	}
	parentID := spec.forwardOf
	if parent != nil {
		parentID = parent.MailID
	}
	subject, body, err := pickTranslation(ctx, tx.Q, recips, spec.translations, subject, spec.body)
	if err != nil {
		return nil, err
	}
	created, err := s.CreateMailTx(ctx, tx, NewMail{Session: sess, ParentMailID: parentID, From: from, Subject: subject,
		Body: body, MailType: spec.mailType, Relay: spec.relay, RelayKey: spec.relayKey, Recipients: recips,
		AttachmentIDs: spec.attachmentIDs, Importance: spec.importance, AckRequired: spec.ackRequired, AckWithin: spec.ackWithin,
		Members: members})
	if err != nil {
		return nil, err
	}
	created.Forward = spec.forwardOf != ""
	if len(spec.trustedAtts) > 0 {
		if err := tx.LinkAttachmentsAt(ctx, created.Mail.MailID, spec.trustedAtts, len(spec.attachmentIDs)); err != nil {
			return nil, err
		}
	}
	if spec.relay != "" {
		ok, err := tx.InsertRelay(ctx, p.Name, spec.relayKey, spec.relay, created.Mail.MailID, tx.Now)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errDuplicateRelay
		}
		if err := claimRelaySlot(ctx, tx, p.Name, spec, parent.MailID, created.Mail.MailID); err != nil { // relayrules.go
			return nil, err
		}
	}
	// After the mail is stored, in this order and in the same transaction
	// (an error rolls the whole send back). The order is the one these
	// steps ran in when they were registered hooks (file order:
	// permission.go, then sentevent.go), so a decision's events keep
	// lower event ids than the sender's own new_mail event.
	//  1. A person's reply to a pending permission request decides it
	//     (permission_decision.go decideByReply).
	//  2. A person's own streams get the sent mail (sentevent.go emitSentMail).
	if err := s.decideByReply(ctx, tx, created); err != nil {
		return nil, err
	}
	if err := emitSentMail(ctx, tx, created); err != nil {
		return nil, err
	}
	s.Log.Debug("mail sent", "mail_id", created.Mail.MailID, "session_id", sess.SessionID, "from", p.Name)
	return &client.SendMailResponse{Status: SendStatusSent, MailID: created.Mail.MailID, SessionID: sess.SessionID,
		SessionAlias: sess.Alias, NewSession: newSession, BudgetRemaining: remaining(sess), BudgetMax: sess.BudgetMax}, nil
}

// replyParent answers the mail spec replies to (nil without reply_to). It
// must be a mail p can see: else a 404 mail_not_found naming reply_to. A
// summary relay must answer a mail p received, not one p sent (400).
func replyParent(ctx context.Context, q *store.Q, p *Principal, spec *sendSpec) (*store.ViewedMail, error) {
	if spec.replyTo == "" {
		return nil, nil
	}
	v, err := viewMail(ctx, q, spec.replyTo, p.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Kind: KindNotFound, Code: "mail_not_found", Field: "reply_to",
			Message: "reply_to names no mail you sent or received", Suggestion: "use the mail_id of the mail you answer"}
	}
	if err != nil {
		return nil, err
	}
	if spec.relay == client.RelaySummary && v.Role == "" {
		return nil, Invalid("reply_to", "a summary relay must answer a mail the agent received, not one it sent",
			"set reply_to to the mail that started the turn")
	}
	return &v, nil
}

// sendTargets lists the recipients of spec: to first, then cc in order. A
// person's address loses its path (people have no workspace), spec.to's
// as well.
func sendTargets(spec *sendSpec) []target {
	if spec.toKind == store.KindPerson {
		spec.to.Path = ""
	}
	targets := []target{{addr: spec.to, kind: spec.toKind, role: "to"}}
	for i, a := range spec.cc {
		if spec.ccKinds[i] == store.KindPerson {
			a.Path = ""
		}
		targets = append(targets, target{addr: a, kind: spec.ccKinds[i], role: "cc"})
	}
	return targets
}

// relaySession answers the session of a relay mail: the replied mail's
// session, whatever the address's session part says, as long as it names
// no other session. A relay never opens a session: .new is a 400 (field
// to), an unknown alias a 404, another session's alias a 400
// relay_other_session, except for a delegation relay (relayrules.go
// isDelegationRelay), which lands in the origin session it names.
func (s *Service) relaySession(ctx context.Context, tx *Tx, p *Principal, spec *sendSpec, parent *store.ViewedMail) (store.SessionRow, error) {
	if parent == nil {
		return store.SessionRow{}, Invalid("reply_to", "a relay mail must answer a mail: set reply_to", "")
	}
	to := spec.to
	switch to.Session {
	case address.SessionNew:
		return store.SessionRow{}, Invalid("to", "a relay mail cannot open a new session",
			"reply in the session of the mail you answer: set reply_to and address it without .new")
	case address.SessionAlias:
		other, _, err := tx.SessionByAnyAlias(ctx, to.Alias)
		if err == nil && other.SessionID != parent.SessionID {
			// Another session is named only to the people who may see it.
			if ok, verr := mayViewSession(ctx, tx.Q, other.SessionID, p.Name); verr != nil {
				return store.SessionRow{}, verr
			} else if !ok {
				err = store.ErrNotFound
			}
		}
		if errors.Is(err, store.ErrNotFound) {
			return store.SessionRow{}, aliasNotFound(to)
		}
		if err != nil {
			return store.SessionRow{}, err
		}
		if other.SessionID != parent.SessionID {
			if ok, err := isDelegationRelay(ctx, tx.Q, p, spec, parent, other); err != nil {
				return store.SessionRow{}, err
			} else if ok {
				spec.delegation = true
				return other, nil
			}
			return store.SessionRow{}, InvalidCode("relay_other_session", "to",
				fmt.Sprintf("a relay mail stays in the session of the mail it answers; %q is another session", to.Alias),
				"address the reply without a session part, or send a normal mail (it uses a round)")
		}
	}
	return tx.GetSession(ctx, parent.SessionID)
}

// checkRelayRecipients enforces that a relay mail reaches only the replied
// mail's sender (when the relay stays in that mail's session) and the
// session's existing participants (to and cc), so
// the free channel never adds anyone to a conversation: anyone else is a
// 400 relay_recipient naming the field (to or cc).
func checkRelayRecipients(ctx context.Context, tx *Tx, sess store.SessionRow, parent *store.ViewedMail, targets []target) error {
	for _, t := range targets {
		if t.addr.Name == parent.FromName && parent.SessionID == sess.SessionID {
			continue
		}
		_, err := tx.Participant(ctx, sess.SessionID, t.addr.Name)
		if errors.Is(err, store.ErrNotFound) {
			return InvalidCode("relay_recipient", t.role,
				fmt.Sprintf("%s takes no part in session %q; a relay mail only reaches the replied mail's sender and the session's participants", t.addr.Name, sess.Alias),
				"drop "+t.addr.Name+" from "+t.role+", or send a normal mail (it uses a round) to bring them in")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func replySubject(s string) string {
	if strings.HasPrefix(strings.ToLower(s), "re:") {
		return s
	}
	return "Re: " + s
}

// Forward sends a visible mail on as a new thread (T-5): full addressing
// (the session comes from the address, never from the original), the
// original quoted under the forwarder's note, its attachments kept, and a
// parent link to the original so the conversation tree crosses sessions.
// attachment_ids adds the forwarder's own attachments, checked as on a
// send (uploaded by the forwarder, none listed twice: else a 400 naming
// attachment_ids); they come first, then the original's (an id in both is
// linked once).
func (s *Service) Forward(ctx context.Context, p *Principal, id string, req client.ForwardRequest) (*client.SendMailResponse, error) {
	q := s.Read()
	orig, err := viewMail(ctx, q, id, p.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrMailNotFound
	}
	if err != nil {
		return nil, err
	}
	atts, err := q.AttachmentIDs(ctx, []string{orig.MailID})
	if err != nil {
		return nil, err
	}
	subject := strings.TrimSpace(req.Subject)
	if subject == "" {
		subject = "Fwd: " + orig.Subject
	}
	body := strings.TrimRight(req.Body, "\n")
	if body != "" {
		body += "\n\n"
	}
	body += fmt.Sprintf("---------- Forwarded mail ----------\nFrom: %s\nDate: %s\nSubject: %s\n\n%s",
		orig.FromAddress, orig.CreatedAt.Format(time.RFC3339), orig.Subject, orig.Body)
	own := map[string]bool{}
	for _, a := range req.AttachmentIDs {
		own[a] = true
	}
	var trusted []string
	for _, a := range atts[orig.MailID] {
		if !own[a] {
			trusted = append(trusted, a)
		}
	}
	spec := &sendSpec{toRaw: strings.TrimSpace(req.To), subject: subject, body: body, forwardOf: orig.MailID,
		attachmentIDs: req.AttachmentIDs, trustedAtts: trusted, mailType: client.MailTypeNormal}
	if err := s.parseAddresses(spec, req.Cc); err != nil {
		return nil, err
	}
	if err := checkContent(spec); err != nil {
		return nil, err
	}
	return s.send(ctx, p, spec)
}
