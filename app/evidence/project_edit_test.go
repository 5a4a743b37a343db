package evidence

import (
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/meta"
)

// editText is a study text whose chunk 2 reports the groups' numbers.
var editText = StudyText{ID: "pmid:1", Chunks: []Chunk{
	{N: 1, Section: "Title", Text: "Microwave versus radiofrequency ablation"},
	{N: 2, Section: "Results", Text: "Local progression was 12 of 80 (15%) with microwave and 20 of 82 with radiofrequency ablation; HR 0.61 (0.35 to 0.98)."},
}}

// editProject has one included study with an extracted two-group result
// (events 12/80 and 20/82, cited from chunk 2) and a reported effect.
func editProject() *Project {
	p := NewProject("edit", "lit", PICO{Population: "HCC"})
	p.Search = &SearchRun{IDs: []string{"pmid:1", "pmid:2"}}
	p.Studies["pmid:1"] = StudyInfo{Title: "Microwave versus radiofrequency ablation", Year: 2020, FirstAuthor: "Lee"}
	p.Decisions["pmid:1"] = Decision{Include: true}
	p.Result = ResultSpec{Outcome: "local progression", Measure: TwoGroups}
	num := func(v float64) *Number { return &Number{Value: v, Sources: []int{2}} }
	p.Results["pmid:1"] = ResultExtraction{StudyID: "pmid:1", Groups: []ResultGroup{
		{Name: "MWA", Role: "treatment", N: num(80), Events: num(12)},
		{Name: "RFA", Role: "control", N: num(82), Events: num(20)},
	}, Effect: &Effect{Kind: "HR", Est: *num(0.61), Lower: *num(0.35), Upper: *num(0.98)}}
	p.ResultsWith = map[string]string{"pmid:1": fingerprint(p.Result)}
	return p
}

func TestEditGroup(t *testing.T) {
	p := editProject()
	before, err := p.Clone()
	if err != nil {
		t.Fatal(err)
	}
	// A changed number keeps its chunk and is checked against it; an
	// unchanged one keeps its flag; blank is not reported.
	if err := p.EditGroup("pmid:1", 0, "treatment", []string{"80", " 977 ", "", "", ""}, &editText); err != nil {
		t.Fatal(err)
	}
	r := p.Results["pmid:1"]
	g := r.Groups[0]
	if !r.Edited || g.Events.Value != 977 || !g.Events.Unsupported || !slices.Equal(g.Events.Sources, []int{2}) || g.N.Unsupported || g.Percent != nil {
		t.Errorf("edited group %+v (events %+v)", g, g.Events)
	}
	if before.Results["pmid:1"].Groups[0].Events.Value != 12 {
		t.Error("the edit changed a copy made before it")
	}
	if rows, problems := p.StandardTable(); len(rows) != 0 || len(problems) != 1 || !strings.Contains(problems[0], "977 events") {
		t.Errorf("standardized %v, problems %v", rows, problems)
	}
	// A number that is in its chunk is supported, a new one cites no
	// chunk; without the text the flag is left as it was.
	if err := p.EditGroup("pmid:1", 0, "treatment", []string{"80", "12", "15", "", ""}, &editText); err != nil {
		t.Fatal(err)
	}
	if g := p.Results["pmid:1"].Groups[0]; g.Events.Unsupported || g.Percent == nil || !g.Percent.Unsupported {
		t.Errorf("events in its chunk %+v, percent citing none %+v", g.Events, g.Percent)
	}
	if err := p.EditGroup("pmid:1", 1, "", []string{"82", "21", "", "", ""}, nil); err != nil {
		t.Fatal(err)
	}
	if g := p.Results["pmid:1"].Groups[1]; g.Events.Value != 21 || g.Events.Unsupported || g.Role != "" {
		t.Errorf("group edited without the text: %+v", g)
	}
	// The reported effect needs all three numbers.
	if err := p.EditGroup("pmid:1", -1, "", []string{"0.6", "0.35", ""}, &editText); err == nil || !strings.Contains(err.Error(), "both limits") {
		t.Errorf("effect without its upper limit: %v", err)
	}
	if err := p.EditGroup("pmid:1", -1, "", []string{"0.6", "0.35", "0.98"}, &editText); err != nil || !p.Results["pmid:1"].Effect.Est.Unsupported {
		t.Errorf("effect 0.6 (not in its chunk): %v %+v", err, p.Results["pmid:1"].Effect)
	}
	for _, tc := range []struct {
		id     string
		group  int
		role   string
		values []string
		msg    string
	}{
		{"pmid:1", 0, "treatment", []string{"80", "twelve", "", "", ""}, `Events: "twelve" is not a number`},
		{"pmid:1", 5, "treatment", []string{"", "", "", "", ""}, "has no group 6"},
		{"pmid:1", 0, "placebo", []string{"", "", "", "", ""}, `not "placebo"`},
		{"pmid:2", 0, "", []string{"", "", "", "", ""}, "no result extracted for pmid:2"},
	} {
		if err := p.EditGroup(tc.id, tc.group, tc.role, tc.values, nil); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("EditGroup(%s, %d, %q, %v) = %v, want %q", tc.id, tc.group, tc.role, tc.values, err, tc.msg)
		}
	}
}

func TestEditValueAndResultRows(t *testing.T) {
	p := editProject()
	p.Extractions["pmid:1"] = []FieldValue{{Name: "patients", Value: "162", Sources: []int{2}, Unsupported: true}}
	if v := p.EditValue("pmid:1", "patients", "80 and 82", &editText); !v.Edited || v.Unsupported {
		t.Errorf("a value in its chunk: %+v", v)
	}
	if v := p.EditValue("pmid:1", "patients", "999", &editText); !v.Unsupported {
		t.Errorf("a value in no chunk: %+v", v)
	}
	if v := p.EditValue("pmid:1", "patients", NotPresent, &editText); v.Unsupported {
		t.Errorf("NP flagged: %+v", v)
	}
	if v := p.EditValue("pmid:1", "age", "61", nil); !v.Edited || v.Unsupported || len(p.Extractions["pmid:1"]) != 2 {
		t.Errorf("a new value without the text: %+v, values %+v", v, p.Extractions["pmid:1"])
	}
	if v, ok := p.FieldValueOf("pmid:1", "age"); !ok || v.Value != "61" {
		t.Errorf("FieldValueOf: %+v %v", v, ok)
	}

	rows := p.ResultRows()
	if len(rows) != 3 || rows[0].Name != "MWA" || rows[2].Group != -1 || rows[2].EffectKind != "HR" || !slices.Equal(rows[0].Sources, []int{2}) {
		t.Fatalf("result rows %+v", rows)
	}
	if len(rows[0].Numbers) != len(GroupNumbers) || len(rows[2].Numbers) != len(EffectNumbers) || rows[0].Numbers[1].Value != 12 {
		t.Errorf("numbers %+v / %+v", rows[0].Numbers, rows[2].Numbers)
	}
}

func TestExclusionReasonsFor(t *testing.T) {
	p := editProject()
	p.Criteria = []Criterion{{Text: "The study is randomized", Weight: 1}, {Text: "Adults", Weight: 1}}
	p.Screening = []ScreenedStudy{{ID: "pmid:2", Verdicts: []Verdict{No, Yes}}}
	p.Decisions["pmid:3"] = Decision{Reason: "Conference abstract"}
	got := p.ExclusionReasonsFor("pmid:2")
	if got[0] != "Does not meet: The study is randomized" || !slices.Contains(got, "Wrong population") || got[len(got)-1] != "Conference abstract" {
		t.Errorf("reasons %v", got)
	}
	if got := p.ExclusionReasonsFor("pmid:1"); got[0] != ExclusionReasons[0] {
		t.Errorf("reasons of an unscreened study %v", got)
	}
}

func TestSetResultAndMeta(t *testing.T) {
	p := editProject()
	p.SetMeta(MetaSettings{Measure: "OR", Method: "MH", KnappHartung: true})
	if p.Meta.Method != "MH" || p.Meta.KnappHartung {
		t.Errorf("MH keeps no Knapp–Hartung: %+v", p.Meta)
	}
	p.SetMeta(MetaSettings{Measure: "MD", Method: "MH"})
	if p.Meta.Method != "" {
		t.Errorf("MH for a mean difference: %+v", p.Meta)
	}
	p.SetMeta(MetaSettings{Measure: "OR", Method: "MH"})
	p.SetResult(ResultSpec{Outcome: "x", Measure: TwoGroups})
	if p.Meta.Measure != "OR" || p.Meta.Method != "MH" {
		t.Errorf("an unchanged shape reset the meta settings: %+v", p.Meta)
	}
	p.SetResult(ResultSpec{Outcome: "x", Measure: MeansSDs})
	if p.Meta.Measure != "" || p.Meta.Method != "" {
		t.Errorf("a new shape kept the measure and MH: %+v", p.Meta)
	}
	p.SetMeta(MetaSettings{Measure: string(meta.RR), Method: string(meta.PETO)})
	if p.Meta.Method != "" {
		t.Errorf("Peto's method kept for a risk ratio: %+v", p.Meta)
	}
	p.SetMeta(MetaSettings{Measure: string(meta.OR), Method: string(meta.PM), KnappHartung: true})
	if p.Meta.Method != string(meta.PM) || !p.Meta.KnappHartung {
		t.Errorf("Paule–Mandel with Knapp–Hartung for an odds ratio not kept: %+v", p.Meta)
	}
}

func TestStandardColumns(t *testing.T) {
	row := StandardRow{Measure: TwoGroups, Events1: 12, Total1: 80, Events2: 20, Total2: 82.5}
	var got []string
	for _, c := range StandardColumns(TwoGroups) {
		got = append(got, c.Header+"="+c.Text(row))
	}
	if want := []string{"Events (treatment)=12", "Total (treatment)=80", "Events (control)=20", "Total (control)=82.5"}; !slices.Equal(got, want) {
		t.Errorf("columns %v, want %v", got, want)
	}
	if c := StandardColumns(RatioCI)[0]; c.Header != "Effect" || c.Value(StandardRow{}) != nil || c.Text(StandardRow{EffectKind: "HR"}) != "HR" {
		t.Errorf("effect column %q", c.Header)
	}
	if n := len(StandardColumns("")); n != 4+4+4 {
		t.Errorf("%d columns for an unknown shape", n)
	}
}
