package textsearch

import (
	"strings"
	"unicode"
)

// Token is a word of a text: its spelling in the text and its lower-case
// form.
type Token struct {
	// Text is the word as written ("HbA1c").
	Text string
	// Lower is Text lower-cased rune by rune ("hba1c").
	Lower string
}

// Tokens splits text into its maximal runs of letters and digits (any
// script; every other character, invalid UTF-8 included, separates words),
// each with its lower-case form. "β-blockers and Müller's 5-FU" gives β,
// blockers, and, Müller, s, 5, FU.
func Tokens(text string) []Token {
	var out []Token
	start := -1
	var low strings.Builder
	flush := func(end int) {
		if start >= 0 {
			out = append(out, Token{Text: text[start:end], Lower: low.String()})
			low.Reset()
			start = -1
		}
	}
	for i, r := range text {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			low.WriteRune(unicode.ToLower(r))
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

// Words returns the lower-case forms of the Tokens of text: the words
// every lexical signal of Clinsight (BM25, TF-IDF, the lexical embedder,
// concept extraction) works on.
func Words(text string) []string {
	var out []string
	var b strings.Builder
	for _, r := range text {
		if isWordRune(r) {
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// isWordRune reports whether r belongs to a word: a letter or a digit.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// HasLetter reports whether w holds a letter (numbers such as "120" or
// "2.5" do not).
func HasLetter(w string) bool { return strings.ContainsFunc(w, unicode.IsLetter) }
