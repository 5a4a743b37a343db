package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// OMOPDir is the OMOP CDM 5.4 folder under the shared data: spec/ holds
// the official DDL, synthea27nj/ a CDM instance of 27 synthetic patients.
const OMOPDir = "omop-cdm-5.4"

// omopTableRE finds the tables of the official PostgreSQL DDL.
var omopTableRE = regexp.MustCompile(`(?m)^CREATE TABLE @cdmDatabaseSchema\.(\w+) \(`)

// LoadSynthea27Nj loads the Synthea27Nj OMOP CDM instance
// (../shared/data/omop-cdm-5.4/synthea27nj, one upper-case CSV per table)
// into schema of database db: the tables of the official PostgreSQL DDL
// (spec/OMOPCDM_postgresql_5.4_ddl.sql), each CSV with COPY FROM STDIN
// through pgx, then ANALYZE. It returns the rows loaded per table. A
// missing folder skips the test, or fails it in CI.
func (c *Cluster) LoadSynthea27Nj(t testing.TB, db, schema string) map[string]int64 {
	t.Helper()
	root := realdata.Path(t, OMOPDir)
	ddl, err := os.ReadFile(filepath.Join(root, "spec", "OMOPCDM_postgresql_5.4_ddl.sql"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn := c.Super(t, db)
	s := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+s+";\n"+strings.ReplaceAll(string(ddl), "@cdmDatabaseSchema.", s+"."),
		pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("create the OMOP CDM tables: %v", err)
	}
	counts := map[string]int64{}
	for _, m := range omopTableRE.FindAllStringSubmatch(string(ddl), -1) {
		table := m[1]
		f, err := os.Open(filepath.Join(root, "synthea27nj", strings.ToUpper(table)+".csv"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		header, err := readHeader(f)
		if err != nil {
			f.Close()
			t.Fatalf("read %s: %v", f.Name(), err)
		}
		tag, err := conn.PgConn().CopyFrom(ctx, f, "COPY "+pgx.Identifier{schema, table}.Sanitize()+" ("+header+") FROM STDIN WITH (FORMAT csv, HEADER true)")
		f.Close()
		if err != nil {
			t.Fatalf("load %s.%s: %v", schema, table, err)
		}
		counts[table] = tag.RowsAffected()
	}
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	return counts
}

// readHeader reads a CSV's header line (lower-cased, quoted identifiers)
// and rewinds the file.
func readHeader(f *os.File) (string, error) {
	buf := make([]byte, 64<<10)
	n, err := f.Read(buf)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	var cols []string
	for _, c := range strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "\ufeff")), ",") {
		cols = append(cols, pgx.Identifier{strings.ToLower(strings.Trim(c, `"`))}.Sanitize())
	}
	if _, err := f.Seek(0, 0); err != nil {
		return "", err
	}
	return strings.Join(cols, ", "), nil
}
