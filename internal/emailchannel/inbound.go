package emailchannel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-msgauth/dkim"
	"github.com/emersion/go-smtp"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/store"
)

// The inbound SMTP side. Every refusal happens inside the SMTP transaction
// (the sending server bounces it with the reason, so the person reads why)
// and is logged with the reason; a refused message stores nothing.
//
//   - RCPT: only r+<token>@MAIL_DOMAIN, with a token the gateway issued;
//     the token names the person and the mail they were notified of.
//   - DATA: the From header must be that person's verified address; a DKIM
//     signature, when present (always, with RequireDKIM), must verify for
//     the From domain; automatic replies and bounces are refused; the
//     person's hourly and daily limits hold.
//   - The reply is then sent as the person with reply_to the notified mail
//     through gateway.Service.Send, exactly like a reply on the web page:
//     the same membership rules, and a reply to a permission request
//     decides it with the same decision words.

type backend struct{ c *Channel }

func (b *backend) NewSession(conn *smtp.Conn) (smtp.Session, error) {
	remote := ""
	if conn != nil && conn.Conn() != nil {
		remote = conn.Conn().RemoteAddr().String()
	}
	return &session{c: b.c, remote: remote}, nil
}

// session is one inbound SMTP transaction.
type session struct {
	c      *Channel
	remote string
	from   string
	tok    *store.ReplyTokenRow
	rcpt   string
}

func smtpErr(code int, enh smtp.EnhancedCode, msg string) *smtp.SMTPError {
	return &smtp.SMTPError{Code: code, EnhancedCode: enh, Message: msg}
}

// refuse logs a refusal with its reason and answers it.
func (s *session) refuse(e *smtp.SMTPError, reason string, args ...any) *smtp.SMTPError {
	s.c.log.Warn("inbound email refused", append([]any{"code", e.Code, "reason", reason, "answer", e.Message,
		"remote", s.remote, "mail_from", s.from, "rcpt", s.rcpt}, args...)...)
	return e
}

func (s *session) Reset()        { s.from, s.tok, s.rcpt = "", nil, "" }
func (s *session) Logout() error { return nil }

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	if strings.TrimSpace(from) == "" {
		return s.refuse(smtpErr(550, smtp.EnhancedCode{5, 7, 1},
			"AgentMail takes replies written by people only, not bounces or automatic replies"), "null reverse path")
	}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.rcpt = to
	if s.tok != nil {
		return s.refuse(smtpErr(452, smtp.EnhancedCode{4, 5, 3},
			"one reply address per message: send a separate reply for each notification"), "second recipient")
	}
	local, domain, ok := strings.Cut(strings.ToLower(strings.TrimSpace(to)), "@")
	token, isReply := strings.CutPrefix(local, "r+")
	if !ok || domain != s.c.cfg.Domain || !isReply || len(token) != 32 {
		return s.refuse(smtpErr(550, smtp.EnhancedCode{5, 1, 1},
			"no such address here: AgentMail takes only replies to the notifications it sent"), "not a reply address")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q := s.c.svc.Store.Read()
	tok, err := q.ReplyToken(ctx, gateway.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return s.refuse(smtpErr(550, smtp.EnhancedCode{5, 1, 1},
			"this reply address is unknown: reply to a notification AgentMail sent you, from the address it was sent to"), "unknown reply token")
	}
	if err != nil {
		s.c.log.Error("inbound email: read the reply token", "err", err)
		return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "AgentMail cannot take the reply right now; try again later")
	}
	s.tok = &tok
	if e := s.c.checkRate(ctx, tok.Username, 0); e != nil {
		return s.refuse(e, "rate limit", "person", tok.Username)
	}
	return nil
}

// checkRate answers the refusal when the person's replies of the last
// hour or bytes of the last day (with size more) pass the limits.
func (c *Channel) checkRate(ctx context.Context, username string, size int64) *smtp.SMTPError {
	now := c.svc.Now()
	q := c.svc.Store.Read()
	n, _, err := q.InboundSince(ctx, username, now.Add(-time.Hour))
	if err != nil {
		return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "AgentMail cannot take the reply right now; try again later")
	}
	if n >= c.cfg.RepliesPerHour {
		return smtpErr(451, smtp.EnhancedCode{4, 7, 1},
			fmt.Sprintf("you sent %d replies in the last hour, the most AgentMail takes; this one will be retried later", n))
	}
	_, bytes, err := q.InboundSince(ctx, username, now.Add(-24*time.Hour))
	if err != nil {
		return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "AgentMail cannot take the reply right now; try again later")
	}
	if bytes+size > c.cfg.BytesPerDay {
		return smtpErr(452, smtp.EnhancedCode{4, 3, 1},
			fmt.Sprintf("your replies of the last day passed %d MB, the most AgentMail takes per day; send large files on the web page", c.cfg.BytesPerDay>>20))
	}
	return nil
}

func (s *session) Data(r io.Reader) error {
	if s.tok == nil {
		return smtpErr(503, smtp.EnhancedCode{5, 5, 1}, "RCPT first")
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		if errors.Is(err, smtp.ErrDataTooLarge) {
			return s.refuse(smtp.ErrDataTooLarge, "message too large", "person", s.tok.Username)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, reason := s.c.takeReply(ctx, *s.tok, raw)
	if e != nil {
		return s.refuse(e, reason, "person", s.tok.Username, "mail_id", s.tok.MailID, "size", len(raw))
	}
	return nil
}

// Automatic messages that must never become a reply (RFC 3834 and the
// headers of common auto-responders).
func autoReply(h mail.Header) string {
	if v := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted"))); v != "" && v != "no" {
		return "Auto-Submitted: " + v
	}
	for _, k := range []string{"X-Autoreply", "X-Autorespond", "X-Auto-Response-Suppress-Reply"} {
		if h.Get(k) != "" {
			return k
		}
	}
	switch strings.ToLower(strings.TrimSpace(h.Get("Precedence"))) {
	case "bulk", "junk", "list", "auto_reply":
		return "Precedence: " + h.Get("Precedence")
	}
	return ""
}

// takeReply checks a reply and stores it as the person's mail; it answers
// the SMTP refusal (nil: accepted) and, for a refusal, the reason to log.
func (c *Channel) takeReply(ctx context.Context, tok store.ReplyTokenRow, raw []byte) (*smtp.SMTPError, string) {
	internal := func(what string, err error) (*smtp.SMTPError, string) {
		c.log.Error("inbound email: "+what, "err", err, "person", tok.Username, "mail_id", tok.MailID)
		return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "AgentMail cannot take the reply right now; try again later"), what
	}
	mr, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil && mr == nil {
		return smtpErr(550, smtp.EnhancedCode{5, 6, 0}, "the message cannot be read as an email"), "unreadable: " + err.Error()
	}
	h := mr.Header
	if why := autoReply(h); why != "" {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 1}, "AgentMail takes replies written by people only, not automatic replies"), "automatic reply: " + why
	}
	q := c.svc.Store.Read()
	acct, err := q.EmailAccount(ctx, tok.Username)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return internal("read the person's address", err)
	}
	froms, ferr := h.AddressList("From")
	if ferr != nil || len(froms) != 1 {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 1}, "the reply needs one From address"), "From header missing or not one address"
	}
	from := froms[0].Address
	if acct.Address == "" || !strings.EqualFold(from, acct.Address) {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 1},
				"this reply comes from another address than the one AgentMail has for the person it wrote to; reply from that address"),
			fmt.Sprintf("From %s is not the person's verified address", from)
	}
	if e, why := c.checkDKIM(raw, h, from); e != nil {
		return e, why
	}
	msgID, _ := h.MessageID()
	if msgID != "" {
		if _, err := q.InboundMessage(ctx, tok.Username, msgID); err == nil {
			c.log.Info("inbound email: the same reply again, already stored", "person", tok.Username, "message_id", msgID)
			return nil, ""
		}
	}
	if e := c.checkRate(ctx, tok.Username, int64(len(raw))); e != nil {
		return e, "rate limit"
	}
	user, err := q.GetUser(ctx, tok.Username)
	if errors.Is(err, store.ErrNotFound) || (err == nil && user.Disabled) {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 1}, "this AgentMail account is disabled; ask an admin to enable it"), "account disabled or gone"
	}
	if err != nil {
		return internal("read the person", err)
	}
	person := &gateway.Principal{Kind: gateway.PrincipalPerson, Name: user.Username, Role: user.Role, AuthKind: AuthEmail}
	rep, err := extractReply(raw, c.maxAttachmentBytes)
	switch {
	case errors.Is(err, errFileTooLarge), errors.Is(err, errTooManyFiles):
		return smtpErr(552, smtp.EnhancedCode{5, 3, 4}, err.Error()+"; send large files on the web page"), err.Error()
	case err != nil:
		return smtpErr(550, smtp.EnhancedCode{5, 6, 0}, err.Error()), "unreadable MIME"
	}
	if rep.text == "" && len(rep.attachments) == 0 {
		return smtpErr(550, smtp.EnhancedCode{5, 6, 0}, "the reply has no text of its own above the quoted message; write your answer at the top"),
			"no new text"
	}
	parent, err := c.svc.GetMail(ctx, person, tok.MailID)
	if err != nil {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 1}, "the mail this reply answers is no longer in your mailbox"), "notified mail not visible: " + err.Error()
	}
	if parent.FromKind == "system" {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 1}, "this notification cannot be answered; write on the web page instead"), "reply to a system mail"
	}
	var decidedBefore *client.Permission
	if parent.MailType == client.MailTypePermissionRequest {
		if p, err := c.svc.GetPermission(ctx, person, parent.MailID); err == nil && p.Status != gateway.PermissionStatusPending {
			decidedBefore = p
		}
	}
	var ids []string
	for _, f := range rep.attachments {
		id, e := c.storeAttachment(ctx, person, f)
		if e != nil {
			return e, "attachment refused: " + e.Message
		}
		ids = append(ids, id)
	}
	to := parent.FromAddress
	if to == "" {
		to = parent.FromName
	}
	resp, err := c.svc.Send(ctx, person, client.SendMailRequest{To: to, Body: rep.text, ReplyTo: parent.MailID, AttachmentIDs: ids})
	if ge := gateway.AsError(err); ge != nil && (ge.Code == "already_decided" || ge.Code == "permission_expired") {
		// Accepted, not stored: the request was decided (or expired) with
		// another verdict. The person is told by email what stands.
		p, perr := c.svc.GetPermission(ctx, person, parent.MailID)
		if perr != nil {
			return internal("read the decided request", perr)
		}
		if err := c.queueNotice(ctx, tok, acct.Address, parent, p, false); err != nil {
			return internal("queue the notice", err)
		}
		c.log.Info("inbound email: reply to a decided permission request, not stored", "person", tok.Username, "mail_id", parent.MailID,
			"code", ge.Code)
		return nil, ""
	}
	if ge := gateway.AsError(err); ge != nil && ge.Kind != gateway.KindInternal {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 0}, "AgentMail did not take the reply: "+ge.Message), "send refused: " + ge.Code
	}
	if err != nil {
		return internal("store the reply", err)
	}
	now := c.svc.Now()
	if err := c.svc.Store.Write(ctx, func(tx *store.Q) error {
		if _, err := tx.InsertInbound(ctx, store.InboundRow{InboundID: store.NewID(), Username: tok.Username, MessageID: msgID,
			MailID: resp.MailID, Size: int64(len(raw)), ReceivedAt: now}); err != nil {
			return err
		}
		if decidedBefore != nil {
			return c.queueNoticeTx(ctx, tx, tok, acct.Address, parent, decidedBefore, true, now)
		}
		return nil
	}); err != nil {
		c.log.Error("inbound email: record the reply", "err", err, "mail_id", resp.MailID)
	}
	if decidedBefore != nil {
		c.wakeSender()
	}
	c.log.Info("inbound email stored", "person", tok.Username, "mail_id", resp.MailID, "reply_to", parent.MailID,
		"session_id", resp.SessionID, "attachments", len(ids), "message_id", msgID)
	return nil, ""
}

// checkDKIM verifies the DKIM signatures of a reply: with one present (or
// RequireDKIM), one must verify for the From address's domain or a parent
// domain of it.
func (c *Channel) checkDKIM(raw []byte, h mail.Header, from string) (*smtp.SMTPError, string) {
	signed := h.Has("Dkim-Signature")
	if !signed {
		if c.cfg.RequireDKIM {
			return smtpErr(550, smtp.EnhancedCode{5, 7, 20}, "this gateway takes only replies with a DKIM signature; your mail provider did not sign this one"),
				"no DKIM signature"
		}
		return nil, ""
	}
	fromDomain := strings.ToLower(from[strings.LastIndexByte(from, '@')+1:])
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: c.cfg.LookupTXT})
	if err != nil {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 20}, "the DKIM signature cannot be read"), "DKIM: " + err.Error()
	}
	temp := false
	var why []string
	for _, v := range vs {
		d := strings.ToLower(v.Domain)
		switch {
		case v.Err == nil && (d == fromDomain || strings.HasSuffix(fromDomain, "."+d)):
			return nil, ""
		case v.Err == nil:
			why = append(why, fmt.Sprintf("d=%s does not match the From domain %s", d, fromDomain))
		default:
			temp = temp || dkim.IsTempFail(v.Err)
			why = append(why, fmt.Sprintf("d=%s: %v", d, v.Err))
		}
	}
	if temp {
		return smtpErr(451, smtp.EnhancedCode{4, 7, 5}, "the DKIM signature cannot be checked right now; try again later"),
			"DKIM temporary failure: " + strings.Join(why, "; ")
	}
	return smtpErr(550, smtp.EnhancedCode{5, 7, 20}, "the DKIM signature of this reply does not verify for "+fromDomain),
		"DKIM failed: " + strings.Join(why, "; ")
}

// storeAttachment puts one file of a reply into the attachment store as
// the person's upload (the upload limit and quota of the web page apply).
func (c *Channel) storeAttachment(ctx context.Context, p *gateway.Principal, f extractedFile) (string, *smtp.SMTPError) {
	if c.blobs == nil {
		return "", smtpErr(550, smtp.EnhancedCode{5, 7, 0}, "this gateway takes no attachments")
	}
	info, err := c.blobs.Put(bytes.NewReader(f.body), c.maxAttachmentBytes)
	if err != nil {
		return "", smtpErr(552, smtp.EnhancedCode{5, 3, 4}, fmt.Sprintf("attachment %q cannot be stored: %v", f.name, err))
	}
	a, err := c.svc.CreateAttachment(ctx, p, gateway.NewAttachment{SHA256: info.SHA256, Size: info.Size, Filename: f.name, ContentType: f.contentType})
	if ge := gateway.AsError(err); ge != nil {
		return "", smtpErr(552, smtp.EnhancedCode{5, 3, 4}, fmt.Sprintf("attachment %q: %s", f.name, ge.Message))
	}
	if err != nil {
		return "", smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "AgentMail cannot take the reply right now; try again later")
	}
	return a.AttachmentID, nil
}

// queueNotice tells the person by email that their reply came after the
// request was decided, and what the decision is.
func (c *Channel) queueNotice(ctx context.Context, tok store.ReplyTokenRow, to string, parent *client.Mail, p *client.Permission, kept bool) error {
	err := c.svc.Store.Write(ctx, func(tx *store.Q) error {
		return c.queueNoticeTx(ctx, tx, tok, to, parent, p, kept, c.svc.Now())
	})
	c.wakeSender()
	return err
}

func (c *Channel) queueNoticeTx(ctx context.Context, tx *store.Q, tok store.ReplyTokenRow, to string, parent *client.Mail,
	p *client.Permission, kept bool, now time.Time) error {
	lang := personLanguage(ctx, tx, tok.Username)
	paragraphs := noticeParagraphs(lang, p, kept, c.conversationURL(parent))
	id := "notice-" + store.NewID() + "@" + c.cfg.Domain
	e := c.plainEmail(to, "Re: "+wordsFor(lang).permission+parent.Subject, id, paragraphs, now)
	e.inReplyTo = c.msgID(parent.MailID)
	e.references = []string{c.msgID(parent.MailID)}
	return c.enqueue(ctx, tx, kindNotice, "notice:"+id, tok.Username, parent.MailID, e, now)
}

// noticeWords is one language's wording of the late-reply notice.
type noticeWords struct {
	denied, approved, always, nobody string // the verdict; who decided when nobody did
	first, closed, kept              string // closed: %s who stopped the turn, %s when
	request, decision                string // decision: %s request, %s verdict, %s by, %s when, %q answer
	at                               string // %s time, or "" without one
	open                             string // %s the conversation's link
}

var noticeLangs = map[string]noticeWords{
	gateway.LangEnglish: {
		denied: "denied", approved: "approved", always: "approved, always", nobody: "nobody before it expired (denied)",
		first:   "Your reply came after this permission request was decided, so it did not change the decision.",
		closed:  "This permission request was closed because %s stopped the turn it belongs to%s, so your reply changed nothing and nothing of it runs. To have the agent do it after all, write it a new mail.",
		kept:    " It was kept in the conversation as an ordinary mail.",
		request: "The request: ", decision: "The request: %s\nThe decision: %s, by %s%s (answer %q).", at: " on %s", open: "Open the conversation: %s",
	},
	gateway.LangChinese: {
		denied: "已拒绝", approved: "已同意", always: "已一直同意", nobody: "无人在过期前决定（已拒绝）",
		first:   "你的回复晚于这条权限请求的决定，决定没有改变。",
		closed:  "这条权限请求已关闭，因为 %s 停止了它所在的一轮%s；你的回复不会改变什么，它也不会运行。如果仍想让智能体去做，请给它写一封新邮件。",
		kept:    "你的回复作为普通邮件留在了对话中。",
		request: "请求：", decision: "请求：%s\n决定：%s，由 %s%s 作出（回答 %q）。", at: " 于 %s", open: "打开对话：%s",
	},
}

// noticeParagraphs is the notice of a reply that came too late, in the
// person's language (issue 18 point 2): that it changed nothing, the
// request (what it would run) and its decision, and the conversation.
func noticeParagraphs(lang string, p *client.Permission, kept bool, conversation string) []string {
	w, ok := noticeLangs[lang]
	if !ok {
		w = noticeLangs[gateway.LangEnglish]
	}
	verdict := w.denied
	if p.Approved {
		verdict = w.approved
		if p.Always {
			verdict = w.always
		}
	}
	by := p.DecidedBy
	if p.DecidedVia == gateway.DecidedViaTimeout {
		by = w.nobody
	}
	when := ""
	if p.DecidedAt != nil {
		when = fmt.Sprintf(w.at, p.DecidedAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	ask := permissionAsk(wordsFor(lang), p)
	first := w.first
	decision := fmt.Sprintf(w.decision, ask, verdict, by, when, p.Decision)
	if p.DecidedVia == gateway.DecidedViaStop {
		// The turn it belonged to was stopped (issue 16): nothing waits
		// for an answer any more.
		first = fmt.Sprintf(w.closed, p.DecidedBy, when)
		decision = w.request + ask
	}
	if kept {
		first += w.kept
	}
	return []string{first, decision, fmt.Sprintf(w.open, conversation)}
}
