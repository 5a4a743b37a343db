package evidence

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/meta"
)

// sampleProject is a review project part-way through: a search with seven
// candidates of 40 matches, a screening (one failed study, one study of an
// earlier search), decisions and a result per included study.
func sampleProject() *Project {
	p := NewProject("HCC ablation 2026", "literature", hccPICO)
	p.Terms = SearchTerms{Conditions: []string{"hepatocellular carcinoma"}, Treatments: []string{"microwave ablation"}}
	p.Query = `"hepatocellular carcinoma" AND "microwave ablation"`
	p.Search = &SearchRun{Query: p.Query, FTS5: `"hepatocellular carcinoma" AND "microwave ablation"`, Total: 40,
		IDs: []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"}, At: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)}
	p.Studies = map[string]StudyInfo{
		"a1": {PMID: "1", Title: "Microwave ablation for HCC", Year: 2019, FirstAuthor: "Smith"},
		"a2": {Title: "Radiofrequency ablation", Year: 2020, FirstAuthor: "Lee"},
		"a3": {Title: "Failed one", Year: 2018, FirstAuthor: "van der Berg"},
		"a4": {Title: "Cryotherapy", Year: 2017, FirstAuthor: "Kim"},
		"a5": {Title: "Surgery versus ablation", Year: 2019, FirstAuthor: "Smith"},
		"a6": {Title: "MWA in small HCC", Year: 2019, FirstAuthor: "Smith"},
		"a7": {Title: "A study without an author"},
	}
	p.Criteria = []Criterion{{Text: "Hepatocellular carcinoma", Kind: TitleCriterion, Weight: 1}, {Text: "Microwave ablation", Weight: 1}}
	p.ScreenedCriteria = criterionTexts(p.Criteria)
	p.Screening = []ScreenedStudy{
		{ID: "a1", Title: "Microwave ablation for HCC", Year: 2019, Verdicts: []Verdict{Yes, Yes}, Score: 1},
		{ID: "a2", Verdicts: []Verdict{Yes, Uncertain}, Score: 0.5},
		{ID: "a7", Verdicts: []Verdict{Yes, No}, Score: 0},
		{ID: "a4", Verdicts: []Verdict{No, No}, Score: -1},
		{ID: "a3", Error: "model runner crashed"},
		{ID: "z9", Verdicts: []Verdict{Yes, Yes}, Score: 1},
	}
	at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	p.Decisions = map[string]Decision{
		"a1": {Include: true, At: at},
		"a2": {Reason: "wrong population", At: at},
		"a4": {Reason: "wrong population", At: at},
		"a5": {Reason: "not randomised", At: at},
		"a6": {Include: true, At: at},
		"z9": {Include: true, At: at},
	}
	p.Fields = []FieldSpec{{Name: "median age", Description: "median age of the patients"}}
	p.Extractions = map[string][]FieldValue{"a1": {{Name: "median age", Value: "61", Sources: []int{2}, Edited: true}}}
	p.Result = ResultSpec{Outcome: "local tumor progression", Cohort: "MWA (treatment) vs RFA (control)", Measure: TwoGroups}
	p.Results = map[string]ResultExtraction{
		"a1": twoGroups("a1", 12, 80, 20, 82),
		"a6": twoGroups("a6", 5, 40, 9, 41),
	}
	p.Meta = MetaSettings{Method: "DL"}
	return p
}

func num(v float64) *Number { return &Number{Value: v, Sources: []int{3}} }

func twoGroups(id string, e1, n1, e2, n2 float64) ResultExtraction {
	return ResultExtraction{StudyID: id, Groups: []ResultGroup{
		{Name: "MWA", Role: "treatment", N: num(n1), Events: num(e1)},
		{Name: "RFA", Role: "control", N: num(n2), Events: num(e2)},
	}}
}

func TestProjectJSONRoundTrip(t *testing.T) {
	p := sampleProject()
	raw, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseProject(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, p)
	}
	// The saved form uses the documented keys.
	for _, key := range []string{`"version": 1`, `"pico": {`, `"P": "hepatocellular carcinoma"`, `"screened_criteria"`, `"decisions"`, `"reason": "not randomised"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("saved project lacks %s", key)
		}
	}

	// A new, empty project round-trips too, with its maps ready for use.
	empty := NewProject("x", "db.sqlite", PICO{Population: "adults"})
	raw, _ = json.Marshal(empty)
	got, err = ParseProject(raw)
	if err != nil || got.Decisions == nil || got.Results == nil || got.Extractions == nil || got.Studies == nil || !got.Created.Equal(empty.Created) {
		t.Errorf("empty project: %+v, %v", got, err)
	}
	raw = []byte(`{"version":1,"name":"x","pico":{"P":"adults"}}`) // maps left out
	if got, err = ParseProject(raw); err != nil || got.Decisions == nil || got.Results == nil {
		t.Errorf("project without maps: %+v, %v", got, err)
	}
}

func TestParseProjectRefuses(t *testing.T) {
	for _, tc := range []struct{ name, raw, want string }{
		{"not JSON", `{"version":1,`, "invalid JSON"},
		{"no version", `{"name":"x"}`, "no format version"},
		{"newer", `{"version":99,"name":"x","future":true}`, "update Clinsight"},
		{"bad name", `{"version":1,"name":"a/b","pico":{"P":"x"}}`, `character '/'`},
		{"no PICO", `{"version":1,"name":"x","pico":{}}`, "population (P) or an intervention (I)"},
		{"exclusion without reason", `{"version":1,"name":"x","pico":{"P":"x"},"decisions":{"pmid:1":{"include":false}}}`, "exclusion of pmid:1 has no reason"},
		{"bad criterion", `{"version":1,"name":"x","pico":{"P":"x"},"criteria":[{"text":"a","weight":-1}]}`, "criterion 1"},
		{"wrong type", `{"version":1,"name":"x","pico":{"P":"x"},"decisions":[]}`, "not a valid review project"},
	} {
		_, err := ParseProject([]byte(tc.raw))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if tc.name == "newer" && !errors.Is(err, ErrNewerProject) {
			t.Errorf("newer project: %v is not ErrNewerProject", err)
		}
	}
}

func TestValidateProjectName(t *testing.T) {
	for _, ok := range []string{"HCC ablation 2026", "review_1.v2", "Études-cliniques"} {
		if err := ValidateProjectName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "  ", "a/b", `a\b`, "..", ".hidden", " lead", "trail ", "a:b", "x*", strings.Repeat("a", 101)} {
		if err := ValidateProjectName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	p := sampleProject()
	p.Version = 0
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "version 0") {
		t.Errorf("version 0: %v", err)
	}
	p = sampleProject()
	p.Fields = append(p.Fields, FieldSpec{Description: "a draft without a name yet"})
	p.Result = ResultSpec{Outcome: "draft"}
	if err := p.Validate(); err != nil {
		t.Errorf("draft field and result refused: %v", err)
	}
	if err := sampleProject().Validate(); err != nil {
		t.Errorf("sample: %v", err)
	}
}

func TestPRISMA(t *testing.T) {
	p := sampleProject()
	got := p.PRISMA()
	// Screened: a1 a2 a4 a7 by the model, a5 a6 decided without screening
	// (a3 failed and is undecided; z9 is not found by the current search).
	want := PRISMACounts{Identified: 40, Screened: 6, Excluded: 3, Reasons: map[string]int{"wrong population": 2, "not randomised": 1},
		NotScreened: 34, Undecided: 1, Included: 2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PRISMA\n got %+v\nwant %+v", got, want)
	}
	if got.Identified != got.Duplicates+got.NotScreened+got.Screened || got.Screened != got.Excluded+got.Undecided+got.Included {
		t.Errorf("counts do not add up: %+v", got)
	}
	// A decision changes the counts; a new search that no longer finds a2
	// leaves its decision out (but keeps it).
	if err := p.Decide("a7", false, "  no  comparator "); err != nil {
		t.Fatal(err)
	}
	p.Search.IDs = slices.DeleteFunc(p.Search.IDs, func(id string) bool { return id == "a2" })
	got = p.PRISMA()
	if got.Screened != 5 || got.Excluded != 3 || got.Undecided != 0 || got.Reasons["wrong population"] != 1 || got.Reasons["no comparator"] != 1 || got.NotScreened != 35 {
		t.Errorf("after a decision and a new search: %+v", got)
	}
	if _, kept := p.Decisions["a2"]; !kept {
		t.Error("the decision on a study the new search does not find was dropped")
	}
	if got := (&Project{}).PRISMA(); got.Identified != 0 || got.Reasons == nil {
		t.Errorf("no search: %+v", got)
	}
}

func TestDecideAndIncluded(t *testing.T) {
	p := sampleProject()
	if got := p.Included(); !slices.Equal(got, []string{"a1", "a6"}) {
		t.Errorf("Included = %v, want screening order then search order, current candidates only", got)
	}
	if err := p.Decide("z9", true, ""); err == nil || !strings.Contains(err.Error(), "not among the studies the current search found") {
		t.Errorf("decision on a non-candidate: %v", err)
	}
	before := p.Decisions["a2"]
	if err := p.Decide("a2", false, "   "); err == nil || !strings.Contains(err.Error(), "reason to exclude Lee 2020") {
		t.Errorf("exclusion without a reason: %v", err)
	}
	if p.Decisions["a2"] != before {
		t.Error("a refused decision changed the project")
	}
	if err := p.Decide("a2", true, ""); err != nil {
		t.Fatal(err)
	}
	if d := p.Decisions["a2"]; !d.Include || d.At.IsZero() {
		t.Errorf("decision %+v", d)
	}
	if got := p.Included(); !slices.Equal(got, []string{"a1", "a2", "a6"}) {
		t.Errorf("Included = %v", got)
	}
	p.Undecide("a1")
	if got := p.Included(); !slices.Equal(got, []string{"a2", "a6"}) {
		t.Errorf("after Undecide: %v", got)
	}
	if err := (&Project{}).Decide("a1", true, ""); err == nil {
		t.Error("decision before any search accepted")
	}
}

func TestRescoreAndStale(t *testing.T) {
	p := sampleProject()
	if p.ScreeningStale() {
		t.Error("fresh screening reported stale")
	}
	// Weight the second criterion 3: a2 (YES, UNCERTAIN) = 1/4, a7 (YES,
	// NO) = (1-3)/4 = -0.5; the failed study and the earlier search's stay
	// last.
	p.Criteria[1].Weight = 3
	p.Rescore()
	ids := func() []string {
		var out []string
		for _, s := range p.Screening {
			out = append(out, s.ID)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"a1", "a2", "a7", "a4", "a3", "z9"}) {
		t.Errorf("order %v", got)
	}
	if s := p.Screening[2].Score; math.Abs(s+0.5) > 1e-12 {
		t.Errorf("a7 score %v, want -0.5", s)
	}
	// Switching the first criterion off: a7 (NO on the second) falls to -1
	// and a2 (UNCERTAIN) to 0, ties keep the search's order (a4 before a7).
	p.Criteria[0].Disabled = true
	p.Rescore()
	if got := ids(); !slices.Equal(got, []string{"a1", "a2", "a4", "a7", "a3", "z9"}) {
		t.Errorf("order after switching off %v", got)
	}
	// Editing a text makes the screening stale: scores stay as they were.
	p.Criteria[1].Text = "Microwave ablation as first-line treatment"
	if !p.ScreeningStale() {
		t.Error("edited criterion text not reported stale")
	}
	p.Criteria[0].Disabled = false
	p.Rescore()
	if a7 := p.Screening[3]; a7.ID != "a7" || a7.Score != -1 {
		t.Errorf("a stale screening was rescored: %+v", a7)
	}
}

func TestLabels(t *testing.T) {
	for in, want := range map[string]string{"Smith John A": "Smith", "van der Berg Jan": "van der Berg", "ESMO Guidelines Committee": "ESMO", "": "", "Demo Author 12": "Demo"} {
		if got := lastName(in); got != want {
			t.Errorf("lastName(%q) = %q, want %q", in, got, want)
		}
	}
	p := sampleProject()
	for id, want := range map[string]string{"a1": "Smith 2019", "a3": "van der Berg 2018", "a7": "A study without an author", "nope": "nope"} {
		if got := p.Label(id); got != want {
			t.Errorf("Label(%s) = %q, want %q", id, got, want)
		}
	}
	labels := p.uniqueLabels([]string{"a1", "a2", "a5", "a6"})
	if labels["a1"] != "Smith 2019a" || labels["a5"] != "Smith 2019b" || labels["a6"] != "Smith 2019c" || labels["a2"] != "Lee 2020" {
		t.Errorf("unique labels %v", labels)
	}
	for n, want := range map[int]string{0: "a", 25: "z", 26: "aa", 27: "ab", 701: "zz", 702: "aaa"} {
		if got := suffixLetters(n); got != want {
			t.Errorf("suffixLetters(%d) = %q, want %q", n, got, want)
		}
	}
	info := InfoOf(&Record{PMID: "7", Title: "  A  title ", Year: 2001, Authors: []string{"de la Cruz Maria", "Other A"}})
	if info != (StudyInfo{PMID: "7", Title: "A title", Year: 2001, FirstAuthor: "de la Cruz"}) {
		t.Errorf("InfoOf = %+v", info)
	}
}

func TestStandardTableAndAnalyze(t *testing.T) {
	p := sampleProject()
	p.Studies["a6"] = StudyInfo{Title: "MWA in small HCC", Year: 2019, FirstAuthor: "Smith"} // same label as a1
	if err := p.Decide("a2", true, ""); err != nil {                                         // included, no result
		t.Fatal(err)
	}
	rows, problems := p.StandardTable()
	if len(rows) != 2 || rows[0].StudyID != "a1" || rows[1].StudyID != "a6" {
		t.Fatalf("rows %+v, problems %v", rows, problems)
	}
	if rows[0].Label != "Smith 2019a" || rows[1].Label != "Smith 2019b" {
		t.Errorf("labels %q %q", rows[0].Label, rows[1].Label)
	}
	if rows[0].Events1 != 12 || rows[0].Total1 != 80 || rows[0].Events2 != 20 || rows[0].Total2 != 82 {
		t.Errorf("row %+v", rows[0])
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "Lee 2020: no result extracted") {
		t.Errorf("problems %v", problems)
	}

	studies, res, err := p.Analyze()
	if err != nil {
		t.Fatal(err)
	}
	// The same analysis from the counts directly.
	want, err := meta.Analyze([]meta.Study{
		{Label: "Smith 2019a", Kind: meta.Binary, AI: 12, N1I: 80, CI: 20, N2I: 82},
		{Label: "Smith 2019b", Kind: meta.Binary, AI: 5, N1I: 40, CI: 9, N2I: 41},
	}, meta.Options{Measure: DefaultMeasure(TwoGroups), Method: meta.DL})
	if err != nil {
		t.Fatal(err)
	}
	if len(studies) != 2 || res.K != 2 || res.Method != meta.DL || res.Measure != want.Measure || math.Abs(res.Est-want.Est) > 1e-12 || math.Abs(res.SE-want.SE) > 1e-12 {
		t.Errorf("Analyze: %+v\nwant %+v", res, want)
	}

	// Settings: an explicit measure, Knapp–Hartung; a bad one is an error.
	p.Meta = MetaSettings{Measure: "RD", KnappHartung: true}
	if _, res, err = p.Analyze(); err != nil || res.Measure != meta.RD || res.Test != meta.TestKnHa || res.Method != meta.REML {
		t.Errorf("RD with Knapp–Hartung: %+v, %v", res, err)
	}
	p.Meta.Measure = "nonsense"
	if _, _, err = p.Analyze(); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("unknown measure: %v", err)
	}
	// Nothing to analyse: the error names the problems.
	p.Meta.Measure = ""
	p.Results = nil
	if _, _, err = p.Analyze(); err == nil || !strings.Contains(err.Error(), "no included study has a standardized result") || !strings.Contains(err.Error(), "Smith 2019a") {
		t.Errorf("no results: %v", err)
	}
}

func TestProjectNextStep(t *testing.T) {
	p := NewProject("next", "demo", PICO{})
	if got := p.NextStep(); got != StepPICO {
		t.Fatalf("empty PICO: %s", got)
	}
	p.PICO = PICO{Population: "adults with HCC", Intervention: "microwave ablation"}
	if got := p.NextStep(); got != StepSearch {
		t.Fatalf("no search: %s", got)
	}
	p.Search = &SearchRun{Query: "ablation", Total: 2, IDs: []string{"a", "b"}}
	if got := p.NextStep(); got != StepScreen {
		t.Fatalf("nothing included: %s", got)
	}
	if err := p.Decide("a", true, ""); err != nil {
		t.Fatal(err)
	}
	p.Fields = []FieldSpec{{Name: "patients"}}
	if got := p.NextStep(); got != StepExtract {
		t.Fatalf("fields not extracted: %s", got)
	}
	p.Extractions["a"] = []FieldValue{{Name: "patients", Value: "12", Sources: []int{1}}}
	if got := p.NextStep(); got != StepResults {
		t.Fatalf("no result: %s", got)
	}
	p.Results["a"] = ResultExtraction{StudyID: "a"}
	if got := p.NextStep(); got != StepMeta {
		t.Fatalf("all extracted: %s", got)
	}
	if len(Steps) != 6 || Steps[0] != StepPICO || Steps[5] != StepMeta {
		t.Errorf("Steps = %v", Steps)
	}
}

func TestStandardTableLeavesOutStaleResults(t *testing.T) {
	p := sampleProject()
	p.ResultsWith = map[string]string{"a1": fingerprint(p.Result), "a6": fingerprint(p.Result)}
	if rows, problems := p.StandardTable(); len(rows) != 2 || len(problems) != 0 {
		t.Fatalf("current results: rows %+v, problems %v", rows, problems)
	}
	// A new outcome: the results read for the old one are not analysed
	// until they are extracted again, or corrected for the new one.
	p.Result.Outcome = "complete ablation"
	rows, problems := p.StandardTable()
	if len(rows) != 0 || len(problems) != 2 || !strings.Contains(problems[0], "Smith 2019a") || !strings.Contains(problems[0], "Extract results again") {
		t.Errorf("stale: rows %+v, problems %v", rows, problems)
	}
	p.CorrectResult("a6", p.Results["a6"])
	rows, problems = p.StandardTable()
	if len(rows) != 1 || rows[0].StudyID != "a6" || !p.Results["a6"].Edited {
		t.Errorf("corrected for the new outcome: rows %+v", rows)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "Smith 2019a") {
		t.Errorf("problems %v", problems)
	}
	// Back to the first outcome: a1's extraction is current again, the
	// correction made for the other outcome is stale.
	p.Result.Outcome = "local tumor progression"
	if _, problems := p.StandardTable(); len(problems) != 1 || !strings.Contains(problems[0], "Smith 2019b: the result was corrected for an earlier outcome") {
		t.Errorf("problems after another change %v", problems)
	}
	p.Result.Outcome = "complete ablation"
	// A result without a fingerprint (entered before fingerprints were
	// kept) is used.
	delete(p.ResultsWith, "a1")
	if rows, _ := p.StandardTable(); len(rows) != 2 {
		t.Errorf("without a fingerprint: rows %+v", rows)
	}
}
