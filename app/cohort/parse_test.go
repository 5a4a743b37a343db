package cohort

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

func TestExtractSQL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT 1;", "SELECT 1"},
		{"```sql\nSELECT a FROM t;\n```", "SELECT a FROM t"},
		{"Here it is:\n```sqlite\nSELECT a\nFROM t\n```\nThis counts rows.", "SELECT a\nFROM t"},
		{"```\nSELECT 2\n```", "SELECT 2"},
		{"```json\n{\"sql\": \"SELECT 3\"}\n```", "SELECT 3"},
		{`{"category":"answerable","sql":"SELECT 4;"}`, "SELECT 4"},
		{`{"query": "WITH x AS (SELECT 1) SELECT * FROM x"}`, "WITH x AS (SELECT 1) SELECT * FROM x"},
		{"The query is: SELECT count(*) FROM patients WHERE gender = 'F'; it counts women.", "SELECT count(*) FROM patients WHERE gender = 'F'"},
		{"SELECT ';' AS semi, a FROM t; SELECT 2", "SELECT ';' AS semi, a FROM t"},
		{"select a from t\n\nThis returns a.", "select a from t"},
		{"SELECT a\n\nFROM t", "SELECT a\n\nFROM t"},
		{"SELECT a -- comment; still\nFROM t", "SELECT a -- comment; still\nFROM t"},
		{"DROP TABLE patients", "DROP TABLE patients"},
		{"I will now DELETE FROM patients", "DELETE FROM patients"},
		{"We should update the table. SELECT 1", "SELECT 1"},
		{"```sql\nATTACH 'x.db' AS x\n```", "ATTACH 'x.db' AS x"},
	}
	for _, c := range cases {
		got, err := ExtractSQL(c.in)
		if err != nil || got != c.want {
			t.Errorf("ExtractSQL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "   ", "I cannot answer that.", "```\nno sql here\n```", `{"sql": ""}`} {
		if got, err := ExtractSQL(bad); !errors.Is(err, ErrNoSQL) {
			t.Errorf("ExtractSQL(%q) = %q, %v; want ErrNoSQL", bad, got, err)
		}
	}
}

func FuzzExtractSQL(f *testing.F) {
	for _, s := range []string{"SELECT 1", "```sql\nSELECT 1\n```", `{"sql":"SELECT 1"}`, "x ```", "SELECT '", "SELECT a\n\n(", "DROP", "\n\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ExtractSQL(s)
		if err == nil && strings.TrimSpace(got) == "" {
			t.Errorf("ExtractSQL(%q) returned an empty statement without error", s)
		}
	})
}

func testCatalog() *datasets.Catalog {
	return &datasets.Catalog{Tables: []datasets.Table{
		{Name: "admissions", Columns: []datasets.TableColumn{{Name: "hadm_id"}, {Name: "subject_id"}}},
		{Name: "patients", Columns: []datasets.TableColumn{{Name: "subject_id"}, {Name: "gender"}}},
		{Name: "Cost", Columns: []datasets.TableColumn{{Name: "cost"}, {Name: "event_type"}}},
		{Name: "diagnoses_icd", Columns: []datasets.TableColumn{{Name: "row_id"}}},
	}}
}

func TestReferencedTables(t *testing.T) {
	cat := testCatalog()
	cases := []struct {
		sql  string
		want []string
	}{
		{"SELECT * FROM patients", []string{"patients"}},
		{"SELECT p.gender FROM patients p JOIN admissions a ON a.subject_id = p.subject_id", []string{"patients", "admissions"}},
		{"SELECT cost.cost FROM cost WHERE cost.event_type = 'diagnoses_icd'", []string{"Cost"}},
		{"SELECT 1 FROM admissions, \"patients\" WHERE 1 -- FROM diagnoses_icd", []string{"admissions", "patients"}},
		{"SELECT x FROM (SELECT subject_id AS x FROM patients) AS t1, admissions", []string{"patients", "admissions"}},
		{"SELECT COUNT(*) FROM missing", nil},
		{"WITH t AS (SELECT * FROM diagnoses_icd) SELECT * FROM t", []string{"diagnoses_icd"}},
	}
	for _, c := range cases {
		if got := ReferencedTables(c.sql, cat); !slices.Equal(got, c.want) {
			t.Errorf("ReferencedTables(%q) = %v, want %v", c.sql, got, c.want)
		}
	}
}

func FuzzReferencedTables(f *testing.F) {
	cat := testCatalog()
	for _, s := range []string{"SELECT * FROM patients", "'unterminated", "/* x", "FROM", "a.", "[x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range ReferencedTables(s, cat) {
			if _, ok := cat.Table(name); !ok {
				t.Errorf("unknown table %q", name)
			}
		}
	})
}

func TestGuard(t *testing.T) {
	facts := Facts{PeriodStart: "2015-01-01", PeriodEnd: "2024-12-31"}
	cases := []struct {
		q    string
		want Category
	}{
		{"What is the name of patient 10004235?", PrivateData},
		{"What is patient 10004235's home address?", PrivateData},
		{"Who is patient 42?", PrivateData},
		{"List the phone numbers of patients with diabetes", PrivateData},
		{"What is the name of the drug given most often?", ""},
		{"What was the name of patient 10004422's insurance?", ""},
		{"What is the name of patient 10004422?", PrivateData},
		{"Which diagnosis names mention sepsis?", ""},
		{"How many patients were admitted in 2031?", FutureData},
		{"How many admissions on 2030-03-01?", FutureData},
		{"How many admissions in 03/2027?", FutureData},
		{"How many patients were admitted in 2020?", ""},
		{"How many patients were admitted before 2030?", ""},
		{"How many patients were admitted between 2020 and 2030?", ""},
		{"Is any glucose value of 2100.5 recorded?", ""},
		{"How many patients are there?", ""},
	}
	for _, c := range cases {
		if got, _ := guard(c.q, facts); got != c.want {
			t.Errorf("guard(%q) = %q, want %q", c.q, got, c.want)
		}
	}
	// Without a known end, only private data is caught.
	if got, _ := guard("How many patients were admitted in 2031?", Facts{}); got != "" {
		t.Errorf("no period: %q", got)
	}
	if got, _ := guard("How many patients in 2101?", Facts{Now: "2100-12-31 23:59:00"}); got != FutureData {
		t.Errorf("fixed now: %q", got)
	}
}

func TestApplyNow(t *testing.T) {
	f := Facts{Now: "2100-12-31 23:59:00"}
	in := "SELECT datetime(current_time, '-1 year'), date(CURRENT_DATE), strftime('%Y', 'now'), 'current_time', current_timestamp"
	want := "SELECT datetime('2100-12-31 23:59:00', '-1 year'), date('2100-12-31'), strftime('%Y', '2100-12-31 23:59:00'), 'current_time', '2100-12-31 23:59:00'"
	if got := f.applyNow(in); got != want {
		t.Errorf("applyNow\n got %s\nwant %s", got, want)
	}
	if got := (Facts{}).applyNow(in); got != in {
		t.Errorf("without a fixed time the query changed: %s", got)
	}
}

func TestVerifyNumbers(t *testing.T) {
	res := &datasets.Result{
		Columns: []datasets.Column{{Name: "gender"}, {Name: "n"}, {Name: "first"}},
		Rows: [][]any{
			{"F", int64(30), "2100-03-04 10:00:00"},
			{"M", int64(10), nil},
		},
	}
	ev := collectEvidence("How many patients older than 65 by gender?", "SELECT gender, count(*) FROM patients WHERE age > 65 GROUP BY gender", res)
	text := "30 women and 10 men (75% women, 40 in total, 3 times as many, 2 groups); older than 65; first on 2100-03-04; 12.5% unexplained; 41 patients; 20 more women; ICD-10 codes, vitamin B12, 3rd."
	got := map[string]bool{}
	for _, n := range verifyNumbers(text, ev) {
		got[n.Text] = n.Verified
	}
	if _, ok := got["12"]; ok {
		t.Error("the 12 of B12 was taken for a figure")
	}
	want := map[string]bool{"30": true, "10": true, "75%": true, "40": true, "3": true, "2": true, "65": true,
		"2100-03-04": true, "12.5%": false, "41": false, "20": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s verified = %v, want %v", k, got[k], v)
		}
	}
}

func TestChartData(t *testing.T) {
	res := &datasets.Result{Columns: []datasets.Column{{Name: "g"}, {Name: "n"}}, Rows: [][]any{{"F", int64(3)}, {"M", 2.5}}}
	labels, values, ok := ChartData(res)
	if !ok || !slices.Equal(labels, []string{"F", "M"}) || !slices.Equal(values, []float64{3, 2.5}) {
		t.Errorf("ChartData = %v %v %v", labels, values, ok)
	}
	res.Rows = append(res.Rows, []any{"X", "text"})
	if _, _, ok := ChartData(res); ok {
		t.Error("a text value made a chart")
	}
	if _, _, ok := ChartData(&datasets.Result{Columns: []datasets.Column{{Name: "n"}}, Rows: [][]any{{int64(1)}, {int64(2)}}}); ok {
		t.Error("a single column made a chart")
	}
}

func TestPromptsRender(t *testing.T) {
	sys := render("generate.tmpl", generateData{Schema: "CREATE TABLE x (a);", Now: "2100-12-31 23:59:00", NowNote: "fixed by the data set", Period: "a to b",
		Values: []ValueHit{{Table: "x", Column: "a", Value: "Creatinine"}, {Table: "x", Column: "a", Value: "crohn's disease"}}})
	for _, want := range []string{"CREATE TABLE x (a);", "2100-12-31 23:59:00", "a to b", `"category"`, "-- x.a = 'Creatinine'", "-- x.a = 'crohn''s disease'"} {
		if !strings.Contains(sys, want) {
			t.Errorf("generate prompt lacks %q", want)
		}
	}
	if rep := render("generate.tmpl", generateData{Repair: true}); strings.Contains(rep, `"category": one of`) || !strings.Contains(rep, "```sql code block") {
		t.Errorf("repair system prompt:\n%s", rep)
	}
	r := render("repair.tmpl", repairData{SQL: "SELECT x", Error: "no such column: x", Columns: []string{"t(a, b)"}, Closest: "t.a"})
	for _, want := range []string{"SELECT x", "no such column: x", "- t(a, b)", "Closest existing names: t.a"} {
		if !strings.Contains(r, want) {
			t.Errorf("repair prompt lacks %q:\n%s", want, r)
		}
	}
	if q := render("question.tmpl", questionData{Question: "q?"}); q != "Question: q?" {
		t.Errorf("question prompt = %q", q)
	}
}

func TestNearest(t *testing.T) {
	got := nearest("gendr", []string{"patients.gender", "patients.subject_id", "admissions.admittime"}, 2)
	if len(got) == 0 || got[0] != "patients.gender" {
		t.Errorf("nearest = %v", got)
	}
}
