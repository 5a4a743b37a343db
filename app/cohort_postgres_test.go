package app

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/internal/pgtest"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// mimicPostgresSource loads the MIMIC-IV demo into a new database of the
// test cluster (mimic-code's layout), creates a read-only role for it and
// registers it in ws as source "pgmimic".
func mimicPostgresSource(t *testing.T, ws *Workspace) Source {
	t.Helper()
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "appcohort")
	c.LoadMIMICDemo(t, db)
	const role = "app_cohort_reader"
	c.Reader(t, db, role, postgres.ReaderGrants(role, db, []string{"mimiciv_hosp", "mimiciv_icu"}), "APP_COHORT_PW")
	if _, err := ws.AddPostgres("pgmimic", postgres.Source{DSN: c.URL(role, db), Schemas: []string{"mimiciv_hosp", "mimiciv_icu"},
		PasswordEnv: "APP_COHORT_PW"}); err != nil {
		t.Fatal(err)
	}
	return source(t, ws, "pgmimic")
}

// TestCohortOnPostgresRepairsWithTheServersError asks a cohort question
// on the MIMIC-IV demo served by PostgreSQL through the CohortService,
// with scripted model replies through the real client: the first query
// names a column that does not exist; PostgreSQL's PREPARE refuses it, and
// the repair request carries the server's own error with its position
// marked under the line, and the closest existing column; the repaired
// query's answer equals the reference query's. The generation prompt
// states PostgreSQL's dialect. Then the source's disclosure policy
// (aggregate-only) refuses a patient-level answer, as on SQLite.
func TestCohortOnPostgresRepairsWithTheServersError(t *testing.T) {
	ctx := context.Background()
	srv := ollamatest.New(t, ollamatest.Model{Name: "chat-model"})
	ws := openTemp(t)
	if err := ws.UpdateConfig(func(c *Config) {
		c.OllamaHost = srv.URL
		c.Models = Models{SQL: "chat-model", Chat: "chat-model"}
	}); err != nil {
		t.Fatal(err)
	}
	src := mimicPostgresSource(t, ws)

	const wrong = "SELECT COUNT(DISTINCT subject_id) AS n FROM mimiciv_hosp.patients WHERE anchor_ages > 65"
	const right = "SELECT COUNT(DISTINCT subject_id) AS n FROM mimiciv_hosp.patients WHERE anchor_age > 65"
	srv.QueueChat(
		ollamatest.ChatReply{Content: fmt.Sprintf(`{"category":"answerable","reason":"patients table","sql":%q}`, wrong)},
		ollamatest.ChatReply{Content: "```sql\n" + right + "\n```"},
		ollamatest.ChatReply{Content: "Some patients are older than 65."},
	)
	sess, err := ws.Cohort().Open(ctx, src, CohortOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ans, err := sess.Ask(ctx, cohort.Request{Question: "How many patients are older than 65?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ws.Data().Query(ctx, src, right, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != cohort.StatusAnswered || ans.SQL != right || ans.Result == nil || !reflect.DeepEqual(ans.Result.Rows, want.Rows) {
		t.Fatalf("answer: status %s, SQL %q, rows %v (want %v): %s", ans.Status, ans.SQL, rows(ans.Result), want.Rows, ans.Message)
	}
	if len(ans.Attempts) != 2 || ans.Attempts[0].Stage != "validate" || !strings.Contains(ans.Attempts[0].Error, `column "anchor_ages" does not exist`) {
		t.Errorf("attempts: %+v", ans.Attempts)
	}
	if !strings.Contains(ans.DataSource, "pgmimic (PostgreSQL") || strings.Contains(ans.DataSource, os.Getenv("APP_COHORT_PW")) {
		t.Errorf("data source %q", ans.DataSource)
	}

	reqs := srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d chat requests, want 3", len(reqs))
	}
	system := reqs[0].Messages[0].Content
	for _, s := range []string{"one PostgreSQL query", "PostgreSQL dialect", "ILIKE", "INTERVAL", "CREATE TABLE mimiciv_hosp.patients"} {
		if !strings.Contains(system, s) {
			t.Errorf("generation prompt lacks %q:\n%s", s, system)
		}
	}
	if strings.Contains(system, "SQLite") {
		t.Errorf("generation prompt names SQLite:\n%s", system)
	}
	repair := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	pos := strings.Index(wrong, "anchor_ages")
	excerpt := "LINE 1: " + wrong + "\n" + strings.Repeat(" ", len("LINE 1: ")+pos) + "^"
	for _, s := range []string{`column "anchor_ages" does not exist`, excerpt, "Closest existing names: patients.anchor_age", "HINT:"} {
		if !strings.Contains(repair, s) {
			t.Errorf("repair request lacks %q:\n%s", s, repair)
		}
	}

	// Value grounding reads the server through the engine: a literal no
	// stored value matches is checked there without an error.
	eng, release, err := ws.postgresEngine(ctx, src, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	g := cohort.NewGrounder(sess.(*auditedSession).Index(), eng)
	for _, q := range []string{
		"SELECT count(*) FROM mimiciv_hosp.admissions a WHERE a.admission_type = 'no such admission type'",
		"SELECT count(*) FROM admissions WHERE admission_type ILIKE '%no such type%'",
	} {
		if _, err := g.Ground(ctx, q); err != nil {
			t.Errorf("grounding %q on PostgreSQL: %v", q, err)
		}
	}

	// The disclosure policy applies: an aggregate-only source refuses a
	// patient-level answer.
	if err := ws.Data().SetPolicy(src.Name, disclosure.Policy{Access: disclosure.AggregateOnly}); err != nil {
		t.Fatal(err)
	}
	src = source(t, ws, "pgmimic")
	srv.QueueChat(ollamatest.ChatReply{Content: `{"category":"answerable","reason":"","sql":"SELECT subject_id, anchor_age FROM mimiciv_hosp.patients"}`})
	sess2, err := ws.Cohort().Open(ctx, src, CohortOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.Close()
	ans, err = sess2.Ask(ctx, cohort.Request{Question: "List the patients and their ages"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != cohort.StatusRefused || ans.Result != nil {
		t.Errorf("patient-level answer on an aggregate-only source: status %s, rows %v, %s", ans.Status, rows(ans.Result), ans.Message)
	}
}

func rows(res *datasets.Result) any {
	if res == nil {
		return nil
	}
	return res.Rows
}
