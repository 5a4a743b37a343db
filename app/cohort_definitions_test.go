package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

const defsCohortSQL = `SELECT a.subject_id, a.hadm_id, a.admission_type FROM admissions a JOIN patients p ON p.subject_id = a.subject_id WHERE p.anchor_age >= 50`

func demoWorkspace(t *testing.T) (*Workspace, Source) {
	t.Helper()
	ws := openTemp(t)
	if _, err := ws.InitDemo(context.Background(), demo.Options{Seed: 7, Patients: 30}, false); err != nil {
		t.Fatal(err)
	}
	return ws, source(t, ws, DemoSourceName)
}

// TestTable1WorkbookSheet exports a Table 1 through the service and reads
// the sheet back: one sheet "Table 1" laid out as in a paper, its cells
// those of the table suppressed under the source's k, the export in the
// audit trail.
func TestTable1WorkbookSheet(t *testing.T) {
	ctx := context.Background()
	ws, src := demoWorkspace(t)
	c := ws.Cohort()
	tb, err := c.Table1(ctx, src, defsCohortSQL, cohort.Table1Options{Stratify: cohort.StratifySex, TopDiagnoses: 5, TopMedications: 5})
	if err != nil {
		t.Fatal(err)
	}
	if tb.PatientColumn != "subject_id" || tb.Patients == 0 || len(tb.Strata) != 2 {
		t.Fatalf("table: column %q, %d patients, strata %+v", tb.PatientColumn, tb.Patients, tb.Strata)
	}
	if k := c.Table1MinCell(src); k != 0 {
		t.Errorf("a row-level source's Table 1 is shown under k = %d", k)
	}
	path := filepath.Join(t.TempDir(), "table1.xlsx")
	sum, err := c.ExportTable1(ctx, path, src, defsCohortSQL, tb)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Sheets) != 1 || sum.Sheets[0].Name != "Table 1" {
		t.Fatalf("sheets %+v", sum.Sheets)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); !slices.Equal(got, []string{"Table 1", sum.ProvenanceSheet}) {
		t.Errorf("sheets %v", got)
	}
	rows, err := f.GetRows("Table 1")
	if err != nil {
		t.Fatal(err)
	}
	header, cells := tb.Cells(11)
	if !slices.Equal(rows[0], header) || header[0] != "Characteristic" || !strings.HasPrefix(header[1], "Overall") || header[len(header)-1] != "SMD" {
		t.Errorf("header %q, want %q", rows[0], header)
	}
	if len(rows) != len(cells)+1 {
		t.Fatalf("%d rows, want %d", len(rows)-1, len(cells))
	}
	small := 0
	for i, want := range cells {
		got := rows[i+1]
		for len(got) < len(want) { // excelize leaves trailing empty cells out
			got = append(got, "")
		}
		if !slices.Equal(got, want) {
			t.Errorf("row %d: %q, want %q", i+1, got, want)
		}
		for _, v := range got {
			if v == "<11" {
				small++
			}
		}
	}
	if small == 0 {
		t.Error("no cell of the 30-patient demo's Table 1 was suppressed")
	}
	recs, err := ws.Audit().Records(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.Action != audit.ActionExport || last.Details["what"] != "Table 1" || last.Details["path"] != path {
		t.Errorf("last audit record %+v", last)
	}
	if prev := recs[len(recs)-2]; prev.Action != audit.ActionSQL || prev.Details["what"] != "Table 1" || prev.Details["sql"] != defsCohortSQL || prev.Details["stratified_by"] != "sex" {
		t.Errorf("the Table 1 statements are not recorded: %+v", prev)
	}

	// An aggregate-only source with k = 20: the screen is suppressed too,
	// and so is the export, under 20.
	if err := ws.Data().SetPolicy(DemoSourceName, disclosure.Policy{Access: disclosure.AggregateOnly, MinCell: 20}); err != nil {
		t.Fatal(err)
	}
	src = source(t, ws, DemoSourceName)
	if k := c.Table1MinCell(src); k != 20 {
		t.Fatalf("aggregate-only source shown under k = %d, want 20", k)
	}
	if _, err := c.ExportTable1(ctx, path, src, defsCohortSQL, tb); err != nil {
		t.Fatal(err)
	}
	f2, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	rows, _ = f2.GetRows("Table 1")
	_, cells = tb.Cells(20)
	n20 := 0
	for i, want := range cells {
		for j, v := range want {
			if v == "<20" {
				n20++
				if j >= len(rows[i+1]) || rows[i+1][j] != "<20" {
					t.Errorf("row %d column %d exported as %q, want <20", i+1, j, rows[i+1])
				}
			}
		}
	}
	if n20 <= small {
		t.Errorf("k = 20 suppressed %d cells, k = 11 %d", n20, small)
	}
}

// TestDefinitionExportImportRerun saves a definition, exports it, imports
// it into a fresh workspace with the same demo data and runs it there: the
// counts are those at creation.
func TestDefinitionExportImportRerun(t *testing.T) {
	ctx := context.Background()
	ws1, src1 := demoWorkspace(t)
	ans := &cohort.Answer{Question: "Admissions of patients aged 50 or more", SQL: defsCohortSQL}
	d, err := ws1.Cohort().Save(ctx, src1, ans, "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Counts.Patients <= 0 || d.Counts.Rows < d.Counts.Patients || d.Counts.PatientColumn != "subject_id" {
		t.Fatalf("counts at creation %+v", d.Counts)
	}
	defs, problems, err := ws1.Cohort().List(ctx)
	if err != nil || len(problems) > 0 || len(defs) != 1 || defs[0].ID != d.ID {
		t.Fatalf("list %v %v %v", defs, problems, err)
	}
	file := filepath.Join(t.TempDir(), "cohort.json")
	if err := ws1.Cohort().ExportFile(ctx, d.ID, file); err != nil {
		t.Fatal(err)
	}

	ws2, _ := demoWorkspace(t)
	// A damaged file is refused with a clear error and nothing changes.
	data, _ := os.ReadFile(file)
	damaged := filepath.Join(t.TempDir(), "damaged.json")
	if err := os.WriteFile(damaged, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ws2.Cohort().ImportFile(ctx, damaged, ""); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged file: %v", err)
	}
	if defs, _, _ := ws2.Cohort().List(ctx); len(defs) != 0 {
		t.Errorf("a damaged import left %d definitions", len(defs))
	}
	// A source of another name must be chosen.
	renamed := filepath.Join(t.TempDir(), "renamed.json")
	if err := os.WriteFile(renamed, []byte(strings.Replace(string(data), `"name": "demo"`, `"name": "site-copy"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var se *DefinitionSourceError
	if _, err := ws2.Cohort().ImportFile(ctx, renamed, ""); !errors.As(err, &se) || se.Wanted != "site-copy" {
		t.Errorf("unknown source: %v", err)
	}

	imp, err := ws2.Cohort().ImportFile(ctx, file, "")
	if err != nil {
		t.Fatal(err)
	}
	if imp.Source.Name != DemoSourceName || imp.ImportedFrom == nil || imp.ImportedFrom.ID != d.ID || imp.SQL != d.SQL {
		t.Errorf("imported %+v", imp)
	}
	rr, err := ws2.Cohort().Rerun(ctx, imp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Now != d.Counts || rr.Then != d.Counts {
		t.Errorf("rerun in the fresh workspace: now %+v, then %+v, at creation %+v", rr.Now, rr.Then, d.Counts)
	}
	if !strings.Contains(rr.Changes(), "unchanged") || strings.Contains(rr.Changes(), "→") {
		t.Errorf("changes %q", rr.Changes())
	}
	recs, err := ws2.Audit().Records(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if last := recs[len(recs)-1]; last.Action != audit.ActionSQL || last.Details["what"] != "cohort definition run again" || last.Details["id"] != imp.ID || last.Details["sql"] != defsCohortSQL {
		t.Errorf("the run is not recorded: %+v", last)
	}
	again, err := ws2.Cohort().Load(imp.ID)
	if err != nil || len(again.Runs) != 1 || again.Runs[0].Counts != d.Counts {
		t.Errorf("the run was not recorded: %+v %v", again.Runs, err)
	}
	// Importing the same file again keeps both.
	imp2, err := ws2.Cohort().ImportFile(ctx, renamed, DemoSourceName)
	if err != nil || imp2.ID == imp.ID {
		t.Errorf("second import %q (first %q): %v", imp2.ID, imp.ID, err)
	}
}

// TestDefinitionCountsOfAnAggregateOnlySource: a cohort of 5 patients on
// an aggregate-only source is shown and exported as "<11"; the workspace
// keeps the exact counts to compare runs.
func TestDefinitionCountsOfAnAggregateOnlySource(t *testing.T) {
	ctx := context.Background()
	ws, src := demoWorkspace(t)
	if err := ws.Data().SetPolicy(DemoSourceName, disclosure.Policy{Access: disclosure.AggregateOnly}); err != nil {
		t.Fatal(err)
	}
	src = source(t, ws, src.Name)
	const few = "SELECT subject_id FROM patients WHERE subject_id IN (SELECT subject_id FROM patients ORDER BY subject_id LIMIT 5)"
	d, err := ws.Cohort().Save(ctx, src, &cohort.Answer{Question: "five", SQL: few}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Counts.Text(); got != "<11 rows, <11 patients" {
		t.Errorf("saved counts shown as %q", got)
	}
	exact, err := ws.Cohort().store().Load(d.ID)
	if err != nil || exact.Counts.Rows != 5 || exact.Counts.Patients != 5 {
		t.Fatalf("the workspace's file holds %+v (%v), want the exact counts", exact.Counts, err)
	}
	file := filepath.Join(t.TempDir(), "few.json")
	if err := ws.Cohort().ExportFile(ctx, d.ID, file); err != nil {
		t.Fatal(err)
	}
	out, err := cohort.ReadDefinition(file)
	if err != nil {
		t.Fatal(err)
	}
	if out.Counts.Rows != 0 || out.Counts.Patients != 0 || out.Counts.SuppressedBelow != 11 {
		t.Errorf("exported counts %+v", out.Counts)
	}
	rr, err := ws.Cohort().Rerun(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := rr.Changes(); got != "rows <11 → <11; patients <11 → <11" {
		t.Errorf("changes %q", got)
	}
}

// TestDefinitionRegenerate: a saved definition's question is asked again
// through the real client (a scripted server): the model's new statement
// is counted on the source, the counts are compared with those at
// creation, the saved statement is kept, and the run (with the new
// statement) is recorded in the definition and the audit trail.
func TestDefinitionRegenerate(t *testing.T) {
	ctx := context.Background()
	ws, src := demoWorkspace(t)
	srv := ollamatest.New(t, ollamatest.Model{Name: "chat-model"})
	if err := ws.UpdateConfig(func(c *Config) {
		c.OllamaHost = srv.URL
		c.Models = Models{SQL: "chat-model", Chat: "chat-model"}
	}); err != nil {
		t.Fatal(err)
	}
	ans := &cohort.Answer{Question: "Admissions of patients aged 50 or more", SQL: defsCohortSQL}
	d, err := ws.Cohort().Save(ctx, src, ans, "")
	if err != nil {
		t.Fatal(err)
	}
	// This time the model reads "50 or more" as "over 60".
	const newSQL = `SELECT a.subject_id, a.hadm_id FROM admissions a JOIN patients p ON p.subject_id = a.subject_id WHERE p.anchor_age > 60`
	srv.QueueChat(
		ollamatest.ChatReply{Content: fmt.Sprintf(`{"category":"answerable","reason":"admissions and patients","sql":%q}`, newSQL)},
		ollamatest.ChatReply{Content: "These are the admissions of patients over 60."},
	)
	before := len(srv.ChatRequests())
	rr, newAns, err := ws.Cohort().Regenerate(ctx, d.ID, CohortOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.ChatRequests()) - before; n < 1 {
		t.Fatalf("the question was not asked again: %d model requests", n)
	}
	var want cohort.DefinitionCounts
	db, err := datasets.OpenReadOnly(ctx, ws.DemoPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT subject_id) FROM (`+newSQL+`)`).Scan(&want.Rows, &want.Patients); err != nil {
		t.Fatal(err)
	}
	if !rr.Regenerated || rr.SQL != newSQL || newAns == nil || newAns.SQL != newSQL {
		t.Errorf("regenerated %v, SQL %q, answer %+v", rr.Regenerated, rr.SQL, newAns)
	}
	if rr.Now.Rows != want.Rows || rr.Now.Patients != want.Patients || rr.Then != d.Counts {
		t.Errorf("counts now %+v (reference %d rows, %d patients), then %+v (saved %+v)", rr.Now, want.Rows, want.Patients, rr.Then, d.Counts)
	}
	if want.Patients == d.Counts.Patients || !strings.Contains(rr.Changes(), "→") {
		t.Errorf("the new statement should select fewer patients: %q", rr.Changes())
	}
	again, err := ws.Cohort().Load(d.ID)
	if err != nil || again.SQL != defsCohortSQL || len(again.Runs) != 1 || again.Runs[0].SQL != newSQL {
		t.Errorf("the saved statement must stay and the run record the new one: %+v %v", again, err)
	}
	recs, err := ws.Audit().Records(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if r.Details["what"] == "cohort definition asked again" && r.Details["sql"] == newSQL {
			found = true
		}
	}
	if !found {
		t.Error("the regenerated run is not in the audit trail")
	}

	// A plain re-run counts the saved statement and says nothing of SQL.
	rr2, err := ws.Cohort().Rerun(ctx, d.ID)
	if err != nil || rr2.Regenerated || rr2.Now != d.Counts {
		t.Errorf("rerun after regenerate: %+v %v", rr2, err)
	}
}
