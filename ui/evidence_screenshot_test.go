package ui

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
)

// TestScreenshotScreeningStep renders the Screen step learning from the
// reviewer's decisions (a fake review of 60 records, 14 decided, the
// consecutive rule set), with its progress curve, checks the picture is
// drawn and writes it as screening.png to screenshotDir
// ($CLINSIGHT_SCREENSHOT_DIR).
func TestScreenshotScreeningStep(t *testing.T) {
	a := newTestApp(t)
	svc := newFakeReviews("lit")
	ri, err := svc.Create("Aspirin after stroke", "lit", evidence.PICO{Population: "adults after ischaemic stroke", Intervention: "aspirin"})
	if err != nil {
		t.Fatal(err)
	}
	r := ri.(*fakeReview)
	topics := [][2]string{
		{"Aspirin for secondary prevention of ischaemic stroke: a randomised trial", "Aspirin reduced recurrent stroke after ischaemic stroke in adults."},
		{"Knee arthroscopy outcomes in older adults", "Surgery of the knee in older adults."},
		{"Clopidogrel versus aspirin after minor stroke", "Antiplatelet therapy after ischaemic stroke."},
		{"Total knee replacement rehabilitation", "Physiotherapy after knee surgery."},
		{"Statins after transient ischaemic attack", "Cholesterol lowering after stroke."},
		{"Hip fracture surgery timing", "Surgery timing and hip outcomes."},
	}
	var ids []string
	r.abstract = map[string]string{}
	for i := range 60 {
		id := fmt.Sprintf("pmid:%d", 30000000+i)
		tp := topics[i%len(topics)]
		ids = append(ids, id)
		r.p.Studies[id] = evidence.StudyInfo{Title: fmt.Sprintf("%s (%d)", tp[0], i), Year: 2000 + i%24, FirstAuthor: "Author"}
		r.abstract[id] = tp[1]
	}
	r.p.Query = "stroke OR aspirin"
	r.p.Search = &evidence.SearchRun{Query: r.p.Query, Total: int64(len(ids)), IDs: ids, At: time.Now()}
	r.p.Criteria = []evidence.Criterion{{Text: "Adults after an ischaemic stroke or TIA", Weight: 1}, {Text: "Aspirin compared with another treatment or none", Weight: 1}}
	t0 := time.Now().Add(-time.Hour)
	for k := range 14 {
		id := ids[k]
		d := evidence.Decision{Include: k%6 == 0 || k%6 == 2, At: t0.Add(time.Duration(k) * time.Minute)}
		if !d.Include {
			d.Reason = "Wrong population"
		}
		r.p.Decisions[id] = d
	}
	r.p.Stopping.Consecutive = 20

	s, w := evidenceWindow(t, a, svc, fyne.NewSize(1400, 1000))
	waitUntil(t, "the ranking and the curve", func() bool {
		return s.project() != nil && s.screening.ranking != nil && !s.screening.rankBusy && s.screening.curveImg.Image != nil
	})
	onUI(t, func(t testing.TB) {
		s.steps.SelectIndex(2)
		s.screening.table.Select(widget.TableCellID{Row: 0, Col: 3})
	})
	waitUntil(t, "the abstract", func() bool { return len(s.loadingTexts) == 0 })
	path := filepath.Join(screenshotDir(t), "screening.png")
	onUI(t, func(t testing.TB) {
		withTheme(theme.DefaultTheme(), func() { capturePNG(t, w.Canvas(), path) })
		w.Close()
	})
}

// evidenceWindow shows an evidence screen over svc in a window of app a of
// the given size, for a screenshot.
func evidenceWindow(t *testing.T, a fyne.App, svc app.ReviewService, size fyne.Size) (*EvidenceScreen, fyne.Window) {
	t.Helper()
	var s *EvidenceScreen
	var w fyne.Window
	onUI(t, func(t testing.TB) {
		w = a.NewWindow("Clinsight")
		w.Resize(size)
		s = NewEvidenceScreen(t.Context(), svc, nil, w, "test")
		w.SetContent(s.Content())
		s.Refresh()
	})
	return s, w
}
