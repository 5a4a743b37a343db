package evidence

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/export"
)

// stoppingProject is a project of n candidates c0..c(n-1) with no decision.
func stoppingProject(n int) *Project {
	p := NewProject("stop", "demo", PICO{Population: "adults", Intervention: "aspirin"})
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%d", i)
		p.Studies[ids[i]] = StudyInfo{Title: "Study " + ids[i]}
	}
	p.Search = &SearchRun{Query: "aspirin", Total: int64(n), IDs: ids, At: time.Now()}
	return p
}

// decideAt records a decision at a given time (decisions count in the
// order they were made).
func decideAt(p *Project, id string, include bool, at time.Time) {
	d := Decision{Include: include, At: at}
	if !include {
		d.Reason = "Wrong population"
	}
	p.Decisions[id] = d
}

// TestStoppingCurveAndConsecutiveRule checks the progress curve and the
// consecutive-irrelevant rule against hand counts: decisions I E I E E E
// (made in that order, stored out of it).
func TestStoppingCurveAndConsecutiveRule(t *testing.T) {
	p := stoppingProject(10)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for k, d := range []struct {
		id string
		in bool
	}{{"c5", true}, {"c1", false}, {"c7", true}, {"c0", false}, {"c9", false}, {"c3", false}} {
		decideAt(p, d.id, d.in, t0.Add(time.Duration(k)*time.Minute))
	}
	if got, want := p.ScreeningCurve(), []int{1, 1, 2, 2, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("curve %v, want %v", got, want)
	}
	if err := p.SetConsecutiveRule(4); err != nil {
		t.Fatal(err)
	}
	st := p.StoppingStatus()
	if st.Screened != 6 || st.Found != 2 || st.Run != 3 || st.ConsecutiveMet {
		t.Errorf("status %+v: want 6 screened, 2 found, a run of 3, rule of 4 not met", st)
	}
	decideAt(p, "c2", false, t0.Add(time.Hour))
	st = p.StoppingStatus()
	if st.Run != 4 || !st.ConsecutiveMet || !strings.Contains(st.Summary(), "stop after 4 in a row") || !strings.Contains(st.Summary(), "rule met") {
		t.Errorf("after a 4th exclusion: %+v, %q", st, st.Summary())
	}
	if c := p.PRISMA(); !strings.Contains(c.StoppingRule, "Consecutive irrelevant records") {
		t.Errorf("PRISMA stopping rule %q", c.StoppingRule)
	}
	if err := p.SetConsecutiveRule(-1); err == nil {
		t.Error("a negative N was accepted")
	}
	var buf bytes.Buffer
	if err := WriteScreeningCurve(&buf, p.ScreeningCurve(), 10); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Errorf("the curve is not a PNG: %v", err)
	}
}

// TestRecallSampleOnSimulatedScreening screens a synthetic review of 2,000
// records (100 relevant) in a good but imperfect order until 85 are found,
// draws the recall test's sample of the rest inside the project, screens
// it by the truth, and checks, over 200 draws, that the recall bound holds
// (bound ≤ true recall) at least as often as its 95% confidence says
// (with a margin for 200 draws), and that the record reaches PRISMA and
// the workbook's Stopping rule sheet.
func TestRecallSampleOnSimulatedScreening(t *testing.T) {
	const n, relevant = 2000, 100
	rng := rand.New(rand.NewPCG(3, 4))
	truth := map[string]bool{}
	for _, k := range rng.Perm(n)[:relevant] {
		truth[fmt.Sprintf("c%d", k)] = true
	}
	base := stoppingProject(n)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Screen relevant records first, with one irrelevant after each, until
	// 85 are found.
	var rel, irr []string
	for _, id := range base.Search.IDs {
		if truth[id] {
			rel = append(rel, id)
		} else {
			irr = append(irr, id)
		}
	}
	k := 0
	for i := range 85 {
		decideAt(base, rel[i], true, t0.Add(time.Duration(k)*time.Second))
		decideAt(base, irr[i], false, t0.Add(time.Duration(k+1)*time.Second))
		k += 2
	}
	covered, met := 0, 0
	const draws = 200
	var last *Project
	for d := range draws {
		p, err := base.Clone()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.DrawRecallSample(400, rand.New(rand.NewPCG(uint64(d), 9))); err != nil {
			t.Fatal(err)
		}
		if s := p.Stopping.Sample; s.Remaining != n-170 || s.FoundBefore != 85 || len(s.IDs) != 400 {
			t.Fatalf("sample %d of %d remaining, %d found before", len(s.IDs), s.Remaining, s.FoundBefore)
		}
		if got := len(p.SampleToScreen()); got != 400 {
			t.Fatalf("%d sampled records to screen, want 400", got)
		}
		for j, id := range p.Stopping.Sample.IDs {
			decideAt(p, id, truth[id], t0.Add(time.Hour+time.Duration(j)*time.Second))
		}
		st := p.StoppingStatus()
		if !st.SampleDone || st.SampleScreened != 400 {
			t.Fatalf("status %+v: the sample is screened", st)
		}
		trueRecall := float64(85+st.FoundInSample) / relevant
		if st.RecallLower <= trueRecall+1e-12 {
			covered++
		}
		if st.RecallMet {
			met++
		}
		last = p
	}
	// At 95% confidence, 200 draws: expect ≥ 190; allow binomial noise.
	if covered < 183 {
		t.Errorf("the recall bound held in %d of %d draws, want about 95%%", covered, draws)
	}
	// True recall of the first 85 is 0.85 < 0.95: the test may claim 95%
	// recall only rarely.
	if met > draws/10 {
		t.Errorf("the recall test claimed 95%% recall in %d of %d draws at a true recall of about 0.88", met, draws)
	}
	t.Logf("recall bound held in %d/%d draws; 95%% recall claimed in %d", covered, draws, met)

	c := last.PRISMA()
	if !strings.Contains(c.StoppingRule, "Recall test: a random sample of 400 of the 1830 records left after 85 were included") {
		t.Errorf("PRISMA stopping rule %q", c.StoppingRule)
	}
	path := filepath.Join(t.TempDir(), "stop.xlsx")
	if _, err := WriteProjectWorkbook(context.Background(), path, &ProjectExport{Project: last}, export.Provenance{}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); len(got) < 3 || got[2] != StoppingSheet {
		t.Errorf("sheets %q: want %q third", got, StoppingSheet)
	}
	rows := wbSheetRows(t, f, StoppingSheet)
	if r := wbFindRow(rows, "Recall test: sample size", "400"); r == nil {
		t.Errorf("Stopping rule sheet %q lacks the sample size", rows)
	}
	if r := wbFindRow(rows, "Recall test: assumption", RecallTestAssumption); r == nil {
		t.Errorf("Stopping rule sheet lacks the assumption")
	}
	if r := wbFindRow(wbSheetRows(t, f, PRISMASheet), "Stopping rule: "+c.StoppingRule); r == nil {
		t.Errorf("PRISMA sheet lacks the stopping rule")
	}
}
