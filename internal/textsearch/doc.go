// Package textsearch is Clinsight's one text toolkit for lexical search
// over texts held in memory: the tokenizer (Words, Tokens), the English
// stop words (IsStopWord) and word sets for a pipeline's own (WordSet),
// two normalisers — PorterStem, NLTK's Porter stemmer, and PluralStem,
// plural stripping only — an Analyzer chaining them, Okapi BM25 (BM25) and
// TF-IDF cosine similarity (TFIDF, SmoothIDF).
//
// Every pipeline builds its text signals from these parts and adds only
// its domain vocabulary (clinical abbreviations, thesauri, the words every
// case description or trial report uses), kept and documented in the
// pipeline's package. The database indexes use SQLite's FTS5 (its bm25()
// and porter tokenizer) instead; this package is for the small in-memory
// corpora: the table documents of a database, a review's candidate
// studies, a corpus of radiology reports, a text to embed.
//
// The package depends on the standard library only, so that any layer may
// use it.
package textsearch
