package emailchannel

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// A mail's body is Markdown written by people and agents, and an agent may
// repeat any text it was shown, so the HTML part of an email is built like
// the web page builds its mail cards: Markdown rendered without raw HTML
// (goldmark's default drops it), then cleaned by a closed list of tags and
// attributes (bluemonday), with nothing that loads remote content: images
// become links. Mail clients ignore style sheets, so the few styles come
// inline, set by the gateway after cleaning.

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

var policy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "b", "em", "i", "del", "s",
		"code", "pre", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "a")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^[0-9]{1,6}$`)).OnElements("ol")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|center|right)$`)).OnElements("th", "td")
	return p
}()

// inlineStyles are the styles the gateway sets on the cleaned elements.
var inlineStyles = map[atom.Atom]string{
	atom.Pre:        "background:#f1f5f9;border-radius:4px;padding:8px;overflow:auto;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;white-space:pre-wrap",
	atom.Code:       "background:#f1f5f9;border-radius:3px;padding:0 3px;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px",
	atom.Blockquote: "margin:0 0 0 4px;padding-left:10px;border-left:3px solid #cbd5e1;color:#475569",
	atom.Table:      "border-collapse:collapse",
	atom.Th:         "border:1px solid #cbd5e1;padding:4px 8px;text-align:left",
	atom.Td:         "border:1px solid #cbd5e1;padding:4px 8px",
	atom.A:          "color:#1d4ed8",
	atom.P:          "margin:0 0 10px 0",
}

// markdownHTML renders a Markdown body as cleaned HTML with inline styles.
func markdownHTML(src string) string {
	var raw bytes.Buffer
	if err := md.Convert([]byte(src), &raw); err != nil {
		return "<pre>" + html.EscapeString(src) + "</pre>"
	}
	clean := policy.Sanitize(imagesAsLinks(raw.String()))
	return styled(clean)
}

// imagesAsLinks replaces every <img> by a link to its source named by its
// alt text, so that no image is fetched when the email is opened.
func imagesAsLinks(fragment string) string {
	nodes, err := html.ParseFragment(strings.NewReader(fragment), &html.Node{Type: html.ElementNode, DataAtom: atom.Div, Data: "div"})
	if err != nil {
		return html.EscapeString(fragment)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Img {
			src, alt := attr(n, "src"), attr(n, "alt")
			if alt == "" {
				alt = "image"
			}
			n.DataAtom, n.Data = atom.A, "a"
			n.Attr = []html.Attribute{{Key: "href", Val: src}}
			n.AppendChild(&html.Node{Type: html.TextNode, Data: "[" + alt + "]"})
		}
	}
	var b strings.Builder
	for _, n := range nodes {
		walk(n)
		_ = html.Render(&b, n)
	}
	return b.String()
}

// styled sets inlineStyles on a cleaned fragment.
func styled(fragment string) string {
	nodes, err := html.ParseFragment(strings.NewReader(fragment), &html.Node{Type: html.ElementNode, DataAtom: atom.Div, Data: "div"})
	if err != nil {
		return html.EscapeString(fragment)
	}
	var walk func(n *html.Node, inPre bool)
	walk = func(n *html.Node, inPre bool) {
		if n.Type == html.ElementNode {
			if st, ok := inlineStyles[n.DataAtom]; ok && !(inPre && n.DataAtom == atom.Code) {
				n.Attr = append(n.Attr, html.Attribute{Key: "style", Val: st})
			}
			inPre = inPre || n.DataAtom == atom.Pre
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch, inPre)
		}
	}
	var b strings.Builder
	for _, n := range nodes {
		walk(n, false)
		_ = html.Render(&b, n)
	}
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
