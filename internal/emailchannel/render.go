package emailchannel

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/emersion/go-message/mail"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/store"
)

// email is one outgoing message before it is encoded.
type email struct {
	to         string // the person's address
	fromName   string // display name of From ("claude via AgentMail")
	replyTo    string // r+<token>@domain, "" none
	subject    string
	messageID  string // without angle brackets
	inReplyTo  string
	references []string
	date       time.Time
	text       string
	html       string // the inner HTML of the body
	// unsubscribe is the page where the person changes what they get.
	unsubscribe string
}

// headerText makes a value safe for one header line: control characters
// (CR and LF above all, which would start a header of their own) become
// spaces, runs of spaces one space. Encoding of non-ASCII text is left to
// go-message (RFC 2047).
func headerText(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == '\u2028' || r == '\u2029' {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// encode builds the RFC 5322 message: multipart/alternative with
// text/plain and text/html in UTF-8, quoted-printable.
func (c *Channel) encode(e email) ([]byte, error) {
	var h mail.Header
	h.SetDate(e.date)
	h.SetAddressList("From", []*mail.Address{{Name: headerText(e.fromName), Address: c.cfg.from.Address}})
	h.SetAddressList("To", []*mail.Address{{Address: e.to}})
	if e.replyTo != "" {
		h.SetAddressList("Reply-To", []*mail.Address{{Address: e.replyTo}})
	}
	h.SetSubject(headerText(e.subject))
	h.SetMessageID(e.messageID)
	if e.inReplyTo != "" {
		h.SetMsgIDList("In-Reply-To", []string{e.inReplyTo})
	}
	h.SetMsgIDList("References", e.references)
	if e.unsubscribe != "" {
		h.Set("List-Unsubscribe", "<"+e.unsubscribe+">")
	}
	// RFC 3834: automatic replies (out of office) must not answer it; the
	// inbound side refuses those anyway.
	h.Set("Auto-Submitted", "auto-generated")
	h.Set("X-Auto-Response-Suppress", "All")
	var buf bytes.Buffer
	w, err := mail.CreateInlineWriter(&buf, h)
	if err != nil {
		return nil, err
	}
	for _, p := range []struct{ typ, body string }{{"text/plain", e.text}, {"text/html", htmlDocument(e.html)}} {
		var ph mail.InlineHeader
		ph.SetContentType(p.typ, map[string]string{"charset": "utf-8"})
		pw, err := w.CreatePart(ph)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(pw, p.body); err != nil {
			return nil, err
		}
		if err := pw.Close(); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func htmlDocument(inner string) string {
	return `<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>` +
		`<body style="margin:0;padding:0;background:#ffffff">` +
		`<div style="font-family:-apple-system,'Segoe UI',Roboto,'PingFang SC','Microsoft YaHei',sans-serif;font-size:14px;line-height:1.5;color:#0f172a;max-width:720px;padding:12px">` +
		inner + `</div></body></html>`
}

// links of the web page.
func (c *Channel) conversationURL(m *client.Mail) string {
	return c.cfg.PublicURL + "/inbox/" + url.PathEscape(m.SessionID) + "?m=" + url.QueryEscape(m.MailID)
}

func (c *Channel) accountURL() string { return c.cfg.PublicURL + "/account" }

func (c *Channel) attachmentURL(a client.Attachment) string {
	return c.cfg.PublicURL + "/api/v1/me/attachments/" + url.PathEscape(a.AttachmentID)
}

func (c *Channel) msgID(mailID string) string { return mailID + "@" + c.cfg.Domain }

// permissionAsk is the first line of a permission request's email: what is
// asked, in a line, led by what will run (the tool summary).
func permissionAsk(w emailWords, p *client.Permission) string {
	what := p.ToolSummary
	if what == "" {
		what = firstLine(p.Question)
	}
	return fmt.Sprintf(w.asks, p.AgentName, what)
}

// emailWords is one language's wording of a mail's notification email
// (issue 18 point 2: the person's language, English by default; the
// decision words of both languages are understood in a reply either way).
type emailWords struct {
	permission  string // subject prefix of a permission request
	asks        string // %s agent, %s what will run
	howToAnswer string
	expires     string // %s time
	attachments string
	openConv    string
	replyHere   string
	chooseMails string
}

var emailLangs = map[string]emailWords{
	"en": {
		permission:  "[Permission] ",
		asks:        "%s asks for permission: %s",
		howToAnswer: "Reply APPROVE, ALWAYS or DENY; a note may follow on the next lines.",
		expires:     "Expires: %s",
		attachments: "Attachments (sign in to download)",
		openConv:    "Open the conversation",
		replyHere:   "Reply to this email to answer in the conversation.",
		chooseMails: "Choose which emails you get",
	},
	"zh": {
		permission:  "[权限请求] ",
		asks:        "%s 请求权限：%s",
		howToAnswer: "回复 同意、一直同意 或 拒绝；下一行起可写备注。",
		expires:     "过期时间：%s",
		attachments: "附件（登录后下载）",
		openConv:    "打开对话",
		replyHere:   "回复这封邮件即可在对话中作答。",
		chooseMails: "选择你收到哪些邮件",
	},
}

// personLanguage answers the person's language setting as read by q
// (within the caller's transaction, if any): "zh" or "en", English when it
// cannot be read, since only the email's wording depends on it.
func personLanguage(ctx context.Context, q *store.Q, name string) string {
	if lang, err := q.UserLanguage(ctx, name); err == nil && lang == gateway.LangChinese {
		return lang
	}
	return gateway.LangEnglish
}

// wordsFor answers the email wording of language lang, English for any
// other value.
func wordsFor(lang string) emailWords {
	if w, ok := emailLangs[lang]; ok {
		return w
	}
	return emailLangs["en"]
}

// mailEmail builds the notification of mail m for a person: the sender's
// name, the subject ([Permission] first for a permission request), the
// body as text and as cleaned HTML, attachments as links, a link to the
// conversation and the threading headers; the email's own words are in
// lang, the person's language ("en" or "zh").
func (c *Channel) mailEmail(m *client.Mail, lang, to, replyTo, inReplyTo string, refs []string) email {
	w := wordsFor(lang)
	e := email{to: to, fromName: m.FromName + " via " + c.cfg.fromName, replyTo: replyTo, subject: m.Subject,
		messageID: c.msgID(m.MailID), inReplyTo: inReplyTo, references: refs, date: m.CreatedAt, unsubscribe: c.accountURL()}
	var text, h strings.Builder
	if m.MailType == client.MailTypePermissionRequest && m.Permission != nil {
		e.subject = w.permission + m.Subject
		ask := permissionAsk(w, m.Permission)
		fmt.Fprintf(&text, "%s\n%s\n", ask, w.howToAnswer)
		if m.Permission.ExpiresAt != nil {
			fmt.Fprintf(&text, w.expires+"\n", m.Permission.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
		}
		text.WriteString("\n")
		fmt.Fprintf(&h, `<div style="border:1px solid #f59e0b;background:#fffbeb;border-radius:6px;padding:10px;margin:0 0 12px 0">`+
			`<div style="font-weight:600">%s</div><div>%s</div>`,
			html.EscapeString(ask), html.EscapeString(w.howToAnswer))
		if m.Permission.ExpiresAt != nil {
			fmt.Fprintf(&h, `<div style="color:#92400e">%s</div>`, html.EscapeString(fmt.Sprintf(w.expires, m.Permission.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))))
		}
		h.WriteString(`</div>`)
	}
	text.WriteString(strings.TrimRight(m.Body, " \t\r\n"))
	text.WriteString("\n")
	h.WriteString(`<div>` + markdownHTML(m.Body) + `</div>`)
	if len(m.Attachments) > 0 {
		fmt.Fprintf(&text, "\n%s:\n", w.attachments)
		h.WriteString(`<p style="margin:12px 0 4px 0;font-weight:600">` + html.EscapeString(w.attachments) + `</p><ul style="margin:0">`)
		for _, a := range m.Attachments {
			fmt.Fprintf(&text, "- %s (%s): %s\n", a.Filename, sizeText(a.Size), c.attachmentURL(a))
			fmt.Fprintf(&h, `<li><a style="color:#1d4ed8" href="%s">%s</a> (%s)</li>`,
				html.EscapeString(c.attachmentURL(a)), html.EscapeString(a.Filename), sizeText(a.Size))
		}
		h.WriteString(`</ul>`)
	}
	conv := c.conversationURL(m)
	fmt.Fprintf(&text, "\n-- \n%s: %s\n", w.openConv, conv)
	if replyTo != "" {
		text.WriteString(w.replyHere + "\n")
	}
	fmt.Fprintf(&text, "%s: %s\n", w.chooseMails, c.accountURL())
	fmt.Fprintf(&h, `<hr style="border:none;border-top:1px solid #e2e8f0;margin:16px 0 8px 0">`+
		`<p style="font-size:12px;color:#64748b;margin:0"><a style="color:#1d4ed8" href="%s">%s</a>`, html.EscapeString(conv), html.EscapeString(w.openConv))
	if replyTo != "" {
		h.WriteString(` · ` + html.EscapeString(w.replyHere))
	}
	fmt.Fprintf(&h, ` · <a style="color:#1d4ed8" href="%s">%s</a></p>`, html.EscapeString(c.accountURL()), html.EscapeString(w.chooseMails))
	e.text, e.html = text.String(), h.String()
	return e
}

// plainEmail builds an email of the gateway's own (a code, a notice) from
// paragraphs of plain text.
func (c *Channel) plainEmail(to, subject, messageID string, paragraphs []string, now time.Time) email {
	e := email{to: to, fromName: c.cfg.fromName, subject: subject, messageID: messageID, date: now}
	var h strings.Builder
	for _, p := range paragraphs {
		fmt.Fprintf(&h, `<p style="margin:0 0 10px 0">%s</p>`, strings.ReplaceAll(html.EscapeString(p), "\n", "<br>"))
	}
	e.text = strings.Join(paragraphs, "\n\n") + "\n"
	e.html = h.String()
	return e
}

// sizeText writes a size as the web page does (gateway.SizeText).
func sizeText(n int64) string { return gateway.SizeText(n) }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
