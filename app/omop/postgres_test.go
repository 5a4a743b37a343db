package omop

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// syntheaOnPostgres loads Synthea27Nj into schema cdm of a new database of
// the test cluster and opens it through the PostgreSQL engine as a
// read-only role (postgres.ReaderGrants), as a site's data source would.
func syntheaOnPostgres(t *testing.T) *postgres.Engine {
	t.Helper()
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "omop")
	counts := c.LoadSynthea27Nj(t, db, "cdm")
	if counts["concept"] == 0 || counts["condition_occurrence"] == 0 {
		t.Fatalf("loaded %v", counts)
	}
	const reader = "omop_reader"
	c.Reader(t, db, reader, postgres.ReaderGrants(reader, db, []string{"cdm"}), "OMOP_READER_PW")
	eng, err := postgres.Open(context.Background(), postgres.Source{DSN: c.URL(reader, db), Schemas: []string{"cdm"}, PasswordEnv: "OMOP_READER_PW"}, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// TestResolveOnPostgresEqualsSQLite resolves the Synthea27Nj phrase list
// on the same CDM served by PostgreSQL (a read-only role; no full-text
// index: names and synonyms by LIKE) and on the SQLite import (FTS5
// index): the same best concepts (all but at most two phrases), and for
// those the same concept sets (ids, descendants) and person counts; the
// top-3 rate floor holds on PostgreSQL too.
func TestResolveOnPostgresEqualsSQLite(t *testing.T) {
	lite := resolver(t, syntheaDB(t))
	ctx := context.Background()
	eng := syntheaOnPostgres(t)
	pg, err := NewResolverOn(ctx, eng)
	if err != nil {
		t.Fatal(err)
	}
	if pg.fts || pg.ancestors || !pg.hasRelation { // Synthea27Nj ships concept_ancestor empty: descendants come from 'Subsumes'
		t.Fatalf("PostgreSQL resolver: fts %v, ancestors %v, relationships %v", pg.fts, pg.ancestors, pg.hasRelation)
	}
	same, top3 := 0, 0
	var differ []string
	for _, tc := range syntheaPhrases {
		term := NewTerm(tc.phrase, tc.domain)
		sa, okA, err := lite.Resolve(ctx, term)
		if err != nil {
			t.Fatal(err)
		}
		sb, okB, err := pg.Resolve(ctx, term)
		if err != nil {
			t.Fatalf("%q on PostgreSQL: %v", tc.phrase, err)
		}
		if okB && (sb.Items[0].ID == tc.want || len(sb.Alternatives) > 0 && sb.Alternatives[0].ID == tc.want ||
			len(sb.Alternatives) > 1 && sb.Alternatives[1].ID == tc.want) {
			top3++
		}
		if okA != okB || !okA || sa.Items[0].ID != sb.Items[0].ID {
			differ = append(differ, fmt.Sprintf("%q (SQLite %v, PostgreSQL %v)", tc.phrase, sa.Items, sb.Items))
			continue
		}
		same++
		if fmt.Sprint(sa.IDs) != fmt.Sprint(sb.IDs) || sa.Persons != sb.Persons || sa.PersonsDirect != sb.PersonsDirect ||
			sa.Descendants != sb.Descendants || sa.DescendantSource != sb.DescendantSource {
			t.Errorf("%q: set on SQLite %d ids, %d persons (%d direct), %d descendants; on PostgreSQL %d ids, %d persons (%d direct), %d descendants",
				tc.phrase, len(sa.IDs), sa.Persons, sa.PersonsDirect, sa.Descendants, len(sb.IDs), sb.Persons, sb.PersonsDirect, sb.Descendants)
		}
	}
	n := len(syntheaPhrases)
	t.Logf("PostgreSQL: %d of %d phrases give SQLite's best concept, set and counts; top-3 %d (%.1f%%); differ: %s",
		same, n, top3, 100*float64(top3)/float64(n), strings.Join(differ, "; "))
	// Without the FTS5 index the LIKE search ranks a few names otherwise
	// ("albuterol inhaler" finds its wanted concept first on PostgreSQL,
	// second on SQLite): at most two phrases may differ.
	if len(differ) > 2 {
		t.Errorf("%d phrases resolve differently on PostgreSQL: %s", len(differ), strings.Join(differ, "; "))
	}
	if float64(top3)/float64(n) < 0.9 {
		t.Errorf("top-3 rate on PostgreSQL %.1f%%, want at least 90%%", 100*float64(top3)/float64(n))
	}
	// The LLM-free templates run on PostgreSQL with SQLite's answers.
	liteDB := syntheaDB(t)
	for _, q := range []string{"How many patients have hypertension?", "How many patients have hypertension by gender?",
		"How many patients with hypertension by age band?", "How many patients have hypertension and take lisinopril?"} {
		sa, ua, err := lite.ResolveTerms(ctx, ExtractTerms(q))
		if err != nil {
			t.Fatal(err)
		}
		sb, ub, err := pg.ResolveTerms(ctx, ExtractTerms(q))
		if err != nil {
			t.Fatal(err)
		}
		ta, okA, why := MatchTemplate(q, sa, ua)
		tb, okB, _ := MatchTemplate(q, sb, ub)
		if !okA || !okB || ta.SQL != tb.SQL {
			t.Errorf("%q: template on SQLite %v (%s), on PostgreSQL %v:\n%s\n%s", q, okA, why, okB, ta.SQL, tb.SQL)
			continue
		}
		want := sqliteRows(t, liteDB, ta.SQL)
		res, err := eng.Query(ctx, tb.SQL)
		if err != nil {
			t.Errorf("%q on PostgreSQL: %v\n%s", q, err, tb.SQL)
			continue
		}
		if got := fmt.Sprint(res.Rows); got != want {
			t.Errorf("%q: PostgreSQL %s, SQLite %s", q, got, want)
		}
	}
	// A code typed in the question, a non-standard concept's 'Maps to'.
	hits, err := pg.SearchHits(ctx, NewTerm("840539006", ""), 1, 0)
	if err != nil || len(hits) != 1 || hits[0].ID != 37311061 || hits[0].Persons <= 0 {
		t.Errorf("code 840539006 on PostgreSQL: %+v, %v", hits, err)
	}
}

// sqliteRows runs a query on db and writes its rows as fmt prints a
// result's.
func sqliteRows(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	return fmt.Sprint(out)
}
