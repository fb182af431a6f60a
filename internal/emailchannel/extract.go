package emailchannel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"regexp"
	"slices"
	"strings"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // GBK, GB18030, Big5, ISO-8859-x, windows-125x bodies
	"github.com/emersion/go-message/mail"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// A reply carries the person's new text above (sometimes below) what their
// client quoted of the notification. The extractor keeps the new text and
// drops the rest, in the shapes the common clients write:
//   - quoted lines ("> ..."),
//   - attribution lines and everything after them: "On <date>, <name>
//     wrote:" (wrapped over up to three lines, as Gmail does), its French,
//     German, Spanish, Italian, Portuguese, Dutch, Japanese and Chinese
//     forms ("在 2026/9/2 10:00, AgentMail 写道:", "…<addr> 写道："),
//   - Outlook's header blocks ("From: / Sent: / To: / Subject:", "发件人: /
//     发送时间: / 收件人: / 主题:") with the line of underscores before them,
//     and "-----Original Message-----" / "-----原始邮件-----",
//   - signatures after "-- " and the phone clients' "Sent from my iPhone",
//     "发自我的iPhone", "Get Outlook for Android", "Sent from my Galaxy",
//   - in HTML: Gmail's quote div (gmail_quote), blockquote type=cite
//     (Apple Mail, Thunderbird), Thunderbird's moz-cite-prefix, Outlook's
//     divRplyFwdMsg, appendonsend and reference-message containers, and
//     what follows them; the rest is converted to text.
// The plain-text part is used when there is one; an HTML-only reply is
// converted first.

// extracted is what a reply brings: its new text and its attachments.
type extracted struct {
	text        string
	attachments []extractedFile
}

type extractedFile struct {
	name        string
	contentType string
	body        []byte
}

// maxFiles is how many attachments one reply may bring (as a send).
const maxFiles = 20

// extractReply reads a whole message. Attachments are those parts with
// Content-Disposition attachment, and non-text parts with a file name.
func extractReply(raw []byte, maxFileBytes int64) (*extracted, error) {
	mr, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
		return nil, fmt.Errorf("the message cannot be read as MIME: %w", err)
	}
	out := &extracted{}
	var plain, htmlText string
	var plainFlowed, plainDelSp, havePlain, haveHTML bool
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
			return nil, fmt.Errorf("a part of the message cannot be read: %w", err)
		}
		if p == nil {
			continue
		}
		switch h := p.Header.(type) {
		case *mail.InlineHeader:
			ct, params, _ := h.ContentType()
			name := ""
			if _, dp, err := h.ContentDisposition(); err == nil {
				name = dp["filename"]
			}
			if name == "" {
				name = params["name"]
			}
			switch {
			case ct == "text/plain" && name == "" && !havePlain:
				b, err := io.ReadAll(io.LimitReader(p.Body, 4<<20))
				if err != nil {
					return nil, fmt.Errorf("the text of the message cannot be read: %w", err)
				}
				plain, havePlain = string(b), true
				plainFlowed = strings.EqualFold(params["format"], "flowed")
				plainDelSp = strings.EqualFold(params["delsp"], "yes")
			case ct == "text/html" && name == "" && !haveHTML:
				b, err := io.ReadAll(io.LimitReader(p.Body, 8<<20))
				if err != nil {
					return nil, fmt.Errorf("the HTML of the message cannot be read: %w", err)
				}
				htmlText, haveHTML = htmlToText(string(b)), true
			case name != "" && !strings.HasPrefix(ct, "text/"):
				if err := out.addFile(p.Body, name, ct, maxFileBytes); err != nil {
					return nil, err
				}
			}
		case *mail.AttachmentHeader:
			name, _ := h.Filename()
			ct, _, _ := h.ContentType()
			if err := out.addFile(p.Body, name, ct, maxFileBytes); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case havePlain:
		if plainFlowed {
			plain = unflow(plain, plainDelSp)
		}
		out.text = newText(plain)
	case haveHTML:
		out.text = newText(htmlText)
	}
	return out, nil
}

// errFileTooLarge and errTooManyFiles are refusals of a reply's attachments.
var (
	errFileTooLarge = errors.New("an attachment is too large")
	errTooManyFiles = fmt.Errorf("a reply may bring at most %d attachments", maxFiles)
)

func (x *extracted) addFile(r io.Reader, name, ct string, limit int64) error {
	if len(x.attachments) >= maxFiles {
		return errTooManyFiles
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return fmt.Errorf("attachment %q cannot be read: %w", name, err)
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("%w: %q is larger than %d bytes", errFileTooLarge, name, limit)
	}
	if name == "" {
		name = "attachment"
		if exts, _ := mime.ExtensionsByType(ct); len(exts) > 0 {
			name += exts[0]
		}
	}
	x.attachments = append(x.attachments, extractedFile{name: name, contentType: ct, body: b})
	return nil
}

// unflow joins the soft line breaks of format=flowed text (RFC 3676):
// a line ending in a space continues on the next one.
func unflow(s string, delsp bool) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		soft := strings.HasSuffix(l, " ") && l != "-- " && !strings.HasPrefix(l, ">")
		if soft && delsp {
			l = l[:len(l)-1]
		}
		b.WriteString(l)
		if !soft && i < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

var (
	// Attribution lines ("On … wrote:") in the languages of common clients;
	// matched against one line or up to three joined lines. One that does
	// not start with "On" (or its translation) counts only when it names a
	// date or an address (a digit or an @), so "here is what I wrote:" stays.
	attributionStartRe = regexp.MustCompile(`(?i)^(on|am|le|el|il|em|op|den|w dniu|在)\s.{4,}(wrote|schrieb|a écrit|escribió|ha scritto|escreveu|schreef|skrev|napisał|写道|寫道)\s*[:：]$`)
	attributionEndRe   = regexp.MustCompile(`(?i)(\bwrote|\bschrieb|a écrit|escribió|ha scritto|escreveu|schreef|写道|寫道|のメッセージ|は書きました|>)\s*[:：]$`)
	dateOrAddressRe    = regexp.MustCompile(`[0-9@]`)
	// Separators that start the quoted original.
	separatorRes = []*regexp.Regexp{
		regexp.MustCompile(`(?i)^-{2,}\s*(original message|original|forwarded message|原始邮件|原始郵件|邮件原件|转发的邮件)\s*-{2,}$`),
		regexp.MustCompile(`^_{10,}$`),
	}
	// The first field of an Outlook-style header block and the fields
	// that follow it.
	headerStartRe = regexp.MustCompile(`(?i)^\*?(from|发件人|發件人|寄件者|de|von|van)\s*\*?\s*[:：]`)
	headerNextRe  = regexp.MustCompile(`(?i)^\*?(sent|date|to|subject|cc|发送时间|時間|日期|收件人|主题|主旨|抄送|envoyé|gesendet|datum|an|betreff|objet|à|enviado|para|asunto)\s*\*?\s*[:：]`)
	// Phone and webmail signatures.
	sentFromRe = regexp.MustCompile(`(?i)^(sent from my |sent from |sent via |sent with |get outlook for |获取 ?outlook|发自我的|發自我的|从我的 ?\S+ ?发送|来自我的|來自我的|从 ?\S+ ?发送)`)
)

// attributionAt answers where the attribution ending on line j starts (j,
// or up to two lines before it when the client wrapped it), or -1 when
// line j ends none.
func attributionAt(lines []string, j int) int {
	t := strings.TrimSpace(lines[j])
	if !attributionEndRe.MatchString(t) {
		return -1
	}
	for i := max(0, j-2); i <= j; i++ {
		parts := make([]string, 0, 3)
		for k := i; k <= j; k++ {
			parts = append(parts, strings.TrimSpace(lines[k]))
		}
		if slices.Contains(parts, "") {
			continue // an attribution is not wrapped over a blank line
		}
		if attributionStartRe.MatchString(strings.Join(parts, " ")) {
			return i
		}
	}
	if dateOrAddressRe.MatchString(t) && (!strings.HasSuffix(strings.TrimRight(t, ":： "), ">") || strings.Contains(t, "@")) {
		return j
	}
	return -1
}

// quoteStart answers the index of the first line of the quoted part (an
// attribution, a separator, a header block), or len(lines).
func quoteStart(lines []string) int {
	for j := range lines {
		t := strings.TrimSpace(lines[j])
		if t == "" {
			continue
		}
		for _, re := range separatorRes {
			if re.MatchString(t) {
				return j
			}
		}
		if i := attributionAt(lines, j); i >= 0 {
			return i
		}
		if headerStartRe.MatchString(t) {
			fields := 0
			for k := j + 1; k < len(lines) && k < j+6; k++ {
				if headerNextRe.MatchString(strings.TrimSpace(lines[k])) {
					fields++
				}
			}
			if fields >= 2 {
				return j
			}
		}
	}
	return len(lines)
}

// newText answers the new text of a reply's plain text.
func newText(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(s, "\n")
	lines = lines[:quoteStart(lines)]
	var keep []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "--" || l == "-- " || (sentFromRe.MatchString(t) && len([]rune(t)) <= 60) {
			break // the signature
		}
		if strings.HasPrefix(t, ">") {
			continue // an interleaved quote
		}
		keep = append(keep, strings.TrimRight(l, " \t\u00a0"))
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// cutMarkers are the HTML elements that start a client's quoted part: the
// element and everything after it in document order go.
func isCutMarker(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	id, cls := attr(n, "id"), " "+attr(n, "class")+" "
	switch {
	case strings.Contains(cls, " gmail_quote ") || strings.Contains(cls, " gmail_quote_container ") || strings.Contains(cls, " gmail_attr "):
		return true
	case n.DataAtom == atom.Blockquote && strings.EqualFold(attr(n, "type"), "cite"):
		return true
	case strings.Contains(cls, " moz-cite-prefix ") || strings.Contains(cls, " yahoo_quoted ") || strings.Contains(cls, " protonmail_quote "):
		return true
	case id == "divRplyFwdMsg" || id == "appendonsend" || id == "mail-editor-reference-message-container" || id == "isForwardContent":
		return true
	case strings.Contains(cls, " OutlookMessageHeader "):
		return true
	}
	return false
}

// isSignature are elements that hold a signature only: they alone go.
func isSignature(n *html.Node) bool {
	cls := " " + attr(n, "class") + " "
	return n.Type == html.ElementNode && (strings.Contains(cls, " gmail_signature ") || strings.Contains(cls, " moz-signature ") ||
		attr(n, "id") == "Signature" || attr(n, "data-smartmail") == "gmail_signature")
}

// htmlToText converts an HTML reply to text without the quoted part.
func htmlToText(src string) string {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return ""
	}
	cut := false
	var b strings.Builder
	var walk func(n *html.Node, pre bool)
	block := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
	}
	walk = func(n *html.Node, pre bool) {
		if cut {
			return
		}
		if isCutMarker(n) {
			// Outlook on the web puts an <hr> right before divRplyFwdMsg;
			// the text written so far is what counts.
			cut = true
			return
		}
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Head, atom.Title, atom.Template, atom.Noscript:
				return
			}
			if isSignature(n) {
				return
			}
		}
		switch n.Type {
		case html.TextNode:
			t := n.Data
			if !pre {
				t = collapseSpace(t)
				if strings.HasSuffix(b.String(), "\n") || b.Len() == 0 {
					t = strings.TrimLeft(t, " ")
				}
			}
			b.WriteString(t)
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Br:
				b.WriteByte('\n')
				return
			case atom.Hr:
				block()
				return
			case atom.Li:
				block()
				b.WriteString("- ")
			case atom.P, atom.Div, atom.Tr, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Ul, atom.Ol,
				atom.Table, atom.Blockquote, atom.Pre, atom.Section, atom.Article, atom.Header, atom.Footer:
				block()
			case atom.Td, atom.Th:
				if !strings.HasSuffix(b.String(), "\n") && b.Len() > 0 {
					b.WriteByte(' ')
				}
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch, pre || n.DataAtom == atom.Pre)
		}
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.P, atom.Div, atom.Li, atom.Tr, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Ul, atom.Ol,
				atom.Table, atom.Blockquote, atom.Pre:
				block()
			}
			if n.DataAtom == atom.P {
				b.WriteByte('\n')
			}
		}
	}
	walk(doc, false)
	return strings.ReplaceAll(b.String(), "\u00a0", " ")
}

var spaceRun = regexp.MustCompile(`[ \t\r\n\f]+`)

func collapseSpace(s string) string { return spaceRun.ReplaceAllString(s, " ") }
