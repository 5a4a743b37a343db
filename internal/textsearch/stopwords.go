package textsearch

import (
	"strings"
	"sync"
)

// englishStopList is the English stop words: NLTK's English list
// (nltk_data corpora/stopwords/english, 179 words: pronouns, articles,
// auxiliaries, conjunctions, prepositions, and the fragments "don", "t",
// "ll", ... that Words makes of contractions; the forms with an apostrophe
// are left out, as Words never returns them) and the function words it
// lacks that clinical text uses as often: also, could, may, might, must,
// per, shall, upon, via, whether, within, without, would, yet. Only
// function words: a word that can name a topic ("back", "system", "first",
// "found", "less" of scikit-learn's longer list) is not one.
const englishStopList = `
	i me my myself we our ours ourselves you your yours yourself yourselves
	he him his himself she her hers herself it its itself they them their
	theirs themselves what which who whom this that these those am is are was
	were be been being have has had having do does did doing a an the and but
	if or because as until while of at by for with about against between into
	through during before after above below to from up down in out on off
	over under again further then once here there when where why how all any
	both each few more most other some such no nor not only own same so than
	too very s t can will just don should now d ll m o re ve y ain aren couldn
	didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn
	weren won wouldn
	also could may might must per shall upon via whether within without would yet`

var englishStopWords = NewWordSet(englishStopList)

// IsStopWord reports whether w, a lower-case word as Words returns it, is
// an English stop word: a function word that says nothing about the topic
// of a text. Pipelines add their own domain stop words (the words every
// question about data, every case description or every trial report uses)
// as a WordSet of their own.
func IsStopWord(w string) bool { return englishStopWords.Has(w) }

// WordSet is a set of lower-case words: a stop list or a domain vocabulary.
// The set is built from its list on first use, so that the word lists of
// every pipeline a program links cost nothing at its start (clinsight
// --help); it is read-only once made and safe for concurrent use.
type WordSet struct {
	set func() map[string]struct{}
}

// NewWordSet returns the set of the space-separated words of list.
func NewWordSet(list string) WordSet {
	return WordSet{set: sync.OnceValue(func() map[string]struct{} {
		words := strings.Fields(list)
		s := make(map[string]struct{}, len(words))
		for _, w := range words {
			s[w] = struct{}{}
		}
		return s
	})}
}

// Has reports whether w is in the set.
func (s WordSet) Has(w string) bool {
	if s.set == nil {
		return false
	}
	_, ok := s.set()[w]
	return ok
}
