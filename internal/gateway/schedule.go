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
	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// Schedule rules (seed 001 schedules note).
const (
	// DefaultScheduleLimit is how many schedules one owner may keep.
	DefaultScheduleLimit = 50
	// ScheduleHintPercent: a listing at or above this share of the limit
	// carries a hint to clean up (seed 001: warn before hitting the wall).
	ScheduleHintPercent = 75
	// MaxRemindBeforeMinutes bounds remind_before_minutes (one year).
	MaxRemindBeforeMinutes = 366 * 24 * 60
	// MaxScheduleTitleRunes bounds a schedule's title.
	MaxScheduleTitleRunes = 200
	// MaxScheduleRecipients bounds the recipients of one schedule.
	MaxScheduleRecipients = 20
)

func scheduleView(row store.ScheduleRow) client.Schedule {
	v := client.Schedule{ScheduleID: row.ScheduleID, Owner: row.Owner, Title: row.Title, Body: row.Body,
		EventTime: row.EventTime, RemindBeforeMinutes: row.RemindBeforeMinutes, RemindAt: row.RemindAt,
		Recipients: []string{}, SentAt: row.SentAt, CreatedAt: row.CreatedAt}
	_ = json.Unmarshal([]byte(row.Recipients), &v.Recipients)
	if len(v.Recipients) == 0 {
		v.Recipients = []string{row.Owner} // the same fallback as delivery
	}
	return v
}

func scheduleNotFound() error {
	return NotFound("schedule_not_found", "no such schedule", "list your schedules (GET /api/v1/schedules) for their ids")
}

// parseEventTimeField reads event_time (in zone when it names none) as a
// 400 naming the field, refusing a time that is not in the future.
func parseEventTimeField(raw string, now time.Time, zone *time.Location) (time.Time, error) {
	t, err := ParseEventTime(raw, now, zone)
	if err != nil {
		return t, Invalid("event_time", err.Error(), "compute the time yourself from the server's current time and send RFC 3339")
	}
	t = t.UTC().Truncate(time.Millisecond)
	if !t.After(now) {
		return t, Invalid("event_time", fmt.Sprintf("event_time %s is not in the future; the server's current time is %s",
			t.In(zone).Format(time.RFC3339), now.In(zone).Format(time.RFC3339)), "give a later time")
	}
	return t, nil
}

func parseRemindBefore(v any) (int, error) {
	n, err := ParseLooseInt("remind_before_minutes", v, 0)
	if err != nil {
		return 0, Invalid("remind_before_minutes", err.Error(), `send a whole number of minutes, e.g. 30 or "30"`)
	}
	if n < 0 || n > MaxRemindBeforeMinutes {
		return 0, Invalid("remind_before_minutes", fmt.Sprintf("remind_before_minutes must be from 0 to %d", MaxRemindBeforeMinutes), "")
	}
	return n, nil
}

// resolveScheduleRecipients checks a recipients string (names or addresses
// separated by ASCII or full-width commas) and answers the list to store.
// Empty means the owner: a person by name, an agent at the path of its most
// recently active session. Errors: 400 for a malformed address or an agent
// without a path, 404 for an unknown name or alias, or the alias of a
// session the owner takes no part in (as sending would). An alias is
// checked and kept for a person's address (`carol@.alias`) as for an
// agent's, and every alias of one reminder must name the same session (a
// reminder is one mail, in one session: another is 404 alias_not_found, as
// a mail's cc would be).
func (s *Service) resolveScheduleRecipients(ctx context.Context, q *store.Q, p *Principal, raw string) ([]string, error) {
	list := SplitRecipients(raw)
	if len(list) == 0 {
		if p.IsPerson() {
			return []string{p.Name}, nil
		}
		ws, err := q.LatestWorkspace(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		if ws == "" {
			return []string{p.Name}, nil
		}
		return []string{address.Format(p.Name, ws, "")}, nil
	}
	if len(list) > MaxScheduleRecipients {
		return nil, Invalid("recipients", fmt.Sprintf("at most %d recipients", MaxScheduleRecipients), "")
	}
	out := make([]string, 0, len(list))
	var aliasSess store.SessionRow // the session the first alias names
	for _, r := range list {
		a, err := address.Parse(r)
		if err != nil {
			return nil, Invalid("recipients", fmt.Sprintf("recipient %q: %v", r, err), "write names or name@path addresses separated by commas")
		}
		kind, err := q.NameKind(ctx, a.Name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, &Error{Kind: KindNotFound, Code: "recipient_not_found", Field: "recipients",
				Message: fmt.Sprintf("no person or agent named %q", a.Name), Suggestion: "check the name; GET /api/v1/contacts lists people and agents"}
		}
		if err != nil {
			return nil, err
		}
		if err := checkRecipientPath(a, kind, "recipients", false); err != nil { // addressrules.go
			return nil, err
		}
		switch {
		case a.Session == address.SessionAlias:
			// Only a session the owner takes part in (sessionchoice.go aliasSessionFor),
			// for people's addresses as for agents'.
			sess, err := aliasSessionFor(ctx, q, a, p.Name)
			if errors.Is(err, store.ErrNotFound) {
				return nil, aliasNotFoundIn(a, "recipients")
			} else if err != nil {
				return nil, err
			}
			if aliasSess.SessionID != "" && sess.SessionID != aliasSess.SessionID {
				e := aliasNotFoundIn(a, "recipients").(*Error)
				e.Message = fmt.Sprintf("recipient %s: the reminder goes to session %q, and %q is not an alias of it; nothing was stored", a.String(), aliasSess.Alias, a.Alias)
				e.Suggestion = "a reminder is one mail in one session: create a separate reminder for the other session"
				return nil, e
			}
			aliasSess = sess
		case kind == store.KindPerson:
			out = append(out, a.Name) // people have no path; a default or .new address opens the reminder's own session
			continue
		case a.Path == "":
			return nil, Invalid("recipients", fmt.Sprintf("%q is an agent; its address needs a path", a.Name),
				fmt.Sprintf("write %s@/path/to/workspace", a.Name))
		}
		out = append(out, a.String())
	}
	return out, nil
}

// CreateSchedule stores a reminder of the principal (POST /schedules and
// /me/schedules). event_time: RFC 3339, local time without zone (server
// zone) or a date alone (09:00), in the future; natural language is a 400
// carrying the server's time. remind_before_minutes: a number or numeric
// string, 0..MaxRemindBeforeMinutes. recipients: see
// resolveScheduleRecipients. At Config.ScheduleLimit schedules the owner gets 409
// "schedule_limit".
func (s *Service) CreateSchedule(ctx context.Context, p *Principal, req client.CreateScheduleRequest) (*client.Schedule, error) {
	title := strings.TrimSpace(req.Title)
	if title == "" {
		return nil, Invalid("title", "title is required", "say in a few words what the reminder is about")
	}
	if utf8.RuneCountInString(title) > MaxScheduleTitleRunes {
		return nil, Invalid("title", fmt.Sprintf("title is longer than %d characters", MaxScheduleTitleRunes), "put details in body")
	}
	if len(req.Body) > MaxBodyBytes {
		return nil, Invalid("body", fmt.Sprintf("body is larger than %d bytes", MaxBodyBytes), "")
	}
	before, err := parseRemindBefore(req.RemindBeforeMinutes)
	if err != nil {
		return nil, err
	}
	kind := store.KindPerson
	if p.IsAgent() {
		kind = store.KindAgent
	}
	var row store.ScheduleRow
	err = s.Write(ctx, func(tx *Tx) error {
		ev, err := parseEventTimeField(req.EventTime, tx.Now, s.Config.ScheduleZone)
		if err != nil {
			return err
		}
		rcpt, err := s.resolveScheduleRecipients(ctx, tx.Q, p, req.Recipients)
		if err != nil {
			return err
		}
		n, err := tx.CountSchedulesOf(ctx, p.Name)
		if err != nil {
			return err
		}
		if n >= s.Config.ScheduleLimit {
			return Conflict("schedule_limit", fmt.Sprintf("you have %d schedules, the limit is %d", n, s.Config.ScheduleLimit),
				"delete schedules that were sent or are no longer needed (DELETE /api/v1/schedules/{id}), then create this one")
		}
		rj, _ := json.Marshal(rcpt)
		row = store.ScheduleRow{ScheduleID: store.NewID(), Owner: p.Name, OwnerKind: kind, Title: title, Body: req.Body,
			EventTime: ev, RemindBeforeMinutes: before, RemindAt: ev.Add(-time.Duration(before) * time.Minute),
			Recipients: string(rj), CreatedAt: tx.Now, UpdatedAt: tx.Now}
		return tx.InsertSchedule(ctx, row)
	})
	if err != nil {
		return nil, err
	}
	s.Log.Info("schedule created", "schedule_id", row.ScheduleID, "owner", p.Name, "remind_at", row.RemindAt)
	v := scheduleView(row)
	return &v, nil
}

// ListSchedules answers the principal's schedules by event time, with the
// count, the limit, and a hint to clean up at or above
// ScheduleHintPercent of the limit (seed 001).
func (s *Service) ListSchedules(ctx context.Context, p *Principal) (*client.ScheduleList, error) {
	rows, err := s.Read().SchedulesOf(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	out := &client.ScheduleList{Schedules: []client.Schedule{}, Count: len(rows), Limit: s.Config.ScheduleLimit}
	sent := 0
	for _, r := range rows {
		out.Schedules = append(out.Schedules, scheduleView(r))
		if r.SentAt != nil {
			sent++
		}
	}
	if out.Count*100 >= ScheduleHintPercent*out.Limit {
		out.Hint = fmt.Sprintf("%d of %d schedules used (%d already sent); delete the ones you no longer need "+
			"(DELETE /api/v1/schedules/{id}) before you reach the limit", out.Count, out.Limit, sent)
	}
	return out, nil
}

// ownSchedule loads a schedule of the principal; another's id is a 404.
func ownSchedule(ctx context.Context, q *store.Q, p *Principal, id string) (store.ScheduleRow, error) {
	row, err := q.GetSchedule(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.Owner != p.Name) {
		return row, scheduleNotFound()
	}
	return row, err
}

// UpdateSchedule changes only the fields sent (seed 001: "only pass the
// fields to change"); the same rules as CreateSchedule apply to each. When
// the reminder time moves into the future, a reminder already sent is armed
// again.
func (s *Service) UpdateSchedule(ctx context.Context, p *Principal, id string, req client.UpdateScheduleRequest) (*client.Schedule, error) {
	var row store.ScheduleRow
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		if row, err = ownSchedule(ctx, tx.Q, p, id); err != nil {
			return err
		}
		timeChanged := false
		if req.Title != nil {
			t := strings.TrimSpace(*req.Title)
			if t == "" {
				return Invalid("title", "title cannot be empty", "leave title out to keep it")
			}
			if utf8.RuneCountInString(t) > MaxScheduleTitleRunes {
				return Invalid("title", fmt.Sprintf("title is longer than %d characters", MaxScheduleTitleRunes), "")
			}
			row.Title = t
		}
		if req.Body != nil {
			if len(*req.Body) > MaxBodyBytes {
				return Invalid("body", fmt.Sprintf("body is larger than %d bytes", MaxBodyBytes), "")
			}
			row.Body = *req.Body
		}
		if req.EventTime != nil {
			ev, err := parseEventTimeField(*req.EventTime, tx.Now, s.Config.ScheduleZone)
			if err != nil {
				return err
			}
			row.EventTime, timeChanged = ev, true
		}
		if req.RemindBeforeMinutes != nil {
			n, err := parseRemindBefore(req.RemindBeforeMinutes)
			if err != nil {
				return err
			}
			row.RemindBeforeMinutes, timeChanged = n, true
		}
		if req.Recipients != nil {
			rcpt, err := s.resolveScheduleRecipients(ctx, tx.Q, p, *req.Recipients)
			if err != nil {
				return err
			}
			rj, _ := json.Marshal(rcpt)
			row.Recipients = string(rj)
		}
		row.RemindAt = row.EventTime.Add(-time.Duration(row.RemindBeforeMinutes) * time.Minute)
		row.UpdatedAt = tx.Now
		rearm := timeChanged && row.SentAt != nil && row.RemindAt.After(tx.Now)
		if rearm {
			row.SentAt, row.MailID = nil, ""
		}
		return tx.UpdateSchedule(ctx, row, rearm)
	})
	if err != nil {
		return nil, err
	}
	v := scheduleView(row)
	return &v, nil
}

// DeleteSchedule removes a schedule of the principal; another's id is a 404.
func (s *Service) DeleteSchedule(ctx context.Context, p *Principal, id string) error {
	return s.Write(ctx, func(tx *Tx) error {
		if _, err := ownSchedule(ctx, tx.Q, p, id); err != nil {
			return err
		}
		_, err := tx.DeleteSchedule(ctx, id)
		return err
	})
}

// errReminderTaken aborts a reminder transaction whose schedule another
// gateway (or an earlier run) claimed first.
var errReminderTaken = errors.New("reminder already sent")

// SendDueReminders sends every reminder whose time (event_time minus
// remind_before_minutes) has come by the service clock. Each reminder is
// claimed with a conditional UPDATE ... WHERE sent_at IS NULL in the same
// transaction as its mail, so it goes out exactly once even across restarts
// and with several gateways on one database. A reminder whose recipients
// cannot be reached any more (a name or alias gone) goes to its owner
// alone. It answers how many reminder mails it sent.
func (s *Service) SendDueReminders(ctx context.Context) (int, error) {
	rows, err := s.Read().DueSchedules(ctx, s.Now(), 100)
	if err != nil {
		return 0, err
	}
	return s.sendReminders(ctx, rows)
}

// sendReminders sends the reminders of rows, read as due a moment ago; a
// row another sweep claimed meanwhile is skipped.
func (s *Service) sendReminders(ctx context.Context, rows []store.ScheduleRow) (int, error) {
	sent := 0
	for _, row := range rows {
		var mailID string
		err := s.Write(ctx, func(tx *Tx) error {
			var err error
			mailID, err = s.sendReminderTx(ctx, tx, row, false)
			return err
		})
		if err != nil && !errors.Is(err, errReminderTaken) && AsError(err) != nil {
			s.Log.Warn("reminder recipients unreachable; sending to the owner", "schedule_id", row.ScheduleID, "err", err)
			err = s.Write(ctx, func(tx *Tx) error {
				var err error
				mailID, err = s.sendReminderTx(ctx, tx, row, true)
				return err
			})
		}
		switch {
		case errors.Is(err, errReminderTaken):
			continue
		case err != nil:
			return sent, err
		}
		sent++
		s.Log.Info("reminder sent", "schedule_id", row.ScheduleID, "mail_id", mailID, "owner", row.Owner)
	}
	return sent, nil
}

// reminderSession answers the existing session a reminder from owner to
// addrs goes into: the one its first alias address names (a person's, as
// carol@.alias, or an agent's), else the default session of its first agent
// address without a session part that has one; found is false when the
// reminder opens a new session. An alias the owner may no longer use is
// 404 alias_not_found.
func reminderSession(ctx context.Context, q *store.Q, owner string, addrs []address.Address, recips []Party) (store.SessionRow, bool, error) {
	for _, a := range addrs {
		if a.Session != address.SessionAlias {
			continue
		}
		sess, err := aliasSessionFor(ctx, q, a, owner)
		if errors.Is(err, store.ErrNotFound) {
			return sess, false, aliasNotFoundIn(a, "recipients")
		}
		return sess, err == nil, err
	}
	for i, a := range addrs {
		if recips[i].Kind != store.KindAgent || a.Session != address.SessionDefault {
			continue
		}
		sess, err := q.DefaultSession(ctx, a.Name, a.Path, owner)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		return sess, err == nil, err
	}
	return store.SessionRow{}, false, nil
}

// sendReminderTx claims the schedule and stores its reminder mail.
func (s *Service) sendReminderTx(ctx context.Context, tx *Tx, row store.ScheduleRow, ownerOnly bool) (string, error) {
	ok, err := tx.ClaimSchedule(ctx, row.ScheduleID, "", tx.Now)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errReminderTaken
	}
	var list []string
	_ = json.Unmarshal([]byte(row.Recipients), &list)
	if len(list) == 0 || ownerOnly {
		list = []string{row.Owner}
		if ownerOnly && row.OwnerKind == store.KindAgent {
			if ws, err := tx.LatestWorkspace(ctx, row.Owner); err == nil && ws != "" {
				list = []string{address.Format(row.Owner, ws, "")}
			}
		}
	}
	var recips []Party
	var addrs []address.Address
	for _, r := range list {
		a, err := address.Parse(r)
		if err != nil {
			return "", Invalid("recipients", err.Error(), "")
		}
		kind, err := tx.NameKind(ctx, a.Name)
		if errors.Is(err, store.ErrNotFound) {
			return "", NotFound("recipient_not_found", fmt.Sprintf("no person or agent named %q", a.Name), "")
		}
		if err != nil {
			return "", err
		}
		if kind == store.KindPerson {
			a.Path = ""
		}
		recips = append(recips, Party{Name: a.Name, Kind: kind, Workspace: a.Path, Role: "to"})
		addrs = append(addrs, a)
	}
	w, _, err := wordsFor(ctx, tx.Q, partyNames(recips)) // persontext.go: the people's language
	if err != nil {
		return "", err
	}
	// The subject in the readers' language too (issue 18 point 2):
	// "Reminder: <title>", or "提醒：<title>" for people who all read Chinese.
	subject := fmt.Sprintf(w.reminder, row.Title)
	// The session: an alias address (a person's or an agent's) names it; an
	// agent's address without a session part continues its default session
	// with the owner; otherwise the reminder opens a new one.
	sess, found, err := reminderSession(ctx, tx.Q, row.Owner, addrs, recips)
	if err != nil {
		return "", err
	}
	if !found {
		spec := SessionSpec{Subject: subject, CreatedBy: SystemSender, CreatedByKind: store.KindSystem}
		for _, r := range recips {
			if r.Kind == store.KindAgent {
				spec.AgentName, spec.Workspace = r.Name, r.Workspace
				if a, err := tx.GetAgent(ctx, r.Name); err == nil {
					spec.BudgetMax = a.DefaultRounds
				}
				break
			}
		}
		if sess, err = s.CreateSessionTx(ctx, tx, spec); err != nil {
			return "", err
		}
	}
	from := Party{Name: row.Owner, Kind: row.OwnerKind}
	if pt, err := tx.Participant(ctx, sess.SessionID, row.Owner); err == nil {
		from.Workspace = pt.Workspace
	} else if !errors.Is(err, store.ErrNotFound) {
		return "", err
	} else {
		for _, r := range recips {
			if r.Name == row.Owner {
				from.Workspace = r.Workspace
			}
		}
	}
	body := fmt.Sprintf(w.reminder+"\n\n"+w.when, row.Title, row.EventTime.In(s.Config.ScheduleZone).Format(time.RFC3339))
	if row.RemindBeforeMinutes > 0 {
		body += fmt.Sprintf(w.inMinutes, row.RemindBeforeMinutes)
	}
	if strings.TrimSpace(row.Body) != "" {
		body += "\n\n" + row.Body
	}
	body += "\n"
	created, err := s.CreateMailTx(ctx, tx, NewMail{Session: sess, From: from, Subject: subject, Body: body,
		MailType: client.MailTypeReminder, Recipients: recips})
	if err != nil {
		return "", err
	}
	if err := tx.SetScheduleMail(ctx, row.ScheduleID, created.Mail.MailID); err != nil {
		return "", err
	}
	return created.Mail.MailID, nil
}
