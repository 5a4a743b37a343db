// Package cohort is Clinsight's cohort-discovery pipeline: plain-English
// questions become validated, self-correcting, read-only SQL over any
// SQLite data source, with an explained answer, the cohort table and an
// Excel export.
//
// A question goes through these stages, each recorded in the Answer
// (attempts, SQL, errors, timings, model calls, tokens) for provenance:
//
//  1. Retrieve the documentation of the relevant tables (Index): embedding
//     similarity from the vector store fused with BM25, name and synonym
//     phrases, stored values and the tables' many-to-one structure; top-k
//     with scores. Below a relevance threshold the answer is "I don't have
//     data to answer that".
//  2. Decline without a model what must be declined: requests for private
//     details, years after the data's collection period.
//  3. Classify (answerable, out_of_scope, non_medical, future_data,
//     private_data) and generate SQLite SQL in one JSON-schema call, with a
//     prompt holding only the retrieved documentation and the rules;
//     temperature 0 and a fixed seed for every call.
//  4. Validate the SQL with the read-only runner (SQLite prepares it).
//  5. Autocorrect: on an error, send the model its SQL, the database's
//     exact error, the full column lists and the closest names, up to 10
//     attempts; an empty result triggers one re-check of the filters
//     against stored values.
//  6. Execute through the read-only runner (timeout, row cap).
//  7. Explain the result in plain language, streamed, and check every
//     number of the explanation against the result and the question.
//
// Follow-up questions carry the earlier turns (Request.History). The
// package depends on small interfaces (localllm.Chatter, SQLRunner,
// vectorstore.Embedder), never on the workspace or the UI; its prompts are
// the text templates in prompts/.
package cohort
