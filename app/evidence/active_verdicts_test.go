package evidence

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestScreenLearnerUsesTheModelsVerdicts: two undecided records with the
// same text, one whose criteria the model found met and one not met, tie
// without the verdicts; with them, after decisions that follow the
// verdicts, the "met" record ranks above the "not met" one, and a verdict
// is among its top features. The verdicts' weights are learned from the
// decisions (no constant is set for them).
func TestScreenLearnerUsesTheModelsVerdicts(t *testing.T) {
	ctx := context.Background()
	met := []Verdict{Yes, Yes, Yes}
	notMet := []Verdict{No, No, Uncertain}
	var ids []string
	var docs []ActiveDoc
	dec := map[string]Decision{}
	topics := []string{"aspirin after stroke", "knee surgery", "statins in diabetes", "hip fracture", "asthma inhalers", "malaria vaccine"}
	for i := range 40 {
		id := fmt.Sprintf("r%d", i)
		d := ActiveDoc{Title: fmt.Sprintf("Study %d of %s", i, topics[i%len(topics)]), Abstract: "A cohort of adults followed for a year. " + topics[(i+1)%len(topics)]}
		include := i%4 == 0
		d.Verdicts = notMet
		if include {
			d.Verdicts = met
		}
		ids, docs = append(ids, id), append(docs, d)
		dec[id] = Decision{Include: include, Reason: "x"}
	}
	twin := ActiveDoc{Title: "Outcomes of warfarin in atrial fibrillation", Abstract: "A registry of adults with atrial fibrillation."}
	a, b := twin, twin
	a.Verdicts, b.Verdicts = met, notMet
	rank := func(docs []ActiveDoc) *Ranking {
		t.Helper()
		l, err := NewScreenLearner(ctx, append(slices.Clone(ids), "met", "notmet"), docs, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := l.Rank(ctx, dec, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Order) != 2 {
			t.Fatalf("order %v", r.Order)
		}
		return r
	}
	plain := func(ds []ActiveDoc) []ActiveDoc {
		out := slices.Clone(ds)
		for i := range out {
			out[i].Verdicts = nil
		}
		return out
	}
	r0 := rank(plain(append(slices.Clone(docs), a, b)))
	c0m, _ := r0.Confidence("met")
	c0n, _ := r0.Confidence("notmet")
	if c0m != c0n {
		t.Fatalf("without verdicts the twins differ: %v and %v", c0m, c0n)
	}
	r := rank(append(slices.Clone(docs), a, b))
	cm, _ := r.Confidence("met")
	cn, _ := r.Confidence("notmet")
	if r.Order[0] != "met" || cm <= cn {
		t.Fatalf("with verdicts: order %v, confidence met %v, not met %v", r.Order, cm, cn)
	}
	var names []string
	for _, tw := range r.TopTerms("met", 5) {
		names = append(names, tw.Term)
	}
	if !slices.ContainsFunc(names, func(s string) bool { return strings.HasPrefix(s, "[criterion ") && strings.HasSuffix(s, ": met]") }) {
		t.Errorf("top features of the met twin %v, want a criterion met", names)
	}
}

// TestLearnerVerdicts: the verdicts of studies screened without error
// against the current criteria, none once the criteria change, and a key
// that follows the verdicts.
func TestLearnerVerdicts(t *testing.T) {
	p := NewProject("v", "demo", PICO{Population: "adults", Intervention: "aspirin"})
	p.Criteria = []Criterion{{Text: "adults", Weight: 1}, {Text: "aspirin", Weight: 1}}
	p.ScreenedCriteria = criterionTexts(p.Criteria)
	p.Screening = []ScreenedStudy{{ID: "a", Verdicts: []Verdict{Yes, No}}, {ID: "b", Error: "timeout"}, {ID: "c", Verdicts: []Verdict{No, No}}}
	v, key := p.LearnerVerdicts()
	if len(v) != 2 || !slices.Equal(v["a"], []Verdict{Yes, No}) || v["b"] != nil || key == "" {
		t.Fatalf("verdicts %v, key %q", v, key)
	}
	p.Screening[2].Verdicts = []Verdict{Yes, No}
	if _, key2 := p.LearnerVerdicts(); key2 == key || key2 == "" {
		t.Errorf("the key did not change with a verdict: %q", key2)
	}
	p.Criteria[0].Text = "older adults"
	if v, key := p.LearnerVerdicts(); v != nil || key != "" {
		t.Errorf("stale verdicts used: %v %q", v, key)
	}
}
