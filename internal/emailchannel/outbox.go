package emailchannel

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/store"
)

type storeQ = store.Q

// Outbox kinds.
const (
	kindMail   = "mail"   // a notification of a mail
	kindVerify = "verify" // a verification code
	kindNotice = "notice" // the gateway's answer to a reply it could not use
)

// fillBatch is how many events one round of the filler takes.
const fillBatch = 200

// maxEventAge: events older than this when the filler reaches them (a
// gateway that ran without email for a while) are not mailed.
const maxEventAge = 24 * time.Hour

// errCursorMoved aborts a fill whose cursor another gateway advanced
// meanwhile; that gateway queued the same entries.
var errCursorMoved = errors.New("email: outbox cursor moved")

// replyTokenBytes is the size of a reply token: 160 random bits.
const replyTokenBytes = 20

var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newReplyToken answers a fresh reply token: 160 random bits as lower-case
// base32 (32 characters), which survives mail systems that change the case
// of local parts.
func newReplyToken() string {
	b := make([]byte, replyTokenBytes)
	_, _ = rand.Read(b)
	return strings.ToLower(tokenEncoding.EncodeToString(b))
}

// covers reports whether the preference asks for an email of this mail type.
func covers(notify, mailType string) bool {
	switch notify {
	case NotifyAll:
		return true
	case NotifyPermission, "":
		return mailType == client.MailTypePermissionRequest || mailType == client.MailTypeFailureReport
	default:
		return false
	}
}

// fillLoop follows the event log into the outbox until ctx ends, woken by
// Notify and otherwise every PollInterval.
func (c *Channel) fillLoop(ctx context.Context) {
	t := time.NewTicker(c.cfg.PollInterval)
	defer t.Stop()
	for {
		for {
			n, err := c.fillOnce(ctx)
			if err != nil && !errors.Is(err, errCursorMoved) && ctx.Err() == nil {
				c.log.Warn("email outbox: follow the event log", "err", err)
				break
			}
			if n < fillBatch && err == nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-t.C:
		}
	}
}

// queued is one outbox entry with its reply token, built outside the
// write transaction.
type queued struct {
	row   store.OutboxRow
	token *store.ReplyTokenRow
}

// fillOnce turns the new_mail events after the cursor into outbox entries
// and advances the cursor, in one transaction: every event is handled
// once, and an entry exists once per mail and person (its dedupe key), so
// replicas racing on the same events queue nothing twice. It answers how
// many events it read.
func (c *Channel) fillOnce(ctx context.Context) (int, error) {
	q := c.svc.Store.Read()
	cursor, err := q.EmailCursor(ctx)
	if err != nil {
		return 0, err
	}
	upTo, err := q.MaxEventID(ctx)
	if err != nil || upTo <= cursor {
		return 0, err
	}
	evs, err := q.MailEventsForEmail(ctx, cursor, upTo, fillBatch)
	if err != nil {
		return 0, err
	}
	next := upTo
	if len(evs) == fillBatch {
		next = evs[len(evs)-1].ID
	}
	now := c.svc.Now()
	var items []queued
	for _, ev := range evs {
		it, ok, err := c.notification(ctx, ev, now)
		if err != nil {
			c.log.Warn("email outbox: skipped a notification", "event_id", ev.ID, "recipient", ev.Recipient, "err", err)
			continue
		}
		if ok {
			items = append(items, it)
		}
	}
	err = c.svc.Store.Write(ctx, func(tx *store.Q) error {
		ok, err := tx.AdvanceEmailCursor(ctx, cursor, next)
		if err != nil {
			return err
		}
		if !ok {
			return errCursorMoved
		}
		for _, it := range items {
			if err := insertQueued(ctx, tx, it); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(items) > 0 {
		c.wakeSender()
	}
	return len(evs), nil
}

// insertQueued stores an entry and, when it is new, its reply token.
func insertQueued(ctx context.Context, tx *store.Q, it queued) error {
	inserted, err := tx.InsertOutbox(ctx, it.row)
	if err != nil || !inserted || it.token == nil {
		return err
	}
	return tx.InsertReplyToken(ctx, *it.token)
}

// notification builds the outbox entry for one new_mail event, or ok false
// when the person gets no email for it (their own mail, a preference that
// does not cover it, no verified address, an old event).
func (c *Channel) notification(ctx context.Context, ev store.EventRow, now time.Time) (queued, bool, error) {
	var ne client.NewMailEvent
	if err := json.Unmarshal(ev.Data, &ne); err != nil {
		return queued{}, false, err
	}
	if ne.Role == "from" || ne.FromName == ev.Recipient || now.Sub(ev.CreatedAt) > maxEventAge {
		return queued{}, false, nil
	}
	q := c.svc.Store.Read()
	acct, err := q.EmailAccount(ctx, ev.Recipient)
	if errors.Is(err, store.ErrNotFound) {
		return queued{}, false, nil
	}
	if err != nil {
		return queued{}, false, err
	}
	if acct.Address == "" || !covers(acct.Notify, ne.MailType) {
		return queued{}, false, nil
	}
	person := &gateway.Principal{Kind: gateway.PrincipalPerson, Name: ev.Recipient, AuthKind: AuthEmail}
	m, err := c.svc.GetMail(ctx, person, ne.MailID)
	if err != nil {
		return queued{}, false, err
	}
	// The mail as the person sees it now: a reply that decided a request
	// since is a decision, not an ordinary mail, and the preference is
	// asked again with the stored type.
	if !covers(acct.Notify, m.MailType) {
		return queued{}, false, nil
	}
	if m.Permission != nil && m.Permission.Status != gateway.PermissionStatusPending {
		return queued{}, false, nil // decided (on the page, or by its expiry) before it could be mailed
	}
	inReplyTo, refs, err := c.threading(ctx, q, m)
	if err != nil {
		return queued{}, false, err
	}
	token := newReplyToken()
	replyTo := "r+" + token + "@" + c.cfg.Domain
	e := c.mailEmail(m, personLanguage(ctx, q, ev.Recipient), acct.Address, replyTo, inReplyTo, refs)
	raw, err := c.encode(e)
	if err != nil {
		return queued{}, false, err
	}
	row := store.OutboxRow{OutboxID: store.NewID(), DedupeKey: "mail:" + m.MailID + ":" + ev.Recipient, Kind: kindMail,
		Username: ev.Recipient, MailID: m.MailID, Address: acct.Address, MessageID: e.messageID, Message: string(raw),
		State: store.OutboxPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
	return queued{row: row, token: &store.ReplyTokenRow{TokenHash: gateway.HashToken(token), Username: ev.Recipient,
		MailID: m.MailID, CreatedAt: now}}, true, nil
}

// maxReferences bounds the References header.
const maxReferences = 20

// threading answers In-Reply-To and References of a mail's email: the
// Message-IDs of its parent and ancestors, oldest first. A mail that came in
// as an emailed reply is named by the Message-ID its sender's client gave
// it (and by the gateway's id for it), so that client threads the answer.
func (c *Channel) threading(ctx context.Context, q *store.Q, m *client.Mail) (string, []string, error) {
	var chain []string // parent first
	for id := m.ParentMailID; id != "" && len(chain) < maxReferences; {
		chain = append(chain, id)
		p, err := q.GetMail(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return "", nil, err
		}
		id = p.ParentMailID
	}
	if len(chain) == 0 {
		return "", nil, nil
	}
	inbound, err := q.InboundMessageIDs(ctx, chain)
	if err != nil {
		return "", nil, err
	}
	var refs []string
	for i := len(chain) - 1; i >= 0; i-- {
		refs = append(refs, c.msgID(chain[i]))
		if mid := inbound[chain[i]]; mid != "" {
			refs = append(refs, mid)
		}
	}
	inReplyTo := c.msgID(chain[0])
	if mid := inbound[chain[0]]; mid != "" {
		inReplyTo = mid
	}
	return inReplyTo, refs, nil
}

// enqueue stores an email of the gateway's own (a code, a notice) in the
// outbox, in the caller's transaction.
func (c *Channel) enqueue(ctx context.Context, tx *store.Q, kind, dedupe, username, mailID string, e email, now time.Time) error {
	raw, err := c.encode(e)
	if err != nil {
		return err
	}
	_, err = tx.InsertOutbox(ctx, store.OutboxRow{OutboxID: store.NewID(), DedupeKey: dedupe, Kind: kind, Username: username,
		MailID: mailID, Address: e.to, MessageID: e.messageID, Message: string(raw), State: store.OutboxPending,
		NextAttemptAt: now, CreatedAt: now, UpdatedAt: now})
	return err
}
