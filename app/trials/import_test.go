package trials

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

const classicXML = `<?xml version="1.0" encoding="UTF-8"?>
<clinical_study rank="1">
  <id_info><org_study_id>X</org_study_id><nct_id>NCT01000001</nct_id></id_info>
  <brief_title>Metformin in   Type 2 Diabetes</brief_title>
  <brief_summary>
    <textblock>
      This study tests metformin in adults
      with type 2 diabetes.
    </textblock>
  </brief_summary>
  <overall_status>Recruiting</overall_status>
  <phase>Phase 3</phase>
  <condition>Type 2 Diabetes Mellitus</condition>
  <condition>Obesity</condition>
  <intervention><intervention_type>Drug</intervention_type><intervention_name>Metformin</intervention_name></intervention>
  <eligibility>
    <criteria>
      <textblock>
        Inclusion Criteria:

          -  Type 2 diabetes for at least 1 year

          -  HbA1c between 7% and 10%

        Exclusion Criteria:

          -  Type 1 diabetes
      </textblock>
    </criteria>
    <gender>Female</gender>
    <minimum_age>18 Years</minimum_age>
    <maximum_age>6 Months</maximum_age>
  </eligibility>
  <keyword>diabetes</keyword>
  <condition_browse><mesh_term>Diabetes Mellitus, Type 2</mesh_term></condition_browse>
  <intervention_browse><mesh_term>Metformin</mesh_term></intervention_browse>
</clinical_study>`

const v2Study1 = `{"protocolSection": {
  "identificationModule": {"nctId": "NCT02000002", "briefTitle": "Dupilumab in Atopic Dermatitis"},
  "statusModule": {"overallStatus": "ACTIVE_NOT_RECRUITING"},
  "descriptionModule": {"briefSummary": "Dupilumab for eczema."},
  "conditionsModule": {"conditions": ["Atopic Dermatitis"], "keywords": ["eczema"]},
  "designModule": {"phases": ["PHASE2", "PHASE3"]},
  "armsInterventionsModule": {"interventions": [{"type": "DRUG", "name": "Dupilumab"}]},
  "eligibilityModule": {"eligibilityCriteria": "Inclusion Criteria:\n\n* Moderate atopic dermatitis\n\nExclusion Criteria:\n\n* Pregnancy", "sex": "ALL", "minimumAge": "12 Years", "maximumAge": "65 Years"}},
 "derivedSection": {"conditionBrowseModule": {"meshes": [{"id": "D003876", "term": "Dermatitis, Atopic"}]}}}`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func openDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := datasets.OpenReadWrite(context.Background(), filepath.Join(t.TempDir(), "t.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestImportClassicXML(t *testing.T) {
	dir := t.TempDir()
	// maximum_age below minimum_age is refused with the record id.
	bad := writeFile(t, dir, "bad/NCT01000001.xml", classicXML)
	db := openDB(t)
	_, err := Import(context.Background(), db, []string{bad}, ImportOptions{})
	var re *RecordError
	if !errors.As(err, &re) || re.ID != "NCT01000001" || !strings.Contains(err.Error(), "age limits") {
		t.Fatalf("inconsistent ages: %v", err)
	}
	good := writeFile(t, dir, "good/NCT01000001.xml", strings.Replace(classicXML, "6 Months", "65 Years", 1))
	res, err := Import(context.Background(), db, []string{good}, ImportOptions{})
	if err != nil || res.Trials != 1 || res.Criteria != 3 {
		t.Fatalf("import: %+v %v", res, err)
	}
	tr, err := Get(context.Background(), db, "NCT01000001")
	if err != nil {
		t.Fatal(err)
	}
	want := Trial{ID: "NCT01000001", Title: "Metformin in Type 2 Diabetes", Conditions: []string{"Type 2 Diabetes Mellitus", "Obesity"},
		Interventions: []string{"Metformin"}, Keywords: []string{"diabetes"}, MeSH: []string{"Diabetes Mellitus, Type 2", "Metformin"},
		Summary: "This study tests metformin in adults with type 2 diabetes.", Inclusion: []string{"Type 2 diabetes for at least 1 year", "HbA1c between 7% and 10%"},
		Exclusion: []string{"Type 1 diabetes"}, Sex: SexFemale, MinAge: 18, MaxAge: 65, Status: "Recruiting", Phase: "Phase 3"}
	tr.Source = ""
	if !equalTrial(*tr, want) {
		t.Errorf("got  %+v\nwant %+v", *tr, want)
	}
	if !tr.Recruiting() {
		t.Error("Recruiting status not recognised")
	}
}

func equalTrial(a, b Trial) bool {
	return a.ID == b.ID && a.Title == b.Title && slices.Equal(a.Conditions, b.Conditions) && slices.Equal(a.Interventions, b.Interventions) &&
		slices.Equal(a.Keywords, b.Keywords) && slices.Equal(a.MeSH, b.MeSH) && a.Summary == b.Summary && a.Description == b.Description &&
		slices.Equal(a.Inclusion, b.Inclusion) && slices.Equal(a.Exclusion, b.Exclusion) && a.Sex == b.Sex &&
		a.MinAge == b.MinAge && a.MaxAge == b.MaxAge && a.Status == b.Status && a.Phase == b.Phase
}

func TestImportAPIv2Shapes(t *testing.T) {
	dir := t.TempDir()
	v2b := strings.Replace(v2Study1, "NCT02000002", "NCT02000003", 1)
	files := []string{
		writeFile(t, dir, "one.json", v2Study1),
		writeFile(t, dir, "array.json", "[\n"+strings.Replace(v2Study1, "NCT02000002", "NCT02000004", 1)+",\n"+v2b+"\n]"),
		writeFile(t, dir, "page.json", `{"studies": [`+strings.Replace(v2Study1, "NCT02000002", "NCT02000005", 1)+`], "nextPageToken": "abc"}`),
		writeFile(t, dir, "lines.jsonl", strings.ReplaceAll(strings.Replace(v2Study1, "NCT02000002", "NCT02000006", 1), "\n", " ")+"\n"),
	}
	db := openDB(t)
	res, err := Import(context.Background(), db, files, ImportOptions{})
	if err != nil || res.Trials != 5 || res.Files != 4 {
		t.Fatalf("import: %+v %v", res, err)
	}
	tr, err := Get(context.Background(), db, "NCT02000005")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != "Active not recruiting" || tr.Recruiting() || tr.Phase != "Phase 2/Phase 3" || tr.MinAge != 12 || tr.MaxAge != 65 ||
		tr.Sex != SexAll || !slices.Equal(tr.MeSH, []string{"Dermatitis, Atopic"}) || !slices.Equal(tr.Exclusion, []string{"Pregnancy"}) {
		t.Errorf("v2 study: %+v", tr)
	}
}

func TestImportDirectoryZipReplaceAndErrors(t *testing.T) {
	dir := t.TempDir()
	// A zip with an XML and a JSONL member, plus junk that is skipped.
	zpath := filepath.Join(dir, "trials.zip")
	zf, _ := os.Create(zpath)
	zw := zip.NewWriter(zf)
	for name, body := range map[string]string{
		"a/NCT01000001.xml": strings.Replace(classicXML, "6 Months", "N/A", 1),
		"b/birco.jsonl":     `{"_id": "NCT03000001", "text": "Children aged 6 to 12 years with asthma receive budesonide."}` + "\n",
		"readme.txt":        "not a trial",
	} {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	zw.Close()
	zf.Close()
	db := openDB(t)
	var stages []string
	res, err := Import(context.Background(), db, []string{dir}, ImportOptions{Progress: func(p progress.Report) { stages = append(stages, p.Stage) }})
	if err != nil || res.Trials != 2 || res.Files != 2 {
		t.Fatalf("directory with a zip: %+v %v", res, err)
	}
	if len(stages) == 0 {
		t.Error("no progress reported")
	}
	birco, err := Get(context.Background(), db, "NCT03000001")
	if err != nil {
		t.Fatal(err)
	}
	if !birco.DemographicsInferred || birco.MinAge != 6 || birco.MaxAge != 12 {
		t.Errorf("BIRCO record demographics: %+v", birco)
	}
	// Re-importing replaces by id; --replace empties first.
	res, err = Import(context.Background(), db, []string{zpath}, ImportOptions{})
	if err != nil || res.Replaced != 2 || res.Total != 2 {
		t.Fatalf("re-import: %+v %v", res, err)
	}
	one := writeFile(t, dir, "x/one.json", v2Study1)
	res, err = Import(context.Background(), db, []string{one}, ImportOptions{Replace: true})
	if err != nil || res.Total != 1 {
		t.Fatalf("replace: %+v %v", res, err)
	}
	// A broken record fails the whole import, naming file, line and id,
	// and leaves the database as it was.
	broken := writeFile(t, dir, "y/broken.jsonl", `{"_id": "NCT04000001", "text": "fine"}`+"\n"+`{"_id": "NCT04000002", "text": ""}`+"\n")
	_, err = Import(context.Background(), db, []string{broken}, ImportOptions{})
	var re *RecordError
	if !errors.As(err, &re) || re.Line != 2 || re.ID != "NCT04000002" || !strings.Contains(err.Error(), "broken.jsonl line 2 (NCT04000002)") {
		t.Fatalf("broken record: %v", err)
	}
	if n, _ := Count(context.Background(), db); n != 1 {
		t.Errorf("after a failed import the database holds %d trials, want 1 (unchanged)", n)
	}
	notJSON := writeFile(t, dir, "z/bad.jsonl", "{\"_id\": \"NCT05\", \"text\": \n")
	if _, err := Import(context.Background(), db, []string{notJSON}, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "bad.jsonl line 1 (NCT05)") {
		t.Errorf("invalid JSON: %v", err)
	}
	if _, err := Import(context.Background(), db, []string{writeFile(t, dir, "w/x.csv", "a,b")}, ImportOptions{}); err == nil {
		t.Error("a CSV file was accepted")
	}
}

func TestImportCancelLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, _ := os.Create(filepath.Join(dir, "s.jsonl"))
	if err := WriteSyntheticJSONL(context.Background(), f, 3000, 7); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db := openDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Import(ctx, db, []string{filepath.Join(dir, "s.jsonl")}, ImportOptions{Progress: func(p progress.Report) {
		if p.Done > 0 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled import: %v", err)
	}
	if ok, err := HasTrials(context.Background(), db); err != nil || ok {
		t.Errorf("a cancelled first import left the trial tables (%v)", err)
	}
}

func TestPatientDemographics(t *testing.T) {
	for _, c := range []struct {
		text string
		age  float64
		sex  Sex
	}{
		{"A 58-year-old African-American woman presents", 58, SexFemale},
		{"A 44 yo male is brought to the emergency room", 44, SexMale},
		{"A 66yo female with significant smoking history", 66, SexFemale},
		{"A 6-month-old male infant has a urine output", 0.5, SexMale},
		{"A 10 year old child is brought in. His mother says", 10, SexMale},
		{"An 85-year-old man; his daughter recalls", 85, SexMale},
	} {
		age, has, sex := PatientDemographics(c.text)
		if !has || age != c.age || sex != c.sex {
			t.Errorf("%q: %v %v %q, want %v %q", c.text, age, has, sex, c.age, c.sex)
		}
	}
	if _, has, sex := PatientDemographics("Patient with cough."); has || sex != SexUnknown {
		t.Errorf("no age or sex stated: %v %q", has, sex)
	}
}

func TestInferDemographics(t *testing.T) {
	for _, c := range []struct {
		inc, exc []string
		min, max float64
		sex      Sex
	}{
		{[]string{"Women aged 15-45 years", "Pregnant, with gestational age <23 weeks"}, nil, 15, 45, SexFemale},
		{[]string{"are aged between 1 and 16 years"}, []string{"systolic blood pressure more than 2 standard deviations below the mean for age"}, 1, 16, SexAll},
		{[]string{"COPD"}, []string{"Age < 18 years"}, 18, 0, SexAll},
		{[]string{"Adults, 18 years of age or older of either gender. Female patients of childbearing potential must be nonpregnant"}, nil, 18, 0, SexAll},
		{[]string{"infants admitted following surgery ages 2-18 months"}, nil, 2.0 / 12, 1.5, SexAll},
		{[]string{"Myocardial infarction in < 6 months"}, nil, 0, 0, SexAll},
		{[]string{"Male patients with prostate cancer"}, nil, 0, 0, SexMale},
	} {
		tr := Trial{Title: "x", Inclusion: c.inc, Exclusion: c.exc}
		d := inferDemographics(&tr)
		if d.minAge != c.min || d.maxAge != c.max || d.sex != c.sex {
			t.Errorf("%q / %q: %v–%v %q, want %v–%v %q", c.inc, c.exc, d.minAge, d.maxAge, d.sex, c.min, c.max, c.sex)
		}
	}
	tr := Trial{MinAge: 18, MaxAge: 65, Sex: SexFemale}
	if !tr.AgeAllowed(65.5) || tr.AgeAllowed(66) || tr.AgeAllowed(17) || !tr.SexAllowed(SexUnknown) || tr.SexAllowed(SexMale) {
		t.Error("AgeAllowed/SexAllowed")
	}
}

func FuzzReadJSONL(f *testing.F) {
	f.Add(`{"_id": "NCT1", "text": "x"}`)
	f.Add(`{"_id": "NCT1", "title": "t", "metadata": {"inclusion_criteria": "inclusion criteria: \n\n a", "diseases": "['a, b', \"c\"]"}}`)
	f.Add(`{"protocolSection": {"identificationModule": {"nctId": "NCT2", "briefTitle": "b"}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		_ = readJSONLines(context.Background(), strings.NewReader(s), "f.jsonl", nil, inOrder(func(tr Trial, _ []Cut) error {
			if err := tr.Validate(); err != nil {
				t.Fatalf("an invalid trial was passed on: %v", err)
			}
			return nil
		}))
	})
}

func FuzzReadXML(f *testing.F) {
	f.Add(classicXML)
	f.Add("<clinical_study><id_info><nct_id>N</nct_id></id_info><brief_title>t</brief_title></clinical_study>")
	f.Fuzz(func(t *testing.T, s string) {
		_ = readCTGovXML(context.Background(), strings.NewReader(s), "f.xml", nil, inOrder(func(tr Trial, _ []Cut) error {
			if err := tr.Validate(); err != nil {
				t.Fatalf("an invalid trial was passed on: %v", err)
			}
			return nil
		}))
	})
}

// checkJSONRecord compares the one-pass decoding of a record with the
// decoding that looks at its keys first: the same trial, or the same error.
func checkJSONRecord(t *testing.T, d *recordDecoder, raw []byte) {
	t.Helper()
	got, gerr := d.jsonRecord(raw)
	want, werr := jsonRecordProbe(raw)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("%s:\none pass: %v\nprobe:    %v", raw, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\none pass: %+v\nprobe:    %+v", raw, got, want)
	}
}

// TestJSONRecordOnePass: records of every shape, and odd ones (keys with a
// null value, in another case, repeated, of the wrong type), decode in one
// pass as they did when the keys were looked at first; one decoder is
// reused for all of them.
func TestJSONRecordOnePass(t *testing.T) {
	var d recordDecoder
	cases := []string{
		v2Study1,
		`{"_id": "NCT1", "text": "x"}`,
		`{"_id": "NCT1", "title": "t", "metadata": {"inclusion_criteria": "inclusion criteria: \n\n a", "diseases": "['a, b', \"c\"]"}}`,
		`{"protocolSection": null}`,
		`{"protocolSection": null, "_id": "NCT3", "text": "y"}`,
		`{"_id": null, "text": "y"}`,
		`{"_id": "A", "_id": null}`,
		`{"PROTOCOLSECTION": {"identificationModule": {"nctId": "NCT4", "briefTitle": "b"}}}`,
		`{"_ID": "NCT5", "text": "z"}`,
		`{"protocolSection": {"identificationModule": {"nctId": "NCT6", "briefTitle": "b"}}, "title": 5}`,
		`{"protocolSection": {"conditionsModule": {"conditions": "not a list"}}}`,
		`{"_id": "NCT7", "metadata": null, "text": "birco"}`,
		`{"other": 1}`, `[1]`, `"x"`, `null`, `{`, `{"_id": 7}`,
		`{"_id": "NCT8", "text": "mentions \"protocolSection\" in a text"}`,
	}
	var buf bytes.Buffer
	if err := WriteSyntheticJSONL(context.Background(), &buf, 50, 3); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, strings.Split(strings.TrimSpace(buf.String()), "\n")...)
	for _, c := range cases {
		checkJSONRecord(t, &d, []byte(c))
	}
}

func FuzzJSONRecordOnePass(f *testing.F) {
	f.Add(v2Study1)
	f.Add(`{"_id": "A", "_id": null, "metadata": {"drugs_list": ["x"]}}`)
	f.Add(`{"protocolSection": null, "derivedSection": {}}`)
	var d recordDecoder
	f.Fuzz(func(t *testing.T, s string) {
		checkJSONRecord(t, &d, []byte(s))
	})
}

// TestImportReportsTheFirstBrokenRecord: records are parsed in parallel
// batches, yet the error reported is the first one in reading order, with
// its file, line and id, whether a later record fails to parse or the
// reading itself fails further on; nothing is stored.
func TestImportReportsTheFirstBrokenRecord(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSyntheticJSONL(context.Background(), &buf, 3*batchRecords, 9); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	first := batchRecords + 44 // in the second batch
	id := peekID([]byte(lines[first-1]))
	lines[first-1] = `{"_id": "` + id + `", "text": ""}`       // no text: invalid
	lines[2*batchRecords+10] = `{"_id": "NCT-LATER", "text": ` // invalid JSON, third batch
	dir := t.TempDir()
	for name, tail := range map[string]string{
		"later-record.jsonl": "",
		// A line over the record bound ends the reading after the records.
		"later-read-error.jsonl": `{"_id": "NCT-HUGE", "text": "` + strings.Repeat("x ", maxRecordBytes) + `"}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, dir, name, strings.Join(lines, "\n")+"\n"+tail)
			db := openDB(t)
			_, err := Import(context.Background(), db, []string{path}, ImportOptions{})
			var re *RecordError
			want := fmt.Sprintf("%s line %d (%s)", name, first, id)
			if !errors.As(err, &re) || re.Line != first || re.ID != id || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want one naming %q", err, want)
			}
			if ok, err := HasTrials(context.Background(), db); err != nil || ok {
				t.Errorf("a failed first import left the trial tables (%v)", err)
			}
		})
	}
}

// TestImportDuplicateIDs: a trial id seen again replaces the trial stored
// with it, within a batch, across batches and across imports; the last
// record wins, and every record counts.
func TestImportDuplicateIDs(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSyntheticJSONL(context.Background(), &buf, 2*batchRecords, 4); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	rec := func(id, title string) string {
		return `{"_id": "` + id + `", "title": "` + title + `", "text": "Adults with asthma."}`
	}
	lines[9] = rec("NCT-DUP-A", "first A")                // batch 1
	lines[20] = rec("NCT-DUP-A", "second A")              // batch 1 again
	lines[30] = rec("NCT-DUP-B", "first B")               // batch 1
	lines[batchRecords+30] = rec("NCT-DUP-B", "second B") // batch 2
	lines[batchRecords+31] = rec("NCT-DUP-A", "third A")  // batch 2
	path := writeFile(t, t.TempDir(), "dups.jsonl", strings.Join(lines, "\n")+"\n")
	db := openDB(t)
	ctx := context.Background()
	res, err := Import(ctx, db, []string{path}, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trials != len(lines) || res.Replaced != 3 || res.Total != len(lines)-3 {
		t.Errorf("result %+v: want %d trials, 3 replaced, %d in total", res, len(lines), len(lines)-3)
	}
	for id, title := range map[string]string{"NCT-DUP-A": "third A", "NCT-DUP-B": "second B"} {
		tr, err := Get(ctx, db, id)
		if err != nil || tr.Title != title {
			t.Errorf("%s: %+v, %v; want the title %q", id, tr, err, title)
		}
	}
	var fts int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM trials_fts WHERE trials_fts MATCH 'title: first OR title: second'`).Scan(&fts); err != nil || fts != 1 {
		t.Errorf("index rows of replaced trials: %d matches of 'first OR second' (%v), want 1", fts, err)
	}
	// Again: every trial replaces itself.
	res, err = Import(ctx, db, []string{path}, ImportOptions{})
	if err != nil || res.Replaced != len(lines) || res.Total != len(lines)-3 {
		t.Fatalf("re-import: %+v, %v", res, err)
	}
	var crit, distinct int
	if err := db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT trial_id) FROM trial_criteria`).Scan(&crit, &distinct); err != nil {
		t.Fatal(err)
	}
	if distinct > len(lines)-3 {
		t.Errorf("criteria of %d trials, want at most %d", distinct, len(lines)-3)
	}
	// The FTS settings of the bulk load are not left behind.
	var automerge int
	if err := db.QueryRowContext(ctx, `SELECT v FROM trials_fts_config WHERE k = 'automerge'`).Scan(&automerge); err != nil || automerge != 4 {
		t.Errorf("automerge after the import: %d (%v), want FTS5's default 4", automerge, err)
	}
}

// TestJSONList: the lists are stored as json.Marshal writes them, whether
// written directly or not.
func TestJSONList(t *testing.T) {
	for _, items := range [][]string{
		nil, {}, {"Asthma"}, {"Type 2 Diabetes", "Obesity"}, {`say "hi"`}, {`a\\b`}, {"<b>&"}, {"Sjögren"},
		{"tab\there"}, {"\x7f"}, {"bad \xff utf-8"}, {"\u2028"}, {""}, {"", "x"},
	} {
		want := "[]"
		if len(items) > 0 {
			b, _ := json.Marshal(items)
			want = string(b)
		}
		if got := jsonList(items); got != want {
			t.Errorf("jsonList(%q) = %s, want %s", items, got, want)
		}
	}
}

func FuzzJSONList(f *testing.F) {
	f.Add("a", "b")
	f.Add("<", "\x00")
	f.Fuzz(func(t *testing.T, a, b string) {
		items := []string{a, b}
		want, _ := json.Marshal(items)
		if got := jsonList(items); got != string(want) {
			t.Fatalf("jsonList(%q) = %s, want %s", items, got, want)
		}
	})
}
