package search

import (
	"strings"
	"unicode/utf8"
)

// matches answers, for each term, the token indexes of toks where the term
// begins (its tokens in order, the last a prefix when Term.Prefix).
func (t Term) matchAt(toks []Token, i int) bool {
	if i+len(t.Tokens) > len(toks) {
		return false
	}
	for j, want := range t.Tokens {
		got := toks[i+j].Text
		if j == len(t.Tokens)-1 && t.Prefix {
			if !strings.HasPrefix(got, want) {
				return false
			}
		} else if got != want {
			return false
		}
	}
	return true
}

// Span is a piece of a text, Match when it is (part of) a match of the
// query. A text rendered span by span, each piece as plain text and the
// matches marked, cannot inject markup: the pieces are never HTML.
type Span struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// Highlight answers text as spans, the matches of q's terms marked.
func Highlight(q Query, text string) []Span {
	return spans(text, matchedRanges(q, Tokenize(text)), 0, len(text))
}

// Snippet answers at most maxRunes runes of text around its first match of
// q (its beginning when nothing matches), as spans; "…" marks text cut at
// either end, and line breaks become spaces.
func Snippet(q Query, text string, maxRunes int) []Span {
	toks := Tokenize(text)
	ranges := matchedRanges(q, toks)
	start := 0
	if len(ranges) > 0 {
		// Begin a fifth of the window before the first match, at a rune.
		start = ranges[0][0]
		for back := maxRunes / 5; back > 0 && start > 0; back-- {
			_, size := utf8.DecodeLastRuneInString(text[:start])
			start -= size
		}
	}
	end, n := start, 0
	for end < len(text) && n < maxRunes {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
		n++
	}
	out := spans(text, ranges, start, end)
	for i := range out {
		out[i].Text = lineBreaksToSpaces.Replace(out[i].Text)
	}
	if start > 0 {
		out = append([]Span{{Text: "…"}}, out...)
	}
	if end < len(text) {
		out = append(out, Span{Text: "…"})
	}
	return out
}

// matchedRanges answers the byte ranges of toks that match a term,
// ascending, overlapping ones merged.
func matchedRanges(q Query, toks []Token) [][2]int {
	marked := make([]bool, len(toks))
	for _, t := range q.Terms {
		for i := range toks {
			if t.matchAt(toks, i) {
				for j := range t.Tokens {
					marked[i+j] = true
				}
			}
		}
	}
	var out [][2]int
	for i, m := range marked {
		if !m {
			continue
		}
		s, e := toks[i].Start, toks[i].End
		if n := len(out); n > 0 && out[n-1][1] >= s {
			out[n-1][1] = max(out[n-1][1], e)
			continue
		}
		out = append(out, [2]int{s, e})
	}
	return out
}

// spans cuts text[start:end] into plain and matched spans.
func spans(text string, ranges [][2]int, start, end int) []Span {
	var out []Span
	pos := start
	for _, r := range ranges {
		s, e := max(r[0], start), min(r[1], end)
		if e <= s {
			continue
		}
		if s > pos {
			out = append(out, Span{Text: text[pos:s]})
		}
		out = append(out, Span{Text: text[s:e], Match: true})
		pos = e
	}
	if pos < end {
		out = append(out, Span{Text: text[pos:end]})
	}
	if out == nil {
		out = []Span{}
	}
	return out
}

// lineBreaksToSpaces turns a snippet's line breaks and tabs into single
// spaces, so that a snippet stays one line.
var lineBreaksToSpaces = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")
