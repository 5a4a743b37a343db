package ui

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/meta"
)

// bcgStudiesCSV is metadat's dat.bcg (13 BCG vaccine trials) as events and
// totals: ai = tpos, n1i = tpos + tneg, ci = cpos, n2i = cpos + cneg.
const bcgStudiesCSV = `study,ai,n1i,ci,n2i
Aronson,4,123,11,139
Ferguson & Simes,6,306,29,303
Rosenthal et al,3,231,11,220
Hart & Sutherland,62,13598,248,12867
Frimodt-Moller et al,33,5069,47,5808
Stein & Aronson,180,1541,372,1451
Vandiviere et al,8,2545,10,629
TPT Madras,505,88391,499,88391
Coetzee & Berjak,29,7499,45,7277
Rosenthal et al,17,1716,65,1665
Comstock et al,186,50634,141,27338
Comstock & Webster,5,2498,3,2341
Comstock et al,27,16913,29,17854
`

// statText returns the shown text of the summary row with key.
func statText(s *MetaScreen, key string) string {
	for _, st := range s.stats {
		if st.Key == key {
			return st.Text()
		}
	}
	return ""
}

// waitStatus waits until the screen's status line reads want: a finished
// load, analysis or export. Every action first sets a busy status
// ("Reading …", "Analysing…"), so the wait cannot pass on the text of an
// earlier result.
func waitStatus(t *testing.T, s *MetaScreen, want string) {
	t.Helper()
	if !eventually(func() bool { return s.status.Text == want }) {
		var got string
		fyne.DoAndWait(func() { got = s.status.Text })
		t.Fatalf("timed out after %s waiting for the status %q (status %q)", waitTimeout, want, got)
	}
}

// waitError waits until the screen's inline error contains want.
func waitError(t *testing.T, s *MetaScreen, want string) {
	t.Helper()
	if !eventually(func() bool { return s.errLabel.Visible() && strings.Contains(s.errLabel.Text, want) }) {
		var got string
		fyne.DoAndWait(func() { got = s.errLabel.Text })
		t.Fatalf("timed out after %s waiting for the error %q (error %q)", waitTimeout, want, got)
	}
}

// newTestMetaScreen shows a Meta-analysis screen in a window of its own.
func newTestMetaScreen(t *testing.T) *MetaScreen {
	t.Helper()
	a := newTestApp(t)
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	var s *MetaScreen
	onUI(t, func(t testing.TB) {
		w := a.NewWindow("meta")
		s = NewMetaScreen(t.Context(), ws.Meta(), w, "test")
		w.SetContent(s.Content())
	})
	return s
}

func TestMetaScreenBCG(t *testing.T) {
	s := newTestMetaScreen(t)
	onUI(t, func(t testing.TB) {
		if !s.SelectMeasure(meta.RR) || !s.SelectModel(meta.REML) {
			t.Fatal("RR or REML not offered for 2x2 counts")
		}
		s.paste.SetText(bcgStudiesCSV)
		test.Tap(s.pasteBtn)
	})
	waitStatus(t, s, "Random-effects model (REML), Risk Ratio: k = 13")
	var reml float64
	onUI(t, func(t testing.TB) {
		if !s.hasResult {
			t.Fatalf("no result; error %q, status %q", s.errLabel.Text, s.status.Text)
		}
		if got, want := s.res.Est, math.Log(0.4894); math.Abs(got-want) > 1e-4 {
			t.Errorf("RR REML est = %.6f, want log(0.4894) = %.6f", got, want)
		}
		if got := statText(s, "RR"); got != "0.4894" {
			t.Errorf("summary RR = %q", got)
		}
		if got := statText(s, "tau2"); got != "0.3132" {
			t.Errorf("summary tau2 = %q", got)
		}
		if s.plot.Image == nil || s.plot.Image.Bounds().Dx() < 600 {
			t.Error("no forest plot shown")
		}
		if !strings.Contains(s.sourceLabel.Text, "13 studies") || s.exportBtn.Disabled() {
			t.Errorf("source %q, export disabled %v", s.sourceLabel.Text, s.exportBtn.Disabled())
		}
		reml = s.res.Est

		// A new model updates the summary.
		s.SelectModel(meta.EE)
	})
	waitStatus(t, s, "Common-effect model (inverse variance), Risk Ratio: k = 13")
	onUI(t, func(t testing.TB) {
		if s.res.Method != meta.EE || s.res.Est == reml || statText(s, "tau2") != "0.0000" {
			t.Errorf("after EE: method %s est %.6f tau2 %q", s.res.Method, s.res.Est, statText(s, "tau2"))
		}
		if got := statText(s, "model"); got != "Common-effect model (inverse variance)" {
			t.Errorf("summary model = %q", got)
		}
		if got, want := statText(s, "RR"), "0.6503"; got != want { // exp(-0.4303), metafor's EE on dat.bcg
			t.Errorf("EE RR = %q, want %q", got, want)
		}

		// Mantel–Haenszel has no Knapp–Hartung adjustment: the box is disabled.
		s.hk.SetChecked(true)
	})
	waitStatus(t, s, "Common-effect model (inverse variance, Knapp–Hartung), Risk Ratio: k = 13")
	onUI(t, func(t testing.TB) {
		if s.res.Test != meta.TestKnHa {
			t.Errorf("HK not applied: %s", s.res.Model)
		}
		s.SelectModel(meta.MH)
	})
	waitStatus(t, s, "Common-effect model (Mantel–Haenszel), Risk Ratio: k = 13")
	onUI(t, func(t testing.TB) {
		if !s.hk.Disabled() || s.hk.Checked || s.res.Model != "MH" {
			t.Errorf("MH: hk disabled %v checked %v model %s", s.hk.Disabled(), s.hk.Checked, s.res.Model)
		}
	})

	// Export: Studies, Pooled, the plot and the provenance.
	out := filepath.Join(t.TempDir(), "meta.xlsx")
	onUI(t, func(testing.TB) { s.ExportWorkbook(out) })
	waitStatus(t, s, "Exported 13 studies to "+out)
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatalf("exported workbook: %v", err)
	}
	defer wb.Close()
	if got := strings.Join(wb.GetSheetList(), ","); got != "Studies,Pooled,Summary,Forest plot,Funnel plot,Provenance" {
		t.Errorf("sheets %s", got)
	}
	rows, _ := wb.GetRows("Studies")
	if len(rows) != 14 || rows[1][0] != "Aronson" {
		t.Errorf("Studies rows: %d", len(rows))
	}
	pooled, _ := wb.GetRows("Pooled")
	if len(pooled) < 10 || pooled[1][0] != "model" || pooled[1][1] != "Common-effect model (Mantel–Haenszel)" {
		t.Errorf("Pooled rows: %v", pooled[:min(3, len(pooled))])
	}
	pics, err := wb.GetPictures("Forest plot", "A1")
	if err != nil || len(pics) != 1 {
		t.Errorf("forest plot picture: %d, %v", len(pics), err)
	}
	prov, _ := wb.GetRows("Provenance")
	text := ""
	for _, r := range prov {
		text += strings.Join(r, "=") + "\n"
	}
	for _, want := range []string{"Clinsight version=test", "Data source=pasted text", "Effect measure=Risk Ratio (RR)"} {
		if !strings.Contains(text, want) {
			t.Errorf("Provenance lacks %q:\n%s", want, text)
		}
	}
}

func TestMetaScreenFileLayoutsAndErrors(t *testing.T) {
	s := newTestMetaScreen(t)

	// A row with more events than participants: the message names it.
	onUI(t, func(testing.TB) { s.LoadText("study,ai,n1i,ci,n2i\nA,1,10,2,10\nB,12,10,2,10\n") })
	waitStatus(t, s, "Could not read "+pastedSource)
	path := filepath.Join(t.TempDir(), "bcg.csv")
	body := "set,author,tpos,tneg,cpos,cneg\nbcg,Aronson,4,119,11,128\nother,X,1,1,1,1\nbcg,Ferguson & Simes,6,300,29,274\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	onUI(t, func(t testing.TB) {
		if s.hasResult || !s.errLabel.Visible() || s.errLabel.Text != `data row 2 (study "B"): ai = 12 events is more than the group total n1i = 10` {
			t.Errorf("error label %q (visible %v)", s.errLabel.Text, s.errLabel.Visible())
		}
		if !s.exportBtn.Disabled() {
			t.Error("export enabled without a result")
		}

		// A file in the events/non-events layout with its own column names,
		// filtered to one dataset.
		s.layoutSel.SetSelectedIndex(1) // ai, bi, ci, di: reloads the pasted text (fails: no such columns)
	})
	waitStatus(t, s, "Could not read "+pastedSource) // the status was "Reading …" since the change
	onUI(t, func(testing.TB) {
		for field, col := range map[string]string{"study": "author", "ai": "tpos", "bi": "tneg", "ci": "cpos", "di": "cneg"} {
			s.columns[field].SetText(col)
		}
		s.filter.SetText("set=bcg")
		s.SelectMeasure(meta.OR)
		s.LoadFile(path)
	})
	waitStatus(t, s, "Random-effects model (REML), Odds Ratio: k = 2")
	onUI(t, func(t testing.TB) {
		if !s.hasResult || s.res.K != 2 || s.res.Studies[1].Label != "Ferguson & Simes" || s.errLabel.Visible() {
			t.Fatalf("file load: result %v k %d, error %q", s.hasResult, s.res.K, s.errLabel.Text)
		}
		if s.studies[0].N1I != 123 {
			t.Errorf("n1i from ai+bi = %v, want 123", s.studies[0].N1I)
		}

		// The continuous layout offers MD and SMD, and no Mantel–Haenszel.
		s.layoutSel.SetSelectedIndex(2)
	})
	waitError(t, s, `column "m1i" not found`)
	onUI(t, func(t testing.TB) {
		if s.SelectModel(meta.MH) || !s.SelectMeasure(meta.SMD) {
			t.Error("continuous layout: MH offered or SMD missing")
		}
		if s.hasResult || !strings.Contains(s.errLabel.Text, `column "m1i" not found`) {
			t.Errorf("continuous layout on 2x2 data: %q", s.errLabel.Text)
		}

		// A missing file.
		s.LoadFile(filepath.Join(t.TempDir(), "nope.csv"))
	})
	waitError(t, s, "cannot open the data file") // the SMD selection had nothing to analyse; this load fails
	onUI(t, func(t testing.TB) {
		if !strings.HasPrefix(s.errLabel.Text, "cannot open the data file") {
			t.Errorf("missing file: %q", s.errLabel.Text)
		}
	})
}

func TestMetaScreenExample(t *testing.T) {
	s := newTestMetaScreen(t)
	onUI(t, func(testing.TB) { s.LoadExample() })
	waitStatus(t, s, "Random-effects model (REML), Risk Ratio: k = 13")
	onUI(t, func(t testing.TB) {
		if s.selectedMeasure() != meta.RR || s.selectedModel() != meta.REML {
			t.Errorf("example options: %v %v", s.selectedMeasure(), s.selectedModel())
		}
		if got, want := statText(s, "RR"), "0.4894"; got != want {
			t.Errorf("example pooled RR = %q, want %q", got, want)
		}
		if got := s.sourceName(); got != "Example: BCG vaccine trials" {
			t.Errorf("the example is named %q in messages and the provenance", got)
		}
		s.LoadText(meta.ExampleBCG) // the same text pasted is pasted text
		if got := s.sourceName(); got != pastedSource {
			t.Errorf("pasted text named %q", got)
		}
	})
}

func TestMetaScreenProportions(t *testing.T) {
	s := newTestMetaScreen(t)
	onUI(t, func(t testing.TB) {
		s.layoutSel.SetSelected("Single-arm: events and total (xi, ni)")
		if !s.SelectMeasure(meta.PLO) || !s.SelectModel(meta.REML) {
			t.Fatal("PLO or REML not offered for single-arm studies")
		}
		s.paste.SetText("study,xi,ni\nA,12,40\nB,30,80\nC,7,35\nD,22,50\n")
		test.Tap(s.pasteBtn)
	})
	waitStatus(t, s, "Random-effects model (REML), Proportion (logit): k = 4")
	onUI(t, func(t testing.TB) {
		if !s.hasResult || s.res.K != 4 {
			t.Fatalf("no proportion result: error %q", s.errLabel.Text)
		}
	})
}

// TestMetaScreenModelsFollowTheMeasure checks that the model list is the
// measure's (meta.MethodsFor): Peto is offered for odds ratios only, and a
// Peto choice falls back to REML when the measure changes to one without
// it; Knapp–Hartung is off for Peto.
func TestMetaScreenModelsFollowTheMeasure(t *testing.T) {
	s := newTestMetaScreen(t)
	onUI(t, func(t testing.TB) {
		if !s.SelectMeasure(meta.OR) {
			t.Fatal("OR not offered for 2x2 counts")
		}
		if !s.SelectModel(meta.PETO) {
			t.Fatalf("Peto not offered for OR: %v", s.models)
		}
		if !s.hk.Disabled() {
			t.Error("Knapp–Hartung enabled with Peto")
		}
		if !s.SelectMeasure(meta.RR) {
			t.Fatal("RR not offered for 2x2 counts")
		}
		if slices.Contains(s.models, meta.PETO) {
			t.Errorf("Peto offered for RR: %v", s.models)
		}
		if got := s.selectedModel(); got != meta.REML {
			t.Errorf("model after switching to RR = %s, want REML", got)
		}
		if !slices.Contains(s.models, meta.MH) || s.hk.Disabled() {
			t.Errorf("RR models %v, Knapp–Hartung disabled %v", s.models, s.hk.Disabled())
		}
	})
}
