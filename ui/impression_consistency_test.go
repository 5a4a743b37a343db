package ui

import (
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"github.com/ollama/ollama/api"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestImpressionsFlagsContradiction: a generated impression that calls the
// study normal while the findings report cardiomegaly and an effusion is
// flagged under the impression; editing it to name them clears the flag,
// and the export records the accepted text as consistent (issue 20).
func TestImpressionsFlagsContradiction(t *testing.T) {
	ws, srv := newReportsWorkspace(t)
	mw := newTestMainWindow(t, ws)
	s := mw.Impressions
	onUI(t, func(t testing.TB) {
		if err := mw.Show("impressions"); err != nil {
			t.Fatal(err)
		}
	})
	waitUntil(t, "the corpus to load", func() bool { return strings.Contains(s.corpusInfo.Text, "400 reports") })
	srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
		return ollamatest.ChatReply{Content: "No acute cardiopulmonary abnormality."}
	})
	onUI(t, func(t testing.TB) {
		s.useModel.SetChecked(true)
		s.findings.SetText("Moderate cardiomegaly. Small left pleural effusion. No pneumothorax.")
		test.Tap(s.generateBtn)
	})
	waitUntil(t, "the impression", func() bool { return strings.HasPrefix(s.status.Text, "Done in ") })
	onUI(t, func(t testing.TB) {
		if s.result == nil || !s.result.Generated || s.answer.Text != "No acute cardiopulmonary abnormality." {
			t.Fatalf("result %+v", s.result)
		}
		flag := s.consistency.Text
		if !strings.HasPrefix(flag, "Check before accepting: The impression calls the study normal, but the findings report Cardiomegaly, Pleural Effusion") ||
			strings.Contains(flag, "impression:") || !s.consistency.Visible() {
			t.Errorf("flag %q", flag)
		}
		s.answer.SetText("Cardiomegaly with a small left pleural effusion.")
		if s.consistency.Text != "" {
			t.Errorf("flag after the edit: %q", s.consistency.Text)
		}
		test.Tap(s.acceptBtn)
		// The unedited, contradicting impression accepted too.
		s.answer.SetText(s.result.Impression)
		if s.consistency.Text == "" {
			t.Error("flag not restored by undoing the edit")
		}
		test.Tap(s.generateBtn)
	})
	waitUntil(t, "the impression", func() bool { return strings.HasPrefix(s.status.Text, "Done in ") })
	onUI(t, func(testing.TB) { test.Tap(s.acceptBtn) })
	out := filepath.Join(t.TempDir(), "impressions.xlsx")
	onUI(t, func(testing.TB) { s.ExportWorkbook(out) })
	waitUntil(t, "the export", func() bool { return strings.HasPrefix(s.status.Text, "Exported ") })
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, _ := wb.GetRows("Impressions")
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	col := -1
	for i, h := range rows[0] {
		if h == "contradicts_findings" {
			col = i
		}
	}
	if col < 0 || len(rows[1]) <= col || rows[1][col] != "FALSE" || len(rows[2]) <= col+1 || rows[2][col] != "TRUE" ||
		!strings.Contains(rows[2][col+1], "Cardiomegaly") {
		t.Errorf("export: header %v, rows %v / %v", rows[0], rows[1], rows[2])
	}
}
