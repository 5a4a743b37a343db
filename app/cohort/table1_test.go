package cohort

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// table1Cohort is the demo cohort Table 1 is checked on: patients with a
// prescription at any admission, one row per prescription (so the result
// repeats patients).
const table1Cohort = `SELECT p.subject_id, p.gender, pr.drug FROM patients p JOIN prescriptions pr ON pr.subject_id = p.subject_id WHERE p.anchor_age >= 40;`

// refIndex picks each patient's index admission without window functions
// (earliest admittime, then lowest hadm_id), unlike Table1's statements.
const refIndex = `radm AS (SELECT a.subject_id, MIN(a.hadm_id) AS hadm_id FROM admissions a
  JOIN (SELECT subject_id, MIN(admittime) AS t FROM admissions GROUP BY subject_id) f ON f.subject_id = a.subject_id AND a.admittime = f.t
  GROUP BY a.subject_id)`

// refColumn is one column of the table as reference SQL: the statement
// selecting its patients' subject_id.
type refColumn struct{ patients string }

func openTable1Runner(t *testing.T) *datasets.Runner {
	t.Helper()
	r, err := datasets.NewRunner(context.Background(), testDemoPath, datasets.RunnerOptions{MaxRows: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// refQuery runs a reference statement over one column's patients (CTE
// ref) and their index admissions (radm).
func refQuery(t *testing.T, r *datasets.Runner, col refColumn, body string) [][]any {
	t.Helper()
	q := "WITH ref AS (" + col.patients + "), " + refIndex + "\n" + body
	res, err := r.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("reference query %s: %v", q, err)
	}
	return res.Rows
}

func refCount(t *testing.T, r *datasets.Runner, col refColumn, body string) int64 {
	t.Helper()
	rows := refQuery(t, r, col, body)
	n, _ := datasets.Number(rows[0][0])
	return int64(n)
}

// refStats computes the statistics of the values a reference statement
// returns (one column, NULLs dropped): mean and variance in SQL, the
// quartiles from order statistics read with LIMIT/OFFSET.
func refStats(t *testing.T, r *datasets.Runner, col refColumn, values string) Table1Cell {
	t.Helper()
	v := "vals AS (SELECT x FROM (" + values + ") WHERE x IS NOT NULL)"
	rows := refQuery(t, r, col, ", "+v+" SELECT COUNT(*), AVG(x), (SELECT SUM((x - m.a) * (x - m.a)) FROM vals, (SELECT AVG(x) AS a FROM vals) m) FROM vals")
	n, _ := datasets.Number(rows[0][0])
	c := Table1Cell{Values: int64(n)}
	if n == 0 {
		return c
	}
	c.Mean, _ = datasets.Number(rows[0][1])
	ss, _ := datasets.Number(rows[0][2])
	c.SD = math.Sqrt(ss / (n - 1))
	q := func(p float64) float64 {
		h := (n - 1) * p
		lo := math.Floor(h)
		pair := refQuery(t, r, col, fmt.Sprintf(", %s SELECT x FROM vals ORDER BY x LIMIT 2 OFFSET %d", v, int(lo)))
		a, _ := datasets.Number(pair[0][0])
		if len(pair) == 1 {
			return a
		}
		b, _ := datasets.Number(pair[1][0])
		return a + (h-lo)*(b-a)
	}
	c.Median, c.Q1, c.Q3 = q(0.5), q(0.25), q(0.75)
	return c
}

// refAdm joins a column's patients to their index admission.
const refAdm = " FROM ref JOIN radm ON radm.subject_id = ref.subject_id JOIN admissions a ON a.hadm_id = radm.hadm_id "

// checkTable1 compares every cell of tb with reference statements.
func checkTable1(t *testing.T, r *datasets.Runner, tb *Table1, cols []refColumn) {
	t.Helper()
	codeRe := regexp.MustCompile(`\(([0-9A-Z]+)\)$`)
	labItem := map[string]int{"Creatinine": 50912, "Hemoglobin": 51222}
	totals := map[string]int64{}
	for _, row := range tb.Rows {
		cells := append([]Table1Cell{row.Overall}, row.Strata...)
		if len(cells) != len(cols) {
			t.Fatalf("row %q has %d cells, want %d", row.Label, len(cells), len(cols))
		}
		for j, got := range cells {
			col := cols[j]
			total, ok := totals[col.patients]
			if !ok {
				total = refCount(t, r, col, "SELECT COUNT(*) FROM ref")
				totals[col.patients] = total
			}
			where := fmt.Sprintf("row %q column %d", row.Label, j)
			count := func(body string) {
				t.Helper()
				want := refCount(t, r, col, body)
				if got.Count != want || got.Of != total {
					t.Errorf("%s: %d of %d, want %d of %d (%s)", where, got.Count, got.Of, want, total, body)
				}
			}
			stats := func(values string) {
				t.Helper()
				want := refStats(t, r, col, values)
				if got.Values != want.Values {
					t.Errorf("%s: %d values, want %d", where, got.Values, want.Values)
					return
				}
				for _, p := range [][3]any{{"mean", got.Mean, want.Mean}, {"SD", got.SD, want.SD}, {"median", got.Median, want.Median}, {"Q1", got.Q1, want.Q1}, {"Q3", got.Q3, want.Q3}} {
					g, w := p[1].(float64), p[2].(float64)
					if want.Values > 1 && math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
						t.Errorf("%s: %s %v, want %v", where, p[0], g, w)
					}
				}
			}
			age := "SELECT p.anchor_age + CAST(substr(a.admittime, 1, 4) AS INTEGER) - p.anchor_year AS x" + refAdm + "JOIN patients p ON p.subject_id = ref.subject_id"
			los := "SELECT julianday(a.dischtime) - julianday(a.admittime) AS x" + refAdm
			switch {
			case row.Kind == RowHeading:
			case row.Kind == RowCount:
				if got.Count != total {
					t.Errorf("%s: %d patients, want %d", where, got.Count, total)
				}
			case row.Variable == "Age, years" && row.Kind != RowMissing:
				stats(age)
			case row.Variable == "Age, years":
				count("SELECT COUNT(*) FROM ref WHERE ref.subject_id NOT IN (SELECT subject_id FROM radm)")
			case row.Variable == "Length of stay, days" && row.Kind != RowMissing:
				stats(los)
			case row.Variable == "Length of stay, days":
				count("SELECT COUNT(*) FROM ref WHERE ref.subject_id NOT IN (SELECT subject_id FROM radm)")
			case row.Variable == "Sex" && row.Kind == RowMissing:
				count("SELECT COUNT(*) FROM ref JOIN patients p ON p.subject_id = ref.subject_id WHERE coalesce(p.gender, '') = ''")
			case row.Variable == "Sex":
				count("SELECT COUNT(*) FROM ref JOIN patients p ON p.subject_id = ref.subject_id WHERE p.gender = " + datasets.QuoteString(row.Label))
			case row.Variable == "Race/ethnicity" && row.Kind == RowMissing:
				count("SELECT COUNT(*) FROM ref LEFT JOIN radm ON radm.subject_id = ref.subject_id LEFT JOIN admissions a ON a.hadm_id = radm.hadm_id WHERE coalesce(a.race, '') = ''")
			case row.Variable == "Race/ethnicity":
				count("SELECT COUNT(*)" + refAdm + "WHERE a.race = " + datasets.QuoteString(row.Label))
			case row.Variable == "Admission type" && row.Kind == RowMissing:
				count("SELECT COUNT(*) FROM ref LEFT JOIN radm ON radm.subject_id = ref.subject_id LEFT JOIN admissions a ON a.hadm_id = radm.hadm_id WHERE coalesce(a.admission_type, '') = ''")
			case row.Variable == "Admission type":
				count("SELECT COUNT(*)" + refAdm + "WHERE a.admission_type = " + datasets.QuoteString(row.Label))
			case strings.HasPrefix(row.Variable, "Most frequent diagnoses"):
				m := codeRe.FindStringSubmatch(row.Label)
				if m == nil {
					t.Fatalf("diagnosis row %q names no code", row.Label)
				}
				count("SELECT COUNT(DISTINCT ref.subject_id) FROM ref JOIN radm ON radm.subject_id = ref.subject_id JOIN diagnoses_icd d ON d.hadm_id = radm.hadm_id WHERE d.icd_code = " + datasets.QuoteString(m[1]))
			case strings.HasPrefix(row.Variable, "Most frequent medications"):
				count("SELECT COUNT(DISTINCT ref.subject_id) FROM ref JOIN radm ON radm.subject_id = ref.subject_id JOIN prescriptions d ON d.hadm_id = radm.hadm_id WHERE d.drug = " + datasets.QuoteString(row.Label))
			default:
				lab, _, _ := strings.Cut(row.Variable, " at admission")
				item, ok := labItem[lab]
				if !ok {
					t.Fatalf("row %q: no reference", row.Label)
				}
				first := fmt.Sprintf("SELECT (SELECT MIN(l.valuenum) FROM labevents l WHERE l.hadm_id = radm.hadm_id AND l.itemid = %d AND l.valuenum IS NOT NULL AND l.charttime = (SELECT MIN(charttime) FROM labevents m WHERE m.hadm_id = radm.hadm_id AND m.itemid = %d AND m.valuenum IS NOT NULL)) AS x FROM ref LEFT JOIN radm ON radm.subject_id = ref.subject_id", item, item)
				if row.Kind == RowMissing {
					count("SELECT COUNT(*) FROM (" + first + ") WHERE x IS NULL")
				} else {
					stats(first)
				}
			}
		}
	}
}

func TestTable1MatchesReferenceQueries(t *testing.T) {
	ctx := context.Background()
	r := openTable1Runner(t)
	cohortIDs := "SELECT DISTINCT subject_id FROM (" + strings.TrimSuffix(table1Cohort, ";") + ")"
	opts := Table1Options{Query: table1Cohort, PatientColumn: "subject_id", Labs: []string{"creatinine", "Hemoglobin"}, TopDiagnoses: 8, TopMedications: 8}

	t.Run("by sex", func(t *testing.T) {
		o := opts
		o.Stratify = StratifySex
		tb, err := ComputeTable1(ctx, r, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(tb.Strata) != 2 || tb.Strata[0].Name != "F" || tb.Strata[1].Name != "M" {
			t.Fatalf("strata %+v", tb.Strata)
		}
		header, cells := tb.Cells(0)
		t.Log(strings.Join(header, " | "))
		for _, c := range cells {
			t.Log(strings.Join(c, " | "))
		}
		checkTable1(t, r, tb, []refColumn{
			{cohortIDs},
			{"SELECT subject_id FROM patients WHERE gender = 'F' AND subject_id IN (" + cohortIDs + ")"},
			{"SELECT subject_id FROM patients WHERE gender = 'M' AND subject_id IN (" + cohortIDs + ")"},
		})
		kinds := map[string]int{}
		for _, row := range tb.Rows {
			kinds[row.Variable]++
		}
		for _, v := range []string{"Age, years", "Sex", "Race/ethnicity", "Admission type", "Length of stay, days", "Most frequent diagnoses at the index admission, n (%)", "Most frequent medications at the index admission, n (%)", "Creatinine at admission, mg/dL", "Hemoglobin at admission, g/dL"} {
			if kinds[v] == 0 {
				t.Errorf("no rows for %q (variables %v)", v, kinds)
			}
		}
		// The top diagnoses are the most frequent at the index admission.
		rows := refQuery(t, r, refColumn{cohortIDs}, "SELECT COUNT(DISTINCT ref.subject_id) AS n FROM ref JOIN radm ON radm.subject_id = ref.subject_id JOIN diagnoses_icd d ON d.hadm_id = radm.hadm_id GROUP BY d.icd_version, d.icd_code ORDER BY n DESC LIMIT 8")
		var got []int64
		for _, row := range tb.Rows {
			if strings.HasPrefix(row.Variable, "Most frequent diagnoses") && row.Kind == RowLevel {
				got = append(got, row.Overall.Count)
			}
		}
		if len(got) != len(rows) {
			t.Fatalf("%d diagnoses listed, want %d", len(got), len(rows))
		}
		for i, rr := range rows {
			if n, _ := datasets.Number(rr[0]); int64(n) != got[i] {
				t.Errorf("diagnosis %d: %d patients, the reference's %d-th most frequent has %v", i, got[i], i+1, n)
			}
		}
	})

	t.Run("cohort vs rest", func(t *testing.T) {
		o := opts
		o.Stratify = StratifyCohort
		tb, err := ComputeTable1(ctx, r, o)
		if err != nil {
			t.Fatal(err)
		}
		checkTable1(t, r, tb, []refColumn{
			{"SELECT subject_id FROM patients"},
			{cohortIDs},
			{"SELECT subject_id FROM patients WHERE subject_id NOT IN (" + cohortIDs + ")"},
		})
		// SMDs by hand from the reference values.
		coh, rest := refColumn{cohortIDs}, refColumn{"SELECT subject_id FROM patients WHERE subject_id NOT IN (" + cohortIDs + ")"}
		age := "SELECT p.anchor_age + CAST(substr(a.admittime, 1, 4) AS INTEGER) - p.anchor_year AS x" + refAdm + "JOIN patients p ON p.subject_id = ref.subject_id"
		a1, a2 := refStats(t, r, coh, age), refStats(t, r, rest, age)
		wantAge := (a1.Mean - a2.Mean) / math.Sqrt((a1.SD*a1.SD+a2.SD*a2.SD)/2)
		n1, n2 := float64(refCount(t, r, coh, "SELECT COUNT(*) FROM ref")), float64(refCount(t, r, rest, "SELECT COUNT(*) FROM ref"))
		f1 := float64(refCount(t, r, coh, "SELECT COUNT(*) FROM ref JOIN patients p ON p.subject_id = ref.subject_id WHERE p.gender = 'F'")) / n1
		f2 := float64(refCount(t, r, rest, "SELECT COUNT(*) FROM ref JOIN patients p ON p.subject_id = ref.subject_id WHERE p.gender = 'F'")) / n2
		wantF := (f1 - f2) / math.Sqrt((f1*(1-f1)+f2*(1-f2))/2)
		var gotAge, gotF float64 = math.NaN(), math.NaN()
		for _, row := range tb.Rows {
			if row.Variable == "Age, years" && row.Kind == RowMeanSD {
				gotAge = row.SMD
			}
			if row.Variable == "Sex" && row.Label == "F" {
				gotF = row.SMD
			}
		}
		if math.Abs(gotAge-wantAge) > 1e-12 || math.IsNaN(gotAge) {
			t.Errorf("age SMD %v, by hand %v", gotAge, wantAge)
		}
		if math.Abs(gotF-wantF) > 1e-12 || math.IsNaN(gotF) {
			t.Errorf("female SMD %v, by hand %v", gotF, wantF)
		}
		// The text of the table shows them to three decimals.
		_, cells := tb.Cells(0)
		for i, row := range tb.Rows {
			if row.Variable == "Age, years" && row.Kind == RowMeanSD {
				if want := fmt.Sprintf("%.3f", wantAge); cells[i][len(cells[i])-1] != want {
					t.Errorf("age SMD cell %q, want %q", cells[i][len(cells[i])-1], want)
				}
			}
		}
	})
}

func TestSMDFormulas(t *testing.T) {
	// By hand: (10−8)/sqrt((4+4)/2) = 1; (0.5−0.3)/sqrt((0.25+0.21)/2) = 0.2/sqrt(0.23).
	if got := ContinuousSMD(10, 2, 8, 2); math.Abs(got-1) > 1e-15 {
		t.Errorf("continuous SMD %v, want 1", got)
	}
	if got, want := BinarySMD(0.5, 0.3), 0.2/math.Sqrt(0.23); math.Abs(got-want) > 1e-15 {
		t.Errorf("binary SMD %v, want %v", got, want)
	}
	if !math.IsNaN(BinarySMD(1, 1)) || !math.IsNaN(ContinuousSMD(1, 0, 1, 0)) {
		t.Error("an SMD with no variance is not NaN")
	}
	// R: quantile(c(1, 2, 4, 7), c(.25, .5, .75)) = 1.75 3.00 4.75
	for p, want := range map[float64]float64{0.25: 1.75, 0.5: 3, 0.75: 4.75} {
		if got := Quantile7([]float64{1, 2, 4, 7}, p); got != want {
			t.Errorf("quantile %v = %v, want %v", p, got, want)
		}
	}
}

func TestTable1SmallCellsSuppressed(t *testing.T) {
	r := openTable1Runner(t)
	tb, err := ComputeTable1(context.Background(), r, Table1Options{Query: table1Cohort, PatientColumn: "subject_id", Stratify: StratifySex})
	if err != nil {
		t.Fatal(err)
	}
	header, cells := tb.Cells(11)
	if len(header) != 5 {
		t.Fatalf("header %v", header)
	}
	suppressed := 0
	for i, row := range tb.Rows {
		for j, c := range append([]Table1Cell{row.Overall}, row.Strata...) {
			text := cells[i][1+j]
			switch row.Kind {
			case RowLevel, RowMissing:
				if c.Count >= 1 && c.Count < 11 && text != "<11" {
					t.Errorf("row %q column %d: %d patients shown as %q", row.Label, j, c.Count, text)
				}
			case RowMeanSD, RowMedian:
				if c.Values >= 1 && c.Values < 11 && text != "<11" {
					t.Errorf("row %q column %d: statistic of %d patients shown as %q", row.Label, j, c.Values, text)
				}
			}
			if text == "<11" {
				suppressed++
				if cells[i][len(cells[i])-1] != "" {
					t.Errorf("row %q: SMD shown beside a suppressed cell", row.Label)
				}
			}
		}
		// A row with a suppressed count shows no other count of it.
		if row.Kind == RowLevel || row.Kind == RowMissing {
			sup, shown := 0, 0
			for j := range 3 {
				if cells[i][1+j] == "<11" {
					sup++
				} else if countOf(row, j) > 0 {
					shown++
				}
			}
			if sup > 0 && shown > 0 {
				t.Errorf("row %q: %v leaves a suppressed count derivable", row.Label, cells[i])
			}
		}
	}
	if suppressed == 0 || suppressed != tb.Suppressed(11) {
		t.Errorf("%d cells shown as <11, Suppressed says %d", suppressed, tb.Suppressed(11))
	}
	_, exact := tb.Cells(0)
	for _, row := range exact {
		for _, c := range row {
			if c == "<11" {
				t.Fatal("Cells(0) suppressed a cell")
			}
		}
	}
}

// TestTable1IndexAdmissionFromTheResult: when the cohort's result has
// hadm_id, the index admission is the patient's first admission of the
// result, not their first admission.
func TestTable1IndexAdmissionFromTheResult(t *testing.T) {
	ctx := context.Background()
	r := openTable1Runner(t)
	const q = "SELECT subject_id, hadm_id FROM admissions WHERE admission_type = 'URGENT'"
	tb, err := ComputeTable1(ctx, r, Table1Options{Query: q, PatientColumn: "subject_id", Labs: []string{}, TopDiagnoses: -1, TopMedications: -1})
	if err != nil {
		t.Fatal(err)
	}
	first := refCount(t, r, refColumn{"SELECT DISTINCT subject_id FROM (" + q + ")"}, "SELECT COUNT(*)"+refAdm+"WHERE a.admission_type = 'URGENT'")
	if first == tb.Patients {
		t.Fatal("every urgent patient's first admission is urgent: the test cannot tell the index admissions apart")
	}
	for _, row := range tb.Rows {
		if row.Variable == "Admission type" && row.Kind == RowLevel && (row.Label != "URGENT" || row.Overall.Count != tb.Patients) {
			t.Errorf("admission type %q: %d of %d patients; every index admission is urgent", row.Label, row.Overall.Count, tb.Patients)
		}
	}
}
