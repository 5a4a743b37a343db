package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// cohortReply is the scripted classify-and-generate reply for sql.
func cohortReply(sql string) ollamatest.ChatReply {
	return ollamatest.ChatReply{Content: fmt.Sprintf(`{"category":"answerable","reason":"in the data","sql":%q}`, sql)}
}

func TestCohortScreenAsksExportsAndReruns(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	ws := newEmptyWorkspace(t)
	opts := demo.DefaultOptions()
	opts.Patients = 60
	if _, err := ws.InitDemo(context.Background(), opts, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = srv.URL }); err != nil {
		t.Fatal(err)
	}
	mw := newTestMainWindow(t, ws)
	s := mw.Cohort
	waitUntil(t, "the example questions of the demo source", func() bool { return len(s.examples.Options) > 0 })

	const sql = "SELECT gender, COUNT(*) AS patients FROM patients GROUP BY gender ORDER BY gender"
	srv.QueueChat(cohortReply(sql), ollamatest.ChatReply{Content: "Women and men are about equally represented, 90% of them old."})
	onUI(t, func(t testing.TB) {
		if s.source != "demo" || len(s.examples.Options) == 0 {
			t.Fatalf("source %q, examples %v", s.source, s.examples.Options)
		}
		s.question.SetText("How many patients of each sex?")
		test.Tap(s.askBtn)
	})
	waitUntil(t, "the answer", func() bool { return strings.Contains(s.status.Text, " attempt(s) · ") })
	var firstCount any
	onUI(t, func(t testing.TB) {
		if s.last == nil || s.last.Status != "answered" {
			t.Fatalf("answer = %+v; status %q", s.last, s.status.Text)
		}
		if got := s.answerText(); !strings.Contains(got, "Women and men are about equally represented") || !strings.Contains(got, "90% (unverified)") {
			t.Errorf("answer text = %q", got)
		}
		highlighted := false
		for _, seg := range s.answer.Segments {
			if ts, ok := seg.(*widget.TextSegment); ok && ts.Style.ColorName == theme.ColorNameError && strings.HasPrefix(ts.Text, "90%") {
				highlighted = true
			}
		}
		if !highlighted {
			t.Error("the unverified number is not highlighted")
		}
		if s.sqlEntry.Text != sql || len(s.tried) != 1 || len(s.retrieved) != 5 {
			t.Errorf("sql %q, attempts %d, tables %d", s.sqlEntry.Text, len(s.tried), len(s.retrieved))
		}
		if s.result.res == nil || len(s.result.res.Rows) != 2 || s.result.res.Rows[0][0] != "F" {
			t.Fatalf("result = %+v", s.result.res)
		}
		firstCount = s.result.res.Rows[0][1]
		if len(s.chart.Objects) != 2 { // title and the bars
			t.Errorf("chart objects = %d", len(s.chart.Objects))
		}
		if s.exportBtn.Disabled() || len(s.history) != 1 {
			t.Errorf("export disabled %v, history %d", s.exportBtn.Disabled(), len(s.history))
		}
	})

	out := filepath.Join(t.TempDir(), "cohort.xlsx")
	onUI(t, func(testing.TB) { s.ExportCohort(out) })
	waitUntil(t, "the export", func() bool { return s.status.Text == "Exported 2 rows to "+out })
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, _ := wb.GetRows("Cohort")
	if len(rows) != 3 || rows[0][0] != "gender" || rows[1][0] != "F" || rows[2][0] != "M" || rows[1][1] != fmt.Sprint(firstCount) {
		t.Errorf("Cohort sheet = %v", rows)
	}
	prov, _ := wb.GetRows("Provenance")
	text := ""
	for _, r := range prov {
		text += strings.Join(r, "=") + "\n"
	}
	for _, want := range []string{"Question=How many patients of each sex?", "Query=" + sql, "Attempts=1", "qwen2.5-coder:7b", "demo", "Unverified numbers=90%"} {
		if !strings.Contains(text, want) {
			t.Errorf("Provenance lacks %q:\n%s", want, text)
		}
	}

	// Edit the SQL and re-run it through the same runner.
	onUI(t, func(testing.TB) {
		s.sqlEntry.SetText("SELECT COUNT(*) AS n FROM patients")
		test.Tap(s.runBtn)
	})
	waitUntil(t, "the re-run", func() bool { return strings.HasPrefix(s.status.Text, "1 rows · ") })
	onUI(t, func(t testing.TB) {
		if len(s.result.res.Rows) != 1 || s.result.res.Rows[0][0] != int64(60) || len(s.tried) != 2 || s.tried[1].Source != "user" {
			t.Errorf("re-run: rows %v, attempts %+v", s.result.res.Rows, s.tried)
		}
		s.RunSQL("DROP TABLE patients")
	})
	waitUntil(t, "the statement to be refused", func() bool { return strings.Contains(s.status.Text, "refused") })

	// A follow-up carries the conversation.
	srv.QueueChat(cohortReply("SELECT COUNT(*) FROM patients WHERE gender = 'F'"), ollamatest.ChatReply{Content: "Only the women."})
	onUI(t, func(testing.TB) { s.Ask("now only the women") })
	waitUntil(t, "the follow-up's answer", func() bool { return strings.Contains(s.status.Text, " attempt(s) · ") })
	reqs := srv.ChatRequests()
	if last := reqs[len(reqs)-2].Messages; !strings.Contains(last[len(last)-1].Content, "Earlier question: How many patients of each sex?") {
		t.Errorf("follow-up prompt = %q", last[len(last)-1].Content)
	}
}

func TestCohortScreenCancel(t *testing.T) {
	a := newTestApp(t)
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	ws := newTestWorkspace(t)
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = srv.URL }); err != nil {
		t.Fatal(err)
	}
	var s *CohortScreen
	onUI(t, func(t testing.TB) {
		s = NewCohortScreen(t.Context(), ws.Cohort(), a.NewWindow("cohort"), "test")
		s.Refresh()
	})
	waitUntil(t, "the tables of the source", func() bool { return strings.Contains(s.status.Text, "2 tables") })
	srv.QueueChat(ollamatest.ChatReply{Content: `{"category":"answerable","reason":"","sql":"SELECT 1"}`, Fault: ollamatest.Fault{Delay: 5e9}})
	onUI(t, func(testing.TB) { s.Ask("How many female patients are there?") })
	waitUntil(t, "the question to reach the model", func() bool { return srv.Count("POST", "/api/chat") > 0 })
	tapOnUI(t, s.cancelBtn)
	waitUntil(t, "the cancellation", func() bool { return s.status.Text == "Cancelled." })
	onUI(t, func(t testing.TB) {
		if s.last == nil || s.last.Status != "error" {
			t.Errorf("status %q, answer %+v", s.status.Text, s.last)
		}
	})
}

// TestCohortScreenExportsExactCountsOnlyWhenTicked runs a small count from
// the SQL box (no model) and exports it twice: suppressed by default, exact
// with "Exact counts" ticked on a row-level source.
func TestCohortScreenExportsExactCountsOnlyWhenTicked(t *testing.T) {
	ws := newEmptyWorkspace(t)
	opts := demo.DefaultOptions()
	opts.Patients = 30
	if _, err := ws.InitDemo(context.Background(), opts, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = "http://127.0.0.1:1" }); err != nil {
		t.Fatal(err)
	}
	s := newTestMainWindow(t, ws).Cohort
	waitUntil(t, "the demo source", func() bool { return s.source == "demo" })
	onUI(t, func(testing.TB) {
		s.RunSQL("SELECT count(*) AS n FROM patients WHERE subject_id IN (SELECT subject_id FROM patients ORDER BY subject_id LIMIT 3)")
	})
	waitUntil(t, "the count", func() bool { return strings.HasPrefix(s.status.Text, "1 rows · ") })
	cell := func(path string) string {
		t.Helper()
		wb, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defer wb.Close()
		rows, _ := wb.GetRows("Cohort")
		if len(rows) != 2 {
			t.Fatalf("Cohort sheet = %v", rows)
		}
		return rows[1][0]
	}
	suppressed := filepath.Join(t.TempDir(), "suppressed.xlsx")
	onUI(t, func(testing.TB) { s.ExportCohort(suppressed) })
	waitUntil(t, "the first export", func() bool { return strings.HasPrefix(s.status.Text, "Exported 1 rows to "+suppressed) })
	if got := cell(suppressed); got != "<11" {
		t.Errorf("default export cell = %q, want <11", got)
	}
	exact := filepath.Join(t.TempDir(), "exact.xlsx")
	onUI(t, func(testing.TB) {
		s.exportExact.SetChecked(true)
		s.ExportCohort(exact)
	})
	waitUntil(t, "the exact export", func() bool { return strings.HasPrefix(s.status.Text, "Exported 1 rows to "+exact) })
	if got := cell(exact); got != "3" {
		t.Errorf("exact export cell = %q, want 3", got)
	}
}
