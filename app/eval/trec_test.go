package eval

import (
	"bytes"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

func trecNear(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestTRECTieOrder checks trec_eval's order: score descending, ties by
// document id descending, the rank column ignored.
func TestTRECTieOrder(t *testing.T) {
	run, err := ReadRun(strings.NewReader(`t1 Q0 d1 1 5 x
t1 Q0 d3 2 5 x
t1 Q0 d2 3 5 x
t1 Q0 d9 4 7 x
t1 Q0 d0 5 1 x
`))
	if err != nil {
		t.Fatal(err)
	}
	got := run.Ranked("t1")
	want := []string{"d9", "d3", "d2", "d1", "d0"}
	if !slices.Equal(got, want) {
		t.Errorf("ranked %v, want %v", got, want)
	}
}

// TestPrecisionAndRRHandComputed: hand-computed P@10 and reciprocal rank
// with relevance = grade ≥ 2 and ties.
func TestPrecisionAndRRHandComputed(t *testing.T) {
	qrels, err := ReadQrels(strings.NewReader(`query-id	corpus-id	score
t1	a	2
t1	b	1
t1	c	2
t1	d	0
t1	e	2
t2	x	1
t2	y	1
t3	p	2
`))
	if err != nil {
		t.Fatal(err)
	}
	// t1: all twelve documents tie at score 1 except "a" (0.5). Tie order
	// is by id descending: z y x w v u e d c b, then a.
	// Top 10 = z y x w v u e d c b → relevant (≥2): e, c → P@10 = 0.2.
	// First relevant is e at rank 7 → RR = 1/7.
	var b strings.Builder
	for _, d := range []string{"b", "c", "d", "e", "u", "v", "w", "x", "y", "z"} {
		b.WriteString("t1 Q0 " + d + " 0 1 run\n")
	}
	b.WriteString("t1 Q0 a 0 0.5 run\n")
	// t2: only grade-1 documents are judged: P@10 = 0, RR = 0.
	b.WriteString("t2 Q0 x 1 3 run\nt2 Q0 y 2 2 run\n")
	// t3: three documents retrieved, the relevant one second; P@10 counts
	// over 10 even though only 3 were retrieved → 0.1; RR = 1/2.
	b.WriteString("t3 Q0 q 1 3 run\nt3 Q0 p 2 2 run\nt3 Q0 r 3 1 run\n")
	// t4 is not judged: ignored.
	b.WriteString("t4 Q0 zz 1 1 run\n")
	run, err := ReadRun(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	r1 := run.Ranked("t1")
	if p := PrecisionAt(r1, qrels["t1"], 10, 2); !trecNear(p, 0.2) {
		t.Errorf("t1 P@10 = %v, want 0.2", p)
	}
	if rr := ReciprocalRank(r1, qrels["t1"], 2); !trecNear(rr, 1.0/7) {
		t.Errorf("t1 RR = %v, want 1/7", rr)
	}
	// With -l 1, b (grade 1, 10th) counts too: P@10 = 3/10.
	if p := PrecisionAt(r1, qrels["t1"], 10, 1); !trecNear(p, 0.3) {
		t.Errorf("t1 P@10 at level 1 = %v, want 0.3", p)
	}
	s, err := EvaluateRun(run, qrels, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s.Topics != 3 {
		t.Fatalf("topics = %d, want 3 (t4 has no judgments)", s.Topics)
	}
	wantP := (0.2 + 0 + 0.1) / 3
	wantRR := (1.0/7 + 0 + 0.5) / 3
	if !trecNear(s.P10, wantP) || !trecNear(s.RR, wantRR) {
		t.Errorf("mean P@10 %v RR %v, want %v %v", s.P10, s.RR, wantP, wantRR)
	}
}

// TestNDCGCutHandComputed: graded gains, log2(rank+1) discount, ideal from
// every judged document.
func TestNDCGCutHandComputed(t *testing.T) {
	judged := map[string]int{"a": 2, "b": 1, "c": 2, "d": 0}
	ranked := []string{"b", "x", "a"} // c not retrieved
	dcg := 1/math.Log2(2) + 2/math.Log2(4)
	ideal := 2/math.Log2(2) + 2/math.Log2(3) + 1/math.Log2(4)
	if got := NDCGCut(ranked, judged, 10); !trecNear(got, dcg/ideal) {
		t.Errorf("NDCG = %v, want %v", got, dcg/ideal)
	}
	// Cut at 1: only b counts; ideal is a (or c) with gain 2.
	if got := NDCGCut(ranked, judged, 1); !trecNear(got, 0.5) {
		t.Errorf("NDCG@1 = %v, want 0.5", got)
	}
	if got := NDCGCut(ranked, map[string]int{"a": 0}, 10); got != 0 {
		t.Errorf("no positive judgment: %v, want 0", got)
	}
}

func TestWriteRunRoundTrip(t *testing.T) {
	run := Run{"t2": {{"b", 1}, {"a", 1}, {"c", 2.5}}, "t1": {{"z", -1}}}
	var buf bytes.Buffer
	if err := WriteRun(&buf, run, "clinsight"); err != nil {
		t.Fatal(err)
	}
	want := "t1 Q0 z 1 -1 clinsight\nt2 Q0 c 1 2.5 clinsight\nt2 Q0 b 2 1 clinsight\nt2 Q0 a 3 1 clinsight\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	back, err := ReadRun(&buf)
	if err != nil || !slices.Equal(back.Ranked("t2"), []string{"c", "b", "a"}) {
		t.Errorf("round trip: %v %v", back, err)
	}
	if err := WriteRun(&buf, run, "two words"); err == nil {
		t.Error("a tag with a space was accepted")
	}
}

func TestReadErrors(t *testing.T) {
	for _, in := range []string{"t1 d1\n", "t1 0 d1 2\nt1 0 d2 x\n", ""} {
		if _, err := ReadQrels(strings.NewReader(in)); err == nil {
			t.Errorf("qrels %q accepted", in)
		}
	}
	for _, in := range []string{"t1 Q0 d1 1 x run\n", "t1 Q0 d1 1 2\n", "t1 Q0 d1 1 2 r\nt1 Q0 d1 2 1 r\n", ""} {
		if _, err := ReadRun(strings.NewReader(in)); err == nil {
			t.Errorf("run %q accepted", in)
		}
	}
	if _, err := EvaluateRun(Run{"a": {{"d", 1}}}, Qrels{"b": {"d": 2}}, 2); err == nil {
		t.Error("no common topic accepted")
	}
	// TREC 4-column qrels.
	q, err := ReadQrels(strings.NewReader("t1 0 d1 2\nt1 0 d2 0\n"))
	if err != nil || q["t1"]["d1"] != 2 || len(q["t1"]) != 2 {
		t.Errorf("4-column qrels: %v %v", q, err)
	}
}

// TestBIRCOBM25Baseline is the metric check: the shipped BM25 run on
// the SIGIR-BIRCO test pool scores NDCG@10 0.23764986856966652 (the
// reference value in reference_ndcg10_computed.json).
func TestBIRCOBM25Baseline(t *testing.T) {
	runPath := realdata.Path(t, "trial-matching", "sigir_birco_subset", "bm25_baseline_run.trec")
	qrelsPath := realdata.Path(t, "trial-matching", "sigir_birco_subset", "test_qrels.tsv")
	rf, err := os.Open(runPath)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	run, err := ReadRun(rf)
	if err != nil {
		t.Fatal(err)
	}
	qf, err := os.Open(qrelsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer qf.Close()
	qrels, err := ReadQrels(qf)
	if err != nil {
		t.Fatal(err)
	}
	s, err := EvaluateRun(run, qrels, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s.Topics != 50 {
		t.Errorf("topics = %d, want 50", s.Topics)
	}
	if math.Abs(s.NDCG10-0.23764986856966652) > 1e-12 {
		t.Errorf("NDCG@10 = %.17g, want 0.23764986856966652", s.NDCG10)
	}
	t.Logf("BM25 baseline: NDCG@10 %.4f  P@10 %.4f  RR %.4f over %d topics", s.NDCG10, s.P10, s.RR, s.Topics)
}
