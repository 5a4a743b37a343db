package cohort

import "github.com/clinsight/clinsight/internal/textsearch"

// questionWords are the cohort pipeline's domain stop words: the words
// every question about data uses ("show", "list", "number", "count",
// "total", "value") and question words the English list does not hold
// ("us": in a question it is never ultrasound).
var questionWords = textsearch.NewWordSet(`count ever find get give got know let list many much number one ones
	please show tell total us value values whats`)

// isStopWord reports whether a lower-case word carries no topic: an
// English stop word or one of questionWords.
func isStopWord(w string) bool { return textsearch.IsStopWord(w) || questionWords.Has(w) }

// stem normalises a word for retrieval: plural endings stripped
// (textsearch.PluralStem), so that "diagnoses" meets "diagnose" and
// "prescriptions" meets "prescription". Porter's stemmer, tried in its
// place, lowered the EHRSQL retrieval recall (valid split, lexical
// embedder: 0.9866 against 0.9872 at the top 5, 0.9603 against 0.9656
// with every table found); the word families that matter for the schema
// and that plural stripping does not join are in the thesaurus.
func stem(w string) string { return textsearch.PluralStem(w) }

// stems returns the stems of the content words of text (textsearch.Words),
// stop words removed.
func stems(text string) []string {
	return textsearch.Analyzer{Stop: isStopWord, Stem: stem}.Terms(text)
}
