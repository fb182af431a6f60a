package emailchannel

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/store"
)

// A person's address (issue 20 item 2). PATCH /me {"email"} mails a
// 6-digit code (valid CodeTTL, MaxCodeTries tries) and a link to the new
// address; the address takes effect when POST /me/email/verify confirms
// it; until then a verified address in force stays. A verified address is
// unique across people (a unique index). Codes are bounded per person:
// one per CodeSpacing, CodesPerDay a day.
const (
	CodeTTL      = 30 * time.Minute
	MaxCodeTries = 5
	CodeSpacing  = time.Minute
	CodesPerDay  = 10
	maxAddrBytes = 254
)

// Fill sets the email fields of a person's Me.
func (c *Channel) Fill(ctx context.Context, username string, me *client.Me) error {
	me.EmailAvailable = true
	return fillMe(ctx, c.svc.Store.Read(), username, me)
}

// FillUnavailable sets the email fields of Me on a gateway that sends no
// email: the stored preference, nothing else.
func FillUnavailable(ctx context.Context, q *store.Q, username string, me *client.Me) error {
	if err := fillMe(ctx, q, username, me); err != nil {
		return err
	}
	me.EmailAvailable, me.EmailPending, me.EmailPendingExpiresAt, me.EmailDelivery = false, "", nil, nil
	return nil
}

func fillMe(ctx context.Context, q *store.Q, username string, me *client.Me) error {
	me.EmailNotify = NotifyPermission
	a, err := q.EmailAccount(ctx, username)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	me.Email, me.EmailVerifiedAt, me.EmailNotify = a.Address, a.VerifiedAt, a.Notify
	if a.PendingAddress != "" {
		me.EmailPending, me.EmailPendingExpiresAt = a.PendingAddress, a.CodeExpiresAt
	}
	o, err := q.LastOutbox(ctx, username)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	d := &client.EmailDelivery{State: o.State, Kind: o.Kind, Address: o.Address, MailID: o.MailID, Attempts: o.Attempts,
		Error: o.LastError, At: o.UpdatedAt}
	if o.State == store.OutboxSent && o.SentAt != nil {
		d.At = *o.SentAt
	}
	if o.State == store.OutboxPending && o.LastError != "" {
		d.State = "retrying"
		next := o.NextAttemptAt
		d.NextAttemptAt = &next
	}
	me.EmailDelivery = d
	return nil
}

// Unavailable is the answer to an email setting on a gateway without a
// relay.
func Unavailable() error {
	return &gateway.Error{Kind: gateway.KindUnavailable, Code: "email_unavailable", Field: "email",
		Message:    "this gateway sends no email",
		Suggestion: "ask the admin to set AGENTMAIL_SMTP_RELAY and AGENTMAIL_MAIL_FROM (docs/OPERATIONS.md)"}
}

// Update applies PATCH /me: the preference, and a new address (a code is
// queued to it) or "" (the address and any pending one are removed).
// Errors: 400 email / email_notify; 409 email_taken when another person
// verified the address; 429 email_code_throttled while codes are spaced.
func (c *Channel) Update(ctx context.Context, p *gateway.Principal, req client.UpdateMeRequest) error {
	if req.EmailNotify != nil {
		switch *req.EmailNotify {
		case NotifyAll, NotifyPermission, NotifyNone:
		default:
			return gateway.Invalid("email_notify", fmt.Sprintf("email_notify %q is not all, permission or none", *req.EmailNotify),
				`"permission" mails permission requests and failure reports, "all" every mail, "none" nothing`)
		}
	}
	var addr string
	if req.Email != nil {
		var err error
		if addr, err = c.checkAddress(*req.Email); err != nil {
			return err
		}
	}
	defer c.wakeSender()
	return c.svc.Write(ctx, func(tx *gateway.Tx) error {
		now := tx.Now
		a, err := tx.EmailAccount(ctx, p.Name)
		if errors.Is(err, store.ErrNotFound) {
			a, err = store.EmailAccountRow{Username: p.Name, Notify: NotifyPermission}, nil
		}
		if err != nil {
			return err
		}
		if req.EmailNotify != nil {
			a.Notify = *req.EmailNotify
		}
		if req.Email != nil {
			switch {
			case addr == "":
				a.Address, a.VerifiedAt = "", nil
				clearPending(&a)
			case strings.EqualFold(addr, a.Address):
				clearPending(&a) // the address in force: nothing to confirm
			default:
				if err := c.startVerification(ctx, tx, &a, addr, now); err != nil {
					return err
				}
			}
		}
		a.UpdatedAt = now
		return putAccount(ctx, tx.Q, a)
	})
}

func clearPending(a *store.EmailAccountRow) {
	a.PendingAddress, a.CodeHash, a.LinkHash, a.CodeExpiresAt, a.CodeTries = "", "", "", nil, 0
}

func putAccount(ctx context.Context, q *store.Q, a store.EmailAccountRow) error {
	err := q.PutEmailAccount(ctx, a, strings.ToLower(a.Address))
	if q.IsUniqueViolation(err) {
		return emailTaken()
	}
	return err
}

func emailTaken() error {
	return gateway.Conflict("email_taken", "another person on this gateway uses this address",
		"give an address of your own; each address belongs to one person")
}

// checkAddress answers the address to store: one bare address, not at the
// gateway's own reply domain.
func (c *Channel) checkAddress(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", nil
	}
	bad := func(why string) error {
		return gateway.Invalid("email", why, "write one address such as bob@example.com")
	}
	if len(raw) > maxAddrBytes || !utf8.ValidString(raw) || strings.ContainsAny(raw, "<>\r\n\t ,;") {
		return "", bad(fmt.Sprintf("%q is not one mail address", raw))
	}
	a, err := mail.ParseAddress(raw)
	if err != nil || a.Name != "" || a.Address != raw || !strings.Contains(raw, "@") {
		return "", bad(fmt.Sprintf("%q is not a mail address", raw))
	}
	domain := strings.ToLower(raw[strings.LastIndexByte(raw, '@')+1:])
	if domain == c.cfg.Domain || strings.EqualFold(raw, c.cfg.from.Address) {
		return "", bad(fmt.Sprintf("%s is the gateway's own mail domain", domain))
	}
	return raw, nil
}

// startVerification sets addr pending and queues its code, within the
// person's code limits.
func (c *Channel) startVerification(ctx context.Context, tx *gateway.Tx, a *store.EmailAccountRow, addr string, now time.Time) error {
	if owner, err := tx.EmailAddressOwner(ctx, strings.ToLower(addr)); err == nil && owner != a.Username {
		return emailTaken()
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if a.CodeSentAt != nil && now.Sub(*a.CodeSentAt) < CodeSpacing {
		wait := CodeSpacing - now.Sub(*a.CodeSentAt)
		return &gateway.Error{Kind: gateway.KindRateLimited, Code: "email_code_throttled", Field: "email", RetryAfter: wait,
			Message:    fmt.Sprintf("a code was sent less than a minute ago; wait %d seconds", int(wait.Seconds()+0.999)),
			Suggestion: "look for the code in your mailbox, or ask again in a minute"}
	}
	if now.Sub(a.CodesWindow) >= 24*time.Hour {
		a.CodesWindow, a.CodesSent = now, 0
	}
	if a.CodesSent >= CodesPerDay {
		wait := a.CodesWindow.Add(24 * time.Hour).Sub(now)
		return &gateway.Error{Kind: gateway.KindRateLimited, Code: "email_code_throttled", Field: "email", RetryAfter: wait,
			Message:    fmt.Sprintf("%d codes were sent today, the most a day", CodesPerDay),
			Suggestion: "use one of the codes already sent, or ask again tomorrow"}
	}
	code := sixDigits()
	link := newReplyToken()
	exp := now.Add(CodeTTL)
	sent := now
	a.PendingAddress, a.CodeHash, a.LinkHash, a.CodeExpiresAt, a.CodeTries = addr, codeHash(a.Username, code), gateway.HashToken(link), &exp, 0
	a.CodeSentAt, a.CodesSent = &sent, a.CodesSent+1
	verifyURL := c.accountURL() + "?verify_email=" + url.QueryEscape(link)
	// The code's words in the person's language (issue 18 point 2); the
	// subject keeps its English form in both, with the code, for mail filters.
	lang := personLanguage(ctx, tx.Q, a.Username)
	words := []string{
		fmt.Sprintf("Hello %s,", a.Username),
		fmt.Sprintf("your code is %s. Enter it on your Account page within 30 minutes, or open this link while signed in:\n%s", code, verifyURL),
		"If you did not ask for this, ignore this email: nothing is sent to this address until the code is entered.",
	}
	if lang == gateway.LangChinese {
		words = []string{
			fmt.Sprintf("%s，你好：", a.Username),
			fmt.Sprintf("你的验证码是 %s，请在 30 分钟内在“账户”页输入，或在登录状态下打开这个链接：\n%s", code, verifyURL),
			"如果这不是你请求的，请忽略这封邮件：在输入验证码之前，不会向这个地址发送任何邮件。",
		}
	}
	e := c.plainEmail(addr, "Your AgentMail code: "+code, "verify-"+store.NewID()+"@"+c.cfg.Domain, words, now)
	e.unsubscribe = ""
	return c.enqueue(ctx, tx.Q, kindVerify, fmt.Sprintf("verify:%s:%d", a.Username, store.Millis(now)), a.Username, "", e, now)
}

// codeHash binds a code to the person (a code is worth nothing for
// another account).
func codeHash(username, code string) string { return gateway.HashToken(username + ":" + code) }

func sixDigits() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1000000))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%06d", n.Int64())
}

// Verify applies POST /me/email/verify: the code (or the link's token) of
// the pending address makes it the address in force. Errors: 409
// no_email_pending, email_code_expired, email_code_exhausted (after
// MaxCodeTries wrong tries: ask for a new code), email_taken; 400
// wrong_code (field code or token) naming the tries left.
func (c *Channel) Verify(ctx context.Context, p *gateway.Principal, req client.VerifyEmailRequest) error {
	code, token := strings.TrimSpace(req.Code), strings.TrimSpace(req.Token)
	if (code == "") == (token == "") {
		return gateway.Invalid("code", "send the code from the email, or the token of its link", `{"code": "123456"}`)
	}
	var wrong error
	err := c.svc.Write(ctx, func(tx *gateway.Tx) error {
		a, err := tx.EmailAccount(ctx, p.Name)
		if errors.Is(err, store.ErrNotFound) || (err == nil && a.PendingAddress == "") {
			return gateway.Conflict("no_email_pending", "no address is waiting for a code", `set one with PATCH /api/v1/me {"email": "..."}`)
		}
		if err != nil {
			return err
		}
		if a.CodeExpiresAt == nil || !tx.Now.Before(*a.CodeExpiresAt) {
			return gateway.Conflict("email_code_expired", "the code has expired (codes last 30 minutes)", "ask for a new code: set the address again")
		}
		if a.CodeTries >= MaxCodeTries {
			return gateway.Conflict("email_code_exhausted", "too many wrong codes", "ask for a new code: set the address again")
		}
		field, want, got := "code", a.CodeHash, codeHash(p.Name, code)
		if token != "" {
			field, want, got = "token", a.LinkHash, gateway.HashToken(token)
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
			a.CodeTries++
			left := MaxCodeTries - a.CodeTries
			wrong = gateway.InvalidCode("wrong_code", field, fmt.Sprintf("that code is not right; %d tries left", left),
				"type the 6 digits from the latest email")
			if left == 0 {
				clearPending(&a)
				wrong = gateway.Conflict("email_code_exhausted", "too many wrong codes", "ask for a new code: set the address again")
			}
			a.UpdatedAt = tx.Now
			return putAccount(ctx, tx.Q, a) // the try counts: committed
		}
		if owner, err := tx.EmailAddressOwner(ctx, strings.ToLower(a.PendingAddress)); err == nil && owner != p.Name {
			return emailTaken()
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		at := tx.Now
		a.Address, a.VerifiedAt = a.PendingAddress, &at
		clearPending(&a)
		a.UpdatedAt = tx.Now
		c.log.Info("email address verified", "person", p.Name)
		return putAccount(ctx, tx.Q, a)
	})
	if err != nil {
		return err
	}
	return wrong
}
