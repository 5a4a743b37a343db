package cohort

import (
	"strings"
	"unicode"
)

// words lower-cases text and returns its maximal runs of letters and digits,
// the tokens every lexical signal of retrieval works on.
func words(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		flush()
	}
	flush()
	return out
}

// stem reduces an English word to a crude stem so that "diagnosed",
// "diagnoses" and "diagnosis" or "prescribed" and "prescriptions" meet. It
// only strips common inflections and derivations; numbers are kept as they
// are.
func stem(w string) string {
	if len(w) <= 3 || !strings.ContainsFunc(w, unicode.IsLetter) {
		return w
	}
	for _, suf := range []struct{ from, to string }{
		{"ications", "ic"}, {"ication", "ic"}, {"izations", "iz"}, {"ization", "iz"},
		{"ational", "at"}, {"ations", "at"}, {"ation", "at"},
		{"iptions", "ib"}, {"iption", "ib"}, {"ibed", "ib"}, {"ibes", "ib"}, {"ibe", "ib"},
		{"ously", "ous"}, {"ments", "ment"}, {"ities", "ity"},
		{"ies", "y"}, {"sses", "ss"}, {"oses", "os"}, {"osis", "os"}, {"osed", "os"}, {"ose", "os"},
		{"ing", ""}, {"ed", ""}, {"es", "e"}, {"s", ""},
	} {
		if strings.HasSuffix(w, suf.from) && len(w)-len(suf.from)+len(suf.to) >= 3 {
			if suf.from == "s" && (strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is")) {
				continue
			}
			w = w[:len(w)-len(suf.from)] + suf.to
			break
		}
	}
	return strings.TrimSuffix(w, "e")
}

// stems returns the stems of the content words of text, stop words
// removed.
func stems(text string) []string {
	ws := words(text)
	out := ws[:0]
	for _, w := range ws {
		if !isStopWord(w) {
			out = append(out, stem(w))
		}
	}
	return out
}

// isStopWord reports whether w carries no topic: English function words and
// the words every question about data uses.
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
		"can", "could", "did", "do", "does", "during", "each", "for", "from", "give", "had", "has", "have",
		"he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "list", "me", "many", "much",
		"my", "of", "on", "or", "our", "please", "she", "show", "so", "tell", "than", "that", "the", "their",
		"them", "then", "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what",
		"whats", "when", "where", "which", "who", "whom", "whose", "why", "will", "with", "would", "you",
		"your", "s", "t", "there's", "get", "got", "find", "know", "let", "number", "count", "total",
		"value", "values", "ever", "been's", "yet", "just", "same", "other", "one", "ones":
		return true
	}
	return false
}
