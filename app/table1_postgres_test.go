package app

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// TestTable1OnPostgresEqualsSQLite computes the Table 1 of one cohort of
// the MIMIC-IV demo served by PostgreSQL (mimic-code's layout, a
// read-only role, through the Cohort service and the source's engine) and
// of the same demo imported into SQLite: every cell is the same, by sex.
func TestTable1OnPostgresEqualsSQLite(t *testing.T) {
	ctx := context.Background()
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "t1mimic")
	c.LoadMIMICDemo(t, db)
	const reader = "t1_reader"
	c.Reader(t, db, reader, postgres.ReaderGrants(reader, db, []string{"mimiciv_hosp", "mimiciv_icu"}), "T1_READER_PW")
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	src, err := ws.AddPostgres("pg", postgres.Source{DSN: c.URL(reader, db), Schemas: []string{"mimiciv_hosp", "mimiciv_icu"}, PasswordEnv: "T1_READER_PW"})
	if err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "mimic.sqlite")
	conn, err := datasets.OpenReadWrite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := datasets.ImportMIMIC(ctx, conn, realdata.Path(t, pgtest.MIMICDemoDir), datasets.MIMICOptions{}); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	runner, err := datasets.NewRunner(ctx, path, datasets.RunnerOptions{MaxRows: cohort.Table1MaxPatients + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()

	const query = "SELECT subject_id FROM patients WHERE anchor_age >= 60"
	opts := cohort.Table1Options{PatientColumn: "subject_id", Stratify: cohort.StratifySex}
	pg, err := ws.Cohort().Table1(ctx, src, query, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Query = query
	lite, err := cohort.ComputeTable1(ctx, runner, opts)
	if err != nil {
		t.Fatal(err)
	}
	ph, prows := pg.Cells(0)
	lh, lrows := lite.Cells(0)
	if pg.Patients == 0 || len(prows) < 5 {
		t.Fatalf("Table 1 on PostgreSQL: %d patients, %d rows", pg.Patients, len(prows))
	}
	if fmt.Sprint(ph) != fmt.Sprint(lh) || len(prows) != len(lrows) {
		t.Fatalf("PostgreSQL %v, %d rows; SQLite %v, %d rows", ph, len(prows), lh, len(lrows))
	}
	for i := range prows {
		if fmt.Sprint(prows[i]) != fmt.Sprint(lrows[i]) {
			t.Errorf("row %d: PostgreSQL %v, SQLite %v", i, prows[i], lrows[i])
		}
	}
	t.Logf("%d patients, %d rows equal", pg.Patients, len(prows))
}
