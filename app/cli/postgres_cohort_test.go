package cli

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/internal/pgtest"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestAskOnPostgres asks a cohort question with ask on the MIMIC-IV demo
// served by PostgreSQL (mimic-code's layout, a read-only role), with
// scripted model replies through the real client: the answer's rows equal
// those of the same query run with sql, and the provenance names the
// server, never the password.
func TestAskOnPostgres(t *testing.T) {
	_, _, dsn := mimicOnPostgres(t)
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	ws := workspaceWithHost(t, srv.URL)
	if _, stderr, code := run(t, ws, "sources", "add", "pg", "--postgres", dsn,
		"--schemas", "mimiciv_hosp,mimiciv_icu", "--password-env", "CLI_READER_PW"); code != 0 {
		t.Fatalf("sources add: %s", stderr)
	}
	const query = "SELECT gender, COUNT(DISTINCT subject_id) AS n FROM mimiciv_hosp.patients WHERE anchor_age >= 18 GROUP BY gender ORDER BY gender"
	out, stderr, code := run(t, ws, "sql", "--db", "pg", "--json", query)
	var want struct{ Rows [][]any }
	if code != 0 || json.Unmarshal([]byte(out), &want) != nil || len(want.Rows) != 2 {
		t.Fatalf("sql: code %d out %q err %q", code, out, stderr)
	}
	srv.QueueChat(classifyReply(query), ollamatest.ChatReply{Content: "Adult patients by sex."})
	out, stderr, code = run(t, ws, "ask", "--db", "pg", "--json", "How many adult patients are there of each sex?")
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, stderr)
	}
	var ans struct {
		Status     string  `json:"status"`
		SQL        string  `json:"sql"`
		Rows       [][]any `json:"rows"`
		DataSource string  `json:"data_source"`
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if ans.Status != "answered" || ans.SQL != query || !reflect.DeepEqual(ans.Rows, want.Rows) {
		t.Errorf("ask on PostgreSQL: %s", out)
	}
	if strings.Contains(out, os.Getenv("CLI_READER_PW")) {
		t.Errorf("the password is in the answer: %s", out)
	}
	reqs := srv.ChatRequests()
	if len(reqs) == 0 || !strings.Contains(reqs[0].Messages[0].Content, "PostgreSQL dialect") {
		t.Errorf("the generation prompt does not state PostgreSQL's dialect")
	}
}

// TestEvalRetrievalOnPostgres serves EHRSQL's own database from
// PostgreSQL (the same tables, loaded from its SQLite file) and checks
// that eval retrieval --db on that source scores the EHRSQL valid split's
// schema-retrieval recall@5 within 0.01 of the SQLite file's figure.
func TestEvalRetrievalOnPostgres(t *testing.T) {
	dir := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	file := realdata.Path(t, "ehrsql-2024-mimic-iv-demo", "mimic_iv_demo.sqlite")
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "ehrsql")
	counts := c.LoadSQLite(t, db, "ehrsql", file)
	if counts["patients"] != 94 || counts["admissions"] != 119 || counts["labevents"] != 26426 || len(counts) != 17 {
		t.Fatalf("loaded %v, want EHRSQL's 17 tables (94 patients, 119 admissions, 26,426 lab events)", counts)
	}
	const reader = "cli_ehrsql_reader"
	c.Reader(t, db, reader, postgres.ReaderGrants(reader, db, []string{"ehrsql"}), "CLI_EHRSQL_PW")
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}) // no embedding model: the lexical fallback
	ws := workspaceWithHost(t, srv.URL)
	if _, stderr, code := run(t, ws, "sources", "add", "ehrpg", "--postgres", c.URL(reader, db),
		"--schemas", "ehrsql", "--password-env", "CLI_EHRSQL_PW"); code != 0 {
		t.Fatalf("sources add: %s", stderr)
	}
	figure := func(db string) retrievalJSON {
		t.Helper()
		out, stderr, code := run(t, ws, "eval", "retrieval", "--ehrsql", dir, "--db", db, "--json")
		var r retrievalJSON
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("eval retrieval --db %s: code %d out %q err %q", db, code, out, stderr)
		}
		return r
	}
	lite, pg := figure(file), figure("ehrpg")
	t.Logf("EHRSQL valid recall@5: SQLite %.4f (all tables %.4f, n %d), PostgreSQL %.4f (all tables %.4f, n %d)",
		lite.RecallAtK, lite.AllTablesShare, lite.N, pg.RecallAtK, pg.AllTablesShare, pg.N)
	if pg.N != lite.N || math.Abs(pg.RecallAtK-lite.RecallAtK) > 0.01 {
		t.Errorf("recall@5 on PostgreSQL %.4f (n %d), on SQLite %.4f (n %d): want within 0.01 on the same questions",
			pg.RecallAtK, pg.N, lite.RecallAtK, lite.N)
	}
}
