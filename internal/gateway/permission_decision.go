package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// decisionInput is one decision about to be recorded.
type decisionInput struct {
	word      string // as written
	note      string
	decidedBy string
	via       string
	// mailID is the decision mail when it exists already (a reply); empty
	// makes decideTx write one.
	mailID string
	from   Party
}

// Decide records a person's decision from the API (POST
// /me/permission/{mail_id}/decide). Only an approval word approves
// (JudgeDecision); "always"/"一直同意" also stores a grant for agent + tool
// + scope. The decision is a mail_type=permission_decision mail to the agent
// in the request's thread, and the agent (and the people asked) get a
// permission_decision event with the W-4 fields.
//
// The first decision wins (a primary key): a later one answers 409
// "already_decided", except the very same decision by the same person,
// which answers the stored state again with Duplicate set. A request past its expires_at
// answers 409 "permission_expired" (the sweeper denies it). A request the
// person may not decide is a 404.
func (s *Service) Decide(ctx context.Context, p *Principal, mailID string, req client.DecideRequest) (*client.Permission, error) {
	if !p.IsPerson() {
		return nil, Forbidden("person_only", "only a person decides a permission request", "")
	}
	word := strings.TrimSpace(req.Decision)
	if utf8.RuneCountInString(word) > MaxDecisionRunes {
		return nil, Invalid("decision", fmt.Sprintf("decision is longer than %d characters", MaxDecisionRunes), "put the reason in note")
	}
	if len(req.Note) > MaxBodyBytes {
		return nil, Invalid("note", fmt.Sprintf("note is larger than %d bytes", MaxBodyBytes), "")
	}
	var out *client.Permission
	err := s.Write(ctx, func(tx *Tx) error {
		row, err := tx.GetPermission(ctx, mailID)
		if errors.Is(err, store.ErrNotFound) {
			return permissionNotFound()
		}
		if err != nil {
			return err
		}
		ok, err := canDecide(ctx, tx.Q, row, p.Name)
		if err != nil {
			return err
		}
		if !ok {
			return permissionNotFound()
		}
		if row.Decided {
			if row.DecidedBy == p.Name && row.Decision == word && row.Note == strings.TrimSpace(req.Note) {
				v := permissionView(row)
				v.Duplicate = true // decided before: nothing new happened
				out = &v
				return nil
			}
			if row.DecidedVia == DecidedViaStop {
				return closedByStop(ctx, tx.Q, row, p.Name)
			}
			return alreadyDecided(row)
		}
		if row.ExpiresAt != nil && !row.ExpiresAt.After(tx.Now) {
			return Conflict("permission_expired", fmt.Sprintf("the request expired at %s and is denied", row.ExpiresAt.Format(time.RFC3339)),
				"the agent has to ask again")
		}
		out, err = s.decideTx(ctx, tx, row, decisionInput{word: word, note: strings.TrimSpace(req.Note), decidedBy: p.Name,
			via: DecidedViaAPI, from: Party{Name: p.Name, Kind: store.KindPerson}})
		if err != nil {
			return err
		}
		// Deciding a request is reading it: the decider's copy leaves the
		// unread mail (a decision from the CLI or a card, which never
		// opened the mail, left it unread).
		_, err = tx.MarkRead(ctx, p.Name, []string{mailID}, false, tx.Now)
		return err
	})
	if errors.Is(err, errDecisionLost) {
		row, gerr := s.Read().GetPermission(ctx, mailID)
		if gerr != nil {
			return nil, gerr
		}
		if row.DecidedVia == DecidedViaStop {
			return nil, closedByStop(ctx, s.Read(), row, p.Name)
		}
		return nil, alreadyDecided(row)
	}
	return out, err
}

// closedByStop is the 409 already_decided of a late decision of a request
// a stop closed, in the person's language: who stopped the turn, that the
// answer changes nothing, and what to do instead.
func closedByStop(ctx context.Context, q *store.Q, row store.PermissionRow, person string) error {
	lang, err := personLanguage(ctx, q, person)
	if err != nil {
		return err
	}
	w := personLangs[lang]
	return Conflict("already_decided", fmt.Sprintf(w.closedLate, row.DecidedBy), w.closedLateFix)
}

func alreadyDecided(row store.PermissionRow) error {
	verdict := "denied"
	if row.Approved {
		verdict = "approved"
	}
	return Conflict("already_decided", fmt.Sprintf("this request was already %s by %s (%q); the first decision stands",
		verdict, row.DecidedBy, row.Decision), "read the request again (GET its permission) instead of deciding twice")
}

// decideTx records a decision in the transaction: the decision mail (unless
// in.mailID names an existing one), the decision row (first wins: a lost
// race returns errDecisionLost so the caller rolls back), the grant for an
// "always", and the permission_decision events.
func (s *Service) decideTx(ctx context.Context, tx *Tx, row store.PermissionRow, in decisionInput) (*client.Permission, error) {
	approved, always := JudgeDecision(in.word)
	byClock := in.via == DecidedViaTimeout || in.via == DecidedViaStop // nobody answered the request itself
	if byClock {
		approved, always = false, false
	}
	sess, err := tx.GetSession(ctx, row.SessionID)
	if err != nil {
		return nil, err
	}
	agentWS := ""
	if pt, err := tx.Participant(ctx, sess.SessionID, row.AgentName); err == nil {
		agentWS = pt.Workspace
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	rs, err := tx.RecipientsOf(ctx, []string{row.MailID})
	if err != nil {
		return nil, err
	}
	decisionMailID := in.mailID
	if decisionMailID == "" {
		reqMail, err := tx.GetMail(ctx, row.MailID)
		if err != nil {
			return nil, err
		}
		// The decider reads it in the tree: their language; the people asked on a timeout.
		readers := []string{in.decidedBy}
		if byClock {
			readers = nil
			for _, r := range rs[row.MailID] {
				if r.Kind == store.KindPerson {
					readers = append(readers, r.Name)
				}
			}
		}
		words, lang, err := wordsFor(ctx, tx.Q, readers) // persontext.go
		if err != nil {
			return nil, err
		}
		created, err := s.CreateMailTx(ctx, tx, NewMail{Session: sess, ParentMailID: row.MailID, From: in.from,
			Subject: replySubject(reqMail.Subject), Body: decisionMailBody(words, lang, in, approved, always, row, agentWS),
			MailType:   client.MailTypePermissionDecision,
			Recipients: []Party{{Name: row.AgentName, Kind: store.KindAgent, Workspace: agentWS, Role: "to"}}})
		if err != nil {
			return nil, err
		}
		decisionMailID = created.Mail.MailID
	}
	d := store.PermissionDecisionRow{MailID: row.MailID, Decision: in.word, Approved: approved, Always: always,
		Note: in.note, DecidedBy: in.decidedBy, DecidedVia: in.via, DecisionMailID: decisionMailID, DecidedAt: tx.Now}
	ok, err := tx.InsertPermissionDecision(ctx, d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errDecisionLost
	}
	if always && grantable(row, agentWS) {
		// The grant's scope is the agent's workspace in the session as the
		// gateway knows it, never the scope the agent sent.
		if _, err := tx.InsertGrant(ctx, store.GrantRow{GrantID: store.NewID(), AgentName: row.AgentName, Tool: row.Tool,
			Scope: agentWS, SessionID: row.SessionID, GrantedBy: in.decidedBy, MailID: row.MailID, CreatedAt: tx.Now}); err != nil {
			return nil, err
		}
	}
	row.Decided, row.Decision, row.Approved, row.Always, row.Note = true, d.Decision, approved, always, d.Note
	row.DecidedBy, row.DecidedVia, row.DecisionMailID = d.DecidedBy, d.DecidedVia, decisionMailID
	at := tx.Now
	row.DecidedAt = &at
	ev := client.PermissionDecisionEvent{MailID: row.MailID, DecisionMailID: decisionMailID, Decision: d.Decision,
		Approved: approved, Always: always, Note: d.Note, DecidedBy: d.DecidedBy, DecidedVia: d.DecidedVia, SessionID: row.SessionID,
		RelayKey: row.RelayKey, RelayKind: client.RelayPermission, ArgsHash: row.ArgsHash}
	recipients := []string{row.AgentName}
	if in.via == DecidedViaStop {
		// The bridge ended the stopped turn's asks itself; a decision no
		// ask waits for would become a new turn (B-4.2).
		recipients = nil
	}
	for _, r := range rs[row.MailID] {
		if r.Kind == store.KindPerson {
			recipients = append(recipients, r.Name)
		}
	}
	for _, name := range recipients {
		if _, err := tx.Emit(ctx, name, client.EventPermissionDecision, ev); err != nil {
			return nil, err
		}
	}
	s.Log.Info("permission decided", "mail_id", row.MailID, "session_id", row.SessionID, "agent", row.AgentName,
		"approved", approved, "always", always, "decided_by", d.DecidedBy, "via", d.DecidedVia)
	v := permissionView(row)
	return &v, nil
}

// decisionMailBody is the body of a decision mail written by the gateway
// (API decisions and timeouts): the verdict, then, for a person's written
// reply, what the gateway understood and why (ReadDecision), then the note; in
// w's language (lang).
func decisionMailBody(w personWords, lang string, in decisionInput, approved, always bool, row store.PermissionRow, agentWS string) string {
	var b strings.Builder
	switch {
	case in.via == DecidedViaTimeout:
		b.WriteString(w.deniedTimeout)
	case in.via == DecidedViaStop:
		fmt.Fprintf(&b, w.closedByStop, in.decidedBy)
	case always && grantable(row, agentWS):
		fmt.Fprintf(&b, w.approvedAlway, row.AgentName, row.Tool, agentWS, in.decidedBy)
	case always:
		b.WriteString(w.approvedOnce)
	case approved:
		b.WriteString(w.approved)
	default:
		b.WriteString(w.denied)
	}
	if plain := strings.ToLower(strings.TrimSpace(in.word)); in.via != DecidedViaTimeout && in.via != DecidedViaStop && (in.via == DecidedViaReply || (plain != "approve" && plain != "always" && plain != "deny")) {
		// A written word is read back; the plain word of a button or
		// command says its verdict itself (issue 18: "Approved. (approve)").
		fmt.Fprintf(&b, "\n"+w.readAs, in.word, readingIn(lang, in.word))
	}
	if in.note != "" {
		b.WriteString("\n\n")
		b.WriteString(in.note)
	}
	b.WriteString("\n")
	return b.String()
}

// decideByReply makes a person's reply to a pending permission
// request its decision (issue 3: "or by replying to the request mail"): the
// reply's text is judged by JudgeDecision (its first line is the decision
// word, the rest the note), the reply becomes the permission_decision mail
// of the thread, and the events go out as for an API decision. A reply by
// someone who may not decide stays an ordinary mail. A reply by someone who
// may decide to a request already decided (or expired) is a second
// decision: with the same verdict (approve / always / deny) it stays an
// ordinary mail; with another it fails the send with 409 already_decided
// (permission_expired for an approval after the expiry), storing nothing.
func (s *Service) decideByReply(ctx context.Context, tx *Tx, m *CreatedMail) error {
	if m.Mail.FromKind != store.KindPerson || m.Mail.ParentMailID == "" || m.Mail.MailType != client.MailTypeNormal || m.Forward {
		return nil // a forward of the request is not an answer to it
	}
	row, err := tx.GetPermission(ctx, m.Mail.ParentMailID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if row.SessionID != m.Session.SessionID {
		// The first decision wins with the request's session row locked
		// (a send locks its own session's row already, sendTx); read it
		// again under the lock.
		if err := tx.LockSession(ctx, row.SessionID); err != nil {
			return err
		}
		if row, err = tx.GetPermission(ctx, m.Mail.ParentMailID); err != nil {
			return err
		}
	}
	ok, err := canDecide(ctx, tx.Q, row, m.Mail.FromName)
	if err != nil || !ok {
		return err
	}
	word, note := splitDecisionText(m.Mail.Body)
	expired := row.ExpiresAt != nil && !row.ExpiresAt.After(tx.Now)
	if row.Decided || expired {
		// A second decision: the same verdict stays an ordinary mail; a
		// different one is refused like a second API decision (409), and
		// the reply is not stored.
		approved, always := JudgeDecision(word)
		switch {
		case row.Decided && approved == row.Approved && always == row.Always:
			return nil
		case row.Decided && row.DecidedVia == DecidedViaStop:
			return closedByStop(ctx, tx.Q, row, m.Mail.FromName)
		case row.Decided:
			return alreadyDecided(row)
		case !approved:
			return nil // agrees with the denial the expiry brings
		default:
			return Conflict("permission_expired", fmt.Sprintf("the request expired at %s and is denied; the reply was not sent",
				row.ExpiresAt.Format(time.RFC3339)), "the agent has to ask again")
		}
	}
	if _, err := s.decideTx(ctx, tx, row, decisionInput{word: word, note: note, decidedBy: m.Mail.FromName,
		via: DecidedViaReply, mailID: m.Mail.MailID}); err != nil {
		return err
	}
	// The reply is the decision mail: retype it and the new_mail events
	// already written for it, so bridges do not start a turn on it, and
	// end it with the gateway's reading of it, so the person and the agent
	// read what was understood and why.
	if err := tx.SetMailType(ctx, m.Mail.MailID, client.MailTypePermissionDecision); err != nil {
		return err
	}
	m.Mail.MailType = client.MailTypePermissionDecision
	m.Mail.Body = replyWithReading(m.Mail.Body, word)
	if err := tx.SetMailBody(ctx, m.Mail.MailID, m.Mail.Body); err != nil {
		return err
	}
	for _, ev := range m.Events {
		id, err := ev.EventID(ctx)
		if err != nil {
			return err
		}
		data, err := tx.EventData(ctx, id)
		if err != nil {
			return err
		}
		var ev client.NewMailEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return err
		}
		ev.MailType = client.MailTypePermissionDecision
		b, _ := json.Marshal(ev)
		if err := tx.SetEventData(ctx, id, b); err != nil {
			return err
		}
	}
	return nil
}

// replyWithReading is a decision reply's body followed by the gateway's
// reading of its decision word, set apart as the gateway's own line:
// "— AgentMail: \"yes, no need to ask again\" was understood as a denial:
// the first line starts with \"yes\" but also says \"no\"; ...".
func replyWithReading(body, word string) string {
	return strings.TrimRight(body, " \t\r\n") + fmt.Sprintf("\n\n— %s: %q was %s.\n", SystemSender, word, ReadDecision(word).Reason)
}

// splitDecisionText splits a reply into its decision word (the first
// non-empty line, quoted lines skipped) and the note (the rest, without
// quoted lines).
func splitDecisionText(body string) (word, note string) {
	var rest []string
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, ">") {
			continue
		}
		if word == "" {
			if t != "" {
				word = t
			}
			continue
		}
		rest = append(rest, line)
	}
	word = string([]rune(word)[:min(utf8.RuneCountInString(word), MaxDecisionRunes)])
	return word, strings.TrimSpace(strings.Join(rest, "\n"))
}

// closeRunPermissionsTx closes the pending permission requests asked in a
// run a person stopped (issue 16, B-9.2): each is decided deny with
// decided_via "stop" and decided_by the person who stopped the run, a
// decision mail from the system in the asked people's language, and a
// permission_decision event to those people, so no card, "Waiting for you"
// or `agentmail watch` offers a decision any more. The agent gets no event:
// its bridge answered the stopped turn's asks deny itself, and a decision
// no ask waits for would become a new turn (B-4.2). A request decided
// meanwhile (a concurrent decision) aborts the transaction with
// errDecisionLost; the caller tries again. It answers how many it closed.
func (s *Service) closeRunPermissionsTx(ctx context.Context, tx *Tx, runID, by string) (int, error) {
	rows, err := tx.PendingPermissionsOfRun(ctx, runID)
	if err != nil {
		return 0, err
	}
	for _, row := range rows {
		if _, err := s.decideTx(ctx, tx, row, decisionInput{word: TimeoutDecision, decidedBy: by, via: DecidedViaStop,
			from: Party{Name: SystemSender, Kind: store.KindSystem}}); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

// ExpirePermissions decides every pending request whose expires_at has
// passed (by the service clock) as denied, decided_by "timeout", with a
// decision mail from the system and the permission_decision events, so
// nothing waits forever. A request decided meanwhile is left alone. It
// answers how many it decided.
func (s *Service) ExpirePermissions(ctx context.Context) (int, error) {
	rows, err := s.Read().ExpiredPermissions(ctx, s.Now(), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		err := s.Write(ctx, func(tx *Tx) error {
			row, err := tx.GetPermission(ctx, r.MailID)
			if err != nil {
				return err
			}
			if row.Decided {
				return nil
			}
			_, err = s.decideTx(ctx, tx, row, decisionInput{word: TimeoutDecision,
				note:      fmt.Sprintf("No decision before %s.", row.ExpiresAt.Format(time.RFC3339)),
				decidedBy: DecidedByTimeout, via: DecidedViaTimeout, from: Party{Name: SystemSender, Kind: store.KindSystem}})
			if err == nil {
				n++
			}
			return err
		})
		if err != nil && !errors.Is(err, errDecisionLost) {
			return n, err
		}
	}
	return n, nil
}
