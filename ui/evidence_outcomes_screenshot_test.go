package ui

import (
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
)

// TestScreenshotArmsDialog renders the Results step of a review's second
// outcome with a three-arm study, and the dialog where the user chooses
// its groups (two doses of MWA combined against RFA), checks the picture
// is drawn and writes it as evidence-arms.png to screenshotDir
// ($CLINSIGHT_SCREENSHOT_DIR).
func TestScreenshotArmsDialog(t *testing.T) {
	a := newTestApp(t)
	svc := newFakeReviews("lit")
	r := fakeIncluded(t, svc, "MWA vs RFA in HCC")
	for id, author := range map[string]string{"a": "Chen", "b": "Yamada", "c": "Rossi"} {
		info := r.p.Studies[id]
		info.FirstAuthor, info.Title = author, "Microwave versus radiofrequency ablation of hepatocellular carcinoma"
		r.p.Studies[id] = info
	}
	i, err := r.p.AddOutcome(evidence.ResultSpec{Outcome: "major complications", Cohort: "MWA (treatment) vs RFA (control)", Measure: evidence.TwoGroups})
	if err != nil {
		t.Fatal(err)
	}
	r.p.OutcomeAt(i).Results = complicationResults()
	if err := r.p.SetArms(i, "b", evidence.ArmChoice{Treatment: threeArms[:2], Control: threeArms[2:]}); err != nil {
		t.Fatal(err)
	}

	s, w := evidenceWindow(t, a, svc, fyne.NewSize(1280, 820))
	waitUntil(t, "the project opened", func() bool { return s.project() != nil })
	path := filepath.Join(screenshotDir(t), "evidence-arms.png")
	onUI(t, func(t testing.TB) {
		s.steps.SelectIndex(4)
		s.results.bar.sel.SetSelectedIndex(i)
		s.results.standardTable.Select(widget.TableCellID{Row: rowOf(s.results, "b"), Col: 0})
		s.results.showArmsDialog("b")
		if s.results.armsDlg == nil {
			t.Fatal("no arms dialog")
		}
		withTheme(theme.DefaultTheme(), func() { capturePNG(t, w.Canvas(), path) })
		w.Close()
	})
}
