// Package evidence is Clinsight's evidence-synthesis pipeline (TrialMind's
// design) over a local literature corpus: importing PubMed XML, MEDLINE
// (.nbib), RIS and CSV records into SQLite with an FTS5 index over title,
// abstract and MeSH headings; PubMed-style boolean queries translated to
// FTS5; and an LLM-free ranking of studies by a review's PICO, scored on
// TrialReviewBench's screening task. Full texts (JATS/PMC XML, plain text,
// PDF) are imported the same way and split into numbered chunks
// (ChunkText), which Corpus.StudyText returns for extraction with citations.
//
// The flow is Import (streaming, atomic per file, with progress,
// cancellation and errors naming record and line) → Corpus.Search (a
// boolean query, see ParseQuery) → RankByPICO (BM25 of the PICO elements
// against each record) → the user's screening decisions. EvalScreening
// scores the ranking on TrialReviewBench; DemoData writes synthetic records
// for the demo workspace. The package depends on the datasets layer only;
// it never imports the workspace or the UI.
package evidence
