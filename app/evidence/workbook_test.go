package evidence

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/export"
)

// workbookProject is a small review: 5 candidates of 40 records found, 4
// screened against 2 criteria (one failed), 3 included with fields and
// two-group results, 1 excluded, 1 decided without screening.
func workbookProject(t *testing.T) *Project {
	t.Helper()
	p := NewProject("MWA vs RFA", "/data/hcc.db", PICO{
		Population: "hepatocellular carcinoma", Intervention: "microwave ablation",
		Comparison: "radiofrequency ablation", Outcome: "complete ablation",
	})
	p.Terms = SearchTerms{Conditions: []string{"hepatocellular carcinoma", "HCC"}, Treatments: []string{"microwave ablation"}, Comparators: []string{"radiofrequency ablation", "RFA"}}
	p.Query = `("hepatocellular carcinoma" OR HCC) AND "microwave ablation"`
	p.Search = &SearchRun{
		Query: p.Query, FTS5: `("hepatocellular carcinoma" OR "hcc") AND "microwave ablation"`,
		Total: 40, IDs: []string{"pmid:1", "pmid:2", "pmid:3", "pmid:4", "pmid:5", "pmid:6"},
		At: time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC),
	}
	p.Studies = map[string]StudyInfo{
		"pmid:1": {PMID: "1", Title: "MWA versus RFA for small HCC: a randomised trial", Year: 2019, FirstAuthor: "Smith"},
		"pmid:2": {PMID: "2", Title: "Microwave ablation of liver tumours", Year: 2020, FirstAuthor: "Chen"},
		"pmid:3": {PMID: "3", Title: "Thermal ablation outcomes", Year: 2021, FirstAuthor: "Rossi"},
		"pmid:4": {PMID: "4", Title: "Ablation in dogs", Year: 2018, FirstAuthor: "Doe"},
		"pmid:5": {PMID: "5", Title: "Failed screening", Year: 2017, FirstAuthor: "Roe"},
		"pmid:6": {PMID: "6", Title: "Hand-picked trial", Year: 2022, FirstAuthor: "Kim"},
	}
	p.Criteria = []Criterion{
		{Text: "Patients have hepatocellular carcinoma", Kind: TitleCriterion, Weight: 1},
		{Text: "Compares microwave with radiofrequency ablation", Kind: ContentCriterion, Weight: 1},
	}
	p.ScreenedCriteria = criterionTexts(p.Criteria)
	p.Screening = []ScreenedStudy{
		{ID: "pmid:1", Title: p.Studies["pmid:1"].Title, Year: 2019, Verdicts: []Verdict{Yes, Yes}, Score: 1},
		{ID: "pmid:2", Title: p.Studies["pmid:2"].Title, Year: 2020, Verdicts: []Verdict{Yes, Uncertain}, Score: 0.5},
		{ID: "pmid:3", Title: p.Studies["pmid:3"].Title, Year: 2021, Verdicts: []Verdict{Uncertain, Yes}, Score: 0.5},
		{ID: "pmid:4", Title: p.Studies["pmid:4"].Title, Year: 2018, Verdicts: []Verdict{No, No}, Score: -1},
		{ID: "pmid:5", Title: p.Studies["pmid:5"].Title, Year: 2017, Error: "the model did not answer"},
		{ID: "pmid:9", Title: "From an earlier search", Verdicts: []Verdict{Yes, Yes}, Score: 1},
	}
	for _, id := range []string{"pmid:1", "pmid:2", "pmid:3", "pmid:6"} {
		if err := p.Decide(id, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Decide("pmid:4", false, "Animal study"); err != nil {
		t.Fatal(err)
	}
	p.Fields = []FieldSpec{{Name: "number randomised", Description: "patients randomised"}, {Name: "median age", Description: "median age in years"}}
	p.Extractions = map[string][]FieldValue{
		"pmid:1": {
			{Name: "median age", Value: "61", Sources: []int{3}},
			{Name: "number randomised", Value: "120", Sources: []int{2}, Edited: true},
		},
		"pmid:2": {{Name: "number randomised", Value: "95", Sources: []int{7}, Unsupported: true}},
	}
	num := func(v float64, src ...int) *Number { return &Number{Value: v, Sources: src} }
	p.Result = ResultSpec{Outcome: "complete ablation", Cohort: "MWA (treatment) vs RFA (control)", Measure: TwoGroups}
	p.Results = map[string]ResultExtraction{
		"pmid:1": {StudyID: "pmid:1", Groups: []ResultGroup{
			{Name: "MWA", Role: RoleTreatment, N: num(60, 2), Events: num(54, 4)},
			{Name: "RFA", Role: RoleControl, N: num(60, 2), Events: num(48, 4)},
		}},
		"pmid:2": {StudyID: "pmid:2", Groups: []ResultGroup{
			{Name: "Microwave", Role: RoleTreatment, N: num(50, 1), Events: num(44, 1)},
			{Name: "Radiofrequency", Role: RoleControl, N: num(45, 1), Events: num(35, 1)},
		}},
		"pmid:3": {StudyID: "pmid:3", Groups: []ResultGroup{
			{Name: "MWA", Role: RoleTreatment, N: num(80, 2), Percent: num(90, 2)},
			{Name: "RFA", Role: RoleControl, N: num(78, 2), Events: num(62, 2)},
		}, Edited: true},
	}
	return p
}

func workbookTexts() map[string]StudyText {
	return map[string]StudyText{
		"pmid:1": {ID: "pmid:1", Title: "MWA versus RFA for small HCC: a randomised trial", Chunks: []Chunk{
			{N: 1, Section: "Title", Text: "MWA versus RFA for small HCC: a randomised trial"},
			{N: 2, Section: "Abstract: METHODS", Text: "We randomised 120 patients (60 per arm)."},
			{N: 3, Section: "Abstract: RESULTS", Text: "Median age was 61 years."},
			{N: 4, Section: "Abstract: RESULTS", Text: "Complete ablation: 54/60 with MWA, 48/60 with RFA."},
		}},
	}
}

// wbSheetRows reads a sheet of the workbook.
func wbSheetRows(t *testing.T, f *excelize.File, sheet string) [][]string {
	t.Helper()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatalf("sheet %q: %v", sheet, err)
	}
	if len(rows) == 0 {
		t.Fatalf("sheet %q is empty", sheet)
	}
	return rows
}

// wbFindRow returns the first row whose cells include all of want.
func wbFindRow(rows [][]string, want ...string) []string {
	for _, r := range rows {
		ok := true
		for _, w := range want {
			if !slices.Contains(r, w) {
				ok = false
				break
			}
		}
		if ok {
			return r
		}
	}
	return nil
}

// wbCell returns the value of a row under the header col.
func wbCell(t *testing.T, rows [][]string, row []string, col string) string {
	t.Helper()
	i := slices.Index(rows[0], col)
	if i < 0 {
		t.Fatalf("no column %q in %q", col, rows[0])
	}
	if i >= len(row) {
		return ""
	}
	return row[i]
}

func TestWriteProjectWorkbook(t *testing.T) {
	p := workbookProject(t)
	studies, res, err := p.Analyze()
	if err != nil {
		t.Fatal(err)
	}
	if len(studies) != 3 {
		t.Fatalf("analysed %d studies, want 3", len(studies))
	}
	x := &ProjectExport{
		Project: p, Texts: workbookTexts(), Model: "qwen3:8b",
		Records: map[string]Record{"pmid:1": {ID: "pmid:1", PMID: "1", Title: p.Studies["pmid:1"].Title,
			Authors: []string{"Smith John", "Lee Ann"}, Journal: "Hepatology", Year: 2019}},
		Meta: &res, MetaStudies: studies,
	}
	path := filepath.Join(t.TempDir(), "review.xlsx")
	var progressed int64 = -1
	sum, err := WriteProjectWorkbook(context.Background(), path, x, export.Provenance{AppVersion: "test"}, export.Options{Progress: func(n int64) { progressed = n }})
	if err != nil {
		t.Fatal(err)
	}
	if progressed != sum.Rows || sum.Rows == 0 {
		t.Errorf("progress reported %d rows, the summary %d", progressed, sum.Rows)
	}

	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantSheets := []string{SearchSheet, PRISMASheet, ScreeningSheet, FieldsSheet, ResultsSheet, StandardSheet,
		MetaSheet, PooledSheet, ForestSheet, PRISMADiagramSheet, "Provenance"}
	if got := f.GetSheetList(); !slices.Equal(got, wantSheets) {
		t.Fatalf("sheets %q, want %q", got, wantSheets)
	}

	// Search: the query, its FTS5 form, the records found.
	search := wbSheetRows(t, f, SearchSheet)
	for _, want := range [][]string{
		{"Boolean query", p.Search.Query}, {"Full-text index query (SQLite FTS5)", p.Search.FTS5},
		{"Records found", "40"}, {"Condition terms", "hepatocellular carcinoma; HCC"},
		{"Comparison terms", "radiofrequency ablation; RFA"},
		{"Intervention (I)", "microwave ablation"},
	} {
		if wbFindRow(search, want...) == nil {
			t.Errorf("Search sheet has no row %q", want)
		}
	}

	// PRISMA: the counts agree with Project.PRISMA.
	c := p.PRISMA()
	prisma := wbSheetRows(t, f, PRISMASheet)
	for _, want := range [][]string{
		{"Records identified from the database search", strconv.Itoa(c.Identified)},
		{"Records screened", strconv.Itoa(c.Screened)},
		{"Excluded: Animal study", "1"},
		{"Studies included in review", "4"},
	} {
		if wbFindRow(prisma, want...) == nil {
			t.Errorf("PRISMA sheet has no row %q in %q", want, prisma)
		}
	}

	// Screening: a column per criterion with its verdict; the decision.
	scr := wbSheetRows(t, f, ScreeningSheet)
	c1 := "C1: " + p.Criteria[0].Text
	if !slices.Contains(scr[0], c1) || !slices.Contains(scr[0], "C2: "+p.Criteria[1].Text) {
		t.Errorf("Screening headers %q lack the criteria", scr[0])
	}
	if len(scr) != 1+6 { // 5 screened candidates + 1 decided without screening; pmid:9 left out
		t.Errorf("Screening sheet has %d rows, want 6 studies", len(scr)-1)
	}
	dog := wbFindRow(scr, "pmid:4")
	if dog == nil {
		t.Fatal("Screening sheet has no row for pmid:4")
	}
	if v := wbCell(t, scr, dog, c1); v != "NO" {
		t.Errorf("pmid:4 verdict on C1 = %q, want NO", v)
	}
	if row := wbFindRow(scr, "pmid:2"); row == nil || wbCell(t, scr, row, c1) != "YES" || wbCell(t, scr, row, "C2: "+p.Criteria[1].Text) != "UNCERTAIN" {
		t.Errorf("pmid:2 row %q: want YES on C1 and UNCERTAIN on C2", row)
	}
	if d, r := wbCell(t, scr, dog, "Decision"), wbCell(t, scr, dog, "Reason"); d != "Excluded" || r != "Animal study" {
		t.Errorf("pmid:4 decision %q reason %q, want Excluded, Animal study", d, r)
	}
	if row := wbFindRow(scr, "pmid:1"); row == nil || wbCell(t, scr, row, "Authors") != "Smith John; Lee Ann" || wbCell(t, scr, row, "Rank") != "1" {
		t.Errorf("pmid:1 row %q: want rank 1 and the record's authors", row)
	}
	if row := wbFindRow(scr, "pmid:5"); row == nil || wbCell(t, scr, row, "Screening error") != "the model did not answer" {
		t.Errorf("pmid:5 row %q: want its screening error", row)
	}
	if row := wbFindRow(scr, "pmid:6"); row == nil || wbCell(t, scr, row, "Screening error") != "not screened" || wbCell(t, scr, row, "Decision") != "Included" {
		t.Errorf("pmid:6 row %q: want an included study marked not screened", row)
	}

	// Fields: the value, its cited chunk's text and the flags.
	fields := wbSheetRows(t, f, FieldsSheet)
	age := wbFindRow(fields, "pmid:1", "median age")
	if age == nil {
		t.Fatal("Fields sheet has no median age of pmid:1")
	}
	if got := wbCell(t, fields, age, "Cited text"); got != "[3] Abstract: RESULTS: Median age was 61 years." {
		t.Errorf("cited text %q", got)
	}
	if got := wbCell(t, fields, age, "Value"); got != "61" {
		t.Errorf("median age value %q, want 61", got)
	}
	if i := slices.IndexFunc(fields, func(r []string) bool { return slices.Contains(r, "median age") }); i != 2 {
		t.Errorf("median age is on row %d, want 2 (after number randomised, the project's field order)", i)
	}
	if r := wbFindRow(fields, "pmid:1", "number randomised"); r == nil || wbCell(t, fields, r, "Edited") != "TRUE" {
		t.Errorf("edited flag lost: %q", r)
	}
	if r := wbFindRow(fields, "pmid:2", "number randomised"); r == nil || wbCell(t, fields, r, "Unsupported") != "TRUE" ||
		!strings.Contains(wbCell(t, fields, r, "Cited text"), "not loaded") {
		t.Errorf("pmid:2 field without its text: %q", r)
	}

	// Results: one row per number with its sources.
	results := wbSheetRows(t, f, ResultsSheet)
	ev := wbFindRow(results, "pmid:1", "RFA", "Events")
	if ev == nil || wbCell(t, results, ev, "Value") != "48" || !strings.Contains(wbCell(t, results, ev, "Cited text"), "48/60 with RFA") {
		t.Errorf("pmid:1 RFA events row %q", ev)
	}

	// Standardized: pmid:3's events derived from the percentage.
	std := wbSheetRows(t, f, StandardSheet)
	rossi := wbFindRow(std, "pmid:3")
	if rossi == nil || wbCell(t, std, rossi, "Events (treatment)") != "72" || !strings.Contains(wbCell(t, std, rossi, "Derivations"), "90%") {
		t.Errorf("standardized row of pmid:3 %q: want 72 events derived from 90%% of 80", rossi)
	}
	if r := wbFindRow(std, "pmid:6"); r != nil {
		t.Errorf("pmid:6 has no result but a standardized row %q", r)
	}
	if !strings.Contains(strings.Join(std[len(std)-1], " "), "no result") {
		t.Errorf("last Standardized row %q: want the problem of pmid:6", std[len(std)-1])
	}

	// Meta-analysis: per-study weights and the pooled estimate.
	ma := wbSheetRows(t, f, MetaSheet)
	if len(ma) != 1+3 {
		t.Errorf("Meta-analysis sheet has %d studies, want 3", len(ma)-1)
	}
	var wsum float64
	for _, r := range ma[1:] {
		w, err := strconv.ParseFloat(wbCell(t, ma, r, "Weight (%)"), 64)
		if err != nil {
			t.Fatalf("weight of %q: %v", r[0], err)
		}
		wsum += w
	}
	if math.Abs(wsum-100) > 1e-6 {
		t.Errorf("weights sum to %g, want 100", wsum)
	}
	if r := wbFindRow(ma, res.Studies[0].Label); r == nil || wbCell(t, ma, r, "ai (treatment events)") != "54" {
		t.Errorf("first study %q: want its input events 54", r)
	}
	pooled := wbSheetRows(t, f, PooledSheet)
	est := wbFindRow(pooled, "est")
	if est == nil {
		t.Fatalf("Pooled sheet has no est row: %q", pooled)
	}
	got, err := strconv.ParseFloat(est[1], 64)
	if err != nil || math.Abs(got-res.Est) > 1e-12 {
		t.Errorf("pooled estimate %q, want %g", est[1], res.Est)
	}

	// Pictures: the forest plot and the PRISMA diagram.
	for _, sheet := range []string{ForestSheet, PRISMADiagramSheet} {
		pics, err := f.GetPictures(sheet, "A1")
		if err != nil || len(pics) != 1 {
			t.Fatalf("sheet %q: %d pictures, err %v", sheet, len(pics), err)
		}
		if _, err := png.DecodeConfig(bytes.NewReader(pics[0].File)); err != nil {
			t.Errorf("picture on %q is not a PNG: %v", sheet, err)
		}
	}

	// Provenance: the caller's, then the model, project and measure.
	prov := wbSheetRows(t, f, "Provenance")
	for _, want := range [][]string{
		{"Clinsight version", "test"}, {"Models", "qwen3:8b"}, {"Review project", "MWA vs RFA"},
		{"Data source", "/data/hcc.db"}, {"Method", "REML"},
		{"Effect measure", res.Measure.Label() + " (" + string(res.Measure) + ")"},
	} {
		if wbFindRow(prov, want...) == nil {
			t.Errorf("Provenance has no row %q", want)
		}
	}
}

func TestWriteProjectWorkbookWithoutMeta(t *testing.T) {
	p := workbookProject(t)
	path := filepath.Join(t.TempDir(), "review.xlsx")
	if _, err := WriteProjectWorkbook(context.Background(), path, &ProjectExport{Project: p}, export.Provenance{}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := []string{SearchSheet, PRISMASheet, ScreeningSheet, FieldsSheet, ResultsSheet, StandardSheet, PRISMADiagramSheet, "Provenance"}
	if got := f.GetSheetList(); !slices.Equal(got, want) {
		t.Errorf("sheets %q, want %q", got, want)
	}
	prov := wbSheetRows(t, f, "Provenance")
	if r := wbFindRow(prov, "Effect measure (chosen)"); r == nil || !strings.HasPrefix(r[1], "RR") {
		t.Errorf("Provenance row %q: want the default measure RR", r)
	}
	if r := wbFindRow(prov, "Meta-analysis"); r == nil || !strings.HasPrefix(r[1], "not run") {
		t.Errorf("Provenance row %q: want the meta-analysis marked not run", r)
	}

	// A new project, before any search, exports too.
	fresh := NewProject("New review", "demo", PICO{Population: "adults with asthma"})
	path = filepath.Join(t.TempDir(), "fresh.xlsx")
	if _, err := WriteProjectWorkbook(context.Background(), path, &ProjectExport{Project: fresh}, export.Provenance{}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	g, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if r := wbFindRow(wbSheetRows(t, g, SearchSheet), "Search", "not run yet"); r == nil {
		t.Error("a new project's Search sheet does not say the search was not run")
	}
}

func TestWriteProjectWorkbookCancelled(t *testing.T) {
	p := workbookProject(t)
	studies, res, err := p.Analyze()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "review.xlsx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = WriteProjectWorkbook(ctx, path, &ProjectExport{Project: p, Meta: &res, MetaStudies: studies}, export.Provenance{}, export.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a cancelled export left %d files behind", len(entries))
	}

	// Inputs that do not match the result are an error, and leave no file.
	_, err = WriteProjectWorkbook(context.Background(), path, &ProjectExport{Project: p, Meta: &res, MetaStudies: studies[:2]}, export.Provenance{}, export.Options{})
	if err == nil || !strings.Contains(err.Error(), "3 studies but 2 inputs") {
		t.Errorf("mismatched inputs: err = %v", err)
	}
	if _, err := WriteProjectWorkbook(context.Background(), path, nil, export.Provenance{}, export.Options{}); err == nil {
		t.Error("no project: no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed exports left %d files behind", len(entries))
	}
}
