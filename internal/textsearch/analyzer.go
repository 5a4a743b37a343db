package textsearch

import "unicode/utf8"

// Analyzer turns a text into the terms an index holds: its Words, less
// those shorter than MinLen characters and the stop words, each
// normalised by Stem, less the stems that are stop words ("studies" →
// "study" when "study" is a stop word). The zero value keeps every word
// as it is.
type Analyzer struct {
	// MinLen drops words of fewer characters (runes); 0 keeps all.
	MinLen int
	// Stop reports the words to drop; nil drops none. IsStopWord, or a
	// function adding a pipeline's own stop words to it.
	Stop func(w string) bool
	// Stem normalises a word (PorterStem, PluralStem); nil keeps it.
	Stem func(w string) string
}

// Terms returns the terms of text, in order, repeats kept.
func (a Analyzer) Terms(text string) []string {
	ws := Words(text)
	out := ws[:0]
	for _, w := range ws {
		if a.MinLen > 1 && utf8.RuneCountInString(w) < a.MinLen {
			continue
		}
		if a.Stop != nil && a.Stop(w) {
			continue
		}
		if a.Stem != nil {
			w = a.Stem(w)
			if a.Stop != nil && a.Stop(w) {
				continue
			}
		}
		out = append(out, w)
	}
	return out
}
