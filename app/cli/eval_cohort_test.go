package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

func TestEvalRetrievalJSON(t *testing.T) {
	dir := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	ws := workspaceWithHost(t, closedPort(t))
	out, stderr, code := run(t, ws, "eval", "retrieval", "--ehrsql", dir, "--db", filepath.Join(dir, "mimic_iv_demo.sqlite"), "--k", "5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got["k"] != 5.0 || got["n"] != 931.0 || got["recall_at_k"].(float64) < 0.95 || got["all_tables_share"].(float64) <= 0 ||
		!strings.HasPrefix(got["embedder"].(string), "lexical fallback") || got["profile"] != "curated" || len(got) != 8 {
		t.Errorf("eval retrieval = %s", out)
	}
}

// TestEvalRetrievalWithoutProfile runs eval retrieval --no-profile: the
// tables documented from the database structure only; the held-out half
// keeps its floor.
func TestEvalRetrievalWithoutProfile(t *testing.T) {
	dir := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	ws := workspaceWithHost(t, closedPort(t))
	out, stderr, code := run(t, ws, "eval", "retrieval", "--ehrsql", dir, "--db", filepath.Join(dir, "mimic_iv_demo.sqlite"), "--no-profile", "--json")
	if code != 0 {
		t.Fatalf("--no-profile: exit %d: %s", code, stderr)
	}
	var gen retrievalJSON
	if err := json.Unmarshal([]byte(out), &gen); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if gen.Profile != "generated" || gen.N != 931 || gen.Dev.N+gen.Test.N != gen.N || gen.Test.RecallAtK < 0.90 || !strings.HasPrefix(gen.Embedder, "lexical fallback") {
		t.Errorf("eval retrieval --no-profile = %s", out)
	}
	t.Logf("eval retrieval --no-profile: %s", strings.TrimSpace(out))
}

func TestEvalEHRSQLScripted(t *testing.T) {
	dir := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	items, err := eval.LoadEHRSQL(dir, "valid")
	if err != nil {
		t.Fatal(err)
	}
	gold := map[string]string{}
	for _, it := range items {
		gold[it.Question] = eval.EHRSQLQuery(it.GoldSQL)
	}
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if req.Format == nil {
			return ollamatest.ChatReply{Content: "Done."}
		}
		user := req.Messages[len(req.Messages)-1].Content
		q := strings.TrimSpace(user[strings.LastIndex(user, "Question: ")+len("Question: "):])
		return classifyReply(gold[q])
	})
	ws := workspaceWithHost(t, srv.URL)
	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code := run(t, ws, "eval", "ehrsql", "--ehrsql", dir, "--limit", "3", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	for _, k := range []string{"execution_accuracy", "rs_0", "rs_10", "abstain_precision", "abstain_recall", "mean_attempts", "llm_calls_per_question", "median_latency_ms", "n"} {
		if _, ok := m[k]; !ok {
			t.Errorf("metric %s missing: %s", k, stdout)
		}
	}
	if m["n"] != 3 || m["execution_accuracy"] != 1 || m["rs_10"] != 100 || m["mean_attempts"] != 1 || m["llm_calls_per_question"] != 2 {
		t.Errorf("metrics = %s", stdout)
	}
	raw, err := os.ReadFile(out + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(raw, &recs); err != nil || len(recs) != 3 || recs[0]["correct"] != true || recs[0]["sql"] == "" {
		t.Errorf("records: %v %s", err, raw)
	}
	wb, err := excelize.OpenFile(out + ".xlsx")
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	if rows, _ := wb.GetRows("Questions"); len(rows) != 4 || rows[0][0] != "id" {
		t.Errorf("workbook rows = %v", rows)
	}
}

// TestEvalGroundingJSON runs "eval grounding" on the first 250 EHRSQL
// valid questions: the JSON has the keys of the issue, grounding changes no
// gold answer and raises the match rate of the corrupted queries; the
// per-query cases are written.
func TestEvalGroundingJSON(t *testing.T) {
	dir := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	ws := workspaceWithHost(t, closedPort(t))
	out := filepath.Join(t.TempDir(), "cases")
	stdout, stderr, code := run(t, ws, "eval", "grounding", "--ehrsql", dir, "--db", filepath.Join(dir, "mimic_iv_demo.sqlite"),
		"--seed", "3", "--limit", "250", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	for _, k := range []string{"n", "match_before", "match_after", "changed_uncorrupted", "dev", "test"} {
		if _, ok := got[k]; !ok {
			t.Errorf("key %s missing: %s", k, stdout)
		}
	}
	n, _ := got["n"].(float64)
	before, _ := got["match_before"].(float64)
	after, _ := got["match_after"].(float64)
	if n < 50 || got["changed_uncorrupted"] != 0.0 || after <= before || got["seed"] != 3.0 {
		t.Errorf("eval grounding = %s", stdout)
	}
	raw, err := os.ReadFile(out + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []map[string]any
	if err := json.Unmarshal(raw, &cases); err != nil || float64(len(cases)) != n || cases[0]["corruption"] == nil {
		t.Errorf("cases: %v, %d of %v", err, len(cases), n)
	}
}
