package textsearch

// porterIrregular returns the stem of the irregular forms of NLTK's
// PorterStemmer in its default NLTK_EXTENSIONS mode, stemmed to the given
// paradigm directly (a switch, which unlike a map costs nothing at
// program start).
func porterIrregular(word string) (string, bool) {
	switch word {
	case "sky", "skies":
		return "sky", true
	case "dying":
		return "die", true
	case "lying":
		return "lie", true
	case "tying":
		return "tie", true
	case "news", "howe", "proceed", "exceed", "succeed":
		return word, true
	case "innings", "inning":
		return "inning", true
	case "outings", "outing":
		return "outing", true
	case "cannings", "canning":
		return "canning", true
	}
	return "", false
}

// PorterStem stems a lower-case word as NLTK's PorterStemmer() does in its
// default NLTK_EXTENSIONS mode (the stemmer rouge-score uses): Porter's
// 1980 algorithm with Martin Porter's and NLTK's later extensions, so that
// "effusions" and "effusion" give "effus" and "relational" gives "relat".
// Words of two letters or fewer and words with a character outside ASCII
// ("müller") are returned unchanged.
func PorterStem(word string) string {
	if s, ok := porterIrregular(word); ok {
		return s
	}
	if len(word) <= 2 || !isASCII(word) {
		return word
	}
	w := []byte(word)
	w = porterStep1a(w)
	w = porterStep1b(w)
	w = porterStep1c(w)
	w = porterStep2(w)
	w = porterStep3(w)
	w = porterStep4(w)
	w = porterStep5a(w)
	w = porterStep5b(w)
	return string(w)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isConsonant reports whether w[i] is a consonant: not a vowel, and a 'y'
// only when it starts the word or follows a vowel.
func isConsonant(w []byte, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		if i == 0 {
			return true
		}
		return !isConsonant(w, i-1)
	}
	return true
}

// measure is Porter's m: the number of vowel-consonant sequences.
func measure(w []byte) int {
	m := 0
	for i := 1; i < len(w); i++ {
		if !isConsonant(w, i-1) && isConsonant(w, i) {
			m++
		}
	}
	return m
}

func containsVowel(w []byte) bool {
	for i := range w {
		if !isConsonant(w, i) {
			return true
		}
	}
	return false
}

func endsDoubleConsonant(w []byte) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && isConsonant(w, n-1)
}

// endsCVC is Porter's *o condition with NLTK's extension for two-letter
// stems (vowel + consonant).
func endsCVC(w []byte) bool {
	n := len(w)
	if n >= 3 && isConsonant(w, n-3) && !isConsonant(w, n-2) && isConsonant(w, n-1) {
		c := w[n-1]
		return c != 'w' && c != 'x' && c != 'y'
	}
	return n == 2 && !isConsonant(w, 0) && isConsonant(w, 1)
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

// porterRule replaces suffix by replacement when cond (given the stem
// without the suffix; nil means always) holds. The special suffix "*d"
// matches a double consonant ending.
type porterRule struct {
	suffix, replacement string
	cond                func(stem []byte) bool
}

// applyRules applies the first rule whose suffix matches: when its
// condition fails the word is returned unchanged, without trying the
// remaining rules (as NLTK's _apply_rule_list).
func applyRules(w []byte, rules []porterRule) []byte {
	for _, r := range rules {
		if r.suffix == "*d" {
			if endsDoubleConsonant(w) {
				stem := w[:len(w)-2]
				if r.cond == nil || r.cond(stem) {
					return append(clone(stem), r.replacement...)
				}
				return w
			}
			continue
		}
		if hasSuffix(w, r.suffix) {
			stem := w[:len(w)-len(r.suffix)]
			if r.cond == nil || r.cond(stem) {
				return append(clone(stem), r.replacement...)
			}
			return w
		}
	}
	return w
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

func positiveMeasure(stem []byte) bool { return measure(stem) > 0 }
func measureAbove1(stem []byte) bool   { return measure(stem) > 1 }

func porterStep1a(w []byte) []byte {
	if hasSuffix(w, "ies") && len(w) == 4 {
		return append(clone(w[:1]), "ie"...)
	}
	return applyRules(w, []porterRule{
		{"sses", "ss", nil},
		{"ies", "i", nil},
		{"ss", "ss", nil},
		{"s", "", nil},
	})
}

func porterStep1b(w []byte) []byte {
	if hasSuffix(w, "ied") {
		if len(w) == 4 {
			return append(clone(w[:1]), "ie"...)
		}
		return append(clone(w[:len(w)-3]), 'i')
	}
	if hasSuffix(w, "eed") {
		stem := w[:len(w)-3]
		if measure(stem) > 0 {
			return append(clone(stem), "ee"...)
		}
		return w
	}
	var inter []byte
	ok := false
	for _, suf := range []string{"ed", "ing"} {
		if hasSuffix(w, suf) {
			inter = w[:len(w)-len(suf)]
			if containsVowel(inter) {
				ok = true
				break
			}
		}
	}
	if !ok {
		return w
	}
	inter = clone(inter)
	last := inter[len(inter)-1]
	return applyRules(inter, []porterRule{
		{"at", "ate", nil},
		{"bl", "ble", nil},
		{"iz", "ize", nil},
		{"*d", string(last), func([]byte) bool { return last != 'l' && last != 's' && last != 'z' }},
		{"", "e", func(stem []byte) bool { return measure(stem) == 1 && endsCVC(stem) }},
	})
}

func porterStep1c(w []byte) []byte {
	return applyRules(w, []porterRule{
		{"y", "i", func(stem []byte) bool { return len(stem) > 1 && isConsonant(stem, len(stem)-1) }},
	})
}

func porterStep2(w []byte) []byte {
	if hasSuffix(w, "alli") && positiveMeasure(w[:len(w)-4]) {
		return porterStep2(append(clone(w[:len(w)-4]), "al"...))
	}
	word := w
	return applyRules(w, []porterRule{
		{"ational", "ate", positiveMeasure},
		{"tional", "tion", positiveMeasure},
		{"enci", "ence", positiveMeasure},
		{"anci", "ance", positiveMeasure},
		{"izer", "ize", positiveMeasure},
		{"bli", "ble", positiveMeasure},
		{"alli", "al", positiveMeasure},
		{"entli", "ent", positiveMeasure},
		{"eli", "e", positiveMeasure},
		{"ousli", "ous", positiveMeasure},
		{"ization", "ize", positiveMeasure},
		{"ation", "ate", positiveMeasure},
		{"ator", "ate", positiveMeasure},
		{"alism", "al", positiveMeasure},
		{"iveness", "ive", positiveMeasure},
		{"fulness", "ful", positiveMeasure},
		{"ousness", "ous", positiveMeasure},
		{"aliti", "al", positiveMeasure},
		{"iviti", "ive", positiveMeasure},
		{"biliti", "ble", positiveMeasure},
		{"fulli", "ful", positiveMeasure},
		{"logi", "log", func([]byte) bool { return positiveMeasure(word[:len(word)-3]) }},
	})
}

func porterStep3(w []byte) []byte {
	return applyRules(w, []porterRule{
		{"icate", "ic", positiveMeasure},
		{"ative", "", positiveMeasure},
		{"alize", "al", positiveMeasure},
		{"iciti", "ic", positiveMeasure},
		{"ical", "ic", positiveMeasure},
		{"ful", "", positiveMeasure},
		{"ness", "", positiveMeasure},
	})
}

func porterStep4(w []byte) []byte {
	return applyRules(w, []porterRule{
		{"al", "", measureAbove1},
		{"ance", "", measureAbove1},
		{"ence", "", measureAbove1},
		{"er", "", measureAbove1},
		{"ic", "", measureAbove1},
		{"able", "", measureAbove1},
		{"ible", "", measureAbove1},
		{"ant", "", measureAbove1},
		{"ement", "", measureAbove1},
		{"ment", "", measureAbove1},
		{"ent", "", measureAbove1},
		{"ion", "", func(stem []byte) bool {
			return measure(stem) > 1 && (stem[len(stem)-1] == 's' || stem[len(stem)-1] == 't')
		}},
		{"ou", "", measureAbove1},
		{"ism", "", measureAbove1},
		{"ate", "", measureAbove1},
		{"iti", "", measureAbove1},
		{"ous", "", measureAbove1},
		{"ive", "", measureAbove1},
		{"ize", "", measureAbove1},
	})
}

func porterStep5a(w []byte) []byte {
	if hasSuffix(w, "e") {
		stem := w[:len(w)-1]
		if m := measure(stem); m > 1 || (m == 1 && !endsCVC(stem)) {
			return clone(stem)
		}
	}
	return w
}

func porterStep5b(w []byte) []byte {
	if hasSuffix(w, "ll") && measure(w[:len(w)-1]) > 1 {
		return clone(w[:len(w)-1])
	}
	return w
}
