package app

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// TestExportRenamedIdentifiersOnPostgres: on a PostgreSQL source too, an
// identifier renamed by a WITH clause is recognised by the table column
// the server reports for it: refused unconfirmed naming it, pseudonymised
// and shifted when confirmed.
func TestExportRenamedIdentifiersOnPostgres(t *testing.T) {
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "apporigin")
	c.Exec(t, db, "CREATE TABLE patients (subject_id int PRIMARY KEY, dod date, gender text); "+
		"INSERT INTO patients VALUES (10001479, '2180-03-01', 'F'), (10002061, NULL, 'M'), (10002819, '2181-05-06', 'F')")
	const role = "app_origin_reader"
	c.Reader(t, db, role, postgres.ReaderGrants(role, db, []string{"public"}), "APP_ORIGIN_PW")
	ctx := context.Background()
	ws := openTemp(t)
	if _, err := ws.AddPostgres("pg", postgres.Source{DSN: c.URL(role, db), PasswordEnv: "APP_ORIGIN_PW"}); err != nil {
		t.Fatal(err)
	}
	src := source(t, ws, "pg")
	setAccess(t, ws, &src, disclosure.RowLevel)
	q := "WITH t AS (SELECT subject_id AS a, dod AS b FROM patients) SELECT a, b FROM t ORDER BY a"
	dir := t.TempDir()
	_, err := ws.Data().ExportQuery(ctx, filepath.Join(dir, "refused.xlsx"), src, q, datasets.RunnerOptions{}, export.Provenance{},
		ExportOptions{Source: src, Query: q})
	var pl *disclosure.PatientLevelError
	if !errors.As(err, &pl) || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("unconfirmed export of renamed identifiers: %v", err)
	}
	path := filepath.Join(dir, "rows.xlsx")
	if _, err := ws.Data().ExportQuery(ctx, path, src, q, datasets.RunnerOptions{}, export.Provenance{},
		ExportOptions{Source: src, Query: q, PatientLevel: true, ShiftDates: true}); err != nil {
		t.Fatal(err)
	}
	rows, prov := workbook(t, path, "Results")
	for _, want := range []string{"Pseudonymised columns=a:", "Dates shifted=b:"} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}
	if len(rows) != 4 {
		t.Fatalf("rows %v", rows)
	}
	for _, r := range rows[1:] {
		if strings.HasPrefix(r[0], "1000") || len(r) > 1 && (r[1] == "2180-03-01" || r[1] == "2181-05-06") {
			t.Errorf("raw value exported: %v", r)
		}
	}
}
