package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// cohortWorkspace creates a workspace with a small demo data source whose
// Ollama host is a scripted server serving the default SQL and chat models
// (and the embedding model when embed is set).
func cohortWorkspace(t *testing.T, embed bool) (string, *ollamatest.Server) {
	t.Helper()
	models := []ollamatest.Model{{Name: "qwen2.5-coder:7b"}, {Name: "llama3.1:8b"}}
	if embed {
		models = append(models, ollamatest.Model{Name: "nomic-embed-text", Embedding: true})
	}
	srv := ollamatest.New(t, models...)
	ws := workspaceWithHost(t, srv.URL)
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "60"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	return ws, srv
}

const cliFemaleSQL = "SELECT COUNT(DISTINCT subject_id) AS n FROM patients WHERE gender = 'F'"

func classifyReply(sql string) ollamatest.ChatReply {
	return ollamatest.ChatReply{Content: fmt.Sprintf(`{"category":"answerable","reason":"in the data","sql":%q}`, sql)}
}

func TestAskJSON(t *testing.T) {
	ws, srv := cohortWorkspace(t, false)
	out, _, code := run(t, ws, "sql", "--db", "demo", "--json", cliFemaleSQL)
	var want struct{ Rows [][]float64 }
	if code != 0 || json.Unmarshal([]byte(out), &want) != nil {
		t.Fatalf("sql: %q", out)
	}
	n := int(want.Rows[0][0])
	srv.QueueChat(classifyReply(cliFemaleSQL), ollamatest.ChatReply{Content: fmt.Sprintf("There are %d women, 99%% of them old.", n)})
	xlsx := filepath.Join(t.TempDir(), "cohort.xlsx")
	out, stderr, code := run(t, ws, "ask", "--db", "demo", "--json", "--xlsx", xlsx, "How many female patients are there?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ans struct {
		Status     string   `json:"status"`
		Answer     string   `json:"answer"`
		Unverified []string `json:"unverified"`
		SQL        string   `json:"sql"`
		Attempts   []struct {
			Stage string `json:"stage"`
		} `json:"attempts"`
		Tables []struct {
			Table string  `json:"table"`
			Score float64 `json:"score"`
		} `json:"tables"`
		Embedder string   `json:"embedder"`
		Columns  []string `json:"columns"`
		Rows     [][]any  `json:"rows"`
		LLMCalls int      `json:"llm_calls"`
		Numbers  []any    `json:"numbers"`
		Stages   []any    `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if ans.Status != "answered" || ans.SQL != cliFemaleSQL || len(ans.Attempts) != 1 || ans.LLMCalls != 2 ||
		len(ans.Rows) != 1 || ans.Rows[0][0] != float64(n) || ans.Columns[0] != "n" {
		t.Errorf("answer = %+v", ans)
	}
	if len(ans.Unverified) != 1 || ans.Unverified[0] != "99%" || len(ans.Numbers) != 2 {
		t.Errorf("unverified = %v", ans.Unverified)
	}
	if len(ans.Tables) != 5 || !strings.HasPrefix(ans.Embedder, "lexical fallback") {
		t.Errorf("tables %v, embedder %q", ans.Tables, ans.Embedder)
	}
	wb, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, _ := wb.GetRows("Cohort")
	prov, _ := wb.GetRows("Provenance")
	text := ""
	for _, r := range prov {
		text += strings.Join(r, "=") + "\n"
	}
	if len(rows) != 2 || rows[1][0] != fmt.Sprint(n) || !strings.Contains(text, "Question=How many female patients are there?") ||
		!strings.Contains(text, "Query="+cliFemaleSQL) || !strings.Contains(text, "Unverified numbers=99%") {
		t.Errorf("workbook rows %v, provenance:\n%s", rows, text)
	}
}

func TestAskText(t *testing.T) {
	ws, srv := cohortWorkspace(t, true)
	srv.QueueChat(
		classifyReply("SELECT gender, COUNT(*) AS n FROM patients GROUP BY gender ORDER BY gender"),
		ollamatest.ChatReply{Content: "Patients by sex."},
	)
	out, stderr, code := run(t, ws, "ask", "--db", "demo", "How many patients of each sex?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Patients by sex.", "SQL:\n  SELECT gender", "Attempts:\n  1  generate  ok  2 rows", "Tables: ", "patients 0.", "gender  n", "2 rows", "answered · 2 model calls"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "… retrieve") || !strings.Contains(stderr, "nomic-embed-text") {
		t.Errorf("stderr = %q", stderr)
	}
	if len(srv.EmbedRequests()) == 0 {
		t.Error("the embedding model was not used")
	}
}

func TestAskDeclinesAndFails(t *testing.T) {
	ws, srv := cohortWorkspace(t, false)
	out, _, code := run(t, ws, "ask", "--db", "demo", "What is the name of patient 10004235?")
	if code != 0 || !strings.Contains(out, "identifiable or private information") || strings.Contains(out, "SQL:") {
		t.Errorf("private: %d %q", code, out)
	}
	srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply { return classifyReply("SELECT nope FROM patients") })
	out, stderr, code := run(t, ws, "ask", "--db", "demo", "--max-attempts", "3", "How many patients are there?")
	if code != 1 || !strings.Contains(stderr, "no answer: No valid query was found in 3 attempts") || !strings.Contains(out, "no such column: nope") {
		t.Errorf("failure: %d %q %q", code, out, stderr)
	}
	srv.Close()
	_, stderr, code = run(t, ws, "ask", "--db", "demo", "How many patients are there?")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; code != 1 || !strings.HasPrefix(last, "clinsight: ") || !strings.Contains(last, "Ollama is not running") {
		t.Errorf("server down: %d %q", code, stderr)
	}
}
