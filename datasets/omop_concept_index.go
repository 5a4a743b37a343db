package datasets

import (
	"context"
	"database/sql"
	"fmt"
)

// OMOPConceptIndex is the FTS5 table Clinsight builds beside an OMOP CDM's
// vocabulary: one row per concept name (synonym 0) and per concept synonym
// (synonym 1), with the concept's code, so that a clinical term or a code
// typed in a question finds its concepts. It is not part of the CDM.
const OMOPConceptIndex = "clinsight_concept_fts"

// BuildOMOPConceptIndex (re)builds OMOPConceptIndex from the concept and
// concept_synonym tables of db, in one transaction, and returns the number
// of names indexed; 0 and no index when db has no concept table. Names are
// tokenized with the Porter stemmer over Unicode words without diacritics,
// so "diabetic" finds "Diabetes mellitus".
func BuildOMOPConceptIndex(ctx context.Context, db *sql.DB) (int64, error) {
	typ, err := schemaObjectType(ctx, db, "concept")
	if err != nil || typ == "" {
		return 0, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("concept search index: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return 0, fmt.Errorf("concept search index: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			rollback(conn)
		}
	}()
	stmts := []string{
		"DROP TABLE IF EXISTS " + OMOPConceptIndex,
		"CREATE VIRTUAL TABLE " + OMOPConceptIndex + " USING fts5(name, code, concept_id UNINDEXED, synonym UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')",
		"INSERT INTO " + OMOPConceptIndex + " (name, code, concept_id, synonym) SELECT concept_name, concept_code, concept_id, 0 FROM concept WHERE concept_name IS NOT NULL",
	}
	if typ, err := schemaObjectType(ctx, conn, "concept_synonym"); err != nil {
		return 0, err
	} else if typ != "" {
		stmts = append(stmts, "INSERT INTO "+OMOPConceptIndex+" (name, code, concept_id, synonym) SELECT s.concept_synonym_name, c.concept_code, s.concept_id, 1 FROM concept_synonym s JOIN concept c ON c.concept_id = s.concept_id WHERE s.concept_synonym_name IS NOT NULL AND s.concept_synonym_name <> c.concept_name")
	}
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("concept search index: %w", err)
		}
	}
	var n int64
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+OMOPConceptIndex).Scan(&n); err != nil {
		return 0, fmt.Errorf("concept search index: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return 0, fmt.Errorf("concept search index: commit: %w", err)
	}
	committed = true
	return n, nil
}

// IsOMOP reports whether a catalog describes an OMOP CDM database: the
// OMOP profile documents its tables, or it has the tables every CDM
// instance has (person, concept, and condition_occurrence or
// drug_exposure), whatever their documentation.
func IsOMOP(cat *Catalog) bool {
	for _, p := range cat.Profiles {
		if p.Name == OMOPProfile {
			return true
		}
	}
	has := func(n string) bool { _, ok := cat.Table(n); return ok }
	return has("person") && has("concept") && (has("condition_occurrence") || has("drug_exposure"))
}
