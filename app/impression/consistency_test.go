package impression

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

func TestContradictions(t *testing.T) {
	type want struct {
		kind ContradictionKind
		obs  []Observation
	}
	for _, c := range []struct {
		findings, impression string
		want                 []want
	}{
		// Consistent.
		{"Moderate cardiomegaly. Small left pleural effusion.", "Cardiomegaly and small left pleural effusion.", nil},
		{"The heart is normal in size. The lungs are clear. No effusion or pneumothorax.", "No acute cardiopulmonary abnormality.", nil},
		{"Small right pleural effusion.", "Possible small right effusion.", nil}, // uncertain: mentioned
		{"Borderline heart size. Lungs clear.", "No acute disease.", nil},        // uncertain finding: not required
		{"Right-sided PICC line in the SVC. Lungs clear. No effusion.", "No acute disease.", nil},
		// Calls the study normal while the findings have a positive observation.
		{"Mild left basilar atelectasis. No effusion.", "No acute cardiopulmonary abnormality.", []want{{CallsNormal, []Observation{Atelectasis}}}},
		// ... naming the significant ones once, not again as omitted.
		{"Cardiomegaly with a small left pleural effusion.", "Normal chest.", []want{{CallsNormal, []Observation{Cardiomegaly, PleuralEffusion}}}},
		// Omits a significant finding.
		{"Right lower lobe consolidation. Mildly enlarged heart.", "Right lower lobe consolidation.", []want{{Omits, []Observation{Cardiomegaly}}}},
		// Rules out what the findings report.
		{"Small left pneumothorax. Cardiomegaly.", "Cardiomegaly. No pneumothorax.", []want{{RulesOut, []Observation{Pneumothorax}}}},
		// States what the findings rule out.
		{"Cardiomegaly. No pleural effusion.", "Cardiomegaly with bilateral pleural effusions.", []want{{Unsupported, []Observation{PleuralEffusion}}}},
		// A fracture left out.
		{"Acute fracture of the left 6th rib. Lungs clear.", "Clear lungs.", []want{{CallsNormal, []Observation{Fracture}}}},
		{"Acute fracture of the left 6th rib. Atelectasis at the left base.", "Left basilar atelectasis.", []want{{Omits, []Observation{Fracture}}}},
	} {
		got := Contradictions(LabelText(c.findings), c.impression)
		var g []want
		for _, x := range got {
			g = append(g, want{x.Kind, x.Observations})
		}
		if !slices.EqualFunc(g, c.want, func(a, b want) bool { return a.kind == b.kind && slices.Equal(a.obs, b.obs) }) {
			t.Errorf("findings %q, impression %q: got %v, want %v", c.findings, c.impression, g, c.want)
		}
	}
}

func TestDescribeContradictions(t *testing.T) {
	cs := []Contradiction{
		{Kind: CallsNormal, Observations: []Observation{Cardiomegaly, Atelectasis}},
		{Kind: RulesOut, Observations: []Observation{Pneumothorax}},
	}
	want := "The impression calls the study normal, but the findings report Cardiomegaly, Atelectasis; it rules out Pneumothorax, present in the findings."
	if got := DescribeContradictions(cs); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if DescribeContradictions(nil) != "" {
		t.Error("no contradiction described")
	}
	for k := CallsNormal; k <= Unsupported; k++ {
		if s := (Contradiction{Kind: k, Observations: []Observation{Edema}}).String(); !strings.Contains(s, "Edema") || strings.Contains(s, "ContradictionKind") {
			t.Errorf("%d: %q", k, s)
		}
	}
}

func TestChooseImpressionPrefersConsistent(t *testing.T) {
	findings := LabelText("Moderate cardiomegaly. Small left pleural effusion.")
	mk := func(id int64, imp string, sim float64) Match {
		return Match{Report: Report{ID: id, Impression: imp}, Similarity: sim}
	}
	normal := "No acute cardiopulmonary abnormality."
	cands := []Match{
		mk(1, normal, 0.6), mk(2, "No acute cardiopulmonary disease.", 0.6), mk(3, "No acute abnormality.", 0.6),
		mk(4, "Cardiomegaly and small left pleural effusion.", 0.7),
	}
	// The examples agree on a normal impression (mean ROUGE-1 about 0.8),
	// but it contradicts the findings: the consistent candidate after them,
	// whose findings are about as similar, is chosen.
	ch := ChooseImpression(findings, cands, 3)
	if ch.Index != 3 || len(ch.Contradictions) != 0 {
		t.Errorf("chose %d %v", ch.Index, ch.Contradictions)
	}
	// Without a consistent candidate, the best fitting one, flagged.
	ch = ChooseImpression(findings, cands[:3], 3)
	if ch.Index < 0 || len(ch.Contradictions) == 0 || ch.Agreement <= 0 {
		t.Errorf("all contradicting: %+v", ch)
	}
	// A consistent candidate that fits far worse does not win: the
	// penalty is finite.
	far := append(slices.Clone(cands[:3]), mk(5, "Cardiomegaly.", 0))
	for i := range 3 {
		far[i].Similarity = 1
	}
	if ch := ChooseImpression(findings, far, 3); ch.Index == 3 {
		t.Errorf("a far worse consistent impression won: %+v", ch)
	}
	// The old choice, for comparison, ignores consistency.
	if k, _ := ConsensusChoice(cands[:3]); k > 2 {
		t.Errorf("consensus %d", k)
	}
}

func TestGenerateFlagsAndPrefersConsistent(t *testing.T) {
	const findings = "Moderate cardiomegaly. Small left pleural effusion with adjacent atelectasis of the left base."
	// Without a model, the retrieved impression is the consistent one.
	p, err := NewPipeline(testCorpus(), nil, Options{NoLLM: true, Examples: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Generate(context.Background(), Request{Findings: findings, ExcludeID: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Impression != res.Examples[res.Retrieved].Report.Impression || len(res.Contradictions) != len(Contradictions(res.Labels, res.Impression)) {
		t.Errorf("retrieved %q flagged %v", res.Impression, res.Contradictions)
	}
	// Report 5 excluded, no impression of the corpus names the effusion:
	// the choice is flagged.
	if len(res.Contradictions) == 0 {
		t.Errorf("retrieved %q not flagged", res.Impression)
	}
	res, _ = p.Generate(context.Background(), Request{Findings: findings}, nil)
	if res.Impression != "Cardiomegaly and small left pleural effusion." || len(res.Contradictions) != 0 {
		t.Errorf("retrieved %q, flagged %v", res.Impression, res.Contradictions)
	}

	// With a model: the best-scoring response calls the study normal; the
	// consistent one is returned, and with IgnoreConsistency the other.
	for _, ignore := range []bool{false, true} {
		srv, client := newTestClient(t)
		srv.HandleChat(func(r api.ChatRequest) ollamatest.ChatReply {
			if strings.Contains(lastUser(r), "excellent") || strings.Contains(lastUser(r), "negative impression") {
				return ollamatest.ChatReply{Content: "Cardiomegaly and left effusion."}
			}
			return ollamatest.ChatReply{Content: "No acute cardiopulmonary abnormality."}
		})
		p, err := NewPipeline(testCorpus(), client, Options{Model: "m", Examples: 3, Iterations: 2, IgnoreConsistency: ignore}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Generate(context.Background(), Request{Findings: findings, ExcludeID: 5}, nil)
		if err != nil || len(res.Iterations) != 2 {
			t.Fatalf("generate: %v %+v", err, res)
		}
		normal, consistent := res.Iterations[0], res.Iterations[1]
		if len(normal.Contradictions) == 0 || len(consistent.Contradictions) != 0 || normal.Score <= consistent.Score {
			t.Fatalf("the scripted responses do not set up the case: %+v / %+v", normal, consistent)
		}
		want := consistent
		if ignore {
			want = normal
		}
		if res.Impression != want.Response || len(res.Contradictions) != len(want.Contradictions) {
			t.Errorf("ignore %v: returned %q flagged %v", ignore, res.Impression, res.Contradictions)
		}
	}
}
