package evidence

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// mwaStudy is a study text in four chunks.
var mwaStudy = StudyText{ID: "pmid:101", Title: "Microwave versus radiofrequency ablation for hepatocellular carcinoma", Chunks: []Chunk{
	{N: 1, Section: "Title", Text: "Microwave versus radiofrequency ablation for hepatocellular carcinoma"},
	{N: 2, Section: "METHODS", Text: "A total of 1,234 patients were screened and 155 randomised; median age 62.0 years (range 18-85)."},
	{N: 3, Section: "RESULTS", Text: "Complete response: 36 of 80 patients (45%) after microwave ablation (MWA) and 40% of 75 after radiofrequency ablation (RFA)."},
	{N: 4, Section: "CONCLUSIONS", Text: "MWA was not inferior; mean tumour size fell by −3.2 cm (SD 1.5) vs 2.9 cm (SD 1.4)."},
}}

var testFields = []FieldSpec{
	{Name: "sample size", Description: "number of patients randomised"},
	{Name: "median age", Description: "median age of the participants, in years"},
	{Name: "response rate", Description: "complete response rate after microwave ablation"},
	{Name: "funding", Description: "who funded the study"},
}

func testExtractor(c localllm.Chatter) *Extractor {
	return &Extractor{Chat: c, Model: scriptedModel}
}

func TestExtractFields(t *testing.T) {
	srv, c := scriptedClient(t)
	srv.QueueChat(ollamatest.ChatReply{Content: `{"fields":[
		{"name":"Sample size","value":"155","sources":[2]},
		{"name":"median age","value":" 62  years ","sources":[2,2]},
		{"name":"response rate","value":"45%","sources":[2]},
		{"name":"country","value":"Italy","sources":[1]},
		{"name":"median age","value":"70 years","sources":[2]}]}`})
	got, err := testExtractor(c).ExtractFields(context.Background(), mwaStudy, testFields)
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldValue{
		{Name: "sample size", Value: "155", Sources: []int{2}},
		{Name: "median age", Value: "62 years", Sources: []int{2}},
		// 45% is in chunk 3, not in the cited chunk 2.
		{Name: "response rate", Value: "45%", Sources: []int{2}, Unsupported: true},
		// Left out by the model: not present.
		{Name: "funding", Value: NotPresent},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("values\n got %+v\nwant %+v", got, want)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	user := reqs[0].Messages[1].Content
	for _, s := range []string{"Study: Microwave versus radiofrequency ablation", "Text (4 passages):",
		"[2] (METHODS) A total of 1,234 patients", "[4] (CONCLUSIONS) MWA was not inferior", "Fields (4):",
		"1. sample size: number of patients randomised", "4. funding: who funded the study", `("NP" when not reported)`} {
		if !strings.Contains(user, s) {
			t.Errorf("prompt lacks %q:\n%s", s, user)
		}
	}
	if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "at most 3") || !strings.Contains(sys, `"NP" when the text does not report it`) {
		t.Errorf("system prompt %q", sys)
	}
	if !strings.Contains(string(reqs[0].Format), `"sources"`) {
		t.Errorf("format %s", reqs[0].Format)
	}
}

func TestExtractFieldsNPAndUnsupported(t *testing.T) {
	srv, c := scriptedClient(t)
	srv.QueueChat(ollamatest.ChatReply{Content: `{"fields":[
		{"name":"sample size","value":"120","sources":[2]},
		{"name":"median age","value":"np","sources":[3]},
		{"name":"response rate","value":"45% (36 of 80)","sources":[3]},
		{"name":"funding","value":"Industry","sources":[]}]}`})
	got, err := testExtractor(c).ExtractFields(context.Background(), mwaStudy, testFields)
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldValue{
		// "120" is not a number of chunk 2 (it has 1,234 and 155, not 120).
		{Name: "sample size", Value: "120", Sources: []int{2}, Unsupported: true},
		// NP in any case; its sources are dropped.
		{Name: "median age", Value: NotPresent},
		{Name: "response rate", Value: "45% (36 of 80)", Sources: []int{3}},
		// A value that cites nothing is unsupported even without numbers.
		{Name: "funding", Value: "Industry", Unsupported: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("values\n got %+v\nwant %+v", got, want)
	}
}

func TestExtractFieldsSourcesRetriedThenRejected(t *testing.T) {
	srv, c := scriptedClient(t)
	e := testExtractor(c)
	bad := `{"fields":[{"name":"sample size","value":"155","sources":[2,7,0]},{"name":"median age","value":"62","sources":[1,2,3,4]},{"name":"funding","value":"NP","sources":[9]}]}`
	good := `{"fields":[{"name":"sample size","value":"155","sources":[2]},{"name":"median age","value":"62","sources":[2]}]}`

	// Bad, then good: accepted; the retry names the bad citations and the
	// valid range. The NP value's citation is not checked.
	srv.QueueChat(ollamatest.ChatReply{Content: bad}, ollamatest.ChatReply{Content: good})
	got, err := e.ExtractFields(context.Background(), mwaStudy, testFields)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Value != "155" || fmt.Sprint(got[0].Sources) != "[2]" || got[0].Unsupported || got[3].Value != NotPresent {
		t.Errorf("after retry: %+v", got)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[1].Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || !strings.Contains(msgs[2].Content, `"sources":[2,7,0]`) {
		t.Fatalf("retry conversation %+v", msgs)
	}
	retry := msgs[3].Content
	for _, s := range []string{`"sample size" cites passages 7, 0, which were not shown`, `"median age" cites 4 passages (at most 3)`,
		"passages shown in the study text (1–4), at most 3 per value", "Reply again with the whole JSON"} {
		if !strings.Contains(retry, s) {
			t.Errorf("retry message lacks %q: %s", s, retry)
		}
	}
	if strings.Contains(retry, "funding") {
		t.Errorf("retry blames the NP value: %s", retry)
	}

	// Bad twice: a *SourceError after exactly two more requests.
	srv.QueueChat(ollamatest.ChatReply{Content: bad}, ollamatest.ChatReply{Content: `{"fields":[{"name":"sample size","value":"155","sources":[5]}]}`})
	_, err = e.ExtractFields(context.Background(), mwaStudy, testFields)
	var se *SourceError
	if !errors.As(err, &se) || se.ID != "pmid:101" || se.Field != `"sample size"` || fmt.Sprint(se.Bad) != "[5]" || se.Valid != "1–4" {
		t.Fatalf("rejected: %#v", err)
	}
	for _, s := range []string{"extracting fields from pmid:101", `model tiny cited passage 5 for "sample size" in pmid:101, but the passages shown to it are 1–4`, "choose a larger model"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if n := len(srv.ChatRequests()); n != 4 {
		t.Errorf("%d requests in all, want 4", n)
	}

	// Too many sources twice: the error says so.
	srv.QueueChat(ollamatest.ChatReply{Content: bad}, ollamatest.ChatReply{Content: `{"fields":[{"name":"median age","value":"62","sources":[1,2,3,4]}]}`})
	_, err = e.ExtractFields(context.Background(), mwaStudy, testFields)
	if !errors.As(err, &se) || se.Cited != 4 || len(se.Bad) != 0 || !strings.Contains(err.Error(), `cited 4 passages for "median age" in pmid:101, more than the 3 allowed`) {
		t.Errorf("too many: %v", err)
	}
}

func TestExtractFieldsClippedText(t *testing.T) {
	srv, c := scriptedClient(t)
	st := StudyText{ID: "pmid:7", Title: "A long trial"}
	filler := strings.Repeat("Background words about liver surgery history. ", 10)
	for i := 1; i <= 10; i++ {
		text := fmt.Sprintf("Passage %d. %s", i, filler)
		if i == 7 {
			text = "Eligible participants had a median age of 64 years; the median follow-up was 24 months."
		}
		st.Chunks = append(st.Chunks, Chunk{N: i, Text: text})
	}
	st.Chunks[0].Text = "A long trial"
	e := &Extractor{Chat: c, Model: scriptedModel, TextBudget: 300}
	fields := []FieldSpec{{Name: "median age", Description: "median age of participants"}}
	// Chunk 3 exists but was not shown: retried like a chunk out of range.
	srv.QueueChat(ollamatest.ChatReply{Content: `{"fields":[{"name":"median age","value":"64 years","sources":[3]}]}`},
		ollamatest.ChatReply{Content: `{"fields":[{"name":"median age","value":"64 years","sources":[7]}]}`})
	got, err := e.ExtractFields(context.Background(), st, fields)
	if err != nil {
		t.Fatal(err)
	}
	if want := []FieldValue{{Name: "median age", Value: "64 years", Sources: []int{7}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	reqs := srv.ChatRequests()
	user := reqs[0].Messages[1].Content
	if !strings.Contains(user, "[1] A long trial") || !strings.Contains(user, "[7] Eligible participants") ||
		strings.Contains(user, "[3] ") || !strings.Contains(user, "of the study's 10 passages, the others left out for length") {
		t.Errorf("clipped prompt:\n%s", user)
	}
	if r := reqs[1].Messages[3].Content; !strings.Contains(r, `"median age" cites passage 3, which was not shown`) || !strings.Contains(r, "(1, 7)") {
		t.Errorf("retry %q", r)
	}
}

func TestExtractFieldsModelFailureKeepsEdits(t *testing.T) {
	srv, c := scriptedClient(t)
	e := testExtractor(c)
	saved := []FieldValue{{Name: "median age", Value: "61 years", Sources: []int{2}, Edited: true}, {Name: "sample size", Value: "155", Sources: []int{2}}}
	before := slices.Clone(saved)
	run := func() error {
		fresh, err := e.ExtractFields(context.Background(), mwaStudy, testFields)
		if err != nil {
			return err
		}
		saved = MergeFields(saved, fresh)
		return nil
	}
	// A server error.
	srv.QueueChat(ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "model runner crashed"}})
	err := run()
	if err == nil || localllm.KindOf(err) != localllm.Server || !strings.Contains(err.Error(), "extracting fields from pmid:101") {
		t.Errorf("server error: %v", err)
	}
	// Replies that are never JSON: ChatJSON gives up.
	srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
		return ollamatest.ChatReply{Content: "The median age was 62."}
	})
	err = run()
	if err == nil || localllm.KindOf(err) != localllm.BadReply {
		t.Errorf("malformed: %v", err)
	}
	if !reflect.DeepEqual(saved, before) {
		t.Errorf("edits changed: %+v", saved)
	}
	// A good run afterwards keeps the edited value and updates the others.
	srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
		return ollamatest.ChatReply{Content: `{"fields":[{"name":"median age","value":"62","sources":[2]},{"name":"sample size","value":"1,234","sources":[2]}]}`}
	})
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if saved[0].Name != "sample size" || saved[0].Value != "1,234" || saved[0].Unsupported ||
		saved[1].Value != "61 years" || !saved[1].Edited || saved[2].Value != NotPresent {
		t.Errorf("merged %+v", saved)
	}
}

func TestExtractFieldsInvalid(t *testing.T) {
	_, c := scriptedClient(t)
	e := testExtractor(c)
	for _, tc := range []struct {
		fields []FieldSpec
		text   StudyText
		msg    string
	}{
		{nil, mwaStudy, "no fields to extract"},
		{[]FieldSpec{{Name: " "}}, mwaStudy, "field 1 has no name"},
		{[]FieldSpec{{Name: "Age"}, {Name: "age "}}, mwaStudy, `field 2: the name "age" is used twice`},
		{testFields, StudyText{ID: "pmid:9"}, "pmid:9: the study has no text"},
	} {
		if _, err := e.ExtractFields(context.Background(), tc.text, tc.fields); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: %v, want %q", tc.fields, err, tc.msg)
		}
	}
}

func TestSupported(t *testing.T) {
	for _, tc := range []struct {
		value   string
		sources []int
		want    bool
	}{
		{"1234 screened", []int{2}, true},     // "1,234" in the text
		{"1,234", []int{2}, true},             //
		{"62 years", []int{2}, true},          // "62.0" in the text
		{"62.00", []int{2}, true},             //
		{"18–85", []int{2}, true},             // a range, dash ignored
		{"155", []int{3, 2}, true},            // any cited chunk
		{"155", []int{3}, false},              // not in chunk 3
		{"12", []int{2}, false},               // no "12" anywhere
		{"6", []int{3}, false},                // "36" and "75" do not contain a 6
		{"36/80 (45%)", []int{3}, true},       //
		{"45.5%", []int{3}, false},            // 45 is not 45.5
		{"-3.2 cm", []int{4}, true},           // unicode minus in the text
		{"−3.2", []int{4}, true},              //
		{"3.20", []int{4}, true},              //
		{"SD 1.5 vs 1.4", []int{4}, true},     //
		{"SD 1.5 vs 1.45", []int{4}, false},   //
		{"MWA", nil, true},                    // nothing to check
		{NotPresent, nil, true},               //
		{"155", nil, false},                   // a number that cites nothing
		{"155", []int{0, 9}, false},           // chunks that do not exist
		{"Complete response", []int{3}, true}, //
	} {
		if got := Supported(tc.value, mwaStudy, tc.sources); got != tc.want {
			t.Errorf("Supported(%q, %v) = %v, want %v", tc.value, tc.sources, got, tc.want)
		}
	}
	if got := numberTokens("p<.05, 1,234,567.5 and 12,13; 0.50; 0·66, 1.2.3", false); fmt.Sprint(got) != "[0.05 1234567.5 12.13 0.5 0.66 1.2 3]" {
		t.Errorf("numberTokens = %v", got)
	}
	if got := numberTokens("12,13 and 0,123 of 1,2,3", true); fmt.Sprint(got) != "[12.13 12 13 0.123 0 123 1 2 3]" {
		t.Errorf("numberTokens with lists = %v", got)
	}
}

func TestMergeFields(t *testing.T) {
	old := []FieldValue{
		{Name: "Median age", Value: "61", Sources: []int{2}, Edited: true},
		{Name: "sample size", Value: "150", Sources: []int{2}},
		{Name: "dropped field", Value: "kept", Edited: true},
		{Name: "gone", Value: "x"},
	}
	oldCopy := slices.Clone(old)
	fresh := []FieldValue{
		{Name: "sample size", Value: "155", Sources: []int{2}},
		{Name: "median age", Value: "62", Sources: []int{2}},
		{Name: "funding", Value: NotPresent},
	}
	got := MergeFields(old, fresh)
	want := []FieldValue{
		{Name: "sample size", Value: "155", Sources: []int{2}},
		{Name: "Median age", Value: "61", Sources: []int{2}, Edited: true},
		{Name: "funding", Value: NotPresent},
		{Name: "dropped field", Value: "kept", Edited: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged\n got %+v\nwant %+v", got, want)
	}
	got[1].Sources[0] = 99
	if !reflect.DeepEqual(old, oldCopy) || old[0].Sources[0] != 2 {
		t.Errorf("old modified: %+v", old)
	}
	if got := MergeFields(nil, fresh); !reflect.DeepEqual(got, fresh) {
		t.Errorf("no old: %+v", got)
	}
}

func TestSelectChunksKeepsOrderAndNumbers(t *testing.T) {
	st := StudyText{ID: "x"}
	for i := 1; i <= 6; i++ {
		st.Chunks = append(st.Chunks, Chunk{N: i, Text: strings.Repeat("z", 90)})
	}
	st.Chunks[4].Text = "hazard ratio for overall survival " + strings.Repeat("z", 56)
	st.Chunks[2].Text = "overall survival " + strings.Repeat("z", 73)
	v := selectChunks(st, "overall survival hazard ratio", 3*98)
	var ns []int
	for _, c := range v.Chunks {
		ns = append(ns, c.N)
	}
	if fmt.Sprint(ns) != "[1 3 5]" || !v.Clipped || v.valid != "1, 3, 5" || v.Total != 6 {
		t.Errorf("chunks %v clipped %v valid %q", ns, v.Clipped, v.valid)
	}
	if v := selectChunks(st, "anything", 10000); len(v.Chunks) != 6 || v.Clipped || v.valid != "1–6" {
		t.Errorf("all: %d %v %q", len(v.Chunks), v.Clipped, v.valid)
	}
}

func TestSupportedDecimalMarks(t *testing.T) {
	// The Lancet writes decimals with a middle dot, European texts with a
	// comma: 45·2 and 45,2 are 45.2, not 45 and 2.
	lancet := StudyText{ID: "pmid:7", Chunks: []Chunk{
		{N: 1, Text: "Median progression-free survival was 14·5 months; HR 0·66 (95% CI 0·53–0·82); 1,024 patients."},
		{N: 2, Text: "Tasso di risposta 45,2% (IC 95% 38,1–52,3); 5 pazienti, 0 decessi; riferimenti 12,13."},
	}}
	for _, tc := range []struct {
		value   string
		sources []int
		want    bool
	}{
		{"14.5 months", []int{1}, true},
		{"HR 0.66 (0.53-0.82)", []int{1}, true},
		{"66%", []int{1}, false}, // 0·66 is not 66
		{"14", []int{1}, false},  // nor is 14·5 14
		{"n = 1024", []int{1}, true},
		{"45.2%", []int{2}, true},
		{"45,2% (38,1–52,3)", []int{2}, true},
		{"0,5", []int{2}, false},  // 0.5, not the 0 and the 5 of the text
		{"12,13", []int{2}, true}, // as the text writes it
		{"13", []int{2}, true},    // "12,13" may list 12 and 13
	} {
		if got := Supported(tc.value, lancet, tc.sources); got != tc.want {
			t.Errorf("Supported(%q, %v) = %v, want %v", tc.value, tc.sources, got, tc.want)
		}
	}
	r := CheckResult(ResultExtraction{Groups: []ResultGroup{{Name: "A", Percent: &Number{Value: 45.2, Sources: []int{2}}}}}, lancet)
	if r.Groups[0].Percent.Unsupported {
		t.Errorf("45.2 read from 45,2 is flagged")
	}
}
