package cli

import (
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// extractModelReply is a scripted chat model for "evidence extract": it
// answers field and result requests by the study in the prompt; the
// breast-cancer study's fields always cite a passage that does not exist.
func extractModelReply(calls *atomic.Int32) func(api.ChatRequest) ollamatest.ChatReply {
	return func(req api.ChatRequest) ollamatest.ChatReply {
		calls.Add(1)
		user := req.Messages[1].Content
		mwa := strings.Contains(user, "Study: Microwave versus radiofrequency")
		switch {
		case strings.Contains(string(req.Format), `"fields"`) && mwa:
			return ollamatest.ChatReply{Content: `{"fields":[{"name":"sample size","value":"120","sources":[3]},
				{"name":"complete ablation","value":"58 of 60","sources":[3]},{"name":"funding","value":"NP","sources":[]}]}`}
		case strings.Contains(string(req.Format), `"fields"`):
			return ollamatest.ChatReply{Content: `{"fields":[{"name":"sample size","value":"312","sources":[42]}]}`}
		case mwa:
			return ollamatest.ChatReply{Content: `{"groups":[
				{"name":"RFA","role":"control","n":{"value":60,"sources":[4]},"events":{"value":55,"sources":[4]},"percent":null},
				{"name":"MWA","role":"treatment","n":{"value":60,"sources":[4]},"events":{"value":58,"sources":[4]},"percent":null}]}`}
		}
		return ollamatest.ChatReply{Content: `{"groups":[
			{"name":"pCR","role":"treatment","n":{"value":100,"sources":[2]},"events":null,"percent":{"value":78,"sources":[2]}},
			{"name":"no pCR","role":"control","n":{"value":212,"sources":[2]},"events":null,"percent":{"value":52,"sources":[2]}}]}`}
	}
}

func TestEvidenceExtract(t *testing.T) {
	var calls atomic.Int32
	_, ws, db := scriptedLiterature(t, extractModelReply(&calls))
	fields := writeFile(t, "fields.json", `[{"name":"sample size","description":"number of patients randomised"},
		{"name":"complete ablation","description":"patients with complete ablation after MWA"}, "funding"]`)

	// Fields, JSON: values with their cited passages; the unsupported one
	// flagged; the study citing passage 42 fails after a retry; the
	// unknown study fails; the exit code says so.
	out, stderr, code := run(t, ws, "evidence", "extract", "--db", db, "--id", "90000001", "--id", "pmid:90000011", "--id", "pmid:1",
		"--fields", fields, "--concurrency", "2", "--json")
	if code == 0 || !strings.Contains(stderr, "2 of 3 studies could not be extracted") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	var got extractJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got.Model != "llama3.1:8b" || len(got.Fields) != 3 || got.Fields[2].Description != "funding" || len(got.Studies) != 3 {
		t.Fatalf("extract --json: %s", out)
	}
	s := got.Studies[0]
	if s.ID != "pmid:90000001" || s.Label != "Müller 2021" || s.Error != "" || len(s.Fields) != 3 {
		t.Fatalf("study 1: %+v", s)
	}
	if v := s.Fields[0]; v.Value != "120" || v.Unsupported || len(v.Sources) != 1 || v.Sources[0] != 3 {
		t.Errorf("sample size %+v", v)
	}
	if v := s.Fields[1]; v.Value != "58 of 60" || !v.Unsupported {
		t.Errorf("complete ablation %+v (58 of 60 is in the results, not in passage 3)", v)
	}
	if v := s.Fields[2]; v.Value != "NP" || v.Unsupported {
		t.Errorf("funding %+v", v)
	}
	if len(s.Chunks) != 1 || s.Chunks[0].N != 3 || !strings.Contains(s.Chunks[0].Text, "randomly assigned 120 patients") {
		t.Errorf("cited chunks %+v", s.Chunks)
	}
	if e := got.Studies[1].Error; !strings.Contains(e, "cited passage 42") || !strings.Contains(e, "pmid:90000011") {
		t.Errorf("out of range: %q", e)
	}
	if e := got.Studies[2].Error; !strings.Contains(e, "pmid:1") {
		t.Errorf("unknown study: %q", e)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d model calls, want 3 (one study retried once)", n)
	}

	// Text output: each value beside its cited passage.
	out, _, _ = run(t, ws, "evidence", "extract", "--db", db, "--id", "90000001", "--fields", fields)
	for _, want := range []string{"pmid:90000001  Müller 2021  Microwave versus radiofrequency", "sample size: 120 [3]\n",
		"[3] Abstract: METHODS: We randomly assigned 120 patients", "complete ablation: 58 of 60 [3]  UNSUPPORTED", "funding: NP\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// A result, standardized and pooled: the control listed first is put
	// second, percentages become events, the pooled RR is computed here.
	result := writeFile(t, "result.json", `{"outcome":"complete ablation","cohort":"treatment (MWA) vs control (RFA)","measure":"two-groups"}`)
	out, stderr, code = run(t, ws, "evidence", "extract", "--db", db, "--ids-file", writeFile(t, "ids.txt", "# included\n90000001\n\npmid:90000011 # TNBC\n"),
		"--result", result, "--meta", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Studies []extractStudyJSON `json:"studies"`
		Meta    struct {
			K   int `json:"k"`
			Exp struct {
				Est float64 `json:"est"`
			} `json:"exp"`
		} `json:"meta"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	r1, r2 := res.Studies[0].Row, res.Studies[1].Row
	if r1 == nil || r1.Events1 != 58 || r1.Total1 != 60 || r1.Events2 != 55 || r1.Total2 != 60 || r1.Label != "Müller 2021" {
		t.Fatalf("row 1 %+v", r1)
	}
	if r2 == nil || r2.Events1 != 78 || r2.Events2 != 110 || len(r2.Derivations) != 2 || r2.Derivations[1] != "events2 = 52% of 212 = 110 (110.24 rounded)" {
		t.Fatalf("row 2 %+v", r2)
	}
	if res.Meta.K != 2 || !(res.Meta.Exp.Est > 1 && res.Meta.Exp.Est < 1.6) {
		t.Errorf("meta %+v", res.Meta)
	}
	// The same pooled RR from the text output, with the table.
	out, _, _ = run(t, ws, "evidence", "extract", "--db", db, "--id", "90000001", "--id", "90000011", "--result", result, "--meta", "--measure", "or")
	for _, want := range []string{`group "MWA" (treatment): n 60 [4], events 58 [4]`, "Standardized table: complete ablation, events and totals in two groups",
		"Müller 2021", "events1 = 78% of 100 = 78", "Pooled OR", "k = 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if math.IsNaN(res.Meta.Exp.Est) {
		t.Error("NaN")
	}

	// Errors.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--id", "1"}, "give either --fields"},
		{[]string{"--id", "1", "--fields", fields, "--result", result}, "give either --fields"},
		{[]string{"--fields", fields}, "say which studies to extract"},
		{[]string{"--id", "1", "--fields", writeFile(t, "f.json", `[{"name":"a"},{"name":"A"}]`)}, `the name "A" is used twice`},
		{[]string{"--id", "1", "--fields", writeFile(t, "g.json", `{"name":"a"}`)}, "must be a JSON list of fields"},
		{[]string{"--id", "1", "--result", writeFile(t, "r.json", `{"outcome":"x","measure":"hr"}`)}, `unknown result shape "hr"`},
		{[]string{"--id", "1", "--result", result, "--meta", "--measure", "MD"}, "--measure MD does not suit a result of events and totals in two groups; use RR, OR, RD"},
		{[]string{"--id", "1", "--fields", fields, "--meta"}, "--meta pools a result"},
	} {
		if _, stderr, code := run(t, ws, append([]string{"evidence", "extract", "--db", db}, tc.args...)...); code == 0 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, code, stderr, tc.msg)
		}
	}
}
