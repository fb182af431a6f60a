package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Importance and acknowledgements (issue 21 items 2 and 3).
//
// Importance (low, normal, high, urgent) is chosen on send by people and
// agents alike, stored on the mail and on each recipient row, and shown
// wherever the mail is. An inbox can be filtered by it and sorted by it.
//
// ack_required asks every recipient to acknowledge the mail ("I have read
// it and will act on it") within ack_within_minutes (default
// client.DefaultAckWithinMinutes, 24 h). Reading is not acknowledging:
// only an explicit acknowledgement (AckMail) counts. An acknowledgement
// still open after its due time is overdue. ack_required changes nothing
// about who may be written to: the send follows exactly the rules of any
// other send (visibility.go), and only the recipients that send reaches
// owe an acknowledgement.

var importanceRanks = map[string]int{
	client.ImportanceLow: store.ImportanceLow, client.ImportanceNormal: store.ImportanceNormal,
	client.ImportanceHigh: store.ImportanceHigh, client.ImportanceUrgent: store.ImportanceUrgent,
}

// ImportanceName answers the level of a stored rank ("normal" for a rank
// out of range).
func ImportanceName(rank int) string {
	switch rank {
	case store.ImportanceLow:
		return client.ImportanceLow
	case store.ImportanceHigh:
		return client.ImportanceHigh
	case store.ImportanceUrgent:
		return client.ImportanceUrgent
	}
	return client.ImportanceNormal
}

// ParseImportance answers the rank of a level ("" is normal), or a 400
// naming field.
func ParseImportance(level, field string) (int, error) {
	level = strings.ToLower(strings.TrimSpace(level))
	if level == "" {
		return store.ImportanceNormal, nil
	}
	r, ok := importanceRanks[level]
	if !ok {
		return 0, Invalid(field, fmt.Sprintf("importance %q is not one of low, normal, high, urgent", level), "")
	}
	return r, nil
}

// parseMailOptions reads importance and ack_required of a send into spec.
func parseMailOptions(req client.SendMailRequest, spec *sendSpec) error {
	var err error
	if spec.importance, err = ParseImportance(req.Importance, "importance"); err != nil {
		return err
	}
	spec.ackRequired = req.AckRequired
	minutes := req.AckWithinMinutes
	switch {
	case minutes != 0 && !req.AckRequired:
		return Invalid("ack_within_minutes", "ack_within_minutes only applies with ack_required", "set ack_required true, or drop ack_within_minutes")
	case minutes == 0:
		minutes = client.DefaultAckWithinMinutes
	case minutes < 1 || minutes > client.MaxAckWithinMinutes:
		return Invalid("ack_within_minutes", fmt.Sprintf("ack_within_minutes must be 1 to %d, got %d", client.MaxAckWithinMinutes, minutes), "")
	}
	spec.ackWithin = time.Duration(minutes) * time.Minute
	return nil
}

// ackDue answers when the acknowledgements of a mail stored at now with
// these options fall due, or nil without ack_required.
func (nm NewMail) ackDue(now time.Time) *time.Time {
	if !nm.AckRequired {
		return nil
	}
	within := nm.AckWithin
	if within <= 0 {
		within = client.DefaultAckWithinMinutes * time.Minute
	}
	due := now.Add(within)
	return &due
}

// storeAcks opens one acknowledgement per recipient of a mail sent with
// ack_required (the sender owes none for a copy to itself).
func storeAcks(ctx context.Context, tx *Tx, out *CreatedMail) error {
	m := out.Mail
	if !m.AckRequired || m.AckDueAt == nil {
		return nil
	}
	var names []string
	for _, r := range out.Recipients {
		if r.Name != m.FromName {
			names = append(names, r.Name)
		}
	}
	return tx.InsertAcks(ctx, m.MailID, m.FromName, names, *m.AckDueAt)
}

// decorateMails fills importance and the acknowledgement fields of views
// (mails as stored in rows, in the same order); viewer, when not "", gets
// its own acknowledgement time in AckedAt.
func decorateMails(ctx context.Context, q *store.Q, viewer string, rows []store.ViewedMail, views []client.Mail) error {
	var ackIDs []string
	for i, r := range rows {
		views[i].Importance = ImportanceName(r.Importance)
		views[i].AckRequired = r.AckRequired
		views[i].AckDueAt = r.AckDueAt
		if r.AckRequired {
			ackIDs = append(ackIDs, r.MailID)
		}
	}
	if len(ackIDs) == 0 {
		return nil
	}
	acks, err := q.AcksOf(ctx, ackIDs)
	if err != nil {
		return err
	}
	for i := range views {
		for _, a := range acks[views[i].MailID] {
			views[i].Acks = append(views[i].Acks, client.MailAck{Name: a.Name, AckedAt: a.AckedAt})
			if viewer != "" && a.Name == viewer {
				views[i].AckedAt = a.AckedAt
			}
		}
	}
	return nil
}

// errAckNotRequired answers an acknowledgement of a mail that asks for
// none, or of which the caller is no recipient.
func errAckNotRequired(id string) error {
	return Conflict("ack_not_required", fmt.Sprintf("mail %s asks you for no acknowledgement", id),
		"only the recipients of a mail sent with ack_required acknowledge it; reading it is enough otherwise")
}

// AckMail records the principal's acknowledgement of mail id (POST
// /mail/{id}/ack, /me/mail/{id}/ack): the principal must be a recipient
// the mail asked to acknowledge. An id the principal may not see
// (visibility.go viewMail, a turn token outside its session included) is
// the 404 mail_not_found of an unknown one; a visible mail without an
// acknowledgement owed by the principal is a 409 ack_not_required. A
// second acknowledgement answers the first with Already true.
func (s *Service) AckMail(ctx context.Context, p *Principal, id string) (*client.AckResponse, error) {
	id = strings.TrimSpace(id)
	var out *client.AckResponse
	err := s.Write(ctx, func(tx *Tx) error {
		v, err := viewMail(ctx, tx.Q, id, p.Name)
		if errors.Is(err, store.ErrNotFound) {
			return ErrMailNotFound
		}
		if err != nil {
			return err
		}
		if !v.AckRequired || v.Role == "" {
			return errAckNotRequired(id)
		}
		row, first, err := tx.Acknowledge(ctx, v.MailID, p.Name, tx.Now)
		if errors.Is(err, store.ErrNotFound) {
			return errAckNotRequired(id)
		}
		if err != nil {
			return err
		}
		if first {
			// An archive shows the acknowledgements (agentmail export
			// rewrites the sessions changed since its last run).
			if err := tx.MarkSessionChanged(ctx, v.SessionID, tx.Now); err != nil {
				return err
			}
		}
		out = &client.AckResponse{MailID: v.MailID, AckedAt: *row.AckedAt, Already: !first}
		return nil
	})
	return out, err
}

// Bounds of the waiting-for-acknowledgement view.
const (
	DefaultAckWaitingLimit = 50
	MaxAckWaitingLimit     = 200
)

// Roles of the waiting view.
const (
	AckRoleSender    = "sender"
	AckRoleRecipient = "recipient"
)

// Unacknowledged is the waiting-for-acknowledgement view (GET
// /mail/unacknowledged, /me/mail/unacknowledged): the mails the principal
// sent whose acknowledgements are not all in (role "sender"), and the
// mails the principal has not acknowledged yet (role "recipient"), role ""
// meaning both; overdue keeps only those past their due time. Oldest due
// first, at most limit (1 to 200, 0 is 50). Under a turn token only the
// token's session's mails are listed.
func (s *Service) Unacknowledged(ctx context.Context, p *Principal, role string, overdue bool, limit int) (*client.AckWaitingList, error) {
	switch role {
	case "", AckRoleSender, AckRoleRecipient:
	default:
		return nil, Invalid("role", fmt.Sprintf("role %q is not one of sender, recipient", role), "leave role out for both")
	}
	if limit == 0 {
		limit = DefaultAckWaitingLimit
	}
	if limit < 1 || limit > MaxAckWaitingLimit {
		return nil, Invalid("limit", fmt.Sprintf("limit must be 1 to %d, got %d", MaxAckWaitingLimit, limit), "")
	}
	q := s.Read()
	now := s.Now()
	var before time.Time
	if overdue {
		before = now
	}
	type entry struct {
		role string
		due  time.Time
	}
	order := []string{}
	entries := map[string]entry{}
	for _, r := range []string{AckRoleSender, AckRoleRecipient} {
		if role != "" && role != r {
			continue
		}
		// Several open rows of one sent mail count once: read enough rows
		// for limit mails in most cases.
		rows, err := q.OpenAcks(ctx, p.Name, r == AckRoleSender, before, limit*4)
		if err != nil {
			return nil, err
		}
		for _, a := range rows {
			if _, dup := entries[a.MailID]; dup {
				continue
			}
			entries[a.MailID] = entry{role: r, due: a.DueAt}
			order = append(order, a.MailID)
		}
	}
	mails, err := q.MailsByID(ctx, order)
	if err != nil {
		return nil, err
	}
	acks, err := q.AcksOf(ctx, order)
	if err != nil {
		return nil, err
	}
	aliases := map[string]string{}
	var sessions []string
	for _, m := range mails {
		sessions = append(sessions, m.SessionID)
	}
	if aliases, err = q.SessionAliases(ctx, sessions); err != nil {
		return nil, err
	}
	out := &client.AckWaitingList{Mails: []client.AckWaiting{}}
	for _, id := range order {
		m, ok := mails[id]
		if !ok {
			continue
		}
		if in, err := inTurnScope(ctx, q, p.Name, m.SessionID); err != nil {
			return nil, err
		} else if !in {
			continue
		}
		e := entries[id]
		w := client.AckWaiting{MailID: id, SessionID: m.SessionID, SessionAlias: aliases[m.SessionID], Subject: m.Subject,
			FromName: m.FromName, Importance: ImportanceName(m.Importance), Role: e.role, CreatedAt: m.CreatedAt,
			DueAt: e.due, Overdue: !now.Before(e.due), Pending: []string{}, Acked: []client.MailAck{}}
		for _, a := range acks[id] {
			if a.AckedAt == nil {
				w.Pending = append(w.Pending, a.Name)
			} else {
				w.Acked = append(w.Acked, client.MailAck{Name: a.Name, AckedAt: a.AckedAt})
			}
		}
		out.Mails = append(out.Mails, w)
	}
	sortWaiting(out.Mails)
	if len(out.Mails) > limit {
		out.Mails = out.Mails[:limit]
	}
	return out, nil
}

// sortWaiting orders the view oldest due first, then by mail id.
func sortWaiting(list []client.AckWaiting) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0; j-- {
			a, b := list[j-1], list[j]
			if a.DueAt.Before(b.DueAt) || (a.DueAt.Equal(b.DueAt) && a.MailID <= b.MailID) {
				break
			}
			list[j-1], list[j] = b, a
		}
	}
}

// importanceFilter parses the importance and sort parameters of an inbox
// listing and its cursor: "" or a mail id, or for sort "importance"
// "<rank>:<mail id>" as NextCursor gave it.
func importanceFilter(levels, sort, cursor string) (store.ImportanceFilter, string, error) {
	var f store.ImportanceFilter
	for _, l := range strings.Split(levels, ",") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		r, err := ParseImportance(l, "importance")
		if err != nil {
			return f, "", err
		}
		f.Ranks = append(f.Ranks, r)
	}
	switch strings.TrimSpace(sort) {
	case "", "date":
	case "importance":
		f.ByImportance = true
	default:
		return f, "", Invalid("sort", fmt.Sprintf("sort %q is not one of date, importance", sort), "")
	}
	if cursor == "" {
		return f, "", nil
	}
	if f.ByImportance {
		rank, id, ok := strings.Cut(cursor, ":")
		n, err := fmt.Sscanf(rank, "%d", &f.CursorRank)
		if !ok || err != nil || n != 1 || !isID(id) || rank != fmt.Sprint(f.CursorRank) {
			return f, "", Invalid("cursor", fmt.Sprintf("cursor %q is not one this endpoint gave", cursor),
				"pass next_cursor back unchanged, or leave cursor out for the first page")
		}
		return f, id, nil
	}
	return f, cursor, checkMailCursor(cursor)
}

// importanceCursor is the NextCursor after the last mail of a page.
func importanceCursor(f store.ImportanceFilter, last store.ViewedMail) string {
	if f.ByImportance {
		return fmt.Sprintf("%d:%s", last.Importance, last.MailID)
	}
	return last.MailID
}
