// Package search is the full-text search of mails (issue 21 item 4): the
// tokenizer shared by the index and the query, the query language, the
// ranking and the highlighting. It is pure (no database); internal/store
// renders its tokens into SQLite FTS5 and PostgreSQL tsvector form.
//
// Tokens: a run of letters, digits and marks is one word, folded (NFKC,
// lower case, Latin diacritics removed: "Café" and "ＣＡＦＥ" are "cafe"); each
// Han, Hiragana or Katakana character is a token of its own, so a two-character
// Chinese query such as 部署 is the phrase 部 署 and finds 部署 inside any
// longer run of Chinese text. Everything else separates tokens.
package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxTokenRunes bounds one word token (longer words are cut): PostgreSQL
// refuses lexemes over 2047 bytes and nobody searches for such a word.
const MaxTokenRunes = 64

// Token is one token of a text with its byte span [Start, End) in that text.
type Token struct {
	Text       string
	Start, End int
}

// isCJK reports whether r is a character that is a token on its own.
func isCJK(r rune) bool {
	if r >= 0x4e00 && r <= 0x9fff {
		return true
	}
	if r < 0x2e80 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// foldRune answers r as the index sees it: NFKC (full-width Latin to
// ASCII, compatibility forms), lower case, Latin diacritics dropped. The
// answer may be several runes (ligatures) or none (a lone combining mark
// on a Latin letter).
func foldRune(r rune) string {
	if r >= 0x4e00 && r <= 0x9fff { // CJK Unified Ideographs: NFKC and case leave them alone
		return string(r)
	}
	s := string(r)
	if r >= utf8.RuneSelf {
		s = norm.NFKC.String(s)
	}
	s = strings.ToLower(s)
	if !isASCII(s) {
		var b strings.Builder
		for _, c := range norm.NFD.String(s) {
			if unicode.Is(unicode.Mn, c) && latinMark(c) {
				continue
			}
			b.WriteRune(c)
		}
		s = norm.NFC.String(b.String())
	}
	return s
}

// latinMark reports whether c is a combining mark of the block used on
// Latin letters (U+0300..U+036F), which folding drops; marks of other
// scripts (Devanagari vowel signs, ...) are part of their words.
func latinMark(c rune) bool { return c >= 0x300 && c <= 0x36f }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Nl, r)
}

// Tokenize answers the tokens of text in order with their spans.
func Tokenize(text string) []Token {
	var out []Token
	var word strings.Builder
	wordStart, wordRunes := -1, 0
	flush := func(end int) {
		if wordStart >= 0 && word.Len() > 0 {
			out = append(out, Token{Text: word.String(), Start: wordStart, End: end})
		}
		word.Reset()
		wordStart, wordRunes = -1, 0
	}
	for i, r := range text {
		if r < utf8.RuneSelf { // ASCII: no folding tables
			c := byte(r)
			switch {
			case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			default:
				flush(i)
				continue
			}
			if wordStart < 0 {
				wordStart = i
			}
			if wordRunes < MaxTokenRunes {
				word.WriteByte(c)
				wordRunes++
			}
			continue
		}
		size := utf8.RuneLen(r)
		if r == utf8.RuneError {
			size = 1
		}
		switch {
		case isCJK(r):
			flush(i)
			out = append(out, Token{Text: foldRune(r), Start: i, End: i + size})
		case isWordRune(r) || (r >= utf8.RuneSelf && isWordText(foldRune(r))):
			if wordStart < 0 {
				wordStart = i
			}
			if wordRunes < MaxTokenRunes {
				f := foldRune(r)
				word.WriteString(f)
				wordRunes += utf8.RuneCountInString(f)
			}
		default:
			flush(i)
		}
	}
	flush(len(text))
	return out
}

// isWordText reports whether a folded rune (full-width letters fold to
// ASCII ones) is word text.
func isWordText(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isWordRune(r) {
			return false
		}
	}
	return true
}

// Words answers the token texts of text.
func Words(text string) []string {
	toks := Tokenize(text)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.Text
	}
	return out
}
