package disclosure

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

func TestAnalyze(t *testing.T) {
	for _, tc := range []struct {
		q                 string
		agg, nested, comp bool
		items             []ColumnKind
		tables            []string
	}{
		{q: "SELECT gender, count(*) FROM patients GROUP BY gender", agg: true, items: []ColumnKind{Key, Count}, tables: []string{"patients"}},
		{q: "select avg(anchor_age) AS mean_age from patients p where p.gender='F';", agg: true, items: []ColumnKind{Statistic}, tables: []string{"p"}},
		{q: "SELECT COUNT(DISTINCT a.subject_id) n, max(a.admittime) FROM admissions AS a JOIN patients p ON p.subject_id = a.subject_id", agg: true, items: []ColumnKind{Count, Statistic}, tables: []string{"a", "p"}},
		{q: "SELECT subject_id, gender FROM patients", items: []ColumnKind{Key, Key}, tables: []string{"patients"}},
		{q: "SELECT subject_id, count(*) OVER () FROM patients", items: []ColumnKind{Key, Key}, tables: []string{"patients"}},
		{q: "SELECT max(anchor_age, 18) FROM patients", items: []ColumnKind{Key}, tables: []string{"patients"}},
		{q: "SELECT subject_id, (SELECT count(*) FROM admissions a WHERE a.subject_id = p.subject_id) FROM patients p", nested: true, items: []ColumnKind{Key, Key}, tables: []string{"p"}},
		{q: "WITH c AS (SELECT gender, count(*) AS n FROM patients GROUP BY gender) SELECT * FROM c ORDER BY n DESC", nested: true, items: []ColumnKind{Key}, tables: []string{"c"}},
		{q: "SELECT count(*) FROM patients UNION ALL SELECT count(*) FROM admissions", agg: true, comp: true},
		{q: "SELECT count(*) FROM patients UNION ALL SELECT subject_id FROM admissions", comp: true},
		{q: "SELECT round(100.0 * count(*) / 30, 1) AS pct FROM (SELECT subject_id FROM patients) AS t", agg: true, items: []ColumnKind{Statistic}, tables: []string{"t"}},
	} {
		sh := Analyze(tc.q)
		if sh.Aggregate != tc.agg || sh.Nested != tc.nested || sh.Compound != tc.comp {
			t.Errorf("%s: aggregate %v nested %v compound %v, want %v %v %v", tc.q, sh.Aggregate, sh.Nested, sh.Compound, tc.agg, tc.nested, tc.comp)
		}
		if !tc.comp && !slices.Equal(sh.Items, tc.items) {
			t.Errorf("%s: items %v, want %v", tc.q, sh.Items, tc.items)
		}
		if !tc.comp && !slices.Equal(sh.Tables, tc.tables) {
			t.Errorf("%s: tables %q, want %q", tc.q, sh.Tables, tc.tables)
		}
	}
}

func TestAugment(t *testing.T) {
	got, ok := Augment("SELECT gender, count(*) FROM patients GROUP BY gender ORDER BY 2;", `"subject_id"`)
	want := `SELECT gender, count(*), count(DISTINCT "subject_id") AS "__individuals" FROM patients GROUP BY gender ORDER BY 2;`
	if !ok || got != want {
		t.Errorf("Augment = %q, %v; want %q", got, ok, want)
	}
	got, ok = Augment("SELECT avg(anchor_age)\nFROM patients", "p.subject_id")
	if !ok || got != "SELECT avg(anchor_age), count(DISTINCT p.subject_id) AS \"__individuals\" FROM patients" {
		t.Errorf("Augment = %q", got)
	}
	if _, ok := Augment("SELECT count(*) FROM a UNION SELECT count(*) FROM b", "x"); ok {
		t.Error("a compound statement was augmented")
	}
	if _, ok := Augment("SELECT subject_id FROM patients", "x"); ok {
		t.Error("a non-aggregate statement was augmented")
	}
}

func result(cols []string, rows ...[]any) *datasets.Result {
	res := &datasets.Result{}
	for _, c := range cols {
		res.Columns = append(res.Columns, datasets.Column{Name: c})
	}
	res.Rows = rows
	return res
}

func TestSuppress(t *testing.T) {
	res := result([]string{"gender", "count(*)"}, []any{"F", int64(10)}, []any{"M", int64(20)}, []any{"X", int64(0)})
	kinds := ColumnKinds(Analyze("SELECT gender, count(*) FROM patients GROUP BY gender"), res)
	out, rep := Suppress(res, Individuals{Column: "subject_id", Counts: []int64{10, 20, 0}, Kinds: kinds}, 11)
	if res.Rows[0][1] != int64(10) || res.Rows[1][1] != int64(20) {
		t.Fatal("Suppress modified its input")
	}
	if out.Rows[0][1] != (Suppressed{11}) || out.Rows[1][1] != (Suppressed{11}) || out.Rows[2][1] != int64(0) {
		t.Fatalf("rows %v, want <11, <11 (complementary), 0", out.Rows)
	}
	if len(rep.Cells) != 2 || rep.Cells[0].Reason != Primary || rep.Cells[1].Reason != Complementary || rep.IndividualColumn != "subject_id" {
		t.Fatalf("report %+v", rep)
	}
	b, _ := json.Marshal(out.Rows)
	if strings.Contains(string(b), "10") || strings.Contains(string(b), "20") || !strings.Contains(string(b), `"\u003c11"`) {
		t.Errorf("JSON %s leaks a value or lacks <11", b)
	}

	// Exactly k is shown; a statistic of 4 individuals is not.
	res = result([]string{"n", "avg(anchor_age)"}, []any{int64(11), 54.2})
	out, _ = Suppress(res, Individuals{Counts: []int64{11}, Kinds: []ColumnKind{Count, Statistic}}, 11)
	if out.Rows[0][0] != int64(11) || out.Rows[0][1] != 54.2 {
		t.Errorf("rows %v", out.Rows)
	}
	res = result([]string{"avg(anchor_age)"}, []any{61.0})
	if out, _ = Suppress(res, Individuals{Counts: []int64{4}, Kinds: []ColumnKind{Statistic}}, 11); out.Rows[0][0] != (Suppressed{11}) {
		t.Errorf("a mean of 4 individuals was shown: %v", out.Rows)
	}
	// Unknown individuals: statistics suppressed, with a note.
	out, rep = Suppress(result([]string{"avg(x)"}, []any{3.5}), Individuals{Kinds: []ColumnKind{Statistic}}, 11)
	if out.Rows[0][0] != (Suppressed{11}) || len(rep.Notes) == 0 {
		t.Errorf("unknown individuals: %v %+v", out.Rows, rep)
	}
	// 30 admissions of 2 patients.
	out, _ = Suppress(result([]string{"admissions"}, []any{int64(30)}), Individuals{Counts: []int64{2}, Kinds: []ColumnKind{Count}}, 11)
	if out.Rows[0][0] != (Suppressed{11}) {
		t.Errorf("a count of 2 individuals was shown: %v", out.Rows)
	}
}

func TestClassify(t *testing.T) {
	ids := Classify([]string{"p.subject_id", "gender", "anchor_age", "dod", "count(*)", "PatientID", "zip", "language"}, "demo")
	var got []string
	for _, id := range ids {
		got = append(got, id.Column+":"+string(id.Kind))
	}
	want := []string{"p.subject_id:direct identifier", "anchor_age:quasi-identifier", "dod:direct identifier", "PatientID:direct identifier", "zip:quasi-identifier"}
	if !slices.Equal(got, want) {
		t.Errorf("Classify = %q, want %q", got, want)
	}
	if ids := Classify([]string{"person_id", "birth_datetime", "visit_occurrence_id"}, "omop-cdm-5.4"); len(ids) != 3 || !HasDirect(ids) {
		t.Errorf("OMOP: %v", ids)
	}
}

func TestPseudonyms(t *testing.T) {
	a, _ := NewPseudonymizer()
	b, _ := NewPseudonymizer()
	if a.Pseudonym("subject_id", int64(7)) != a.Pseudonym("subject_id", "7") {
		t.Error("the same patient got two pseudonyms in one export")
	}
	if a.Pseudonym("subject_id", int64(7)) == b.Pseudonym("subject_id", int64(7)) {
		t.Error("two exports gave the same pseudonym")
	}
	if a.Pseudonym("subject_id", int64(7)) == a.Pseudonym("subject_id", int64(8)) {
		t.Error("two patients got one pseudonym")
	}
	d := a.ShiftDays(int64(7))
	x, _ := ShiftDate("2150-01-01 10:00:00", d)
	y, _ := ShiftDate("2150-01-03", d)
	if x == "2150-01-01 10:00:00" || d == 0 || d > MaxShiftDays || d < -MaxShiftDays {
		t.Fatalf("shift %d gave %v", d, x)
	}
	if got := x.(string)[:10]; got == y.(string) {
		t.Errorf("interval lost: %v %v", x, y)
	}
}

func TestClassifyResultExpressions(t *testing.T) {
	q := "SELECT gender, group_concat(p.subject_id) AS ids, min(dod) first_death, count(DISTINCT subject_id) AS n, avg(anchor_age) AS age, p.hadm_id AS h FROM patients p GROUP BY gender"
	sh := Analyze(q)
	if got := strings.Join(sh.Exprs, " | "); got != "gender | group_concat(p.subject_id) | min(dod) | count(DISTINCT subject_id) | avg(anchor_age) | p.hadm_id" {
		t.Fatalf("exprs %q", got)
	}
	ids := ClassifyResult(sh, []string{"gender", "ids", "first_death", "n", "age", "h"}, "demo")
	var got []string
	for _, id := range ids {
		got = append(got, id.Column+":"+string(id.Kind))
	}
	if want := []string{"ids:direct identifier", "first_death:direct identifier", "age:quasi-identifier", "h:direct identifier"}; !slices.Equal(got, want) {
		t.Errorf("ClassifyResult = %q, want %q", got, want)
	}
}

// TestClassifyResultDerivedIdentifiers: an expression that reads a direct
// identifier outside count(…) is that identifier; a CAST's type (TEXT is
// also a note column's name), a count of identifiers and a quasi-identifier
// in an expression are not.
func TestClassifyResultDerivedIdentifiers(t *testing.T) {
	q := "SELECT upper(name) AS a, CAST(mrn AS TEXT) b, json_object('k', p.ssn) AS c, strftime('%Y', dob) AS d, " +
		"CAST(anchor_age AS TEXT) AS e, count(DISTINCT mrn) - 1 AS f, anchor_age + 1 AS g, 'name' AS h FROM people p"
	ids := ClassifyResult(Analyze(q), []string{"a", "b", "c", "d", "e", "f", "g", "h"}, "generated")
	var got []string
	for _, id := range ids {
		got = append(got, id.Column+":"+string(id.Kind))
	}
	want := []string{"a:direct identifier", "b:direct identifier", "c:direct identifier", "d:direct identifier"}
	if !slices.Equal(got, want) {
		t.Errorf("ClassifyResult = %q, want %q", got, want)
	}
}
