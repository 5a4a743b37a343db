package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

var responseSpec = ResultSpec{Outcome: "complete response", Cohort: "microwave ablation (treatment) vs radiofrequency ablation (control)", Measure: TwoGroups}

func resNum(v float64, sources ...int) *Number { return &Number{Value: v, Sources: sources} }

func TestExtractResultTwoGroups(t *testing.T) {
	srv, c := scriptedClient(t)
	// The control group is listed first; its events are given as a
	// percentage only; the treatment N cites the wrong chunk.
	srv.QueueChat(ollamatest.ChatReply{Content: `{"groups":[
		{"name":"RFA","role":"control","n":{"value":75,"sources":[3]},"events":null,"percent":{"value":40,"sources":[3]}},
		{"name":"MWA","role":"treatment","n":{"value":80,"sources":[4]},"events":{"value":36,"sources":[3]},"percent":{"value":45.0,"sources":[3]}},
		{"name":" ","role":"other","n":{"value":12,"sources":[2]},"events":null,"percent":null}]}`})
	e := testExtractor(c)
	got, err := e.ExtractResult(context.Background(), mwaStudy, responseSpec)
	if err != nil {
		t.Fatal(err)
	}
	want := ResultExtraction{StudyID: "pmid:101", Groups: []ResultGroup{
		{Name: "RFA", Role: RoleControl, N: resNum(75, 3), Percent: resNum(40, 3)},
		{Name: "MWA", Role: RoleTreatment, N: &Number{Value: 80, Sources: []int{4}, Unsupported: true}, Events: resNum(36, 3), Percent: resNum(45, 3)},
		{Name: "group 3", N: &Number{Value: 12, Sources: []int{2}, Unsupported: true}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("extraction\n got %s\nwant %s", dumpJSON(got), dumpJSON(want))
	}
	req := srv.ChatRequests()[0]
	user, sys := req.Messages[1].Content, req.Messages[0].Content
	for _, s := range []string{"Outcome: complete response", "Cohort: microwave ablation (treatment) vs radiofrequency ablation (control)",
		"[3] (RESULTS) Complete response: 36 of 80", "Reply with the groups, every number"} {
		if !strings.Contains(user, s) {
			t.Errorf("prompt lacks %q:\n%s", s, user)
		}
	}
	if !strings.Contains(sys, "events: the number of participants with the outcome") || strings.Contains(sys, "sd:") || !strings.Contains(sys, "never compute one") {
		t.Errorf("system prompt:\n%s", sys)
	}
	if f := string(req.Format); !strings.Contains(f, `"percent"`) || strings.Contains(f, `"mean"`) || strings.Contains(f, `"effect"`) {
		t.Errorf("format %s", f)
	}

	// Three groups: never standardized without the user's arm choice.
	if _, err := Standardize(got, responseSpec, "Lee 2020", nil); err == nil || !strings.Contains(err.Error(), `the study has 3 groups (RFA, MWA, group 3): choose the groups`) {
		t.Fatalf("three groups without a choice: %v", err)
	}
	// Standardized in Go with the choice: treatment first whatever the
	// order, the control events derived from 40% of 75, the unsupported N
	// reported.
	row, err := Standardize(got, responseSpec, "Lee 2020", &ArmChoice{Treatment: []string{"MWA"}, Control: []string{"RFA"}})
	if err != nil {
		t.Fatal(err)
	}
	wantRow := StandardRow{StudyID: "pmid:101", Label: "Lee 2020", Measure: TwoGroups, Events1: 36, Total1: 80, Events2: 30, Total2: 75,
		Derivations: []string{`groups chosen by the user: treatment "MWA" vs control "RFA"`, "events2 = 40% of 75 = 30"}, Sources: []int{3, 4}, Unsupported: []string{"total1 80"}}
	if !reflect.DeepEqual(row, wantRow) {
		t.Errorf("row\n got %+v\nwant %+v", row, wantRow)
	}
}

func TestExtractResultRatioAndMeans(t *testing.T) {
	srv, c := scriptedClient(t)
	e := testExtractor(c)
	srv.QueueChat(ollamatest.ChatReply{Content: `{"groups":[{"name":"MWA","role":"treatment","n":{"value":80,"sources":[3]}}],
		"effect":{"kind":"hr","est":0.72,"lower":0.55,"upper":0.94,"sources":[4]}}`})
	spec := ResultSpec{Outcome: "overall survival", Measure: RatioCI}
	got, err := e.ExtractResult(context.Background(), mwaStudy, spec)
	if err != nil {
		t.Fatal(err)
	}
	// The effect's numbers are not in chunk 4: all three flagged.
	if ef := got.Effect; ef == nil || ef.Kind != "HR" || ef.Est.Value != 0.72 || !ef.Est.Unsupported || !ef.Lower.Unsupported || !ef.Upper.Unsupported ||
		fmt.Sprint(ef.Upper.Sources) != "[4]" || got.Groups[0].N.Unsupported {
		t.Errorf("ratio: %s", dumpJSON(got))
	}
	req := srv.ChatRequests()[0]
	if f := string(req.Format); !strings.Contains(f, `"effect"`) || strings.Contains(f, `"events"`) {
		t.Errorf("format %s", f)
	}
	if sys := req.Messages[0].Content; !strings.Contains(sys, `kind: "HR", "OR" or "RR"`) || strings.Contains(userMessage(req.Messages), "Cohort:") {
		t.Errorf("ratio prompt:\n%s", sys)
	}
	row, err := Standardize(got, spec, "", nil)
	if err != nil || row.Label != "pmid:101" || row.EffectKind != "HR" || row.Est != 0.72 || row.Lower != 0.55 || row.Upper != 0.94 ||
		len(row.Unsupported) != 3 || fmt.Sprint(row.Sources) != "[4]" || row.Total1 != 0 {
		t.Errorf("ratio row %+v, %v", row, err)
	}

	// Means: the numbers of chunk 4, the SD supported, signs ignored.
	srv.QueueChat(ollamatest.ChatReply{Content: `{"groups":[
		{"name":"MWA","role":"treatment","n":{"value":80,"sources":[3]},"mean":{"value":-3.2,"sources":[4]},"sd":{"value":1.5,"sources":[4]}},
		{"name":"RFA","role":"control","n":{"value":75,"sources":[3]},"mean":{"value":-2.9,"sources":[4]},"sd":{"value":1.41,"sources":[4]}}]}`})
	spec = ResultSpec{Outcome: "tumour size", Measure: MeansSDs}
	got, err = e.ExtractResult(context.Background(), mwaStudy, spec)
	if err != nil {
		t.Fatal(err)
	}
	g := got.Groups
	if g[0].Mean.Unsupported || g[0].SD.Unsupported || g[1].Mean.Unsupported || !g[1].SD.Unsupported {
		t.Errorf("means: %s", dumpJSON(got))
	}
	if f := string(srv.ChatRequests()[1].Format); !strings.Contains(f, `"sd"`) || strings.Contains(f, `"percent"`) {
		t.Errorf("format %s", f)
	}
	row, err = Standardize(got, spec, "Lee 2020", nil)
	if err != nil || row.Mean1 != -3.2 || row.SD1 != 1.5 || row.Total1 != 80 || row.Mean2 != -2.9 || row.SD2 != 1.41 || row.Total2 != 75 ||
		fmt.Sprint(row.Unsupported) != "[sd2 1.41]" {
		t.Errorf("means row %+v, %v", row, err)
	}
}

func userMessage(msgs []api.Message) string {
	for _, m := range msgs {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

func TestExtractResultSourcesRetriedThenRejected(t *testing.T) {
	srv, c := scriptedClient(t)
	e := testExtractor(c)
	bad := `{"groups":[{"name":"MWA","role":"treatment","n":{"value":80,"sources":[3,12]},"events":{"value":36,"sources":[1,2,3,4]},"percent":null}]}`
	srv.QueueChat(ollamatest.ChatReply{Content: bad}, ollamatest.ChatReply{Content: `{"groups":[{"name":"MWA","role":"treatment","n":{"value":80,"sources":[3]},"events":null,"percent":null}]}`})
	got, err := e.ExtractResult(context.Background(), mwaStudy, responseSpec)
	if err != nil || got.Groups[0].N.Value != 80 {
		t.Fatalf("after retry: %s, %v", dumpJSON(got), err)
	}
	retry := srv.ChatRequests()[1].Messages[3].Content
	for _, s := range []string{`group "MWA" n cites passage 12, which was not shown`, `group "MWA" events cites 4 passages (at most 3)`, "(1–4)"} {
		if !strings.Contains(retry, s) {
			t.Errorf("retry lacks %q: %s", s, retry)
		}
	}
	srv.QueueChat(ollamatest.ChatReply{Content: bad}, ollamatest.ChatReply{Content: `{"groups":[{"name":"MWA","role":"treatment","n":{"value":80,"sources":[-1]},"events":null,"percent":null}]}`})
	_, err = e.ExtractResult(context.Background(), mwaStudy, responseSpec)
	var se *SourceError
	if !errors.As(err, &se) || se.Field != `group "MWA" n` || fmt.Sprint(se.Bad) != "[-1]" ||
		!strings.Contains(err.Error(), "extracting the result of pmid:101") {
		t.Errorf("rejected: %v", err)
	}
	// A model failure is an error; nothing is returned.
	srv.QueueChat(ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "out of memory"}})
	got, err = e.ExtractResult(context.Background(), mwaStudy, responseSpec)
	if err == nil || localllm.KindOf(err) != localllm.Server || got.Groups != nil {
		t.Errorf("failure: %s, %v", dumpJSON(got), err)
	}
	// An invalid spec is refused before any call.
	n := len(srv.ChatRequests())
	for spec, msg := range map[ResultSpec]string{{Measure: TwoGroups}: "no outcome", {Outcome: "x", Measure: "hr"}: `unknown result shape "hr"`} {
		if _, err := e.ExtractResult(context.Background(), mwaStudy, spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%+v: %v", spec, err)
		}
	}
	if len(srv.ChatRequests()) != n {
		t.Error("an invalid spec called the model")
	}
}

func TestStandardizeRolesAndDerivations(t *testing.T) {
	// No roles: the group order decides, and the row says so.
	r := ResultExtraction{StudyID: "s1", Groups: []ResultGroup{
		{Name: "A", N: resNum(50, 1), Percent: resNum(33, 1)},
		{Name: "B", N: resNum(40, 2), Events: resNum(10, 2)},
	}}
	row, err := Standardize(r, responseSpec, "Kim 2018", nil)
	if err != nil {
		t.Fatal(err)
	}
	if row.Events1 != 17 || row.Total1 != 50 || row.Events2 != 10 || row.Total2 != 40 || fmt.Sprint(row.Sources) != "[1 2]" {
		t.Errorf("row %+v", row)
	}
	wantD := []string{`no group is marked as treatment: group 1 ("A") is taken, by its order`, `no group is marked as control: group 2 ("B") is taken, by its order`,
		"events1 = 33% of 50 = 17 (16.50 rounded)"}
	if !reflect.DeepEqual(row.Derivations, wantD) {
		t.Errorf("derivations %q", row.Derivations)
	}
	// An exact half rounds up despite floating point (0.7 / 100 * 500 is
	// 3.4999… in binary).
	r.Groups = []ResultGroup{{Name: "A", Role: RoleTreatment, N: resNum(500), Percent: resNum(0.7)}, {Name: "B", Role: RoleControl, N: resNum(40), Events: resNum(1)}}
	if row, err := Standardize(r, responseSpec, "", nil); err != nil || row.Events1 != 4 {
		t.Errorf("0.7%% of 500: %+v, %v", row, err)
	}
	// Only the control marked: the treatment is the other group.
	r.Groups = []ResultGroup{{Name: "ctrl", Role: RoleControl, N: resNum(10), Events: resNum(1)}, {Name: "other", N: resNum(20), Events: resNum(2)}}
	row, err = Standardize(r, responseSpec, "", nil)
	if err != nil || row.Total1 != 20 || row.Total2 != 10 || len(row.Derivations) != 1 || !strings.Contains(row.Derivations[0], `group 2 ("other")`) {
		t.Errorf("control only: %+v, %v", row, err)
	}
	// Two treatment groups and a control: never the first two silently;
	// with the user's choice, the two treatments combined (events and
	// totals summed: 1+2 of 10+20).
	r.Groups = []ResultGroup{{Name: "T1", Role: RoleTreatment, N: resNum(10), Events: resNum(1)}, {Name: "T2", Role: RoleTreatment, N: resNum(20), Events: resNum(2)}, {Name: "C", Role: RoleControl, N: resNum(30), Events: resNum(3)}}
	if row, err = Standardize(r, responseSpec, "", nil); err == nil || !strings.Contains(err.Error(), "3 groups (T1, T2, C)") {
		t.Errorf("two treatments without a choice: %+v, %v", row, err)
	}
	row, err = Standardize(r, responseSpec, "", &ArmChoice{Treatment: []string{"T1", "T2"}, Control: []string{"C"}})
	if err != nil || row.Events1 != 3 || row.Total1 != 30 || row.Events2 != 3 || row.Total2 != 30 ||
		fmt.Sprint(row.Derivations) != `[groups chosen by the user: treatment "T1" + "T2" (combined) vs control "C" treatment groups "T1" + "T2" combined (Cochrane Handbook 6.5.2.10, events and totals summed): events1 = 1 + 2 = 3, total1 = 10 + 20 = 30]` {
		t.Errorf("two treatments combined: %+v, %v", row, err)
	}
	// Single arm: the treatment group, or the first.
	r.Groups = []ResultGroup{{Name: "cohort", N: resNum(120, 3), Events: resNum(54, 3)}}
	row, err = Standardize(r, ResultSpec{Outcome: "response", Measure: SingleArm}, "Ito 2021", nil)
	if err != nil || row.Events1 != 54 || row.Total1 != 120 || row.Events2 != 0 || len(row.Derivations) != 0 {
		t.Errorf("single arm: %+v, %v", row, err)
	}
	// A single-arm result of two groups: only with the user's choice.
	r.Groups = []ResultGroup{{Name: "low dose", N: resNum(10), Events: resNum(1)}, {Name: "high dose", Role: RoleTreatment, N: resNum(12), Events: resNum(6)}}
	if row, err = Standardize(r, ResultSpec{Outcome: "response", Measure: SingleArm}, "", nil); err == nil || !strings.Contains(err.Error(), "2 groups (low dose, high dose)") {
		t.Errorf("single arm of two without a choice: %+v, %v", row, err)
	}
	row, err = Standardize(r, ResultSpec{Outcome: "response", Measure: SingleArm}, "", &ArmChoice{Treatment: []string{"high dose"}})
	if err != nil || row.Total1 != 12 || row.Events1 != 6 || !strings.Contains(fmt.Sprint(row.Derivations), `groups chosen by the user: treatment "high dose"`) {
		t.Errorf("single arm of two: %+v, %v", row, err)
	}
}

func TestStandardizeValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   ResultSpec
		groups []ResultGroup
		effect *Effect
		msgs   []string
	}{
		{"events above N", responseSpec, []ResultGroup{{Name: "MWA", Role: RoleTreatment, N: resNum(80), Events: resNum(90)}, {Name: "RFA", Role: RoleControl, N: resNum(75), Events: resNum(10)}}, nil,
			[]string{`the treatment group ("MWA") has 90 events but only 80 participants`}},
		{"no N, no events", responseSpec, []ResultGroup{{Name: "MWA", Role: RoleTreatment, Events: resNum(9)}, {Name: "RFA", Role: RoleControl, N: resNum(0)}}, nil,
			[]string{`the treatment group ("MWA") has no number of participants (N)`, `the control group ("RFA") has N = 0; a group needs at least 1 participant`,
				`the control group ("RFA") has neither a number of events nor a percentage`}},
		{"bad percent", responseSpec, []ResultGroup{{Name: "A", Role: RoleTreatment, N: resNum(10), Percent: resNum(140)}, {Name: "B", Role: RoleControl, N: resNum(10.5), Events: resNum(1.5)}}, nil,
			[]string{`the control group ("B") has N = 10.5, which is not a whole number`, `the treatment group ("A") has 140% with the outcome`, `the control group ("B") has 1.5 events, which is not a whole number`}},
		{"percent without N", responseSpec, []ResultGroup{{Name: "MWA", Role: RoleTreatment, Percent: resNum(45)}, {Name: "RFA", Role: RoleControl, N: resNum(75), Events: resNum(10)}}, nil,
			[]string{`the treatment group ("MWA") has no number of participants (N)`, `the treatment group ("MWA") has 45% with the outcome but no N to count the events from`}},
		{"one group", responseSpec, []ResultGroup{{Name: "A", Role: RoleTreatment, N: resNum(10), Events: resNum(1)}}, nil,
			[]string{"a treatment and a control group are needed, but the study has 1 group"}},
		{"sd", ResultSpec{Outcome: "size", Measure: MeansSDs}, []ResultGroup{{Name: "A", Role: RoleTreatment, N: resNum(1), Mean: resNum(2), SD: resNum(0)}, {Name: "B", Role: RoleControl, N: resNum(10), Mean: resNum(2)}}, nil,
			[]string{`the treatment group ("A") has N = 1; a standard deviation needs at least 2 participants`, `the treatment group ("A") has SD = 0; a standard deviation must be greater than 0`,
				`the control group ("B") has no standard deviation (SD)`}},
		{"no effect", ResultSpec{Outcome: "os", Measure: RatioCI}, nil, nil, []string{"reports no ratio with a confidence interval"}},
		{"limits", ResultSpec{Outcome: "os", Measure: RatioCI}, nil, &Effect{Kind: "HR", Est: Number{Value: 0.8}, Lower: Number{Value: 0.9}, Upper: Number{Value: 0.7}}, []string{"the lower limit 0.9 of the HR is not below the upper limit 0.7"}},
		{"outside", ResultSpec{Outcome: "os", Measure: RatioCI}, nil, &Effect{Kind: "OR", Est: Number{Value: 1.5}, Lower: Number{Value: 0.9}, Upper: Number{Value: 1.2}}, []string{"the OR 1.5 lies outside its confidence interval [0.9, 1.2]"}},
		{"negative", ResultSpec{Outcome: "os", Measure: RatioCI}, nil, &Effect{Est: Number{Value: -0.2}, Lower: Number{Value: -0.5}, Upper: Number{Value: 0.1}}, []string{"the ratio -0.2 [-0.5, 0.1] has a value at or below 0"}},
		{"no group", ResultSpec{Outcome: "os", Measure: SingleArm}, nil, nil, []string{"the study has no group with the outcome"}},
	} {
		_, err := Standardize(ResultExtraction{StudyID: "pmid:5", Groups: tc.groups, Effect: tc.effect}, tc.spec, "Park 2017", nil)
		var re *RowError
		if !errors.As(err, &re) || re.Label != "Park 2017" || len(re.Problems) != len(tc.msgs) {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "evidence: Park 2017 (pmid:5): ") {
			t.Errorf("%s: %q does not name the study", tc.name, err)
		}
		for i, m := range tc.msgs {
			if !strings.Contains(re.Problems[i], m) {
				t.Errorf("%s: problem %d %q lacks %q", tc.name, i+1, re.Problems[i], m)
			}
		}
	}
	if _, err := Standardize(ResultExtraction{}, ResultSpec{Measure: "x"}, "", nil); err == nil {
		t.Error("unknown measure accepted")
	}
}

func TestMetaStudyMatchesHandBuilt(t *testing.T) {
	rows := []StandardRow{
		{Label: "A", Measure: TwoGroups, Events1: 36, Total1: 80, Events2: 30, Total2: 75},
		{Label: "B", Measure: TwoGroups, Events1: 12, Total1: 50, Events2: 20, Total2: 52},
		{StudyID: "pmid:3", Measure: TwoGroups, Events1: 0, Total1: 20, Events2: 3, Total2: 21},
	}
	hand := []meta.Study{
		{Label: "A", Kind: meta.Binary, AI: 36, N1I: 80, CI: 30, N2I: 75},
		{Label: "B", Kind: meta.Binary, AI: 12, N1I: 50, CI: 20, N2I: 52},
		{Label: "pmid:3", Kind: meta.Binary, AI: 0, N1I: 20, CI: 3, N2I: 21},
	}
	var studies []meta.Study
	for _, r := range rows {
		studies = append(studies, r.MetaStudy())
	}
	if !reflect.DeepEqual(studies, hand) {
		t.Fatalf("studies %+v", studies)
	}
	for _, m := range MeasuresFor(TwoGroups) {
		got, err := meta.Analyze(studies, meta.Options{Measure: m})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := meta.Analyze(hand, meta.Options{Measure: m})
		if got.Est != want.Est || got.CILB != want.CILB || got.K != 3 {
			t.Errorf("%s: %v vs %v", m, got.Est, want.Est)
		}
	}
	// The risk ratio of study A alone is (36/80)/(30/75) = 1.125.
	res, err := meta.Analyze(studies[:1], meta.Options{Measure: DefaultMeasure(TwoGroups), Method: meta.EE})
	if err != nil || math.Abs(math.Exp(res.Est)-1.125) > 1e-12 {
		t.Errorf("RR = %v, %v", math.Exp(res.Est), err)
	}

	// The other shapes: kinds and values carried over, analysable with
	// their default measure.
	for _, tc := range []struct {
		rows []StandardRow
		kind meta.Kind
		want float64 // pooled estimate of the first row alone, EE
	}{
		{[]StandardRow{{Label: "x", Measure: SingleArm, Events1: 54, Total1: 120}, {Label: "y", Measure: SingleArm, Events1: 20, Total1: 50}}, meta.Proportion, 0.45},
		{[]StandardRow{{Label: "x", Measure: MeansSDs, Mean1: -3.2, SD1: 1.5, Total1: 80, Mean2: -2.9, SD2: 1.4, Total2: 75}, {Label: "y", Measure: MeansSDs, Mean1: 1, SD1: 1, Total1: 10, Mean2: 2, SD2: 1, Total2: 10}}, meta.Continuous, -0.3},
		{[]StandardRow{{Label: "x", Measure: RatioCI, EffectKind: "HR", Est: 0.72, Lower: 0.55, Upper: 0.94}, {Label: "y", Measure: RatioCI, Est: 0.9, Lower: 0.7, Upper: 1.2}}, meta.Generic, math.Log(0.72)},
	} {
		m := DefaultMeasure(tc.rows[0].Measure)
		var ss []meta.Study
		for _, r := range tc.rows {
			s := r.MetaStudy()
			if s.Kind != tc.kind || s.Kind != m.Kind() {
				t.Errorf("%s: kind %v, measure %s needs %v", r.Measure, s.Kind, m, m.Kind())
			}
			ss = append(ss, s)
		}
		if _, err := meta.Analyze(ss, meta.Options{Measure: m}); err != nil {
			t.Errorf("%s: %v", m, err)
		}
		res, err := meta.Analyze(ss[:1], meta.Options{Measure: m, Method: meta.EE})
		if err != nil || math.Abs(res.Est-tc.want) > 1e-9 {
			t.Errorf("%s: est %v, want %v (%v)", m, res.Est, tc.want, err)
		}
	}
	for _, m := range []Measure{TwoGroups, SingleArm, MeansSDs, RatioCI} {
		for _, mm := range MeasuresFor(m) {
			if mm.Kind() != MeasuresFor(m)[0].Kind() {
				t.Errorf("%s: %s has another kind", m, mm)
			}
		}
	}
	if DefaultMeasure("x") != "" {
		t.Error("unknown shape has a measure")
	}
}

func TestCheckAndMergeResult(t *testing.T) {
	r := ResultExtraction{StudyID: "pmid:101", Groups: []ResultGroup{{Name: "MWA", N: resNum(80, 3), Events: resNum(37, 3)}}}
	c := CheckResult(r, mwaStudy)
	if c.Groups[0].N.Unsupported || !c.Groups[0].Events.Unsupported || r.Groups[0].Events.Unsupported {
		t.Errorf("checked %s (input %s)", dumpJSON(c), dumpJSON(r))
	}
	c.Groups[0].Events.Value = 36 // the user corrects it
	c.Edited = true
	if c = CheckResult(c, mwaStudy); c.Groups[0].Events.Unsupported {
		t.Errorf("corrected value still flagged")
	}
	fresh := ResultExtraction{StudyID: "pmid:101"}
	if got := MergeResult(c, fresh); !got.Edited || got.Groups[0].Events.Value != 36 {
		t.Errorf("edited result replaced: %s", dumpJSON(got))
	}
	if got := MergeResult(r, fresh); got.Groups != nil {
		t.Errorf("unedited result kept: %s", dumpJSON(got))
	}
}

// dumpJSON shows a value with its pointers followed.
func dumpJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
