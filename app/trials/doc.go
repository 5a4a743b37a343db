// Package trials matches a patient description to clinical trials, offline:
// trial import and criteria splitting, an SQLite FTS5 index, weighted
// concept queries (from a local model or a deterministic extractor), BM25,
// embedding similarity (STS1/STS2), rank fusion, age and sex filters, and
// criterion-level eligibility of the top trials by the model.
package trials
