package app

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/internal/pgtest"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// engineBenchQuestions are the demo cohort questions of app/cohort's
// BenchmarkQuestion, with the SQL the scripted model answers them with:
// SQL both engines read alike (unquoted lower-case names, LOWER … LIKE).
var engineBenchQuestions = []struct{ q, sql string }{
	{"How many female patients are there?", "SELECT COUNT(DISTINCT subject_id) FROM patients WHERE gender = 'F'"},
	{"How many patients had a heart attack?", `SELECT COUNT(DISTINCT d.subject_id) FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version
		WHERE LOWER(t.long_title) LIKE '%myocardial infarction%'`},
	{"What is the average creatinine value by sex?", `SELECT p.gender, AVG(l.valuenum) FROM labevents l
		JOIN d_labitems i ON i.itemid = l.itemid JOIN patients p ON p.subject_id = l.subject_id
		WHERE LOWER(i.label) = 'creatinine' GROUP BY p.gender`},
	{"Which ten drugs were prescribed most often?", "SELECT drug, COUNT(*) AS n FROM prescriptions GROUP BY drug ORDER BY n DESC LIMIT 10"},
	{"How many admissions were emergencies?", "SELECT COUNT(*) FROM admissions WHERE LOWER(admission_type) LIKE '%emer%'"},
	{"How many patients died in hospital, by insurance?", "SELECT insurance, COUNT(DISTINCT subject_id) FROM admissions WHERE hospital_expire_flag = 1 GROUP BY insurance"},
	{"How many chest CT series are there?", "SELECT COUNT(DISTINCT SeriesInstanceUID) FROM dicom_all WHERE Modality = 'CT' AND BodyPartExamined = 'CHEST'"},
	{"How many patients are in each age group?", `SELECT (anchor_age / 10) * 10 AS age_group, COUNT(*) FROM patients GROUP BY age_group ORDER BY age_group`},
	{"How many diabetic patients received insulin?", `SELECT COUNT(DISTINCT p.subject_id) FROM prescriptions p
		WHERE LOWER(p.drug) LIKE '%insulin%' AND p.subject_id IN (SELECT d.subject_id FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version WHERE LOWER(t.long_title) LIKE '%diabetes%')`},
	{"What are the five most common diagnoses?", `SELECT t.long_title, COUNT(*) AS n FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version GROUP BY t.long_title ORDER BY n DESC LIMIT 5`},
}

// BenchmarkCohortPostgresVsSQLite measures the time a cohort question
// spends outside model calls (retrieval, guard, validation, execution,
// number checks) on the same data from SQLite and from PostgreSQL: the
// default-size demo (3,000 patients) as a SQLite file, and the same file's
// tables loaded into the test cluster (pgtest.LoadSQLite), each asked the
// demo question set through the Cohort service with a scripted model that
// answers right the first time. It prints the median and p95 per engine,
// and the medians of the retrieve, validate and execute stages:
//
//	go test -tags ci ./app/ -run '^$' -bench CohortPostgresVsSQLite -benchtime 5x
func BenchmarkCohortPostgresVsSQLite(b *testing.B) {
	ctx := context.Background()
	file := filepath.Join(b.TempDir(), "demo.sqlite")
	if _, err := demo.Generate(ctx, file, demo.DefaultOptions()); err != nil {
		b.Fatal(err)
	}
	c := pgtest.Shared(b)
	db := c.CreateDatabase(b, "benchdemo")
	c.LoadSQLite(b, db, "demo", file)
	const role = "bench_reader"
	c.Exec(b, db, postgres.ReaderGrants(role, db, []string{"demo"}))
	c.Exec(b, db, "ALTER ROLE "+role+" PASSWORD 'bench-secret'")
	b.Cleanup(func() {
		c.Exec(b, db, "DROP OWNED BY "+role)
		c.Exec(b, "postgres", "DROP ROLE "+role)
	})
	b.Setenv("APP_BENCH_PW", "bench-secret")

	sqlFor := map[string]string{}
	for _, q := range engineBenchQuestions {
		sqlFor[q.q] = q.sql
	}
	srv := ollamatest.New(b, ollamatest.Model{Name: "chat-model"})
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if req.Format == nil {
			return ollamatest.ChatReply{Content: "The result answers the question."}
		}
		q := strings.TrimPrefix(req.Messages[len(req.Messages)-1].Content, "Question: ")
		return ollamatest.ChatReply{Content: fmt.Sprintf(`{"category":"answerable","reason":"","sql":%q}`, sqlFor[q])}
	})
	ws, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	if err := ws.UpdateConfig(func(c *Config) {
		c.OllamaHost = srv.URL
		c.Models = Models{SQL: "chat-model", Chat: "chat-model"}
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := ws.Data().AddSQLite(ctx, file, "demo-sqlite"); err != nil {
		b.Fatal(err)
	}
	if _, err := ws.AddPostgres("demo-pg", postgres.Source{DSN: c.URL(role, db), Schemas: []string{"demo"}, PasswordEnv: "APP_BENCH_PW"}); err != nil {
		b.Fatal(err)
	}
	type engineRun struct {
		name                      string
		p                         *cohort.Pipeline
		nonLLM, ret, valid, execT []time.Duration
	}
	var runs []*engineRun
	for _, name := range []string{"demo-sqlite", "demo-pg"} {
		p, err := ws.Cohort().Pipeline(ctx, source(b, ws, name), CohortOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		runs = append(runs, &engineRun{name: name, p: p})
	}
	b.ResetTimer()
	for range b.N {
		for _, r := range runs {
			for _, q := range engineBenchQuestions {
				ans, err := r.p.Ask(ctx, cohort.Request{Question: q.q}, nil)
				if err != nil || ans.Status != cohort.StatusAnswered || len(ans.Attempts) != 1 {
					b.Fatalf("%s: %q: %v %s %s %+v", r.name, q.q, err, ans.Status, ans.Message, ans.Attempts)
				}
				r.nonLLM = append(r.nonLLM, ans.NonLLMTime())
				for _, s := range ans.Stages {
					switch s.Name {
					case "retrieve":
						r.ret = append(r.ret, s.Duration)
					case "validate":
						r.valid = append(r.valid, s.Duration)
					case "execute":
						r.execT = append(r.execT, s.Duration)
					}
				}
			}
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	pct := func(ds []time.Duration, p float64) time.Duration {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		if len(ds) == 0 {
			return 0
		}
		return ds[min(len(ds)-1, int(p*float64(len(ds))))]
	}
	for _, r := range runs {
		engine := "sqlite"
		if r.name == "demo-pg" {
			engine = "postgres"
		}
		b.ReportMetric(ms(pct(r.nonLLM, 0.5)), engine+"-nonllm-ms-median")
		b.ReportMetric(ms(pct(r.nonLLM, 0.95)), engine+"-nonllm-ms-p95")
		fmt.Printf("%-9s %d questions: non-LLM median %7.2f ms, p95 %7.2f ms (medians: retrieve %.2f ms, validate %.2f ms, execute %.2f ms)\n",
			engine, len(r.nonLLM), ms(pct(r.nonLLM, 0.5)), ms(pct(r.nonLLM, 0.95)), ms(pct(r.ret, 0.5)), ms(pct(r.valid, 0.5)), ms(pct(r.execT, 0.5)))
	}
	b.ReportMetric(0, "ns/op")
}
