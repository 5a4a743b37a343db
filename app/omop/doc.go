// Package omop adds what cohort discovery needs on an OMOP CDM database
// beyond SQL generation: concept resolution (a clinical term or a code of a
// question becomes a concept set: the standard concept, found by name,
// synonym or code in the vocabulary, mapped from a non-standard concept
// through 'Maps to', expanded to its descendants, with the number of
// persons it finds), the deterministic term extractor used without a model
// (with a documented vocabulary of clinical abbreviations and lay terms),
// the LLM-free template queries, and the export of concept sets as the
// JSON ATLAS imports.
//
// It reads the database through a *sql.DB opened read-only; every query it
// writes uses concept ids, never names.
package omop
