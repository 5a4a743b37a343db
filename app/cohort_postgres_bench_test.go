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
	"github.com/clinsight/clinsight/internal/cohortbench"
	"github.com/clinsight/clinsight/internal/pgtest"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

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
	c.Reader(b, db, role, postgres.ReaderGrants(role, db, []string{"demo"}), "APP_BENCH_PW")

	sqlFor := map[string]string{}
	for _, q := range cohortbench.Questions {
		sqlFor[q.Q] = q.SQL
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
			for _, q := range cohortbench.Questions {
				ans, err := r.p.Ask(ctx, cohort.Request{Question: q.Q}, nil)
				if err != nil || ans.Status != cohort.StatusAnswered || len(ans.Attempts) != 1 {
					b.Fatalf("%s: %q: %v %s %s %+v", r.name, q.Q, err, ans.Status, ans.Message, ans.Attempts)
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
