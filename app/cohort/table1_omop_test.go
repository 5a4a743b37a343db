package cohort

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// refVisit picks each person's index visit without window functions.
const refVisit = `rv AS (SELECT v.person_id, MIN(v.visit_occurrence_id) AS vid FROM visit_occurrence v
  JOIN (SELECT person_id, MIN(COALESCE(visit_start_datetime, visit_start_date)) AS t FROM visit_occurrence GROUP BY person_id) f
    ON f.person_id = v.person_id AND COALESCE(v.visit_start_datetime, v.visit_start_date) = f.t
  GROUP BY v.person_id)`

// TestTable1OnOMOPMatchesReferenceQueries computes Table 1 by sex on the
// demo OMOP source and checks every cell against statements written on
// the OMOP tables themselves.
func TestTable1OnOMOPMatchesReferenceQueries(t *testing.T) {
	ctx := context.Background()
	r, err := datasets.NewRunner(ctx, omopDemoPath(t), datasets.RunnerOptions{MaxRows: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const cohortSQL = "SELECT person_id, year_of_birth FROM person WHERE year_of_birth <= 1975"
	tb, err := ComputeTable1(ctx, r, Table1Options{Query: cohortSQL, PatientColumn: "person_id", Stratify: StratifySex, Labs: []string{"Creatinine", "White Blood Cells"}, TopDiagnoses: 6, TopMedications: 6})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Strata) != 2 || tb.Strata[0].Name != "FEMALE" || tb.Strata[1].Name != "MALE" {
		t.Fatalf("strata %+v", tb.Strata)
	}
	ids := "SELECT person_id FROM person WHERE year_of_birth <= 1975"
	sexOf := "SELECT p.person_id FROM person p JOIN concept c ON c.concept_id = p.gender_concept_id WHERE c.concept_name = '%s' AND p.person_id IN (" + ids + ")"
	cols := []string{ids, fmt.Sprintf(sexOf, "FEMALE"), fmt.Sprintf(sexOf, "MALE")}
	query := func(col, body string) [][]any {
		t.Helper()
		res, err := r.Query(ctx, "WITH ref AS ("+col+"), "+refVisit+"\n"+body)
		if err != nil {
			t.Fatalf("reference %s: %v", body, err)
		}
		return res.Rows
	}
	count := func(col, body string) int64 {
		t.Helper()
		n, _ := datasets.Number(query(col, body)[0][0])
		return int64(n)
	}
	visit := " FROM ref JOIN rv ON rv.person_id = ref.person_id JOIN visit_occurrence v ON v.visit_occurrence_id = rv.vid JOIN person p ON p.person_id = ref.person_id "
	lab := func(name string) string {
		return "SELECT (SELECT MIN(m.value_as_number) FROM measurement m JOIN concept c ON c.concept_id = m.measurement_concept_id WHERE m.visit_occurrence_id = rv.vid AND c.concept_name = '" + name + "' AND m.value_as_number IS NOT NULL" +
			" AND COALESCE(m.measurement_datetime, m.measurement_date) = (SELECT MIN(COALESCE(n.measurement_datetime, n.measurement_date)) FROM measurement n WHERE n.visit_occurrence_id = rv.vid AND n.measurement_concept_id = c.concept_id AND n.value_as_number IS NOT NULL)) AS x FROM ref LEFT JOIN rv ON rv.person_id = ref.person_id"
	}
	labs := map[string]string{"Creatinine": lab("Creatinine [Mass/volume] in Serum or Plasma"), "White Blood Cells": lab("Leukocytes [#/volume] in Blood")}
	codeRe := regexp.MustCompile(`\((\d+)\)$`)
	checked := 0
	totals := map[string]int64{}
	for _, row := range tb.Rows {
		for j, got := range append([]Table1Cell{row.Overall}, row.Strata...) {
			col := cols[j]
			where := fmt.Sprintf("row %q column %d", row.Label, j)
			total, ok := totals[col]
			if !ok {
				total = count(col, "SELECT COUNT(*) FROM ref")
				totals[col] = total
			}
			wantCount := func(body string) {
				t.Helper()
				checked++
				if want := count(col, body); got.Count != want || got.Of != total {
					t.Errorf("%s: %d of %d, want %d of %d", where, got.Count, got.Of, want, total)
				}
			}
			wantStats := func(values string) {
				t.Helper()
				checked++
				rows := query(col, "SELECT COUNT(x), AVG(x) FROM ("+values+")")
				n, _ := datasets.Number(rows[0][0])
				m, _ := datasets.Number(rows[0][1])
				if got.Values != int64(n) || n > 0 && fmt.Sprintf("%.9f", got.Mean) != fmt.Sprintf("%.9f", m) {
					t.Errorf("%s: %d values, mean %v; want %v, %v", where, got.Values, got.Mean, n, m)
				}
			}
			variable, _, _ := strings.Cut(row.Variable, " at admission")
			switch {
			case row.Kind == RowHeading:
			case row.Kind == RowCount:
				checked++
				if got.Count != total {
					t.Errorf("%s: %d, want %d", where, got.Count, total)
				}
			case row.Variable == "Age, years" && row.Kind != RowMissing:
				wantStats("SELECT CAST(substr(v.visit_start_date, 1, 4) AS INTEGER) - p.year_of_birth AS x" + visit)
			case row.Variable == "Length of stay, days" && row.Kind != RowMissing:
				wantStats("SELECT julianday(COALESCE(v.visit_end_datetime, v.visit_end_date)) - julianday(COALESCE(v.visit_start_datetime, v.visit_start_date)) AS x" + visit)
			case (row.Variable == "Age, years" || row.Variable == "Length of stay, days") && row.Kind == RowMissing:
				wantCount("SELECT COUNT(*) FROM ref WHERE person_id NOT IN (SELECT person_id FROM rv)")
			case row.Variable == "Sex" && row.Kind == RowLevel:
				wantCount("SELECT COUNT(*) FROM ref JOIN person p ON p.person_id = ref.person_id JOIN concept c ON c.concept_id = p.gender_concept_id WHERE c.concept_name = " + datasets.QuoteString(row.Label))
			case row.Variable == "Race/ethnicity" && row.Kind == RowLevel:
				wantCount("SELECT COUNT(*)" + visit + "LEFT JOIN concept c ON c.concept_id = p.race_concept_id AND p.race_concept_id <> 0 WHERE COALESCE(c.concept_name, p.race_source_value) = " + datasets.QuoteString(row.Label))
			case row.Variable == "Admission type" && row.Kind == RowLevel:
				wantCount("SELECT COUNT(*)" + visit + "JOIN concept c ON c.concept_id = v.visit_concept_id WHERE c.concept_name = " + datasets.QuoteString(row.Label))
			case row.Kind == RowMissing && (row.Variable == "Sex" || row.Variable == "Race/ethnicity" || row.Variable == "Admission type"):
				checked++
				if got.Count != 0 {
					t.Errorf("%s: %d missing, the demo records every value", where, got.Count)
				}
			case strings.HasPrefix(row.Variable, "Most frequent diagnoses"):
				m := codeRe.FindStringSubmatch(row.Label)
				if m == nil {
					t.Fatalf("%s names no concept id", where)
				}
				wantCount("SELECT COUNT(DISTINCT ref.person_id) FROM ref JOIN rv ON rv.person_id = ref.person_id JOIN condition_occurrence co ON co.visit_occurrence_id = rv.vid WHERE co.condition_concept_id = " + m[1])
			case strings.HasPrefix(row.Variable, "Most frequent medications"):
				wantCount("SELECT COUNT(DISTINCT ref.person_id) FROM ref JOIN rv ON rv.person_id = ref.person_id JOIN drug_exposure d ON d.visit_occurrence_id = rv.vid LEFT JOIN concept c ON c.concept_id = d.drug_concept_id AND d.drug_concept_id <> 0 WHERE COALESCE(c.concept_name, d.drug_source_value) = " + datasets.QuoteString(row.Label))
			case labs[variable[:strings.IndexByte(variable+",", ',')]] != "":
				body := labs[variable[:strings.IndexByte(variable+",", ',')]]
				if row.Kind == RowMissing {
					wantCount("SELECT COUNT(*) FROM (" + body + ") WHERE x IS NULL")
				} else {
					wantStats(body)
				}
			default:
				t.Errorf("%s: no reference", where)
			}
		}
	}
	if checked < 60 {
		t.Errorf("only %d cells checked", checked)
	}
}
