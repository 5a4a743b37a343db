package ui

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
)

// screenshotDir is where TestScreenshotsOfDialogs writes its pictures:
// $CLINSIGHT_SCREENSHOT_DIR (make screenshot: docs/screenshots), else a
// temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("CLINSIGHT_SCREENSHOT_DIR"); d != "" {
		return d
	}
	return t.TempDir()
}

// TestScreenshotsOfDialogs renders, with Fyne's software painter and the
// real theme, what the Xvfb screenshots cannot reach: the confirmation of a
// patient-level export (a dialog), and the Audit screen over a trail with
// records. It checks each picture is drawn (many colours, not a blank
// frame) and writes it as PNG.
func TestScreenshotsOfDialogs(t *testing.T) {
	a := newTestApp(t)
	dir := screenshotDir(t)
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	if err := ws.UpdateConfig(func(c *app.Config) { c.Models.Chat = "qwen2.5:7b" }); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(t.TempDir(), "admissions.csv")
	if err := os.WriteFile(csv, []byte("subject_id,admission_type,los\n1,EMERGENCY,3\n2,ELECTIVE,5\n3,EMERGENCY,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Data().ImportCSV(t.Context(), csv, datasets.CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	src, err := ws.Resolve(app.ImportedSourceName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Data().Query(t.Context(), src, "SELECT admission_type, count(*) AS n FROM admissions GROUP BY admission_type", datasets.RunnerOptions{}); err != nil {
		t.Fatal(err)
	}
	const records = 5 // the settings change, the import's start and end, the source registered, the query
	cols := []string{"subject_id", "hadm_id", "gender", "anchor_age", "admittime", "dod"}
	pl := &disclosure.PatientLevelError{Identifiers: disclosure.Classify(cols, app.SourceMIMICIV), RowLevel: true}
	if len(pl.Direct()) == 0 {
		t.Fatalf("no direct identifiers among %v", cols)
	}

	shots := map[string]image.Image{}
	onUI(t, func(t testing.TB) {
		prev := a.Settings().Theme()
		a.Settings().SetTheme(NewTheme())
		defer a.Settings().SetTheme(prev)

		w := a.NewWindow("Clinsight")
		w.Resize(fyne.NewSize(900, 560))
		w.SetContent(NewAuditScreen(t.Context(), ws.Audit(), w).Content())
		confirmPatientLevel(w, pl, func(bool) {})
		shots["export-confirm"] = w.Canvas().Capture()
		w.Close()
	})
	var s *AuditScreen
	var w fyne.Window
	onUI(t, func(t testing.TB) {
		w = a.NewWindow("Clinsight")
		w.Resize(fyne.NewSize(1100, 640))
		s = NewAuditScreen(t.Context(), ws.Audit(), w)
		w.SetContent(s.Content())
		s.Refresh()
		s.Verify()
	})
	waitUntil(t, "the records and the check", func() bool { return len(s.records) == records && s.check.Text != "Checking…" })
	onUI(t, func(t testing.TB) {
		prev := a.Settings().Theme()
		a.Settings().SetTheme(NewTheme())
		defer a.Settings().SetTheme(prev)
		s.table.Select(widget.TableCellID{Row: records - 1, Col: 1})
		shots["audit"] = w.Canvas().Capture()
		w.Close()
	})
	for name, img := range shots {
		writePNG(t, img, filepath.Join(dir, name+".png"))
	}
}

// capturePNG captures the canvas c (call it on the UI goroutine), checks
// the picture is drawn and writes it as PNG to path (writePNG).
func capturePNG(t testing.TB, c fyne.Canvas, path string) {
	t.Helper()
	writePNG(t, c.Capture(), path)
}

// writePNG checks that img is drawn (at least 8 colours, not a blank
// frame) and writes it as PNG to path.
func writePNG(t testing.TB, img image.Image, path string) {
	t.Helper()
	if n := colours(img); n < 8 {
		t.Errorf("%s: %d colours: a blank picture", filepath.Base(path), n)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// withTheme runs f with th as the app's theme, then puts the previous one
// back (on the UI goroutine).
func withTheme(th fyne.Theme, f func()) {
	settings := fyne.CurrentApp().Settings()
	prev := settings.Theme()
	settings.SetTheme(th)
	defer settings.SetTheme(prev)
	f()
}

// colours counts the distinct colours of an image (up to 64).
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, al := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, al}] = true
			if len(seen) >= 64 {
				return len(seen)
			}
		}
	}
	return len(seen)
}
