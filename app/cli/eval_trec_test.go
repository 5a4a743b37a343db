package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// TestEvalTRECRunBIRCOBaseline is the acceptance check: the shipped BM25
// run on the SIGIR-BIRCO pool scores NDCG@10 0.2376.
func TestEvalTRECRunBIRCOBaseline(t *testing.T) {
	runFile := realdata.Path(t, "trial-matching", "sigir_birco_subset", "bm25_baseline_run.trec")
	qrels := realdata.Path(t, "trial-matching", "sigir_birco_subset", "test_qrels.tsv")
	out, stderr, code := run(t, t.TempDir(), "eval", "trec", "--run", runFile, "--qrels", qrels)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "NDCG@10  0.2376\n") || !strings.Contains(out, "topics   50\n") {
		t.Errorf("output:\n%s", out)
	}
	out, _, code = run(t, t.TempDir(), "eval", "trec", "--run", runFile, "--qrels", qrels, "--json")
	var got map[string]float64
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("--json: %q (%v)", out, err)
	}
	if len(got) != 4 || got["topics"] != 50 || got["ndcg_cut_10"] < 0.237649868569 || got["ndcg_cut_10"] > 0.237649868570 {
		t.Errorf("--json: %v", got)
	}
	for _, k := range []string{"p_10", "recip_rank"} {
		if _, ok := got[k]; !ok {
			t.Errorf("--json lacks %s", k)
		}
	}
}

// TestEvalTRECRankTopics ranks the BIRCO development topics over their
// pool without a model, writes the run and scores it again.
func TestEvalTRECRankTopics(t *testing.T) {
	dir := realdata.Path(t, "trial-matching", "sigir_birco_subset")
	ws := t.TempDir()
	db := filepath.Join(ws, "dev.sqlite")
	if _, stderr, code := run(t, ws, "trials", "import", filepath.Join(dir, "dev_corpus.jsonl"), "--db", db, "--no-embed"); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	runFile := filepath.Join(ws, "dev.trec")
	qrels := filepath.Join(dir, "dev_qrels.tsv")
	out, stderr, code := run(t, ws, "eval", "trec", "--db", db, "--topics", filepath.Join(dir, "dev_queries.jsonl"),
		"--qrels", qrels, "--no-llm", "--pool", "--write-run", runFile, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got map[string]float64
	if err := json.Unmarshal([]byte(out), &got); err != nil || got["topics"] != 9 || got["ndcg_cut_10"] <= 0 {
		t.Fatalf("--json: %q (%v)", out, err)
	}
	if !strings.Contains(stderr, "lexical fallback") {
		t.Errorf("the embedder is not reported: %s", stderr)
	}
	// The written run scores the same.
	out2, _, code := run(t, ws, "eval", "trec", "--run", runFile, "--qrels", qrels, "--json")
	if code != 0 || strings.TrimSpace(out2) != strings.TrimSpace(out) {
		t.Errorf("re-scored run: %s, want %s", out2, out)
	}
	raw, err := os.ReadFile(runFile)
	if err != nil || !strings.Contains(string(raw), " Q0 NCT") || !strings.HasSuffix(strings.TrimSpace(strings.Split(string(raw), "\n")[0]), "clinsight") {
		t.Errorf("run file: %.200s (%v)", raw, err)
	}
}

func TestEvalTRECUsage(t *testing.T) {
	for _, args := range [][]string{
		{"eval", "trec", "--qrels", "x.tsv"},
		{"eval", "trec", "--run", "a", "--db", "b", "--topics", "c", "--qrels", "/nonexistent"},
		{"eval", "trec", "--run", "/nonexistent/run", "--qrels", "/nonexistent/q"},
	} {
		_, stderr, code := run(t, t.TempDir(), args...)
		if code != 1 || !strings.HasPrefix(stderr, "clinsight: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestEvalTRECWarnsWhenNothingIsJudged: a run whose trials are not in the
// qrels gets a warning naming the mismatch instead of a silent 0.0000; a
// run with a judged trial gets none.
func TestEvalTRECWarnsWhenNothingIsJudged(t *testing.T) {
	dir := t.TempDir()
	qrels := filepath.Join(dir, "qrels.tsv")
	if err := os.WriteFile(qrels, []byte("query-id\tcorpus-id\tscore\n1\tNCT001\t2\n1\tNCT002\t0\n2\tNCT003\t1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, run string
		warn      bool
	}{
		{"other ids", "1 Q0 trial-9 1 3.0 x\n1 Q0 trial-8 2 2.0 x\n2 Q0 trial-7 1 1.0 x\n", true},
		{"one judged", "1 Q0 trial-9 1 3.0 x\n1 Q0 NCT001 2 2.0 x\n", false},
	} {
		runPath := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".trec")
		if err := os.WriteFile(runPath, []byte(c.run), 0o600); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := run(t, dir, "eval", "trec", "--run", runPath, "--qrels", qrels)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
		}
		warned := strings.Contains(stderr, "warning: none of the 3 trials the run ranks for its 2 topics in the qrels is judged there")
		if c.name == "one judged" {
			warned = strings.Contains(stderr, "warning:")
		}
		if warned != c.warn {
			t.Errorf("%s: warned %v, stderr %q", c.name, warned, stderr)
		}
		if !strings.Contains(stdout, "NDCG@10") {
			t.Errorf("%s: stdout %q", c.name, stdout)
		}
	}
}
