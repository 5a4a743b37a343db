// Package evidence is Clinsight's evidence-synthesis pipeline (TrialMind's
// design) over a local literature corpus, from a PICO question to a
// meta-analysis, with a human checking and editing every step.
//
// The corpus: Import streams PubMed XML, MEDLINE (.nbib), RIS and CSV
// records into SQLite with an FTS5 index over title, abstract and MeSH
// headings, and full texts (JATS/PMC XML, plain text, PDF) split into
// numbered chunks (ChunkText); every file is atomic, with progress,
// cancellation and errors naming record and line. Corpus.Search runs
// PubMed-style boolean queries (ParseQuery, translated to FTS5);
// Corpus.StudyText returns a study's numbered chunks.
//
// The steps: GenerateTerms (search terms from the PICO, turned into a
// boolean query by SearchTerms.Query), RankByPICO (an LLM-free ranking),
// GenerateCriteria and Screener (YES / NO / UNCERTAIN per criterion, in
// parallel), Extractor (fields and results, each value with the chunks it
// cites and checked against them), Standardize (the standardized results
// table, computed in Go) and Project.Analyze (the meta-analysis of
// app/meta). A Project holds a review's inputs, outputs, edits and
// decisions; a Session runs its steps, each leaving the project unchanged
// when the model fails. PRISMA counts, the PRISMA flow diagram and
// WriteProjectWorkbook report a review.
//
// EvalScreening (LLM-free) and EvalScreeningWithModel score screening on
// TrialReviewBench; DemoData and DemoProject make the demo workspace's
// literature and review. The package depends on app/meta, localllm,
// datasets and export; it never imports the workspace or the UI.
package evidence
