// Package impression turns radiology FINDINGS into an IMPRESSION the way
// ImpressionGPT does, offline, over the site's own report corpus: it
// imports reports (Open-i CSV and XML, plain text split by section
// headers) into SQLite, labels each with CheXpert's 14 observations (a
// rule-based labeler: mentions with synonyms, negation, uncertainty), finds
// the most similar reports (Euclidean distance of the label vectors, ties
// broken by TF-IDF similarity of the findings), builds a dynamic few-shot
// prompt from them and refines the model's answer iteratively with ROUGE-1
// feedback (the paper's Algorithm 1). Without a model it returns the
// impression of a retrieved report, labelled as retrieved. Retrieved and
// generated impressions are checked against the findings with the same
// labeler (Contradictions): retrieval and the choice among iterations
// prefer a consistent impression, and one that still contradicts its
// findings is flagged.
//
// The package depends on small interfaces (localllm.Chatter, a *sql.DB for
// the corpus), never on the workspace, the UI or Fyne.
package impression
