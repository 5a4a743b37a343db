package prescreen

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/vectorstore"
)

// demoRunner opens the shared demo database read-only.
func demoRunner(t testing.TB) *datasets.Runner {
	t.Helper()
	r, err := datasets.NewRunner(context.Background(), testDemoPath, datasets.RunnerOptions{MaxRows: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// one runs a reference query returning at most one row.
func one(t testing.TB, r *datasets.Runner, q string) []any {
	t.Helper()
	res, err := r.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(res.Rows) == 0 {
		return nil
	}
	return res.Rows[0]
}

// TestReadCohortMatchesReferenceQueries: each patient's summary on the
// demo equals hand-written queries: sex, age at the latest admission, the
// latest creatinine and HbA1c with their times, the date of death, the
// bounds of diagnoses and medications.
func TestReadCohortMatchesReferenceQueries(t *testing.T) {
	ctx := context.Background()
	r := demoRunner(t)
	c, err := ReadCohort(ctx, r, ReadOptions{Query: "SELECT subject_id, hadm_id FROM admissions", PatientColumn: "subject_id", MaxPatients: 40})
	if err != nil {
		t.Fatal(err)
	}
	total, _ := datasets.Number(one(t, r, "SELECT COUNT(DISTINCT subject_id) FROM admissions")[0])
	if c.Total != int(total) || len(c.Summaries) != min(40, int(total)) || c.Schema != "MIMIC-IV" {
		t.Fatalf("cohort: total %d of %v, %d summaries, schema %s", c.Total, total, len(c.Summaries), c.Schema)
	}
	if int(total) > 40 && (len(c.Notices) == 0 || !strings.Contains(strings.Join(c.Notices, " "), "the first 40")) {
		t.Errorf("the bound is not told: %q", c.Notices)
	}
	latestLab := func(id, label string) []any {
		return one(t, r, `SELECT l.valuenum, l.charttime FROM labevents l JOIN d_labitems d ON d.itemid = l.itemid
			WHERE l.subject_id = `+id+` AND d.label = '`+label+`' AND d.fluid = 'Blood' AND l.valuenum IS NOT NULL ORDER BY l.charttime DESC LIMIT 1`)
	}
	var withoutA1c, withA1c, highCr int
	for _, s := range c.Summaries {
		ref := one(t, r, `SELECT p.gender, p.anchor_age + CAST(strftime('%Y', a.admittime) AS INTEGER) - p.anchor_year, a.admittime, p.dod
			FROM patients p JOIN admissions a ON a.subject_id = p.subject_id WHERE p.subject_id = `+s.ID+` ORDER BY a.admittime DESC, a.hadm_id DESC LIMIT 1`)
		age, _ := datasets.Number(ref[1])
		if want := trials.ParseSex(datasets.Text(ref[0])); s.Sex != want || !s.HasAge || s.Age != age || s.RefDate != datasets.Text(ref[2]) || s.Died != datasets.Text(ref[3]) || s.Deceased != (ref[3] != nil) {
			t.Errorf("patient %s: sex %s age %v ref %s died %q, want %s %v %s %v", s.ID, s.Sex, s.Age, s.RefDate, s.Died, want, age, ref[2], ref[3])
		}
		for _, l := range []struct{ key, label string }{{"creatinine", "Creatinine"}, {"hba1c", "% Hemoglobin A1c"}} {
			want := latestLab(s.ID, l.label)
			got, ok := s.Labs[l.key]
			switch {
			case want == nil && ok:
				t.Errorf("patient %s: %s %v, the source has none", s.ID, l.key, got)
			case want != nil && (!ok || got.Value != want[0].(float64) || got.Time != datasets.Text(want[1])):
				t.Errorf("patient %s: %s %+v, want %v at %v", s.ID, l.key, got, want[0], want[1])
			}
		}
		if _, ok := s.Labs["hba1c"]; ok {
			withA1c++
		} else {
			withoutA1c++
		}
		if v, ok := s.Labs["creatinine"]; ok && v.Value >= 1.5 {
			highCr++
		}
		if len(s.Diagnoses) > MaxDiagnoses || len(s.Medications) > MaxMedications {
			t.Errorf("patient %s: %d diagnoses, %d medications: over the bounds", s.ID, len(s.Diagnoses), len(s.Medications))
		}
		nDx, _ := datasets.Number(one(t, r, "SELECT COUNT(DISTINCT icd_code || ':' || icd_version) FROM diagnoses_icd WHERE subject_id = "+s.ID)[0])
		if want := min(int(nDx), MaxDiagnoses); len(s.Diagnoses) != want {
			t.Errorf("patient %s: %d diagnoses, want %d", s.ID, len(s.Diagnoses), want)
		}
		for _, d := range s.Diagnoses {
			if d.Active {
				n, _ := datasets.Number(one(t, r, `SELECT COUNT(*) FROM diagnoses_icd d JOIN admissions a ON a.hadm_id = d.hadm_id
					WHERE d.subject_id = `+s.ID+` AND d.icd_code = '`+d.Code+`' AND a.admittime = '`+s.RefDate+`'`)[0])
				if n == 0 {
					t.Errorf("patient %s: %s active but not recorded at the latest admission", s.ID, d.Code)
				}
			}
		}
	}
	if withA1c == 0 || withoutA1c == 0 || highCr == 0 {
		t.Fatalf("the demo sample lacks a kind of patient the tests need: %d with HbA1c, %d without, %d with creatinine ≥ 1.5", withA1c, withoutA1c, highCr)
	}
}

// TestKnownAnswersOnTheDemo: lab and age criteria of a trial are
// evaluated from the demo's structured values: each patient whose latest
// creatinine is 1.5 mg/dL or more (reference query) fails "Creatinine <
// 1.5 mg/dL", citing the value and its date; a patient without HbA1c is
// unknown for "HbA1c between 7 and 10%", never eligible; the age is the
// reference age.
func TestKnownAnswersOnTheDemo(t *testing.T) {
	ctx := context.Background()
	r := demoRunner(t)
	c, err := ReadCohort(ctx, r, ReadOptions{Query: "SELECT subject_id FROM patients", PatientColumn: "subject_id"})
	if err != nil {
		t.Fatal(err)
	}
	tr := &trials.Trial{ID: "NCT0", Sex: trials.SexAll, Inclusion: []string{"Creatinine < 1.5 mg/dL", "HbA1c between 7 and 10%", "Age 18–75"}}
	counts := map[string]int{}
	for _, s := range c.Summaries {
		all := Evaluate(tr, s, nil)
		var rs []CriterionResult // the three criteria (a date of death adds a record check)
		for _, x := range all {
			if x.Kind == trials.Inclusion {
				rs = append(rs, x)
			}
		}
		if len(rs) != 3 || s.Deceased != (len(all) == 4) {
			t.Fatalf("%d results for a patient deceased %v", len(all), s.Deceased)
		}
		cr := one(t, r, `SELECT l.valuenum, l.charttime FROM labevents l JOIN d_labitems d ON d.itemid = l.itemid
			WHERE l.subject_id = `+s.ID+` AND d.label = 'Creatinine' AND d.fluid = 'Blood' AND l.valuenum IS NOT NULL ORDER BY l.charttime DESC LIMIT 1`)
		switch {
		case cr == nil:
			if rs[0].Status != Unknown {
				t.Errorf("patient %s without creatinine: %s", s.ID, rs[0].Status)
			}
			counts["no creatinine"]++
		case cr[0].(float64) >= 1.5:
			want := "Creatinine " + strconv.FormatFloat(cr[0].(float64), 'f', -1, 64) + " mg/dL on " + datasets.Text(cr[1])[:10] + " does not meet"
			if rs[0].Status != NotEligible || !strings.Contains(rs[0].Reason, want) {
				t.Errorf("patient %s with creatinine %v: %s (%s), want not eligible citing %q", s.ID, cr[0], rs[0].Status, rs[0].Reason, want)
			}
			if Overall(all) != NotEligible {
				t.Errorf("patient %s with creatinine %v: overall %s", s.ID, cr[0], Overall(rs))
			}
			counts["high creatinine"]++
		default:
			if rs[0].Status != Eligible {
				t.Errorf("patient %s with creatinine %v: %s", s.ID, cr[0], rs[0].Status)
			}
		}
		a1c := one(t, r, `SELECT l.valuenum FROM labevents l JOIN d_labitems d ON d.itemid = l.itemid
			WHERE l.subject_id = `+s.ID+` AND d.label = '% Hemoglobin A1c' AND l.valuenum IS NOT NULL ORDER BY l.charttime DESC LIMIT 1`)
		switch {
		case a1c == nil:
			if rs[1].Status != Unknown || rs[1].Checks[0].Outcome != Undecided {
				t.Errorf("patient %s without HbA1c: %s", s.ID, rs[1].Status)
			}
			if Overall(all) == Eligible {
				t.Errorf("patient %s without HbA1c is eligible overall", s.ID)
			}
			counts["no HbA1c"]++
		case a1c[0].(float64) >= 7 && a1c[0].(float64) <= 10:
			if rs[1].Status != Eligible {
				t.Errorf("patient %s with HbA1c %v: %s", s.ID, a1c[0], rs[1].Status)
			}
			counts["HbA1c in range"]++
		default:
			if rs[1].Status != NotEligible {
				t.Errorf("patient %s with HbA1c %v: %s", s.ID, a1c[0], rs[1].Status)
			}
		}
		age, _ := datasets.Number(one(t, r, `SELECT p.anchor_age + CAST(strftime('%Y', a.admittime) AS INTEGER) - p.anchor_year
			FROM patients p JOIN admissions a ON a.subject_id = p.subject_id WHERE p.subject_id = `+s.ID+` ORDER BY a.admittime DESC LIMIT 1`)[0])
		if want := map[bool]Status{true: Eligible, false: NotEligible}[age >= 18 && age <= 75]; rs[2].Status != want {
			t.Errorf("patient %s aged %v: %s for age 18–75", s.ID, age, rs[2].Status)
		}
	}
	t.Logf("demo patients: %v", counts)
	for _, k := range []string{"high creatinine", "no HbA1c", "HbA1c in range"} {
		if counts[k] == 0 {
			t.Errorf("no demo patient with %s: the test cannot tell", k)
		}
	}
}

// demoPipeline builds the trial matching pipeline on the demo trials
// (seed 1), model-free.
func demoPipeline(t testing.TB) *trials.Pipeline {
	t.Helper()
	return demoPipelineWith(t, trials.Config{})
}

// demoPipelineWith builds the trial matching pipeline on the demo trials
// (seed 1) with cfg's model and options; the database, the embedder and
// the item collection are set here.
func demoPipelineWith(t testing.TB, cfg trials.Config) *trials.Pipeline {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := datasets.OpenReadWrite(ctx, filepath.Join(dir, "trials.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := trials.DemoData(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	store, err := vectorstore.Open(filepath.Join(dir, "vectors"), vectorstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb := vectorstore.NewLexicalEmbedder(0)
	items, err := store.Collection(ctx, "items", emb)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DB, cfg.Embedder, cfg.Items = db, emb, items
	p, err := trials.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// demoSummaries reads the first n demo patients.
func demoSummaries(t testing.TB, n int) []*Summary {
	t.Helper()
	r := demoRunner(t)
	c, err := ReadCohort(context.Background(), r, ReadOptions{Query: "SELECT subject_id FROM patients", PatientColumn: "subject_id", MaxPatients: n})
	if err != nil {
		t.Fatal(err)
	}
	return c.Summaries
}

// TestRunOnTheDemoTrials: the matrix of demo patients against the 400
// demo trials without a model: each patient's top K are the trials the
// pipeline ranks for the patient's narrative, each cell's verdict is
// Evaluate's, and the orders sort by how many might qualify.
func TestRunOnTheDemoTrials(t *testing.T) {
	ctx := context.Background()
	p := demoPipeline(t)
	pats := demoSummaries(t, 12)
	var mu sync.Mutex
	var seen []int
	mx, err := Run(ctx, p, pats, Options{Top: 5, Progress: func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if total != len(pats) {
			t.Errorf("progress total %d", total)
		}
		seen = append(seen, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(pats) || seen[len(seen)-1] != len(pats) {
		t.Errorf("progress reports %v", seen)
	}
	if len(mx.Patients) != len(pats) || len(mx.Cells) != len(pats) || len(mx.Trials) == 0 {
		t.Fatalf("matrix %d patients, %d trials", len(mx.Patients), len(mx.Trials))
	}
	col := map[string]int{}
	for j, tr := range mx.Trials {
		col[tr.ID] = j
	}
	checked := 0
	for i, s := range pats {
		ref, err := p.Match(ctx, trials.Request{Patient: s.Narrative(), Top: 5})
		if err != nil {
			t.Fatal(err)
		}
		ranked := 0
		for _, c := range mx.Cells[i] {
			if c.Ranked {
				ranked++
			}
		}
		if ranked != len(ref.Trials) {
			t.Errorf("patient %s: %d trials in the matrix, the pipeline ranks %d", s.ID, ranked, len(ref.Trials))
		}
		for _, rt := range ref.Trials {
			j, ok := col[rt.Trial.ID]
			if !ok {
				t.Errorf("patient %s: %s is not a column", s.ID, rt.Trial.ID)
				continue
			}
			c := mx.Cells[i][j]
			if !c.Ranked || c.Rank != rt.Rank || c.Status != Overall(Evaluate(rt.Trial, s, nil)) {
				t.Errorf("patient %s, %s: cell %+v, want rank %d", s.ID, rt.Trial.ID, c, rt.Rank)
			}
			for _, cr := range c.Criteria {
				if len(cr.Checks) > 0 {
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no criterion of the demo trials was checked from structured values")
	}
	order := mx.TrialOrder()
	for k := 1; k < len(order); k++ {
		if mx.TrialCounts(order[k-1]).Might() < mx.TrialCounts(order[k]).Might() {
			t.Fatalf("trial order not by patients who might qualify")
		}
	}
	porder := mx.PatientOrder()
	for k := 1; k < len(porder); k++ {
		if mx.PatientCounts(porder[k-1]).Might() < mx.PatientCounts(porder[k]).Might() {
			t.Fatalf("patient order not by trials that might fit")
		}
	}
	sheets := mx.Sheets(SheetOptions{PatientID: func(id string) string { return "P-" + id }})
	if len(sheets) != 3 || sheets[0].Name != "Matrix" || sheets[1].Name != "Criteria" || sheets[2].Name != "Trials" {
		t.Fatalf("sheets %v", sheets)
	}
	for row := range sheets[1].Rows {
		if !strings.HasPrefix(row[0].(string), "P-") {
			t.Fatalf("criteria sheet patient %v not replaced", row[0])
		}
	}
}

// gatedMatcher lets the first free patients through and holds the others
// until their context ends.
type gatedMatcher struct {
	m       Matcher
	free    int32
	started atomic.Int32
	late    atomic.Int32 // matches started after the cancel
	cancel  atomic.Bool
}

func (g *gatedMatcher) Match(ctx context.Context, req trials.Request) (*trials.Result, error) {
	if g.cancel.Load() {
		g.late.Add(1)
	}
	if g.started.Add(1) > g.free {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return g.m.Match(ctx, req)
}

// TestRunCancel: Cancel stops a pre-screening within a deadline: Run
// returns the context's error, no new patient is launched after it, and
// the progress seen stays below the total. A worker that had already
// passed its check when Cancel came may still call the matcher, with a
// cancelled context (that race cannot be closed without a lock around
// every match), so at most Workers calls may come after Cancel.
func TestRunCancel(t *testing.T) {
	p := demoPipeline(t)
	pats := demoSummaries(t, 20)
	g := &gatedMatcher{m: p, free: 3}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done atomic.Int32
	reached := make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		_, err := Run(ctx, g, pats, Options{Top: 3, Workers: 2, Progress: func(d, _ int) {
			done.Store(int32(d))
			if d >= 2 {
				once.Do(func() { close(reached) })
			}
		}})
		errc <- err
	}()
	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		t.Fatal("no progress within 60 s")
	}
	cancel()
	g.cancel.Store(true)
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run after Cancel: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop within 10 s of Cancel")
	}
	if n := done.Load(); n >= int32(len(pats)) {
		t.Errorf("all %d patients reported done after Cancel", n)
	}
	if n := g.late.Load(); n > 2 {
		t.Errorf("%d patients started after Cancel, more than the 2 workers in flight", n)
	}
	if n := g.started.Load(); n >= int32(len(pats)) {
		t.Errorf("the matcher was called for all %d patients despite Cancel", n)
	}
}

// BenchmarkPrescreen50x400 measures the matrix of a 50-patient demo
// cohort against the 400 demo trials without a model (target ≤ 30 s):
// go test -run - -bench Prescreen50x400 -benchtime 1x ./app/prescreen/
func BenchmarkPrescreen50x400(b *testing.B) {
	p := demoPipeline(b)
	pats := demoSummaries(b, 50)
	if len(pats) != 50 {
		b.Fatalf("%d patients", len(pats))
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		mx, err := Run(ctx, p, pats, Options{Top: DefaultTop})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/matrix")
		b.ReportMetric(float64(len(mx.Trials)), "trials")
	}
}
