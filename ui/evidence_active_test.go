package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
)

// TestEvidenceScreenActiveLearning: the Screen step ranks the candidates
// by the question at start (aspirin records first for an aspirin
// question); decisions made while a training runs are recorded at once
// (the UI does not wait for it); when the training ends, the re-ranking
// counts every decision, leaves the selected row and those above it where
// they were, puts the remaining aspirin record right below, and the detail
// pane shows the learner's confidence and top terms.
func TestEvidenceScreenActiveLearning(t *testing.T) {
	svc := newFakeReviews("lit")
	ri, err := svc.Create("active", "lit", evidence.PICO{Population: "adults after ischaemic stroke", Intervention: "aspirin"})
	if err != nil {
		t.Fatal(err)
	}
	r := ri.(*fakeReview)
	studies := map[string][2]string{
		"k1": {"Knee arthroscopy outcomes", "Surgery of the knee in older adults."},
		"k2": {"Total knee replacement rehabilitation", "Physiotherapy after knee surgery."},
		"a1": {"Aspirin for secondary prevention of stroke", "Randomised trial of aspirin after ischaemic stroke."},
		"k3": {"Knee pain and surgery waiting lists", "Surgery delays for knee pain."},
		"a2": {"Low-dose aspirin and recurrent stroke", "Aspirin reduced recurrent stroke in this trial."},
		"a3": {"Aspirin dose after stroke: a randomised trial", "Two aspirin doses compared after stroke."},
		"h1": {"Hip fracture surgery in older adults", "Surgery timing and knee and hip outcomes."},
	}
	ids := []string{"k1", "k2", "a1", "k3", "a2", "a3", "h1"}
	r.p.Query = "adults"
	r.p.Search = &evidence.SearchRun{Query: "adults", Total: int64(len(ids)), IDs: ids, At: time.Now()}
	r.abstract = map[string]string{}
	for id, st := range studies {
		r.p.Studies[id] = evidence.StudyInfo{Title: st[0], Year: 2020}
		r.abstract[id] = st[1]
	}
	gate := make(chan struct{})
	r.rankGate = gate
	isAspirin := func(id string) bool { return strings.HasPrefix(id, "a") }

	s := newTestEvidenceScreen(t, svc, nil)
	waitUntil(t, "the project opened", func() bool { return s.project() != nil && len(s.screening.rows) == len(ids) })
	gate <- struct{}{} // the first ranking (by the question) may end
	waitUntil(t, "the ranking by the question", func() bool { return s.screening.ranking != nil })
	onUI(t, func(t testing.TB) {
		rows := s.screening.rows
		if !isAspirin(rows[0]) || !isAspirin(rows[1]) || !isAspirin(rows[2]) {
			t.Fatalf("rows by the question %v: want the aspirin records first", rows)
		}
		s.screening.table.Select(widget.TableCellID{Row: 0, Col: 3})
		if s.screening.selected != rows[0] {
			t.Fatalf("selected %q, want %q", s.screening.selected, rows[0])
		}
	})

	// Two decisions while the next training is held: both recorded at once.
	var selected string
	var selRow int
	var before []string
	onUI(t, func(t testing.TB) {
		test.Tap(s.screening.includeBtn) // includes row 0, selects row 1
		if !s.screening.rankBusy {
			t.Fatal("no ranking started after the decision")
		}
		s.screening.Decide("k1", false, "Wrong population")
		p := s.project()
		if len(p.Decisions) != 2 || !strings.Contains(s.screening.prismaCounts.Text, "excluded 1") || !strings.Contains(s.screening.prismaCounts.Text, "included 1") {
			t.Fatalf("while training: decisions %v, PRISMA %q", p.Decisions, s.screening.prismaCounts.Text)
		}
		if s.screening.ranking.Decisions != 0 {
			t.Fatalf("the ranking changed while its training was held (%d decisions)", s.screening.ranking.Decisions)
		}
		selected = s.screening.selected
		selRow = slices.Index(s.screening.rows, selected)
		before = slices.Clone(s.screening.rows[:selRow+1])
		if selRow != 1 || !isAspirin(selected) {
			t.Fatalf("after including row 0 the selection is %q at row %d, want the next aspirin record at row 1", selected, selRow)
		}
	})
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case gate <- struct{}{}:
			case <-done:
				return
			}
		}
	}()
	waitUntil(t, "the ranking of both decisions", func() bool {
		return !s.screening.rankBusy && s.screening.ranking != nil && s.screening.ranking.Decisions == 2
	})
	onUI(t, func(t testing.TB) {
		v := s.screening
		if v.selected != selected || !slices.Equal(v.rows[:selRow+1], before) {
			t.Fatalf("the rows up to the selection moved: %v, selected %q; before %v, %q", v.rows, v.selected, before, selected)
		}
		if !sameMembers(v.rows, ids) {
			t.Fatalf("rows %v are not the candidates", v.rows)
		}
		if next := v.rows[selRow+1]; !isAspirin(next) {
			t.Errorf("below the selection %q, want the last aspirin record (rows %v)", next, v.rows)
		}
		if last := v.rows[len(v.rows)-1]; last != "k1" {
			t.Errorf("last row %q, want the excluded k1 (rows %v)", last, v.rows)
		}
		text := richText(v.detail)
		if !strings.Contains(text, "Relevance by the learner") || !strings.Contains(text, "Terms that raised its rank") || !strings.Contains(text, "aspirin") {
			t.Errorf("detail pane %q lacks the learner's confidence and terms", text)
		}
		if !strings.Contains(v.learnStatus.Text, "from 2 decisions") {
			t.Errorf("learner status %q", v.learnStatus.Text)
		}
	})
}

// TestEvidenceScreenStoppingRules: the consecutive rule typed by the user
// is met after that many exclusions in a row and recorded in the PRISMA
// counts; the progress curve is drawn; a random sample drawn for the
// recall test is listed right below the selected study, and once it is
// screened the test's estimate is shown.
func TestEvidenceScreenStoppingRules(t *testing.T) {
	svc := newFakeReviews("lit")
	r := fakeSearched(t, svc, "stopping")
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	r.p.Search.IDs, r.p.Search.Total = ids, int64(len(ids))
	for _, id := range ids {
		r.p.Studies[id] = evidence.StudyInfo{Title: "Study " + id, Year: 2020}
	}
	s := newTestEvidenceScreen(t, svc, nil)
	waitUntil(t, "the first ranking", func() bool { return s.screening.ranking != nil && !s.screening.rankBusy })
	onUI(t, func(t testing.TB) {
		v := s.screening
		v.consecutiveEntry.SetText("2")
		if got := s.project().Stopping.Consecutive; got != 2 {
			t.Fatalf("rule N %d after typing 2", got)
		}
		v.Decide("a", true, "")
		v.Decide("b", false, "Wrong population")
		if strings.Contains(v.stopStatus.Text, "rule is met") {
			t.Fatalf("met after one exclusion: %q", v.stopStatus.Text)
		}
		v.Decide("c", false, "Wrong population")
		if !strings.Contains(v.stopStatus.Text, "consecutive rule is met") || !strings.Contains(v.prismaCounts.Text, "Stopping rule: Consecutive irrelevant records: stop after 2 in a row") {
			t.Fatalf("after two exclusions: status %q, PRISMA %q", v.stopStatus.Text, v.prismaCounts.Text)
		}
	})
	waitUntil(t, "the progress curve", func() bool { return s.screening.curveImg.Image != nil })

	var sample, below []string
	var sel string
	onUI(t, func(t testing.TB) {
		v := s.screening
		sel = v.rows[0] // undecided: the decided ones went below
		if _, decided := s.project().Decisions[sel]; decided {
			t.Fatalf("row 0 %q is decided (rows %v)", sel, v.rows)
		}
		v.table.Select(widget.TableCellID{Row: 0, Col: 3})
		v.sampleEntry.SetText("2")
		test.Tap(v.sampleBtn)
		smp := s.project().Stopping.Sample
		if smp == nil || len(smp.IDs) != 2 || smp.Remaining != 5 || smp.FoundBefore != 1 {
			t.Fatalf("sample %+v", smp)
		}
		sample = smp.IDs
		for _, id := range sample {
			if id != sel {
				below = append(below, id)
			}
		}
	})
	waitUntil(t, "the sample listed below the selection", func() bool {
		v := s.screening
		return !v.rankBusy && v.selected == sel && v.rows[0] == sel &&
			sameMembers(v.rows[1:1+len(below)], below)
	})
	onUI(t, func(t testing.TB) {
		v := s.screening
		if !strings.Contains(v.stopStatus.Text, "0 of 2 done") {
			t.Errorf("status %q", v.stopStatus.Text)
		}
		for _, id := range sample {
			v.Decide(id, false, "Wrong population")
		}
		if !strings.Contains(v.stopStatus.Text, "Recall test: 0 relevant in the sample of 2") || !strings.Contains(v.prismaCounts.Text, "Recall test: a random sample of 2 of the 5 records") {
			t.Errorf("after the sample: status %q, PRISMA %q", v.stopStatus.Text, v.prismaCounts.Text)
		}
	})
}
