package postgres

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// csvRecords counts the records of a gzipped CSV file, header excluded.
func csvRecords(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(zr)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	n := int64(-1)
	for {
		_, err := r.Read()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// TestMIMICDemo loads the MIMIC-IV demo into mimic-code's layout and reads
// it through a read-only role: every table's rows equal its CSV's, the
// catalog takes the curated MIMIC-IV profile for every table, queries
// over both schemas work, and the attack corpus, run as the superuser,
// leaves the pg_dump --data-only checksum of the demo database unchanged.
func TestMIMICDemo(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	db := c.CreateDatabase(t, "mimic")
	start := time.Now()
	counts := c.LoadMIMICDemo(t, db)
	t.Logf("loaded %d tables in %s", len(counts), time.Since(start).Round(time.Millisecond))
	dir := realdata.Path(t, pgtest.MIMICDemoDir)
	for name, n := range counts {
		module, table, _ := strings.Cut(strings.TrimPrefix(name, "mimiciv_"), ".")
		path := filepath.Join(dir, module, table+".csv.gz")
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: no CSV in the demo (%v), left empty", name, err)
			continue
		}
		if want := csvRecords(t, path); n != want {
			t.Errorf("%s: %d rows loaded, the CSV has %d", name, n, want)
		}
	}
	for name, want := range map[string]int64{"mimiciv_hosp.patients": 100, "mimiciv_hosp.admissions": 275,
		"mimiciv_hosp.labevents": 107_727, "mimiciv_hosp.prescriptions": 18_087, "mimiciv_icu.icustays": 140} {
		if counts[name] != want {
			t.Errorf("%s: %d rows, want %d", name, counts[name], want)
		}
	}

	reader := "mimic_reader"
	c.Exec(t, db, ReaderGrants(reader, db, []string{"mimiciv_hosp", "mimiciv_icu"}))
	pw := "reader-pw"
	c.Exec(t, db, "ALTER ROLE "+reader+" PASSWORD '"+pw+"'")
	t.Cleanup(func() {
		c.Exec(t, db, "DROP OWNED BY "+reader)
		c.Exec(t, "postgres", "DROP ROLE "+reader)
	})
	t.Setenv("MIMIC_READER_PW", pw)
	e, err := Open(ctx, Source{DSN: c.URL(reader, db), Schemas: []string{"mimiciv_hosp", "mimiciv_icu"}, PasswordEnv: "MIMIC_READER_PW"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	start = time.Now()
	cat, err := e.Catalog(ctx, datasets.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("catalog of %d tables in %s", len(cat.Tables), time.Since(start).Round(time.Millisecond))
	if len(cat.Tables) != len(counts) || cat.Profile != "mimic-iv-2.2" {
		t.Fatalf("catalog: %d tables, profile %q", len(cat.Tables), cat.Profile)
	}
	for _, tab := range cat.Tables {
		if tab.Doc.Source != "mimic-iv-2.2" {
			t.Errorf("%s documented by %q", tab.Name, tab.Doc.Source)
		}
		want := counts[tab.Schema+"."+tab.Name]
		if !tab.RowCountEstimated && tab.RowCount != want {
			t.Errorf("%s: catalog %d rows, loaded %d", tab.Name, tab.RowCount, want)
		}
		if tab.RowCountEstimated {
			exact, err := e.CountRows(ctx, tab.Schema+"."+tab.Name)
			if err != nil || exact != want {
				t.Errorf("%s: CountRows %d, %v; loaded %d", tab.Name, exact, err, want)
			}
		}
	}
	if p, _ := cat.Table("patients"); p.Schema != "mimiciv_hosp" {
		t.Errorf("patients in schema %q", p.Schema)
	} else if g, _ := p.Column("gender"); strings.Join(g.Samples, ",") != "F,M" {
		t.Errorf("gender samples %v", g.Samples)
	}
	if text := cat.Text("icustays"); !strings.Contains(text, "CREATE TABLE mimiciv_icu.icustays (") {
		t.Errorf("text:\n%.300s", text)
	}
	res, err := e.Query(ctx, `SELECT p.gender, count(DISTINCT i.stay_id) AS stays
  FROM mimiciv_hosp.patients p JOIN mimiciv_icu.icustays i USING (subject_id)
 WHERE i.los > 1 GROUP BY p.gender ORDER BY p.gender`)
	if err != nil || len(res.Rows) != 2 {
		t.Fatalf("cohort query: %v, %v", res, err)
	}
	t.Logf("ICU stays over one day by gender: %v", res.Rows)
	t.Run("same results as SQLite", func(t *testing.T) { compareWithSQLite(t, e) })

	// The attack corpus as the superuser on the demo database.
	before, err := c.PgDump(ctx, db, "--data-only")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Source{DSN: c.URL(pgtest.Superuser, db), Schemas: []string{"mimiciv_hosp"}, PasswordEnv: "MIMIC_SUPER_PW"}, Options{}); err == nil {
		t.Fatal("opened without the superuser's password")
	}
	t.Setenv("MIMIC_SUPER_PW", c.SuperPassword)
	su, err := Open(ctx, Source{DSN: c.URL(pgtest.Superuser, db), Schemas: []string{"mimiciv_hosp"}, PasswordEnv: "MIMIC_SUPER_PW"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close()
	attackDir := filepath.Join(c.Dir, "attack-mimic")
	os.MkdirAll(attackDir, 0o777)
	os.Chmod(attackDir, 0o777)
	dsn := fmt.Sprintf("host=%s port=5432 dbname=%s user=postgres password=%s", c.SocketDir, db, c.SuperPassword)
	for _, tmpl := range attackCorpus {
		q := strings.ReplaceAll(tmpl, "clin.", "mimiciv_hosp.")
		q = strings.ReplaceAll(q, "mimiciv_hosp.ids", "mimiciv_hosp.nosuchseq")
		if strings.Contains(q, "%[") {
			q = fmt.Sprintf(q, attackDir, 1, dsn)
		}
		if _, err := su.Query(ctx, q); err == nil {
			t.Errorf("ran %q", q)
		}
	}
	after, err := c.PgDump(ctx, db, "--data-only")
	if err != nil {
		t.Fatal(err)
	}
	if stripRestrict(before) != stripRestrict(after) {
		t.Error("the demo database changed under the attack corpus")
	}
	if files, _ := os.ReadDir(attackDir); len(files) > 0 {
		t.Errorf("files appeared on the server: %v", files)
	}
}

// stripRestrict drops pg_dump's \restrict lines, which hold a random key.
func stripRestrict(dump []byte) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(dump), "\n") {
		if !strings.HasPrefix(line, `\restrict `) && !strings.HasPrefix(line, `\unrestrict `) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// sameQuestions are reading queries valid in both SQLite and PostgreSQL
// over the MIMIC-IV demo, ordered so their results are deterministic.
var sameQuestions = []string{
	"SELECT gender, count(*) AS n FROM patients GROUP BY gender ORDER BY gender",
	"SELECT count(*) FROM admissions WHERE admission_type = 'URGENT'",
	"SELECT p.subject_id, count(a.hadm_id) AS n FROM patients p JOIN admissions a ON a.subject_id = p.subject_id GROUP BY p.subject_id ORDER BY n DESC, p.subject_id LIMIT 10",
	"SELECT itemid, count(*) AS n FROM labevents GROUP BY itemid ORDER BY n DESC, itemid LIMIT 10",
	"SELECT subject_id, hadm_id, admittime FROM admissions ORDER BY admittime, hadm_id LIMIT 5",
	"SELECT drug, count(*) AS n FROM prescriptions GROUP BY drug ORDER BY n DESC, drug LIMIT 5",
	"SELECT avg(anchor_age) FROM patients",
	"SELECT count(DISTINCT i.subject_id) FROM icustays i JOIN admissions a ON a.hadm_id = i.hadm_id WHERE a.hospital_expire_flag = 1",
}

// compareWithSQLite imports the demo into SQLite and runs sameQuestions
// through both engines behind datasets.Engine: the results are equal
// value for value. It logs the median time of each engine.
func compareWithSQLite(t *testing.T, pg datasets.Engine) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mimic.sqlite")
	db, err := datasets.OpenReadWrite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := datasets.ImportMIMIC(ctx, db, realdata.Path(t, pgtest.MIMICDemoDir), datasets.MIMICOptions{}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	lite, err := datasets.NewSQLiteEngine(ctx, path, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	engines := []datasets.Engine{lite, pg}
	times := make([][]time.Duration, len(engines))
	for _, q := range sameQuestions {
		var got [2]string
		for i, e := range engines {
			for range 5 {
				start := time.Now()
				res, err := e.Query(ctx, q)
				times[i] = append(times[i], time.Since(start))
				if err != nil {
					t.Fatalf("%s: %q: %v", e.Dialect(), q, err)
				}
				got[i] = fmt.Sprint(res.Rows)
			}
		}
		if got[0] != got[1] {
			t.Errorf("%q:\nsqlite   %s\npostgres %s", q, got[0], got[1])
		}
	}
	for i, e := range engines {
		ts := times[i]
		sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
		t.Logf("%s: median %s, p95 %s over %d queries", e.Dialect(), ts[len(ts)/2].Round(time.Microsecond),
			ts[len(ts)*95/100].Round(time.Microsecond), len(ts))
	}
}
